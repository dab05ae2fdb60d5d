// hexplan: plans and runs deep-learning inference on heterogeneous hardware.
#include <cstdio>
#include <exception>
#include <vector>

#include "cli/command.h"

int main(int argc, char** argv) {
  CLI::App app{"hexplan: plan and run deep-learning inference on heterogeneous hardware"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "hexplan 0.1.0");

  std::vector<hx::cli::Command> commands = {
      hx::cli::AddModelsCommand(app),   hx::cli::AddInspectCommand(app),
      hx::cli::AddExportCommand(app),   hx::cli::AddShareCommand(app),
      hx::cli::AddTopoCommand(app),     hx::cli::AddTpCommand(app),
      hx::cli::AddSimulateCommand(app), hx::cli::AddShowCommand(app),
      hx::cli::AddPlaceCommand(app),    hx::cli::AddCompareCommand(app),
      hx::cli::AddRunCommand(app),      hx::cli::AddProfileCommand(app),
      hx::cli::AddPlannersCommand(app),
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
    app.exit(e);
    return 2;
  }

  try {
    for (const auto& command : commands) {
      if (command.app->parsed()) return command.run();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hexplan: internal error: %s\n", e.what());
    return 1;
  }
  return 2;
}
