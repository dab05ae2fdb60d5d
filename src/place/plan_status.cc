#include "hexplan/place/plan_status.h"

namespace hx::place {

const char* PlanStatusName(PlanStatus status) {
  switch (status) {
    case PlanStatus::kOptimal:
      return "optimal";
    case PlanStatus::kFeasible:
      return "feasible";
    case PlanStatus::kTimeLimit:
      return "time_limit";
    case PlanStatus::kWarmStart:
      return "warm_start";
    case PlanStatus::kHeuristic:
      return "heuristic";
    case PlanStatus::kInterrupted:
      return "interrupted";
  }
  return "unknown";
}

std::optional<PlanStatus> ParsePlanStatus(std::string_view name) {
  for (PlanStatus s : {PlanStatus::kOptimal, PlanStatus::kFeasible, PlanStatus::kTimeLimit,
                       PlanStatus::kWarmStart, PlanStatus::kHeuristic, PlanStatus::kInterrupted})
    if (name == PlanStatusName(s)) return s;
  return std::nullopt;
}

}  // namespace hx::place
