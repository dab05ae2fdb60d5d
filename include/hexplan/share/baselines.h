#pragma once
// The baselines the paper compares with, modelled on the same profiles (docs/sharing.md says how
// each is approximated).

#include "hexplan/share/plan.h"

namespace hx::share {

// gpulet: MPS shares without MIG, one process per share; full-GPU shares for what a whole GPU can
// take, the smallest share covering the rest; at most two shares per GPU, the second taking all the
// GPU's remaining GPCs. Latency and throughput carry the interference margin.
SharePlan PlanGpulet(const ShareProblem& problem, const ShareOptions& options);

// iGniter: one MPS share per service (the smallest covering its rate at the SLO share with the
// interference margin), padded by the margin in whole GPCs, packed first fit in service order.
// A service that one GPU cannot serve is unsupported (named in plan.unsupported).
SharePlan PlanIgniter(const ShareProblem& problem, const ShareOptions& options);

// MIG-serving's fast greedy: MIG only, one process per instance; repeatedly takes the maximal GPU
// configuration whose instances, each given to the service it serves the largest share of, cover
// the most of the remaining demand.
SharePlan PlanMigServing(const ShareProblem& problem, const ShareOptions& options);

}  // namespace hx::share
