#pragma once
// The exact bound: the fewest GPUs over every choice of segments (minimal covers of each service's
// rate with its optimal triplets), then the fewest GPCs on that many GPUs. A depth-first search
// over services with memoised states (service, instance counts), pruned by the exact packing
// conditions (FitsOnGpus) relaxed with a lower bound on the GPCs the remaining services need.

#include <cstdint>
#include <vector>

#include "hexplan/share/plan.h"

namespace hx::share {

struct ExactResult {
  bool found = false;  // a choice on `gpus` GPUs was found
  int gpus = 0;
  int gpcs = 0;
  int lower_bound = 0;             // GPUs: no choice fits on fewer (proven part of the search)
  bool proven = false;             // gpus == lower_bound and the GPC minimum was completed
  std::vector<SizeCounts> choice;  // per service
  int64_t nodes = 0;
};

// Starting from a known feasible GPU count `upper_bound` (<= 0: none known), searches downwards:
// each count g - 1 is searched until one has no choice (feasibility is monotone in the GPU count,
// so that proves g minimal) or the `node_limit` states run out; the result is the fewest GPUs found
// with the fewest GPCs for that count (not searched when `upper_bound_gpcs`, the GPCs of the known
// solution, already equals the cheapest covers' total). `found` is false when nothing below or at
// the bound was searched to a solution.
ExactResult MinGpusOverChoices(const std::vector<Service>& services,
                               const std::vector<TripletArray>& triplets, int upper_bound,
                               int upper_bound_gpcs, int64_t node_limit);

// Lower bound on GPUs: the cheapest cover of every service, fractional GPUs rounded up.
int GpuLowerBound(const std::vector<Service>& services, const std::vector<TripletArray>& triplets);

// Local search on segment choices: from `choice`, repeatedly asks for one GPU fewer and swaps one
// service's cover at a time to reduce the violation of the packing conditions (FitsOnGpus), until
// no swap helps. Returns the best choice found (never worse than `choice` in GPUs, then GPCs).
std::vector<SizeCounts> ImproveChoice(const std::vector<Service>& services,
                                      const std::vector<TripletArray>& triplets,
                                      std::vector<SizeCounts> choice, int max_iterations);

}  // namespace hx::share
