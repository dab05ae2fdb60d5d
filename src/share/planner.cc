#include "hexplan/share/planner.h"

#include "hexplan/core/stopwatch.h"
#include "hexplan/share/caps.h"

namespace hx::share {

StatusOr<SharePlan> PlanShare(const ShareProblem& problem, const ShareOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  HX_RETURN_IF_ERROR(CheckProblemCaps(problem, options));
  HX_ASSIGN_OR_RETURN(const ShareAlgorithm algorithm, ShareAlgorithmRegistry().Find(options.algo));
  Stopwatch watch;
  HX_ASSIGN_OR_RETURN(SharePlan plan, algorithm.plan(problem, options));
  plan.algo = algorithm.name;
  plan.metrics.scheduling_time_ms = watch.ElapsedSeconds() * 1e3;
  ComputeMetrics(problem, &plan);
  return plan;
}

}  // namespace hx::share
