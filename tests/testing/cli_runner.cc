#include "testing/cli_runner.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "testing/test_paths.h"

namespace hx::testing {
std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string MakeTempDir() {
  char tmpl[] = "/tmp/hx-test-XXXXXX";
  char* dir = mkdtemp(tmpl);
  return dir ? std::string(dir) : std::string("/tmp");
}

namespace {

CliResult Run(const std::string& prefix, const std::string& args,
              const std::string& cwd = SourceDir()) {
  std::string dir = MakeTempDir();
  std::string out = dir + "/stdout", err = dir + "/stderr";
  std::string cmd = "cd '" + cwd + "' && " + prefix + "'" + CliPath() + "' " + args + " >'" + out +
                    "' 2>'" + err + "' </dev/null";
  int raw = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = ReadTextFile(out);
  r.err = ReadTextFile(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  rmdir(dir.c_str());
  return r;
}

}  // namespace

CliResult RunCli(const std::string& args) { return Run("", args); }

CliResult RunCliIn(const std::string& cwd, const std::string& args) { return Run("", args, cwd); }

CliResult RunCliWithTimeout(const std::string& args, int seconds) {
  return Run("timeout " + std::to_string(seconds) + " ", args);
}

nlohmann::json ParseJsonOrFail(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << "not JSON: " << text.substr(0, 400);
  return j;
}

void WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

}  // namespace hx::testing
