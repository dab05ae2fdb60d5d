#include "hexplan/share/planner.h"

#include "hexplan/core/stopwatch.h"
#include "hexplan/share/caps.h"
#include "hexplan/share/slo_repair.h"

namespace hx::share {

StatusOr<SharePlan> PlanShare(const ShareProblem& problem, const ShareOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  HX_RETURN_IF_ERROR(CheckProblemCaps(problem, options));
  HX_ASSIGN_OR_RETURN(const ShareAlgorithm algorithm, ShareAlgorithmRegistry().Find(options.algo));
  Stopwatch watch;
  auto plan_once = [&](const ShareProblem& sized) { return algorithm.plan(sized, options); };
  // --repair: another algorithm's plans checked and repaired as hexplan's are (hexplan always is).
  const bool repair = options.repair && options.verify_seeds > 0 && algorithm.name != "hexplan";
  HX_ASSIGN_OR_RETURN(SharePlan plan,
                      repair ? PlanMeetingSlos(problem, options, plan_once) : plan_once(problem));
  plan.algo = algorithm.name;
  plan.metrics.scheduling_time_ms = watch.ElapsedSeconds() * 1e3;
  ComputeMetrics(problem, &plan);
  return plan;
}

}  // namespace hx::share
