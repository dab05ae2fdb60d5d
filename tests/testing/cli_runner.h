#pragma once
// Runs the real `hexplan` binary for end-to-end tests.
#include <string>

namespace hx::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `hexplan <args>` (args are passed to /bin/sh, quote as needed) from the source directory.
CliResult RunCli(const std::string& args);

// A fresh empty directory under /tmp for a test's files.
std::string MakeTempDir();

}  // namespace hx::testing
