#include "hexplan/sim/lower_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "hexplan/graph/analysis.h"

namespace hx::sim {

double LowerBound::value_s() const { return std::max({critical_path_s, compute_s, weight_load_s}); }

double BestOpTime(const cost::CostModel& cost, NodeId op) {
  double best = std::numeric_limits<double>::infinity();
  for (DeviceId d : cost.cluster().DeviceIds()) {
    if (!cost.Supports(op, d)) continue;
    best = std::min({best, cost.OpTime(op, d), cost.OpTimeDha(op, d)});
  }
  return std::isfinite(best) ? best : 0.0;
}

StatusOr<LowerBound> ComputeLowerBound(const cost::CostModel& cost, double warm_fraction) {
  if (!(warm_fraction >= 0.0 && warm_fraction <= 1.0))
    return InvalidArgument("lower bound: the warm fraction must be in [0, 1]");
  const graph::Graph& g = cost.graph();
  const hw::Cluster& cluster = cost.cluster();
  if (cluster.num_devices() == 0) return InvalidArgument("lower bound: the cluster has no device");
  HX_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph::TopologicalOrder(g));
  LowerBound lb;
  std::vector<double> best(g.num_nodes(), 0.0), finish(g.num_nodes(), 0.0);
  double total = 0.0;
  for (NodeId op : g.Ops()) {
    best[op.index()] = BestOpTime(cost, op);
    total += best[op.index()];
  }
  for (NodeId v : order) {
    double ready = 0.0;
    for (NodeId p : g.predecessors(v)) ready = std::max(ready, finish[p.index()]);
    finish[v.index()] = ready + best[v.index()];
    lb.critical_path_s = std::max(lb.critical_path_s, finish[v.index()]);
  }
  lb.compute_s = total / static_cast<double>(cluster.num_devices());
  // Bandwidth out of the host memories: the links adjacent to them, in the outgoing direction.
  double egress = 0.0;
  for (size_t p = 0; p < cluster.num_places(); ++p) {
    if (cluster.place(PlaceId(p)).kind != hw::PlaceKind::kHostMemory) continue;
    for (LinkId l : cluster.LinksAt(PlaceId(p))) egress += cluster.link(l).bandwidth_bytes_per_s;
  }
  const double bytes = (1.0 - warm_fraction) * static_cast<double>(g.ParameterBytes());
  // Weights read only by ops that run on the host itself never cross a link: no bound then.
  bool all_ops_need_links = true;
  for (DeviceId d : cluster.DeviceIds())
    if (cluster.HostToDevice(d).hops.empty()) all_ops_need_links = false;
  if (egress > 0.0 && all_ops_need_links) lb.weight_load_s = bytes / egress;
  return lb;
}

}  // namespace hx::sim
