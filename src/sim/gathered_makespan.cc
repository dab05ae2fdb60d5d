#include "hexplan/sim/gathered_makespan.h"

#include <algorithm>
#include <map>

namespace hx::sim {

double GatheredMakespan(const SimResult& result, const cost::CostModel& cost,
                        const std::vector<int>& device_group, int sink) {
  const graph::Graph& graph = cost.graph();
  auto group_of = [&](DeviceId d) {
    return d.valid() && d.index() < device_group.size() ? device_group[d.index()] : sink;
  };
  DeviceId sink_device;
  for (size_t d = 0; d < device_group.size() && !sink_device.valid(); ++d)
    if (device_group[d] == sink) sink_device = DeviceId(d);
  if (!sink_device.valid()) return result.makespan_s;

  std::map<int, double> group_done;  // each group's last op
  for (const OpRecord& op : result.ops)
    if (op.device.valid())
      group_done[group_of(op.device)] = std::max(group_done[group_of(op.device)], op.finish);

  double end = result.makespan_s;
  for (NodeId out : graph.Outputs()) {
    const TensorId tensor = graph.node(out).inputs.at(0);
    const NodeId producer = graph.tensor(tensor).producer;
    if (!graph.node(producer).is_op() || producer.value() >= result.ops.size()) continue;
    const DeviceId from = result.ops[producer.value()].device;
    const int group = group_of(from);
    if (group == sink) continue;
    end = std::max(end, group_done[group] + cost.TensorTransferTime(tensor, from, sink_device));
  }
  return end;
}

}  // namespace hx::sim
