// `single`: the papers' baseline. Every op runs on one GPU (the fastest that fits, by the sum of op
// times), one op per subgraph in topological (layer) order; every weight is loaded over that GPU's
// host-to-device route on its copy queue in the order the ops first need them, overlapped with
// compute, as TVM or PyTorch would run it.

#include <algorithm>
#include <cstdio>

#include "hexplan/graph/analysis.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/plan/validator.h"
#include "place/builtin_planners.h"
#include "place/format_units.h"

namespace hx::place {
namespace {

class SinglePlanner final : public Planner {
 public:
  std::string Name() const override { return "single"; }
  std::string Description() const override {
    return "every op on the fastest device that fits, weights loaded in layer order";
  }

  StatusOr<PlanResult> Plan(const PlanRequest& request) override {
    const graph::Graph& g = request.graph();
    const hw::Cluster& cluster = request.cluster();
    HX_ASSIGN_OR_RETURN(std::vector<NodeId> topo, graph::TopologicalOrder(g));
    std::vector<NodeId> ops;
    for (NodeId id : topo)
      if (g.node(id).is_op()) ops.push_back(id);
    std::vector<DeviceId> candidates = cluster.DevicesOfKind(hw::DeviceKind::kGpu);
    if (candidates.empty()) candidates = cluster.DeviceIds();
    if (candidates.empty())
      return InvalidArgument("cluster '" + cluster.name() + "' has no device");

    std::optional<PlanResult> best;
    double best_time = 0.0;
    std::string shortfalls;
    for (DeviceId d : candidates) {
      const std::string dname = cluster.device(d).name;
      bool supported = true;
      double time = 0.0;
      for (NodeId op : ops) {
        if (!request.cost->Supports(op, d)) {
          supported = false;
          break;
        }
        time += request.cost->OpTime(op, d);
      }
      if (!supported) {
        shortfalls += "\n  " + dname + ": cannot run every op";
        continue;
      }
      if (best && time >= best_time) continue;
      plan::Plan p;
      plan::DeviceSchedule ds;
      ds.device = d;
      for (NodeId op : ops) ds.subgraphs.push_back(plan::Subgraph{{op}});
      p.devices.push_back(std::move(ds));
      HX_RETURN_IF_ERROR(plan::CompleteTransfers(p, g, cluster));
      const auto bounds = plan::PlanMemoryBound(p, *request.cost);
      const plan::DeviceMemoryBound& m = bounds[d.index()];
      if (m.capacity_bytes > 0 && m.total() > m.capacity_bytes) {
        shortfalls += "\n  " + dname + " needs " + FormatBytes(m.total()) + " (weights " +
                      FormatBytes(m.weight_bytes) + ", activations " +
                      FormatBytes(m.peak_activation_bytes) +
                      (m.stated_bytes > 0 ? ", stated op footprints " + FormatBytes(m.stated_bytes)
                                          : std::string()) +
                      ") but has " + FormatBytes(m.capacity_bytes) + ": short by " +
                      FormatBytes(m.total() - m.capacity_bytes);
        continue;
      }
      PlanResult r;
      r.plan = std::move(p);
      r.status = PlanStatus::kHeuristic;
      best = std::move(r);
      best_time = time;
    }
    if (!best)
      return ResourceExhausted("single: no device can hold '" + g.name() + "' alone:" + shortfalls);
    return std::move(*best);
  }
};

}  // namespace

std::unique_ptr<Planner> MakeSinglePlanner() { return std::make_unique<SinglePlanner>(); }

}  // namespace hx::place
