#pragma once
// The end of a run whose graph outputs must all reach one group of devices: under mpirun, rank
// 0's node, where `hexplan run` writes them (docs/runtime.md, "Across machines"). The executor
// sends a rank's outputs to rank 0 when that rank's last task is done, so a run ends when the last
// of those messages arrives, not when the last op finishes.

#include <vector>

#include "hexplan/cost/cost_model.h"
#include "hexplan/sim/simulator.h"

namespace hx::sim {

// `device_group[d]` is device d's group (its rank); `sink` the group the outputs go to. Each
// graph output made on a device of another group leaves when that group's last op finishes and
// takes the cost model's time for its bytes from its device to the sink group's first device.
// The result is never below `result.makespan_s`; with every output already in the sink group it
// is the makespan.
double GatheredMakespan(const SimResult& result, const cost::CostModel& cost,
                        const std::vector<int>& device_group, int sink);

}  // namespace hx::sim
