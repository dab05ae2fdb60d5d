#pragma once
// `hexplan share`: plans GPU sharing with one of the algorithms of AlgoNames():
//  parvagpu              Algorithms 1 and 2 (MIG + MPS)
//  parvagpu-single       MIG only, one process per instance
//  parvagpu-unoptimized  no Allocation Optimization
//  gpulet                MPS shares without MIG, at most two services per GPU
//  igniter               MPS shares without MIG plus an interference margin, one share per service
//  mig-serving           MIG only, its fast greedy (one best-scoring GPU configuration at a time)
//  exact-pack            ParvaGPU's segments on the fewest GPUs (exact packer)
//  exact                 the fewest GPUs over all segment choices (branch and bound, exact packer)
//  hexplan               ours: never more GPUs than parvagpu (see docs/sharing.md)

#include "hexplan/share/plan.h"

namespace hx::share {

StatusOr<SharePlan> PlanShare(const ShareProblem& problem, const ShareOptions& options);

// Places per-service instance counts with the exact packer; segments of one service are kept on
// as few GPUs as the packing allows.
SharePlan PlaceChoice(const ShareProblem& problem, const std::vector<TripletArray>& triplets,
                      const std::vector<SizeCounts>& choice);

}  // namespace hx::share
