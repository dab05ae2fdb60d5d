// hexplan: plans and runs deep-learning inference on heterogeneous hardware.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "cli/cli_progress.h"
#include "cli/command.h"

namespace {

// "hexplan frobnicate": CLI11 would say only that a subcommand is required.
std::string UnknownCommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  std::string names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == argv[1]) return "";
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  return "unknown command '" + std::string(argv[1]) + "' (commands: " + names + ")";
}

// oneDNN's OpenMP team threads (docs/runtime.md, "oneDNN kernels") sleep while they wait for
// work instead of spinning, unless the user chose (OMP_WAIT_POLICY, GOMP_SPINCOUNT): on a shared
// machine a spinning team thread uses up its share of a core and is then preempted while its team
// waits at a barrier (mobilenet_v2 on a group of two loaded cores: 175-460 ms spinning, 20-95 ms
// passive). libgomp reads the variables when it is loaded, before main (a .preinit_array setenv
// came too late), so the commands that run models set it and start the binary again.
void UsePassiveOpenMpWait(int argc, char** argv) {
  if (argc < 2 || std::getenv("OMP_WAIT_POLICY") != nullptr ||
      std::getenv("GOMP_SPINCOUNT") != nullptr)
    return;
  const std::string command = argv[1];
  if (command != "run" && command != "profile") return;
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then run as we are
}

}  // namespace

int main(int argc, char** argv) {
  UsePassiveOpenMpWait(argc, argv);
  CLI::App app{"hexplan: plan and run deep-learning inference on heterogeneous hardware"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "hexplan 0.1.0");
  bool strict = false;
  app.add_flag("--strict", strict,
               "warnings are errors: a command that warns (an input ignored or defaulted) exits 2 "
               "and writes nothing");
  bool quiet = false;
  app.add_flag("--quiet", quiet,
               "no progress lines on stderr for long runs (warnings and errors still print)");
  app.fallthrough();  // --strict and --quiet after the subcommand too

  std::vector<hx::cli::Command> commands = {
      hx::cli::AddModelsCommand(app),   hx::cli::AddInspectCommand(app),
      hx::cli::AddExportCommand(app),   hx::cli::AddShareCommand(app),
      hx::cli::AddTopoCommand(app),     hx::cli::AddTpCommand(app),
      hx::cli::AddSimulateCommand(app), hx::cli::AddShowCommand(app),
      hx::cli::AddPlaceCommand(app),    hx::cli::AddCompareCommand(app),
      hx::cli::AddRunCommand(app),      hx::cli::AddProfileCommand(app),
      hx::cli::AddPlannersCommand(app), hx::cli::AddCalibrateCommand(app),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Usage errors are the user's to fix (exit 2) and read like every other error.
    const std::string unknown = UnknownCommand(app, argc, argv);
    std::fprintf(stderr, "hexplan: error: %s\nRun with --help for more information.\n",
                 unknown.empty() ? e.what() : unknown.c_str());
    return 2;
  }

  try {
    hx::cli::SetStrict(strict);
    hx::cli::SetQuiet(quiet);
    for (const auto& command : commands) {
      if (!command.app->parsed()) continue;
      const int code = command.run();
      if (code != 0) return code;
      // Under --strict a command that warned fails, even one without output files.
      if (hx::Status s = hx::cli::CheckStrict(); !s.ok()) return hx::cli::ReportError(s);
      return 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hexplan: internal error: %s\n", e.what());
    return 1;
  }
  return 2;
}
