#pragma once
// The skeleton every exact (MILP) planner shares, so that MOIRAI, GETF, EfficientMIP and SortingHat
// supply only their model:
//   1. options: the planner's own plus --export-lp, --export-mps and --solution (ExactOptionSpecs);
//   2. the model: the planner builds its MILP from its warm starts (ExactPlanner::SolveModel) and
//      hands it to RunMilp, which exports it when asked, reads an external solution instead of
//      solving when given one, or solves it under the time left, reporting progress;
//   3. keep the faster: the model's plan against its warm start's, by simulation (the MILP's model
//      is not the simulator's), so an exact planner is never worse than its warm start;
//   4. report: status, the model's objective, the solver's bound and gap, a detail line.

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hexplan/core/logger.h"
#include "hexplan/core/options.h"
#include "hexplan/core/status.h"
#include "hexplan/milp/model.h"
#include "hexplan/milp/solver.h"
#include "hexplan/place/planner.h"

namespace hx::place {

// --export-lp, --export-mps and --solution: every exact planner owns them.
std::vector<OptionSpec> ExactOptionSpecs();

// How a planner's MILP meets the solver.
struct MilpSettings {
  double time_limit_s = 60.0;  // for this model's solve (a planner with several splits it)
  double relative_gap = 1e-4;
  int threads = 1;
  int seed = 0;
  std::string export_lp;      // write the model here (LP format) before solving
  std::string export_mps;     // the same in free MPS
  std::string solution_path;  // read this solution instead of solving
  bool progress_to_stderr = false;
  std::function<void(const milp::ProgressPoint&)> on_progress;  // may be null

  // A copy for the `index`-th of `count` models of one request: with more than one, the export
  // paths get ".<index>" before their extension and a solution file is refused (it answers one
  // model).
  StatusOr<MilpSettings> ForPart(int index, int count, const std::string& planner) const;
  bool WantsFiles() const {
    return !export_lp.empty() || !export_mps.empty() || !solution_path.empty();
  }
};

// The solver options of the scheduling MILPs (MoiraiOptions, GetfOptions: fields of the same
// names) to and from MilpSettings.
template <typename SolverOptions>
MilpSettings MilpSettingsOf(const SolverOptions& o, double time_limit_s) {
  MilpSettings s;
  s.time_limit_s = time_limit_s;
  s.relative_gap = o.relative_gap;
  s.threads = o.threads;
  s.seed = o.seed;
  s.export_lp = o.export_lp;
  s.export_mps = o.export_mps;
  s.solution_path = o.solution_path;
  s.on_progress = o.on_progress;
  return s;
}
template <typename SolverOptions>
void ApplyMilpSettings(const MilpSettings& s, double time_limit_s, SolverOptions* o) {
  o->time_limit_s = time_limit_s;
  o->relative_gap = s.relative_gap;
  o->threads = s.threads;
  o->seed = s.seed;
  o->export_lp = s.export_lp;
  o->export_mps = s.export_mps;
  o->solution_path = s.solution_path;
  o->on_progress = s.on_progress;
}

// The settings of a request: its shared options (gap, threads, seed), the exact options, the
// given time limit.
MilpSettings MilpSettingsFor(const PlanRequest& request, const OptionSet& options,
                             double time_limit_s);

// What RunMilp did with a model.
enum class MilpRunKind {
  kSolved,        // solved by CBC: `result` is the solver's
  kFromSolution,  // values read from MilpSettings::solution_path (`violations` counts the model
                  // constraints they break); result.status is kFeasible
};
struct MilpRun {
  MilpRunKind kind = MilpRunKind::kSolved;
  milp::SolveResult result;
  size_t violations = 0;
};

// Step 2's parts: the model written to the requested LP and MPS files (none asked: nothing), and
// the values of settings.solution_path read for it (the violated constraints logged and counted).
Status ExportMilp(const milp::Model& model, const MilpSettings& settings);
StatusOr<MilpRun> ReadMilpSolution(const milp::Model& model, const MilpSettings& settings,
                                   const std::string& planner, Logger* logger);

// Exports the model when asked, then reads the external solution or solves with CBC under
// settings.time_limit_s (with the MIP start, when not empty). Errors name the file.
StatusOr<MilpRun> RunMilp(const milp::Model& model, std::vector<double> mip_start,
                          const MilpSettings& settings, const std::string& planner, Logger* logger);

// A plan the model started from (a fast planner's, a heuristic's), kept when it simulates faster.
struct WarmPlan {
  std::string name;
  plan::Plan plan;
  std::optional<double> objective_s;  // in the model's own terms, when it has one
};

// What an exact planner's model hands back to the skeleton.
struct ExactAnswer {
  plan::Plan plan;
  PlanStatus status = PlanStatus::kFeasible;
  std::optional<double> model_objective_s;
  std::optional<double> bound_s;
  std::optional<double> gap;
  std::string detail;
  // The warm starts: the skeleton returns the fastest of them instead of `plan` when it simulates
  // faster (or `plan` does not pass the validator), with status warm_start.
  std::vector<WarmPlan> warm_plans;
  bool from_solution_file = false;  // a --solution plan is returned as read, never replaced
  // The model's own plan is returned even when a fast planner's is faster (an ablation whose
  // effect must show); else the skeleton adds the plans of `single`, `heft`, `peft`, `m-etf`,
  // `m-topo` and `m-sct` to the warm plans, so that an exact planner is never slower than the
  // obvious plan (or than Baechi's planners, MOIRAI's baselines).
  bool keep_own_plan = false;
  std::string kept_warm_start;  // set by the skeleton: the name of the warm start kept
};

class ExactPlanner : public Planner {
 public:
  std::vector<OptionSpec> Options() const final;
  StatusOr<PlanResult> Plan(const PlanRequest& request) final;

