#pragma once
// What any plan needs in device memory, counted as the validator counts it (plan::PlanMemoryBound),
// and the check every planner's request passes before planning: a request whose operators cannot
// fit in any plan is refused with the arithmetic (ResourceExhausted, CLI exit 2), never left to a
// planner to fail on (or hand back an invalid plan).
//
// Two bounds hold for every plan:
//  - a workload's stated footprints (MOIRAI mi, EfficientMIP size) are held on the op's device for
//    the whole run, so their sum must fit in the devices' total capacity;
//  - an operator needs, on its device at the moment it runs, its stated footprint or its outputs,
//    its activation inputs and its workspace, so it must fit on one device that runs it.
// Weights are not in either bound: a plan may read them from host memory (DHA).

#include <cstdint>
#include <string>

#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"

namespace hx::place {

struct MemoryNeed {
  int64_t stated_total_bytes = 0;     // sum of the stated footprints of all ops
  int64_t capacity_total_bytes = 0;   // sum of the devices' capacities (-1: one is unlimited)
  NodeId largest_op;                  // the op whose footprint leaves the least room (or none)
  int64_t largest_op_bytes = 0;       // its footprint
  int64_t largest_op_room_bytes = 0;  // the largest capacity among the devices that run it
};

// The footprint of `op` at the moment it runs (see above).
int64_t OpFootprintBytes(const cost::CostModel& cost, NodeId op);

MemoryNeed ComputeMemoryNeed(const cost::CostModel& cost);

// ResourceExhausted with the arithmetic when no plan can fit, else Ok.
Status CheckMemoryFeasible(const cost::CostModel& cost);

}  // namespace hx::place
