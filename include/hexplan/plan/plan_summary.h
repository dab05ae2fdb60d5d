#pragma once
// What a plan does, device by device, in terms a person reads (`hexplan show`): which operators
// run where (collapsed into runs named after their layers, op_runs.h), in how many subgraphs, how
// long the device computes, which weights its ops read and how, what it receives and sends, and
// the memory it needs at worst.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/graph/graph.h"
#include "hexplan/hw/cluster.h"
#include "hexplan/plan/op_runs.h"
#include "hexplan/plan/plan.h"
#include "hexplan/plan/validator.h"

namespace hx::plan {

// How many things and how many bytes.
struct Tally {
  size_t count = 0;
  int64_t bytes = 0;
  void Add(int64_t more_bytes) {
    ++count;
    bytes += more_bytes;
  }
};

// The weights a device's ops read, by how each reaches them (WeightMode).
struct WeightTallies {
  Tally load;      // copied from the host on each request
  Tally resident;  // loaded once and kept between requests (a warm plan's `resident` weights)
  Tally dha;
  Tally relay;
};

struct DeviceSummary {
  DeviceId device;
  size_t ops = 0;
  size_t subgraphs = 0;
  double compute_s = 0.0;  // CostModel::OpTime of its ops, weights in device memory
  WeightTallies weights;
  Tally transfers_in;        // transfers whose destination is the device (weight loads included)
  Tally transfers_out;       // transfers whose source is the device
  DeviceMemoryBound memory;  // PlanMemoryBound: weights, peak activations, stated footprints
  std::vector<OpRun> runs;   // its ops in its order (subgraph by subgraph), collapsed
};

struct PlanSummary {
  size_t ops = 0;
  size_t subgraphs = 0;
  double compute_s = 0.0;  // over every device
  WeightTallies weights;
  Tally transfers;
  std::vector<DeviceSummary> devices;  // the devices the plan schedules, in the plan's order
};

// InvalidArgument when the plan names a device the cluster lacks or a node the graph lacks, or
// schedules a node that is not an op; otherwise the summary. The plan need not be valid otherwise.
StatusOr<PlanSummary> SummarizePlan(const Plan& plan, const graph::Graph& graph,
                                    const hw::Cluster& cluster, const cost::CostModel& cost);

}  // namespace hx::plan
