#include "hexplan/place/critical_path_bound.h"

#include "hexplan/graph/analysis.h"
#include "hexplan/sim/lower_bound.h"

namespace hx::place {

StatusOr<CriticalPathBoundResult> CriticalPathBoundDetail(const cost::CostModel& cost) {
  const graph::Graph& g = cost.graph();
  if (cost.cluster().num_devices() == 0)
    return InvalidArgument("critical-path bound: cluster '" + cost.cluster().name() +
                           "' has no device");
  std::vector<double> best(g.num_nodes(), 0.0);
  for (NodeId op : g.Ops()) best[op.index()] = sim::BestOpTime(cost, op);
  HX_ASSIGN_OR_RETURN(graph::CriticalPathResult path,
                      graph::CriticalPath(g, [&](NodeId id) { return best[id.index()]; }));
  CriticalPathBoundResult out;
  out.seconds = path.length;
  for (NodeId id : path.nodes)
    if (g.node(id).is_op()) out.ops.push_back(id);
  return out;
}

StatusOr<double> CriticalPathBound(const cost::CostModel& cost) {
  HX_ASSIGN_OR_RETURN(CriticalPathBoundResult r, CriticalPathBoundDetail(cost));
  return r.seconds;
}

}  // namespace hx::place
