#pragma once
// Solving a Model with COIN-OR CBC (embedded), and the files that let a user solve our exact models
// with another solver: LP/MPS export, and Gurobi / HiGHS / SCIP / CBC solution files read back.
//
// Two different outcomes, kept apart (as HiGHS does): the returned Status says whether the call
// worked; SolveResult::status says what the solver found. A time limit with an incumbent is a
// success with status kFeasible.

#include <functional>
#include <string>
#include <vector>

#include "hexplan/core/logger.h"
#include "hexplan/core/status.h"
#include "hexplan/milp/model.h"

namespace hx::milp {

enum class SolveStatus : uint8_t {
  kOptimal,     // proven optimal within the gap
  kFeasible,    // a limit was reached with an incumbent
  kInfeasible,  // proven infeasible
  kNoSolution,  // a limit was reached without any incumbent
  kUnbounded,
};
const char* SolveStatusName(SolveStatus status);

struct ProgressPoint {
  double time_s = 0.0;
  double incumbent = kInfinity;  // objective of the best solution so far (inf: none)
  double bound = -kInfinity;     // best proven bound so far
};

// CBC's preprocessing (CglPreProcess). kAuto: off when a MIP start is used, on otherwise. CBC 2.10
// with both segfaults in CglPreProcess::postProcess when the limit ends the search (reproduced on
// small MOIRAI models with limits of 0.15-0.3 s; tests/milp "MipStartWithShortLimits...").
enum class Preprocess : uint8_t { kAuto, kOn, kOff };

struct SolveOptions {
  // Wall-clock seconds for the whole call, model loading included (CBC is told to count elapsed
  // time, not CPU time).
  double time_limit_s = 60.0;
  double relative_gap = 1e-4;
  int threads = 1;
  int seed = 0;
  // A MIP start: a value per variable (size num_vars) or empty. Checked for feasibility first; an
  // infeasible start is reported through the logger and dropped.
  std::vector<double> mip_start;
  // Limits that stop CBC whatever the machine's load (0: none): branch-and-bound nodes, and
  // solutions found (1: the first feasible point). The result is then kFeasible (or kNoSolution).
  int max_nodes = 0;
  int max_solutions = 0;
  Preprocess preprocess = Preprocess::kAuto;
  // Print the solver's own raw progress line on stderr (a debugging aid; the CLI reports through
  // on_progress instead).
  bool progress_to_stderr = false;
  // Called while CBC runs (from its event handler: a node done, a solution found) on every new
  // incumbent, and when the bound rises, at most every 0.25 s; points are minimisation values. May
  // be null. Called on this thread when CBC runs in a child process (the points come through a
  // pipe), else on CBC's threads, one call at a time.
  std::function<void(const ProgressPoint&)> on_progress;
  // Enforce the limit from outside CBC: solve in a child process and stop it when it runs past
  // time_limit_s * 1.05 + 0.5 s, or when it crashes (CBC checks its limit between nodes, not inside
  // an LP solve: a large root LP runs for minutes past it). The MIP start, when feasible, is then
  // the result (status kFeasible). CBC runs in this process when false.
  bool hard_limit = true;

  Status Validate() const;
};

struct SolveResult {
  SolveStatus status = SolveStatus::kNoSolution;
  double objective = kInfinity;  // of the returned solution (inf when none)
  double bound = -kInfinity;     // best proven bound (for a minimisation)
  double gap = kInfinity;        // |objective - bound| / max(|objective|, 1e-9)
  std::vector<double> values;    // empty when there is no solution
  double solve_time_s = 0.0;
  bool used_mip_start = false;
  bool preprocessed = false;  // whether CBC's preprocessing was on
  // Every point passed to on_progress (or that would have been), then the closing point.
  std::vector<ProgressPoint> progress;

  bool has_solution() const { return !values.empty(); }
  double Value(Var v) const { return values.at(v.index()); }
};

// Solves with CBC. Errors only for a malformed model or options; infeasibility is a result.
StatusOr<SolveResult> SolveWithCbc(const Model& model, const SolveOptions& options,
                                   Logger* logger = nullptr);

// The name a variable or constraint gets in exported files: characters other than letters, digits,
// '_' and '.' become '_' (LP and MPS readers reject them), and a leading digit gets a '_' prefix.
std::string ExportName(const std::string& name);
// The names the model's variables get in exported files (ExportName, then made unique with
// "_2"...).
std::vector<std::string> ExportVariableNames(const Model& model);

// Exports in CPLEX LP / free MPS format, which CBC, Gurobi, HiGHS and SCIP read. The objective
// constant becomes a column fixed at 1. Written atomically.
Status WriteLpFile(const Model& model, const std::string& path);
Status WriteMpsFile(const Model& model, const std::string& path);
// Reads an LP or MPS file (by extension) back into a Model.
StatusOr<Model> ReadModelFile(const std::string& path);

// Reads a solution file written by Gurobi (.sol), HiGHS, SCIP or CBC for `model`; values are
// matched by variable name, absent names are 0. Errors name the file and line.
StatusOr<std::vector<double>> ReadSolutionFile(const std::string& path, const Model& model);

}  // namespace hx::milp
