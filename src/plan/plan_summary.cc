#include "hexplan/plan/plan_summary.h"

#include <string>

namespace hx::plan {
namespace {

Status CheckSchedules(const Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster) {
  for (const DeviceSchedule& d : plan.devices) {
    if (!d.device.valid() || d.device.index() >= cluster.num_devices())
      return InvalidArgument("plan schedules an unknown device (id " +
                             std::to_string(d.device.value()) + ")");
    for (const Subgraph& s : d.subgraphs)
      for (NodeId op : s.ops) {
        if (!op.valid() || op.index() >= graph.num_nodes())
          return InvalidArgument("plan schedules an unknown node (id " +
                                 std::to_string(op.value()) + ")");
        if (!graph.node(op).is_op())
          return InvalidArgument("plan schedules '" + graph.node(op).name +
                                 "', which is not an op");
      }
  }
  return Status::Ok();
}

Status CheckWeightsAndTransfers(const Plan& plan, const graph::Graph& graph,
                                const hw::Cluster& cluster) {
  for (const WeightPlacement& w : plan.weights)
    if (!w.weight.valid() || w.weight.index() >= graph.num_nodes() || !w.device.valid() ||
        w.device.index() >= cluster.num_devices())
      return InvalidArgument("plan places a weight with an unknown node or device");
  for (const Transfer& t : plan.transfers)
    if (!t.tensor.valid() || t.tensor.index() >= graph.num_tensors() || !t.src.valid() ||
        t.src.index() >= cluster.num_places() || !t.dst.valid() ||
        t.dst.index() >= cluster.num_places())
      return InvalidArgument("plan has a transfer with an unknown tensor or place");
  return Status::Ok();
}

int64_t WeightBytes(const graph::Graph& graph, NodeId weight) {
  int64_t bytes = 0;
  for (TensorId t : graph.node(weight).outputs) bytes += graph.tensor(t).Bytes();
  return bytes;
}

Tally& TallyFor(WeightTallies& tallies, WeightMode mode) {
  switch (mode) {
    case WeightMode::kDha:
      return tallies.dha;
    case WeightMode::kRelay:
      return tallies.relay;
    case WeightMode::kLoad:
      break;
  }
  return tallies.load;
}

DeviceSummary SummarizeOps(const DeviceSchedule& schedule, const graph::Graph& graph,
                           const cost::CostModel& cost) {
  DeviceSummary d;
  d.device = schedule.device;
  d.subgraphs = schedule.subgraphs.size();
  std::vector<NodeId> order;
  for (const Subgraph& s : schedule.subgraphs)
    for (NodeId op : s.ops) {
      order.push_back(op);
      d.compute_s += cost.OpTime(op, schedule.device);
    }
  d.ops = order.size();
  d.runs = CollapseOpRuns(order, graph);
  return d;
}

void AddWeightsAndTransfers(const Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster,
                            DeviceSummary& d) {
  for (const WeightPlacement& w : plan.weights)
    if (w.device == d.device)
      (w.resident ? d.weights.resident : TallyFor(d.weights, w.mode))
          .Add(WeightBytes(graph, w.weight));
  const PlaceId place = cluster.PlaceOf(d.device);
  for (const Transfer& t : plan.transfers) {
    const int64_t bytes = graph.tensor(t.tensor).Bytes();
    if (t.dst == place) d.transfers_in.Add(bytes);
    if (t.src == place) d.transfers_out.Add(bytes);
  }
}

void AddTally(const Tally& part, Tally& total) {
  total.count += part.count;
  total.bytes += part.bytes;
}

void AddToTotals(const DeviceSummary& d, PlanSummary& summary) {
  summary.ops += d.ops;
  summary.subgraphs += d.subgraphs;
  summary.compute_s += d.compute_s;
  AddTally(d.weights.load, summary.weights.load);
  AddTally(d.weights.resident, summary.weights.resident);
  AddTally(d.weights.dha, summary.weights.dha);
  AddTally(d.weights.relay, summary.weights.relay);
}

}  // namespace

StatusOr<PlanSummary> SummarizePlan(const Plan& plan, const graph::Graph& graph,
                                    const hw::Cluster& cluster, const cost::CostModel& cost) {
  HX_RETURN_IF_ERROR(CheckSchedules(plan, graph, cluster));
  HX_RETURN_IF_ERROR(CheckWeightsAndTransfers(plan, graph, cluster));
  const std::vector<DeviceMemoryBound> memory = PlanMemoryBound(plan, cost);
  PlanSummary summary;
  for (const DeviceSchedule& schedule : plan.devices) {
    DeviceSummary d = SummarizeOps(schedule, graph, cost);
    AddWeightsAndTransfers(plan, graph, cluster, d);
    if (d.device.index() < memory.size()) d.memory = memory[d.device.index()];
    AddToTotals(d, summary);
    summary.devices.push_back(std::move(d));
  }
  for (const Transfer& t : plan.transfers) summary.transfers.Add(graph.tensor(t.tensor).Bytes());
  return summary;
}

}  // namespace hx::plan
