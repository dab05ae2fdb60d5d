#pragma once
// `hexplan share`: plans GPU sharing with one of the algorithms of ShareAlgorithms()
// (algorithms.h lists them: parvagpu and its variants, gpulet, igniter, mig-serving, exact-pack,
// exact and hexplan).

#include "hexplan/share/algorithms.h"
#include "hexplan/share/plan.h"

namespace hx::share {

// Validates the options, finds options.algo in ShareAlgorithmRegistry() (an unknown name is
// NotFound, naming --algo and the known algorithms), runs it, times it and fills the metrics.
StatusOr<SharePlan> PlanShare(const ShareProblem& problem, const ShareOptions& options);

}  // namespace hx::share
