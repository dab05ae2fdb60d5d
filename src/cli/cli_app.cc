// The `hexplan` command line (see cli_app.h); main.cc is a call to RunCli.
#include "cli/cli_app.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

#include "cli/cli_progress.h"
#include "cli/command.h"
#include "hexplan/core/interrupt.h"

namespace hx::cli {
namespace {

ReportedError last_error;
bool print_errors = true;

// "hexplan frobnicate": CLI11 would say only that a subcommand is required.
std::string UnknownCommand(const CLI::App& app, const std::vector<std::string>& args) {
  if (args.empty() || args[0].empty() || args[0][0] == '-') return "";
  std::string names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == args[0]) return "";
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  return "unknown command '" + args[0] + "' (commands: " + names + ")";
}

// --strict and --quiet, before or after the subcommand.
void AddRootFlags(CLI::App& app, bool* strict, bool* quiet) {
  app.add_flag("--strict", *strict,
               "warnings are errors: a command that warns (an input ignored or defaulted) exits 2 "
               "and writes nothing");
  app.add_flag("--quiet", *quiet,
               "no progress lines on stderr for long runs (warnings and errors still print)");
  app.fallthrough();  // --strict and --quiet after the subcommand too
}

std::vector<Command> AddCommands(CLI::App& app) {
  return {
      AddModelsCommand(app),   AddInspectCommand(app),   AddExportCommand(app),
      AddShareCommand(app),    AddTopoCommand(app),      AddTpCommand(app),
      AddSimulateCommand(app), AddShowCommand(app),      AddPlaceCommand(app),
      AddCompareCommand(app),  AddRunCommand(app),       AddProfileCommand(app),
      AddPlannersCommand(app), AddCalibrateCommand(app),
  };
}

// What is wrong with one value of an option, or "". CLI11 converts integers as strtoll/strtoull
// in base 0 do and keeps their saturated result (`--seed 99999999999999999999`, `0x1` followed by
// 17 zeros, became 2^64-1 and `--seed -1` wrapped to it); the same conversion here sees the
// overflow. No option of ours means anything by "" (`-o ""`, a shell variable never set: most
// read it as "not given", printed the plan, wrote nothing and exited 0).
std::string BadValue(const CLI::Option& o, const std::string& value) {
  if (value.empty()) return "an empty value; give one or leave the option out";
  const std::string type = o.get_type_name();  // "INT", "UINT", "INT:..." with a validator
  const bool is_unsigned = type.rfind("UINT", 0) == 0, is_signed = type.rfind("INT", 0) == 0;
  if (!is_unsigned && !is_signed) return "";
  const size_t first = value.find_first_not_of(" \t");
  const bool negative = first != std::string::npos && value[first] == '-';
  errno = 0;
  char* end = nullptr;
  if (is_unsigned)
    std::strtoull(value.c_str(), &end, 0);
  else
    std::strtoll(value.c_str(), &end, 0);
  const bool overflow = errno == ERANGE || (is_unsigned && negative);
  if (!overflow) return "";  // CLI11 has checked the form already
  return "'" + value + "' is out of range (" +
         (is_unsigned ? "0 to 18446744073709551615" : "a 64-bit integer") + ")";
}

// The first bad value (BadValue) of the parsed subcommand's options, as an error message.
std::string BadValues(const std::vector<Command>& commands) {
  for (const auto& command : commands) {
    if (!command.app->parsed()) continue;
    for (const CLI::Option* o : command.app->get_options()) {
      if (o->get_expected_max() == 0 || o->count() == 0) continue;  // flags, options not given
      for (const std::string& value : o->results())
        if (std::string bad = BadValue(*o, value); !bad.empty()) return o->get_name() + ": " + bad;
    }
  }
  return "";
}

// Runs the one parsed subcommand.
int RunParsed(const std::vector<Command>& commands) {
  for (const auto& command : commands) {
    if (!command.app->parsed()) continue;
    const int code = command.run();
    if (code != 0) return code;
    // Under --strict a command that warned fails, even one without output files.
    if (Status s = CheckStrict(); !s.ok()) return ReportError(s);
    return 0;
  }
  return 2;
}

}  // namespace

const ReportedError& LastReportedError() { return last_error; }

void SetPrintErrors(bool print) { print_errors = print; }

int RecordError(const std::string& message, int exit_code, const char* prefix) {
  last_error = {message, exit_code};
  if (print_errors) std::fprintf(stderr, "%s%s\n", prefix, message.c_str());
  return exit_code;
}

std::vector<CliOption> CommandOptions(const std::string& command) {
  CLI::App app;
  bool strict = false, quiet = false;
  AddRootFlags(app, &strict, &quiet);
  const std::vector<Command> commands = AddCommands(app);
  std::vector<CliOption> out;
  for (const Command& c : commands) {
    if (c.app->get_name() != command) continue;
    std::vector<CLI::Option*> options = c.app->get_options();
    for (CLI::Option* o : app.get_options()) options.push_back(o);  // --strict, --quiet
    for (const CLI::Option* o : options) {
      if (o->get_lnames().empty() && !o->get_positional()) continue;  // -h
      CliOption option;
      option.positional = !o->nonpositional();
      option.name = option.positional ? o->get_name(true) : o->get_lnames().front();
      if (option.name == "help") continue;
      option.flag = o->get_expected_max() == 0;
      option.repeatable = o->get_items_expected_max() > 1;
      option.required = o->get_required();
      option.description = o->get_description();
      option.default_text = o->get_default_str();
      out.push_back(std::move(option));
    }
  }
  return out;
}

int RunCli(const std::vector<std::string>& args) {
  last_error = {};
  ClearStopRequest();
  CLI::App app{"hexplan: plan and run deep-learning inference on heterogeneous hardware"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "hexplan 0.1.0");
  bool strict = false, quiet = false;
  AddRootFlags(app, &strict, &quiet);
  const std::vector<Command> commands = AddCommands(app);

  std::vector<std::string> argv_text = {"hexplan"};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const std::string& a : argv_text) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Usage errors are the user's to fix (exit 2) and read like every other error.
    const std::string unknown = UnknownCommand(app, args);
    const std::string message = unknown.empty() ? e.what() : unknown;
    RecordError(message, 2, "hexplan: error: ");
    if (print_errors) std::fprintf(stderr, "Run with --help for more information.\n");
    return 2;
  }

  if (const std::string bad = BadValues(commands); !bad.empty()) {
    RecordError(bad, 2, "hexplan: error: ");
    return 2;
  }
  try {
    SetStrict(strict);
    SetQuiet(quiet);
    return RunParsed(commands);
  } catch (const std::bad_alloc&) {
    // The request needs more memory than this machine has (a model of 65,536-wide LSTM layers,
    // a sequence of a million tokens): the user's to size down, not our bug.
    return RecordError(
        "not enough memory for this request (an allocation failed); use a smaller model, batch, "
        "sequence or width",
        2, "hexplan: error: ");
  } catch (const std::exception& e) {
    return RecordError(e.what(), 1, "hexplan: internal error: ");
  }
}

}  // namespace hx::cli
