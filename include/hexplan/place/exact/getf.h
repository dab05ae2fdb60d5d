#pragma once
// GETF, Generalized Earliest Time First: Su, Ren, Vardi and Wierman, "Communication-aware
// scheduling of precedence-constrained tasks on related machines", arXiv:2004.14639 (2020), the
// exact baseline MOIRAI compares against (its ref. [33]; MOIRAI's authors solve the GETF
// assignment program with Gurobi). Two steps:
//
//  1. Group assignment. Devices with identical per-task costs form a group of related machines.
//     A MILP assigns every task to one group (x_tg) minimising D subject to
//       C_t >= sum_g p_tg x_tg                                          (release)
//       C_j >= C_i + sum_g p_jg x_jg + sum_{g != h} c_ij(g,h) u_ij,gh    (precedence +
//       communication) u_ij,gh >= x_ig + x_jh - 1                                      (the ends in
//       groups g, h) sum_t p_tg x_tg <= |g| D                                         (average load
//       of a group) sum_t m_t x_tg <= sum_{k in g} M_k                               (memory of a
//       group) C_t <= D
//     where c_ij(g,h) is the cheapest transfer between a device of g and one of h. The paper solves
//     the LP relaxation and rounds; we solve the integer program as MOIRAI did. Its optimum (or the
//     solver's bound at the limit) is a lower bound on every schedule's makespan (loads relaxed).
//  2. ETF within groups: repeatedly start the (ready task, device of its group with memory left)
//     pair that can start earliest (ties: higher upward rank, then lower index), without insertion.
//
// Warm-started from the best fast schedule (the MIP start), and never worse than it: when ETF's
// schedule is longer, the warm start is returned.

#include <functional>
#include <string>
#include <vector>

#include "hexplan/core/logger.h"
#include "hexplan/core/status.h"
#include "hexplan/milp/solver.h"
#include "hexplan/place/plan_status.h"
#include "hexplan/place/scheduling_problem.h"

namespace hx::place {

struct GetfOptions {
  double time_limit_s = 30.0;
  double relative_gap = 1e-4;
  int threads = 1;
  int seed = 0;
  // The exact planners' files (exact_planner.h): the assignment MILP written in LP or MPS format,
  // or an external solver's solution of it read instead of solving.
  std::string export_lp;
  std::string export_mps;
  std::string solution_path;
  std::function<void(const milp::ProgressPoint&)> on_progress;  // the solver's progress (or null)
  Status Validate() const;
};

struct GetfResult {
  Schedule schedule;
  // "optimal" (the makespan meets the proven bound), "feasible" (GETF's schedule), "warm_start"
  // (the warm start was shorter, or the MILP found no assignment in the limit).
  PlanStatus status = PlanStatus::kHeuristic;
  double bound = 0.0;  // proven lower bound on the makespan (the assignment MILP's bound)
  double gap = 0.0;    // (makespan - bound) / makespan
  int num_groups = 0;
  size_t num_binaries = 0;
  double assignment_objective = 0.0;  // the MILP's D for the assignment it returned
  double solve_time_s = 0.0;
};

// Devices with identical costs on every task (and the same memory) form a group; groups in order
// of their first device.
std::vector<std::vector<int>> RelatedDeviceGroups(const SchedulingProblem& problem);

// Step 2 alone: ETF with each task restricted to the devices of `task_group` (falling back to any
// device with memory left when its group has none). Fails, naming the task, when no device has
// room.
StatusOr<Schedule> ScheduleEtfWithinGroups(const SchedulingProblem& problem,
                                           const std::vector<std::vector<int>>& groups,
                                           const std::vector<int>& task_group);

// Both steps. `warm_start` may be null. Fails only on bad input, or when memory cannot hold the
// operators (naming the constraint and the shortfall) and no warm start exists.
StatusOr<GetfResult> ScheduleGetf(const SchedulingProblem& problem, const Schedule* warm_start,
                                  const GetfOptions& options, Logger* logger = nullptr);

}  // namespace hx::place
