#pragma once
// MOIRAI's placement MILP (§III-D of ../shared/papers/004_25e251f7090b3bd7.txt) on a
// SchedulingProblem:
//   assignment x_ik (4c); start/completion of every operator and every data flow (4a, 4b); memory
//   (5); non-overlap of unrelated operators on one device (6); communication with one channel per
//   ordered device pair, used only when the two ends are on different devices (7); congestion
//   control: two data flows leaving (or entering) the same device never overlap (8).
// Big-M constants are the tightest the horizon allows: the warm start's makespan bounds every time
// in an optimal solution, so every S and C gets that upper bound and M = horizon.

#include <functional>
#include <string>

#include "hexplan/core/logger.h"
#include "hexplan/core/status.h"
#include "hexplan/milp/solver.h"
#include "hexplan/place/plan_status.h"
#include "hexplan/place/scheduling_problem.h"

namespace hx::place {

struct MoiraiOptions {
  double time_limit_s = 30.0;
  double relative_gap = 1e-6;
  int threads = 1;
  int seed = 0;
  bool congestion_control = true;  // constraints (8)
  // Models larger than this many constraints are not built; the warm start is returned instead.
  size_t max_constraints = 400000;
  bool progress_to_stderr = false;
  std::function<void(const milp::ProgressPoint&)> on_progress;  // the solver's progress (or null)
  // Write the model here before solving (optional). A model above max_constraints is still
  // written (for an external solver), just not solved here.
  std::string export_lp;
  std::string export_mps;
  // Read an external solver's solution of the exported model (Gurobi .sol, HiGHS, SCIP or CBC
  // solution file) and build the schedule from it instead of solving: the placement (x) and each
  // device's order (S), re-timed with TightenSchedule.
  std::string solution_path;
  Status Validate() const;
};

struct MoiraiResult {
  Schedule schedule;  // tightened: each device's MILP order, started as early as possible
  // "optimal": proven within the gap. "time_limit": the solver's incumbent, better than the warm
  // start, when the limit ended. "warm_start": the warm start kept (the solver found nothing
  // better, or the model was too large to solve). "feasible": built from --solution.
  PlanStatus status = PlanStatus::kWarmStart;
  double model_objective = 0.0;  // the MILP's own makespan for the returned placement
  bool has_bound = false;        // false for --solution and unsolved models
  double bound = 0.0;            // the solver's proven lower bound
  double gap = 0.0;
  size_t num_binaries = 0;
  size_t num_constraints = 0;
  size_t estimated_constraints = 0;  // the size estimate the max_constraints check used
  double solve_time_s = 0.0;
  size_t solution_violations = 0;  // --solution: model constraints the file's values violate
};

// `warm_start` (may be null) must be a valid schedule of `problem` (e.g. HEFT's); it sets the
// horizon and the MIP start, and is returned when the solver finds nothing better. Without one (the
// fast planners can fail where memory is tight), the horizon is the serial bound: every task at its
// slowest plus every transfer at its slowest. Fails, naming the constraint class and the shortfall,
// when the memory cannot hold the operators, or when the limit ends with no solution and no warm
// start; never at the limit when a warm start exists. With `solution_path`, fails naming the file
// and the constraint when the solution does not assign every operator once within memory.
StatusOr<MoiraiResult> ScheduleMoirai(const SchedulingProblem& problem, const Schedule* warm_start,
                                      const MoiraiOptions& options, Logger* logger = nullptr);

// The MILP's own makespan for a schedule's placement and per-device order: each cross-device flow
// waits for its producer and, with congestion control (8), for the sender's outgoing and the
// receiver's incoming channel (one flow at a time each). Loads are not part of the MILP. The MOIRAI
// planner picks its warm start by this measure.
double ModelMakespan(const SchedulingProblem& problem, const Schedule& schedule,
                     bool congestion_control = true);

// A schedule that respects device memory when the greedy planners cannot find one: a small MILP
// packs the operators into the devices' memory balancing their compute, then TightenSchedule times
// it in topological order. Fails when the memory cannot hold the operators at all.
StatusOr<Schedule> MemoryFeasibleSchedule(const SchedulingProblem& problem, double time_limit_s);

// Re-times a placement: each device runs its tasks in the order of `order_key` (ascending), each as
// early as its inputs, its device and its loads allow. Never later than the given times.
Schedule TightenSchedule(const SchedulingProblem& problem, const std::vector<int>& device,
                         const std::vector<double>& order_key);

}  // namespace hx::place
