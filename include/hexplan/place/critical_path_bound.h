#pragma once
// SortingHat's "theoretical minimum through model parallelism alone" (§5): the longest path through
// the graph when every op takes its fastest time over the cluster's devices (in device memory or by
// direct host access, whichever is faster), communication is free and devices are unlimited. It is
// a bound, not a plan: no plan on the cluster simulates faster (it is the critical-path term of
// sim::ComputeLowerBound).

#include <vector>

#include "hexplan/core/id.h"
#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"

namespace hx::place {

struct CriticalPathBoundResult {
  double seconds = 0.0;
  std::vector<NodeId> ops;  // the path's ops, source to sink
};

// The bound in seconds (fails on a cyclic graph).
StatusOr<double> CriticalPathBound(const cost::CostModel& cost);
// The bound with the ops on its path.
StatusOr<CriticalPathBoundResult> CriticalPathBoundDetail(const cost::CostModel& cost);

}  // namespace hx::place
