#include "hexplan/place/memory_bound.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace hx::place {
namespace {

// "1.234 GB (1234000000 B)", or "14 B" below a megabyte (workloads state small abstract units).
std::string Bytes(int64_t b) {
  char buf[64];
  if (b >= 1000000)
    std::snprintf(buf, sizeof buf, "%.3f GB (%lld B)", static_cast<double>(b) / 1e9,
                  static_cast<long long>(b));
  else
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

}  // namespace

int64_t OpFootprintBytes(const cost::CostModel& cost, NodeId op) {
  if (std::optional<int64_t> stated = cost.StatedMemory(op)) return std::max<int64_t>(0, *stated);
  const graph::Graph& g = cost.graph();
  const graph::Node& node = g.node(op);
  int64_t bytes = std::max<int64_t>(
      0, cost.OpMemoryBytes(op) - cost.OpWeightBytes(op) - cost.OpOutputBytes(op));
  for (TensorId t : node.outputs) bytes += g.tensor(t).Bytes();
  std::set<uint32_t> seen;
  for (TensorId t : node.inputs) {
    if (!t.valid() || !seen.insert(t.value()).second) continue;
    const NodeId p = g.tensor(t).producer;
    if (!p.valid()) continue;
    const graph::Node& pn = g.node(p);
    const bool activation =
        pn.kind == graph::NodeKind::kInput || (pn.is_op() && !cost.StatedMemory(p).has_value());
    if (activation) bytes += g.tensor(t).Bytes();
  }
  return bytes;
}

MemoryNeed ComputeMemoryNeed(const cost::CostModel& cost) {
  const hw::Cluster& cluster = cost.cluster();
  MemoryNeed need;
  for (DeviceId d : cluster.DeviceIds()) {
    const int64_t cap = cluster.device(d).memory_bytes();
    if (cap <= 0 || need.capacity_total_bytes < 0)
      need.capacity_total_bytes = -1;
    else
      need.capacity_total_bytes += cap;
  }
  int64_t least_room = 0;
  for (NodeId op : cost.graph().Ops()) {
    if (std::optional<int64_t> stated = cost.StatedMemory(op))
      need.stated_total_bytes += std::max<int64_t>(0, *stated);
    int64_t room = 0;
    bool unlimited = false;
    for (DeviceId d : cluster.DeviceIds()) {
      if (!cost.Supports(op, d)) continue;
      const int64_t cap = cluster.device(d).memory_bytes();
      unlimited = unlimited || cap <= 0;
      room = std::max(room, cap);
    }
    if (unlimited) continue;
    const int64_t bytes = OpFootprintBytes(cost, op);
    if (!need.largest_op.valid() || room - bytes < least_room) {
      least_room = room - bytes;
      need.largest_op = op;
      need.largest_op_bytes = bytes;
      need.largest_op_room_bytes = room;
    }
  }
  return need;
}

Status CheckMemoryFeasible(const cost::CostModel& cost) {
  const MemoryNeed need = ComputeMemoryNeed(cost);
  const std::string where = "'" + cost.graph().name() + "' on '" + cost.cluster().name() + "'";
  if (need.capacity_total_bytes >= 0 && need.stated_total_bytes > need.capacity_total_bytes) {
    return ResourceExhausted(
        "memory: no plan of " + where +
        " fits (the memory constraints cannot all hold): its operators' stated footprints need " +
        Bytes(need.stated_total_bytes) + " in all and the devices hold " +
        Bytes(need.capacity_total_bytes) + " (short by " +
        Bytes(need.stated_total_bytes - need.capacity_total_bytes) + ")");
  }
  if (need.largest_op.valid() && need.largest_op_bytes > need.largest_op_room_bytes) {
    return ResourceExhausted(
        "memory: no plan of " + where +
        " fits (the memory constraints cannot all hold): operator '" +
        cost.graph().node(need.largest_op).name + "' needs " + Bytes(need.largest_op_bytes) +
        " while it runs (its footprint, or its outputs, activation inputs and workspace) and the "
        "largest device that runs it holds " +
        Bytes(need.largest_op_room_bytes) + " (short by " +
        Bytes(need.largest_op_bytes - need.largest_op_room_bytes) + ")");
  }
  return Status::Ok();
}

}  // namespace hx::place
