#include "hexplan/place/warm_start.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "hexplan/place/list/baechi.h"
#include "hexplan/place/list/list_scheduling.h"

namespace hx::place {

StatusOr<WarmStart> BestFastSchedule(const SchedulingProblem& p,
                                     const std::function<double(const Schedule&)>& score) {
  std::optional<WarmStart> best;
  double best_score = 0.0;
  Status last_error = Status::Ok();
  const std::pair<const char*, StatusOr<Schedule> (*)(const SchedulingProblem&)> planners[] = {
      {"heft", &ScheduleHeft}, {"peft", &SchedulePeft}, {"m-etf", &ScheduleMEtf}};
  for (const auto& [name, fn] : planners) {
    auto s = fn(p);
    if (!s.ok()) {
      last_error = s.status();
      continue;
    }
    const double value = score ? score(*s) : s->makespan;
    if (!best || value < best_score) {
      best = WarmStart{std::move(*s), name};
      best_score = value;
    }
  }
  if (!best) return last_error;
  return std::move(*best);
}

StatusOr<WarmStart> WarmStartFor(const SchedulingProblem& problem, bool wanted,
                                 const std::string& planner, Logger* logger,
                                 const std::function<double(const Schedule&)>& score) {
  if (!wanted) return InvalidArgument(planner + ": no warm start (--no-warm-start)");
  auto warm = BestFastSchedule(problem, score);
  if (!warm.ok())
    LogTo(logger, LogLevel::kInfo,
          planner + ": no warm start from the fast planners (" + warm.status().message() + ")");
  return warm;
}

Status CheckMemoryCapacity(const SchedulingProblem& p, const std::string& planner,
                           const std::string& constraint) {
  double need = 0.0, have = 0.0, largest = 0.0, roomiest = 0.0;
  int largest_task = 0;
  for (int i = 0; i < p.num_tasks(); ++i) {
    need += p.task_memory(i);
    if (p.task_memory(i) > largest) largest = p.task_memory(i), largest_task = i;
  }
  for (int k = 0; k < p.num_devices(); ++k) {
    have += p.device_memory(k);
    roomiest = std::max(roomiest, p.device_memory(k));
  }
  auto bytes = [](double b) { return std::to_string(static_cast<long long>(std::llround(b))); };
  if (need > have * (1 + 1e-12)) {
    return ResourceExhausted(planner + ": infeasible " + constraint + ": the operators need " +
                             bytes(need) + " bytes, the devices hold " + bytes(have) +
                             " (short by " + bytes(need - have) + ")");
  }
  if (largest > roomiest * (1 + 1e-12)) {
    return ResourceExhausted(planner + ": infeasible " + constraint + ": operator '" +
                             p.name(largest_task) + "' needs " + bytes(largest) +
                             " bytes, the largest device holds " + bytes(roomiest) + " (short by " +
                             bytes(largest - roomiest) + ")");
  }
  return Status::Ok();
}

}  // namespace hx::place
