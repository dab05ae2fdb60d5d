#pragma once
// Checks a plan against its graph and cluster and lists ALL of its violations: each op placed
// exactly once, every input reachable (weights placed, transfers present, routes real), no deadlock
// between the device orders and the copy queues, and memory within capacity at every moment.
//
// Memory is checked with a bound that holds whatever the timing (docs/simulator.md):
// every weight placed on or relayed through a device counts for the whole run; activations count
// from their producer's start to their last local reader (to the end of the device's order when
// they are sent elsewhere, for good when they are graph outputs); arriving activations and graph
// inputs from the start to their last local reader; an op's workspace (its footprint beyond weights
// and outputs) while it runs. An op whose footprint the profile states (a workload's node memory)
// holds that footprint on its device for the whole run instead of a workspace.

#include <cstdint>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/plan/plan.h"

namespace hx::plan {

struct DeviceMemoryBound {
  DeviceId device;
  int64_t weight_bytes = 0;           // weights held for the whole run (relayed ones included)
  int64_t peak_activation_bytes = 0;  // activations, inputs and workspace at their worst moment
  // Footprints a workload states for its ops (MOIRAI mi, EfficientMIP size, PipeDream: the
  // profile's node memory), held on the op's device for the whole run.
  int64_t stated_bytes = 0;
  int64_t capacity_bytes = 0;  // 0: not stated (a CPU's host DRAM), not limited
  int64_t total() const { return weight_bytes + peak_activation_bytes + stated_bytes; }
};

// One entry per device of the cluster.
std::vector<DeviceMemoryBound> PlanMemoryBound(const Plan& plan, const cost::CostModel& cost);

// Every violation, as readable sentences naming ops, weights, devices and transfers.
std::vector<std::string> ValidatePlan(const Plan& plan, const cost::CostModel& cost);

// OK, or InvalidArgument "<source>: invalid plan (N violations):\n  - ...".
Status CheckPlan(const Plan& plan, const cost::CostModel& cost, const std::string& source);

}  // namespace hx::plan
