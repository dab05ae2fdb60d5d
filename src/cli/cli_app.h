#pragma once
// The whole `hexplan` command line as a function: main() calls it, and so does the Python module
// (python/), which runs the same commands in-process so that its options, defaults, messages and
// results are the CLI's own.

#include <string>
#include <vector>

namespace hx::cli {

// Parses `args` (without the program name) and runs the subcommand; returns the exit code (0
// success, 2 bad input, 1 internal error, 130 interrupted). Clears any earlier stop request and
// warning count first, so that it can be called more than once in one process.
int RunCli(const std::vector<std::string>& args);

// One option of a subcommand as its CLI11 definition states it (for the Python module, which maps
// keyword arguments onto these flags rather than keeping a list of its own).
struct CliOption {
  std::string name;  // the long name without "--" (a positional: its name, e.g. MODEL)
  bool positional = false;
  bool flag = false;        // takes no value
  bool repeatable = false;  // may be given more than once (a list)
  bool required = false;
  std::string description;
  std::string default_text;  // "" when none
};
// The options of subcommand `command` and the root's (--strict, --quiet) that may follow it; empty
// when there is no such command.
std::vector<CliOption> CommandOptions(const std::string& command);

// The last error RunCli reported ("" after a success), without the "hexplan: error: " prefix.
struct ReportedError {
  std::string message;
  int exit_code = 0;
};
const ReportedError& LastReportedError();
// false: errors are only recorded (LastReportedError), not printed to stderr (the Python module
// raises them instead). Default true.
void SetPrintErrors(bool print);

// Records an error for LastReportedError and prints it unless SetPrintErrors(false); returns
// `exit_code`. `prefix` is "hexplan: error: " or "hexplan: internal error: ".
int RecordError(const std::string& message, int exit_code, const char* prefix);

}  // namespace hx::cli