 protected:
  // Options the model owns beyond the exact ones.
  virtual std::vector<OptionSpec> ModelOptions() const { return {}; }
  // Warm starts, the model built and solved through RunMilp, the solution turned into a plan.
  // `settings.time_limit_s` is what is left of the request's limit for all of it.
  virtual StatusOr<ExactAnswer> SolveModel(const PlanRequest& request, const OptionSet& options,
                                           const MilpSettings& settings) = 0;
  // Called with the answer after step 3 (for planners that report which plan was kept).
  virtual void OnAnswer(const ExactAnswer& answer) {}
};

// What is left of the request's time limit for a model started `elapsed_s` into the planner,
// keeping a little for turning its answer into a plan and the baselines' share
// (BaselineReserveSeconds; at least 10 ms: the model then keeps its warm start).
double TimeLeftForModel(const PlanRequest& request, double elapsed_s);

// The time the skeleton keeps for the fast planners it runs after the model (the baselines) and
// for simulating their plans: kBaselineSecondsPerOp per op for each, at most a quarter of the
// limit.
inline constexpr double kBaselineSecondsPerOp = 10e-6;
double BaselineReserveSeconds(double time_limit_s, size_t ops);

// Which baselines fit in what is left of the time limit. Each is estimated at the longest one has
// taken so far, and at least kBaselineSecondsPerOp per op; one that would end past the deadline is
// skipped (and named in the plan's `detail`), so an exact planner ends near its limit on big graphs
// instead of running every fast planner after a MILP that used the whole limit. Deterministic for
// given clock readings (tests/place/time_limit_test.cc).
class BaselineBudget {
 public:
  BaselineBudget(double deadline_s, size_t ops) : deadline_s_(deadline_s), ops_(ops) {}
  // True when `name` may start at `now_s` (seconds on the planner's clock); else it is recorded
  // as skipped.
  bool Admit(const std::string& name, double now_s);
  // A baseline that was admitted took `seconds` (its plan's check and simulation included).
  void Ran(double seconds) { longest_s_ = std::max(longest_s_, seconds); }
  double Estimate() const;
  const std::vector<std::string>& skipped() const { return skipped_; }
  // "; skipped for the time limit: peft, m-etf" (empty when none was).
  std::string Note() const;

 private:
  double deadline_s_;
  size_t ops_;
  double longest_s_ = 0.0;
  std::vector<std::string> skipped_;
};

// Step 3 alone: `answer.plan` against `answer.warm_plans` (those the validator accepts) by
// simulation; the fastest becomes the answer's plan (a warm one with status warm_start, its
// objective and the gap to the bound, or the bound and no objective or gap when it has no objective
// in the model's terms). Fails when no plan passes the validator: ResourceExhausted when the
// model's plan breaks memory only, else Internal.
Status KeepFasterPlan(const cost::CostModel& cost, ExactAnswer* answer);

}  // namespace hx::place
