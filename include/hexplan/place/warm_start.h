#pragma once
// The warm start the exact planners (moirai, getf) begin from: the best schedule of the fast list
// schedulers HEFT, PEFT and m-ETF, with the name of the one that made it.

#include <functional>
#include <string>

#include "hexplan/core/logger.h"
#include "hexplan/core/status.h"
#include "hexplan/place/scheduling_problem.h"

namespace hx::place {

struct WarmStart {
  Schedule schedule;
  std::string source;  // "heft", "peft" or "m-etf"
};

// The best of HEFT, PEFT and m-ETF (earlier first on ties) by `score` (default: the makespan).
// Fails with the last planner's error when none finds a schedule (memory too tight for their
// greedy rules).
StatusOr<WarmStart> BestFastSchedule(const SchedulingProblem& problem,
                                     const std::function<double(const Schedule&)>& score = nullptr);

// The warm start of an exact planner: BestFastSchedule, or an error saying why there is none
// (`--no-warm-start`, or no fast planner found a schedule; logged at info level for `planner`).
StatusOr<WarmStart> WarmStartFor(const SchedulingProblem& problem, bool wanted,
                                 const std::string& planner, Logger* logger,
                                 const std::function<double(const Schedule&)>& score = nullptr);

// The memory checks every exact planner makes before building a model: ResourceExhausted naming
// `constraint` (e.g. "memory constraints (5)") and the shortfall in bytes when the operators need
// more than all devices hold, or one operator more than the largest device holds.
Status CheckMemoryCapacity(const SchedulingProblem& problem, const std::string& planner,
                           const std::string& constraint);

}  // namespace hx::place
