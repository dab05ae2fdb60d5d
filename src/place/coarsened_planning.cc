// Planning on a GCOF-coarsened graph and expanding the plan back (coarsened_planning.h).

#include "hexplan/place/coarsened_planning.h"

#include <cmath>
#include <string>

#include "hexplan/plan/plan_builder.h"
#include "hexplan/plan/validator.h"

namespace hx::place {

StatusOr<std::unique_ptr<CoarsenedModel>> CoarsenedModel::Build(const cost::CostModel& original,
                                                                const graph::FusionRules& rules) {
  const graph::Graph& g = original.graph();
  const hw::Cluster& cluster = original.cluster();
  std::unique_ptr<CoarsenedModel> out(new CoarsenedModel());
  out->original_ = &original;
  HX_ASSIGN_OR_RETURN(out->fusion_, graph::FuseGraph(g, rules));
  const graph::FusionResult& f = out->fusion_;
  const cost::Profile* given = original.profile();
  if (given != nullptr) out->profile_ = *given;
  cost::Profile& profile = out->profile_;

  for (size_t gi = 0; gi < f.groups.size(); ++gi) {
    const graph::FusionGroup& group = f.groups[gi];
    if (group.ops.size() < 2) continue;
    // The fused op's node in the coarsened graph: the coarse node of any member.
    const std::string& name = f.graph.node(f.coarse_node[group.ops[0].index()]).name;
    if (!profile.node_times().count(name)) {
      for (DeviceId d : cluster.DeviceIds()) {
        double sum = 0.0;
        bool supported = true;
        for (NodeId op : group.ops) {
          if (!original.Supports(op, d)) {
            supported = false;
            break;
          }
          sum += original.OpTime(op, d);
        }
        const std::string& device = cluster.device(d).name;
        if (supported) {
          profile.SetNodeTime(name, device, sum);
        } else {
          profile.SetNodeUnsupported(name, device);
        }
      }
    }
    if (given != nullptr) {
      bool any_stated = false;
      int64_t bytes = 0;
      for (NodeId op : group.ops) {
        auto stated = given->NodeMemory(g.node(op).name);
        any_stated |= stated.has_value();
        bytes += stated ? *stated : original.OpWeightBytes(op);
      }
      if (any_stated && !given->NodeMemory(name)) profile.SetNodeMemory(name, bytes);
      // Per-node transfer times of a member now leave the fused op: key them by tensor.
      for (NodeId op : group.ops) {
        auto it = given->transfer_times().find(g.node(op).name);
        if (it == given->transfer_times().end()) continue;
        for (TensorId t : g.node(op).outputs) {
          const std::string& tensor = g.tensor(t).name;
          if (!f.graph.FindTensor(tensor) || given->transfer_times().count(tensor)) continue;
          for (const auto& [pair, seconds] : it->second)
            profile.SetTransferTime(tensor, pair.first, pair.second, seconds);
        }
      }
    }
  }
  out->cost_ = std::make_unique<cost::CostModel>(f.graph, cluster, original.options(),
                                                 out->profile_.empty() ? nullptr : &out->profile_);
  return out;
}

StatusOr<plan::Plan> CoarsenedModel::ExpandPlan(const plan::Plan& coarse) const {
  const graph::Graph& g = original_->graph();
  const graph::Graph& fg = fusion_.graph;
  plan::Plan out = coarse;
  auto original_node = [&](NodeId coarse_node) -> StatusOr<NodeId> {
    if (!coarse_node.valid() || coarse_node.index() >= fg.num_nodes())
      return Internal("coarsened plan names a node outside the coarsened graph");
    auto found = g.FindNode(fg.node(coarse_node).name);
    if (!found) return Internal("no original node '" + fg.node(coarse_node).name + "'");
    return *found;
  };
  auto expand_ops = [&](const std::vector<NodeId>& ops) -> StatusOr<std::vector<NodeId>> {
    std::vector<NodeId> expanded;
    for (NodeId op : ops) {
      if (!op.valid() || op.index() >= fg.num_nodes())
        return Internal("coarsened plan names a node outside the coarsened graph");
      int group = fusion_.group_of_node[op.index()];
      if (group < 0) return Internal("coarsened plan schedules '" + fg.node(op).name + "'");
      for (NodeId member : fusion_.groups[group].ops) expanded.push_back(member);
    }
    return expanded;
  };
  for (plan::DeviceSchedule& ds : out.devices) {
    for (plan::Subgraph& sg : ds.subgraphs) {
      HX_ASSIGN_OR_RETURN(sg.ops, expand_ops(sg.ops));
    }
  }
  for (plan::Submodel& sm : out.submodels) {
    HX_ASSIGN_OR_RETURN(sm.ops, expand_ops(sm.ops));
  }
  for (plan::WeightPlacement& wp : out.weights) {
    HX_ASSIGN_OR_RETURN(wp.weight, original_node(wp.weight));
  }
  for (plan::Transfer& t : out.transfers) {
    if (!t.tensor.valid() || t.tensor.index() >= fg.num_tensors())
      return Internal("coarsened plan moves a tensor outside the coarsened graph");
    auto found = g.FindTensor(fg.tensor(t.tensor).name);
    if (!found) return Internal("no original tensor '" + fg.tensor(t.tensor).name + "'");
    t.tensor = *found;
  }
  HX_RETURN_IF_ERROR(plan::CompleteTransfers(out, g, original_->cluster()));
  return out;
}

StatusOr<std::shared_ptr<const CoarsenedModel>> CoarsenedModelFor(const PlanRequest& request) {
  if (request.cost == nullptr) return InvalidArgument("plan request without a cost model");
  if (request.coarsened != nullptr && &request.coarsened->original() == request.cost)
    return request.coarsened;
  HX_ASSIGN_OR_RETURN(graph::FusionRules rules,
                      graph::LoadFusionRules(request.options.fusion_rules_path));
  HX_ASSIGN_OR_RETURN(std::unique_ptr<CoarsenedModel> model,
                      CoarsenedModel::Build(*request.cost, rules));
  return std::shared_ptr<const CoarsenedModel>(std::move(model));
}

StatusOr<PlanResult> PlanCoarsened(Planner& planner, const PlanRequest& request) {
  HX_ASSIGN_OR_RETURN(std::shared_ptr<const CoarsenedModel> model, CoarsenedModelFor(request));
  PlanRequest inner = request;
  inner.options.coarsen = Coarsening::kNone;
  inner.coarsened = nullptr;
  const size_t ops = request.graph().Ops().size();
  const graph::FusionResult& f = model->fusion();
  std::string summary = "GCOF: " + std::to_string(ops) + " ops -> " +
                        std::to_string(f.groups.size()) + " (" +
                        std::to_string(f.num_fused_groups) + " fused groups of " +
                        std::to_string(f.num_fused_ops) + " ops)";
  LogTo(request.logger, LogLevel::kInfo, planner.Name() + ": " + summary);
  PlanResult result;
  if (f.num_fused_groups == 0) {
    HX_ASSIGN_OR_RETURN(result, planner.Plan(inner));
  } else {
    PlanRequest original = inner;
    inner.cost = &model->cost();
    inner.known_plans = nullptr;  // plans of the original graph
    HX_ASSIGN_OR_RETURN(result, planner.Plan(inner));
    HX_ASSIGN_OR_RETURN(result.plan, model->ExpandPlan(result.plan));
    // The fused groups' inner tensors are not in the coarsened graph's memory; when they make the
    // expanded plan overflow a device, plan the original graph instead.
    const Status valid = plan::CheckPlan(result.plan, *request.cost, planner.Name());
    if (!valid.ok()) {
      LogTo(request.logger, LogLevel::kInfo,
            planner.Name() + ": the coarsened graph's plan, expanded, is not valid (" +
                valid.message() + "); planning the original graph");
      HX_ASSIGN_OR_RETURN(result, planner.Plan(original));
      summary += ", whose expanded plan did not pass the validator: planned the original graph";
    }
  }
  result.detail = summary + (result.detail.empty() ? "" : "; " + result.detail);
  return result;
}

}  // namespace hx::place
