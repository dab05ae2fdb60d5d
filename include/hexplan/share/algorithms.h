#pragma once
// The sharing algorithms behind `hexplan share --algo NAME`, listed once (src/share/algorithms.cc)
// and chosen by name through one hx::Registry. Each entry plans a problem under validated options;
// PlanShare (planner.h) validates, looks the name up, times the call and fills the metrics.

#include <functional>
#include <string>
#include <vector>

#include "hexplan/core/registry.h"
#include "hexplan/core/status.h"
#include "hexplan/share/plan.h"

namespace hx::share {

using ShareAlgorithmFn =
    std::function<StatusOr<SharePlan>(const ShareProblem& problem, const ShareOptions& options)>;

struct ShareAlgorithm {
  std::string name;
  std::string description;  // one line, for help texts
  ShareAlgorithmFn plan;
};

// Every algorithm, in the order of the comparison table (AlgoNames()).
const std::vector<ShareAlgorithm>& ShareAlgorithms();

// The same algorithms by name. Find of an unknown name returns NotFound
// "--algo: unknown algorithm 'NAME' (known: ...)".
const Registry<ShareAlgorithm>& ShareAlgorithmRegistry();

// Places per-service instance counts with the exact packer; segments of one service are kept on
// as few GPUs as the packing allows.
SharePlan PlaceChoice(const ShareProblem& problem, const std::vector<TripletArray>& triplets,
                      const std::vector<SizeCounts>& choice);

}  // namespace hx::share
