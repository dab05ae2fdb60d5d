#pragma once
// What a planner found, as opposed to whether the call worked (a Status): HiGHS's split of the
// call's status from the solver's. One spelling each in JSON and on screen (docs/formats.md).

#include <optional>
#include <string_view>

namespace hx::place {

enum class PlanStatus {
  kOptimal,      // "optimal": proved optimal for the planner's model (within its gap)
  kFeasible,     // "feasible": a solver's incumbent or a plan read from --solution, no proof
  kTimeLimit,    // "time_limit": the time limit ended the search; the best plan found so far
  kWarmStart,    // "warm_start": an exact planner kept its warm start (nothing better found)
  kHeuristic,    // "heuristic": a rule, no optimality claim
  kInterrupted,  // "interrupted": stopped by the user; the best valid plan found so far
};

const char* PlanStatusName(PlanStatus status);
std::optional<PlanStatus> ParsePlanStatus(std::string_view name);

}  // namespace hx::place
