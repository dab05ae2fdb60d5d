#pragma once
// The tasks a plan implies and what each waits for: one task per subgraph (on its device's compute
// stream) and one per transfer (on its copy queue). A task starts when its stream predecessor has
// finished and all of its dependencies have. The validator checks this structure (nothing missing,
// nothing superfluous, no deadlock); the simulator and the executor run it.

#include <cstdint>
#include <string>
#include <vector>

#include "hexplan/graph/graph.h"
#include "hexplan/hw/cluster.h"
#include "hexplan/plan/plan.h"

namespace hx::plan {

inline constexpr uint32_t kNoTask = ~0u;

struct Task {
  enum class Kind : uint8_t { kSubgraph, kTransfer };
  Kind kind = Kind::kSubgraph;
  uint32_t stream = 0;
  uint32_t schedule = 0;       // kSubgraph: index into Plan::devices
  uint32_t subgraph = 0;       // kSubgraph: index into that schedule's subgraphs
  uint32_t transfer = 0;       // kTransfer: index into Plan::transfers
  std::vector<uint32_t> deps;  // tasks that must have finished (besides the stream predecessor)
};

struct Stream {
  std::string name;             // "compute gpu0" or the queue's name
  bool compute = false;         // a device's compute stream; else a copy queue
  DeviceId device;              // compute streams
  uint32_t queue = 0;           // copy queues: index into Plan::queues
  std::vector<uint32_t> tasks;  // in order
};

struct TaskGraph {
  std::vector<Task> tasks;
  std::vector<Stream> streams;
  std::vector<uint32_t> transfer_task;  // per transfer (kNoTask if it is on no queue)
  std::vector<uint32_t> op_task;        // per node: the subgraph task running it (or kNoTask)
  std::vector<DeviceId> op_device;      // per node
  std::vector<uint32_t> op_position;    // per node: position in its device's flattened order
  // Per node, for weights: the placement index for each device, as (device, placement) pairs.
  std::vector<std::vector<std::pair<DeviceId, uint32_t>>> weight_placements;

  // The placement of `weight` for `device`, or -1.
  int PlacementOf(NodeId weight, DeviceId device) const;
};

// Builds the task graph. Every structural problem (an op placed twice or never, a non-op scheduled,
// a weight read with no placement, a missing, duplicate or superfluous transfer, a broken route, a
// transfer on no queue or on two) is appended to `violations`; the graph is only usable when none
// was added.
TaskGraph BuildTaskGraph(const Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster,
                         std::vector<std::string>* violations);

// The tasks on one cycle of waits (dependencies plus stream order), first task repeated at neither
// end; empty when the plan cannot deadlock.
std::vector<uint32_t> FindDeadlock(const TaskGraph& tasks);

// "subgraph 3 of gpu1 (ops a..b)" / "transfer 7 (weight_load h.0.attn.w host0->gpu1 on gpu1/in)".
std::string DescribeTask(const TaskGraph& tasks, uint32_t task, const Plan& plan,
                         const graph::Graph& graph, const hw::Cluster& cluster);

// Checks that `route` leads from `src` to `dst` through links of `cluster`; empty string when it
// does, else what is wrong.
std::string CheckRoute(const hw::Cluster& cluster, PlaceId src, PlaceId dst,
                       const std::vector<hw::RouteHop>& route);

// The distinct weight nodes `op` reads, in input order.
std::vector<NodeId> WeightInputs(const graph::Graph& graph, NodeId op);

}  // namespace hx::plan
