#pragma once
// Each `hexplan` subcommand lives in its own cmd_<name>.cc and registers itself here: it adds a
// CLI11 subcommand to the root app and returns the function that runs it (returning the exit code:
// 0 success, 2 bad input, 1 internal error).

#include <CLI/CLI.hpp>
#include <functional>
#include <limits>
#include <string>

#include "hexplan/core/logger.h"
#include "hexplan/core/output_files.h"
#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/graph/graph.h"
#include "hexplan/graph/zoo.h"

namespace hx::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command AddModelsCommand(CLI::App& root);
Command AddInspectCommand(CLI::App& root);
Command AddExportCommand(CLI::App& root);
Command AddShareCommand(CLI::App& root);
Command AddTopoCommand(CLI::App& root);
Command AddTpCommand(CLI::App& root);
Command AddSimulateCommand(CLI::App& root);
Command AddShowCommand(CLI::App& root);
Command AddPlaceCommand(CLI::App& root);
Command AddCompareCommand(CLI::App& root);
Command AddRunCommand(CLI::App& root);
Command AddProfileCommand(CLI::App& root);
Command AddPlannersCommand(CLI::App& root);
Command AddCalibrateCommand(CLI::App& root);

// Prints "hexplan: error: <message>" to stderr and returns the status's exit code.
int ReportError(const Status& status);

// The exit code of a command stopped by SIGINT or SIGTERM (128 + SIGINT, as shells report it).
constexpr int kExitInterrupted = 130;

// The logger every command uses (warnings to stderr; it counts them).
StderrLogger& CliLogger();

// `--strict`: warnings are errors. A command that warned then writes nothing and exits 2.
void SetStrict(bool strict);
// Status::Ok, or, under --strict after a warning, the error that says so.
Status CheckStrict();
// Renames a command's staged outputs into place, unless --strict refuses them (CheckStrict).
Status CommitOutputs(OutputFiles& outputs);

// The model options shared by every command that takes a MODEL: --batch --seq --dtype --image
// --layers --io.
struct ModelArgs {
  // --image, --layers and --io when not given (the model's default); a value given must be >= 1.
  static constexpr int64_t kNotGiven = std::numeric_limits<int64_t>::min();

  std::string model;
  int64_t batch = 1;
  int64_t seq = 0;
  std::string dtype = "fp32";
  int64_t image = kNotGiven;
  int64_t lstm_layers = kNotGiven;
  int64_t lstm_io = kNotGiven;
  std::string batchnorm = "folded";

  // Adds MODEL as a positional argument when `positional`, else as --model.
  void AddTo(CLI::App* app, bool positional = true);
  StatusOr<graph::ZooOptions> ToZooOptions() const;
  StatusOr<graph::Graph> Load() const;
};

// The cost-model flags shared by every command that builds a cost model (place, compare, simulate,
// show): --cost-model calibrated|roofline and --calibration FILE (repeatable; a device model's file
// replaces the builtin of that model).
struct CostModelArgs {
  std::string kind = "calibrated";
  std::vector<std::string> calibrations;

  void AddTo(CLI::App* app);
  // The options they select; a bad file is an error naming --calibration and the file's field.
  StatusOr<cost::CostModelOptions> ToOptions() const;
};

}  // namespace hx::cli
