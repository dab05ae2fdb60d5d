#pragma once
// Runs the real `hexplan` binary for end-to-end tests.
#include <nlohmann/json.hpp>
#include <string>

namespace hx::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `hexplan <args>` (args are passed to /bin/sh, quote as needed) from the source directory.
CliResult RunCli(const std::string& args);

// The same from the directory `cwd` (relative paths in `args` are relative to it).
CliResult RunCliIn(const std::string& cwd, const std::string& args);

// RunCli under `timeout SECONDS`: exit code 124 when the command ran that long.
CliResult RunCliWithTimeout(const std::string& args, int seconds);

// A fresh empty directory under /tmp for a test's files.
std::string MakeTempDir();

// Parses `text` as JSON; a gtest failure (showing the start of the text) and a discarded value
// when it is not JSON.
nlohmann::json ParseJsonOrFail(const std::string& text);

// The whole file at `path`, bytes as they are ("" when it cannot be read).
std::string ReadTextFile(const std::string& path);

// Writes `text` to `path` (test fixtures).
void WriteTextFile(const std::string& path, const std::string& text);

}  // namespace hx::testing
