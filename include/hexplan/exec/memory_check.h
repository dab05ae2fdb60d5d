#pragma once
// Before `hexplan run` allocates anything: does the plan fit? The plan's memory bound
// (plan::PlanMemoryBound: weights, activations at their worst moment, stated footprints) per
// device against the cluster's stated device memories, and all of it, with the host copy of the
// weights, against what this machine can still allocate. A plan that does not fit is the user's
// to fix (exit 2), not a std::bad_alloc halfway through.

#include <cstdint>
#include <optional>

#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/plan/plan.h"

namespace hx::exec {

// MemAvailable of /proc/meminfo in bytes; nullopt where it cannot be read (not Linux).
std::optional<int64_t> AvailableHostMemoryBytes();

// The bytes of every weight tensor of the graph (the host copy MaterializeWeights makes).
int64_t HostWeightBytes(const graph::Graph& graph);

// InvalidArgument naming the device and the numbers when a device's bound exceeds its stated
// memory, or when the host weights plus every device's bound exceed `available_bytes` (skipped
// when nullopt).
Status CheckRunMemory(const plan::Plan& plan, const cost::CostModel& cost,
                      std::optional<int64_t> available_bytes);

}  // namespace hx::exec
