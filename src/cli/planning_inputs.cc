#include "cli/planning_inputs.h"

#include "hexplan/cost/workload.h"
#include "hexplan/graph/model_loader.h"
#include "hexplan/hw/presets.h"

namespace hx::cli {

namespace {

// A profile keyed to devices (or ops) that match nothing here changes nothing: say so. `what`
// names it: "--profile p.csv", or a workload file's own measured times.
void WarnIfProfileMatchesNothing(const std::string& what, const PlanningInputs& in) {
  if (in.profile->empty()) return;
  const std::vector<NodeId> ops = in.graph->Ops();
  for (NodeId op : ops)
    for (size_t d = 0; d < in.cluster->num_devices(); ++d) {
      const hw::Device& device = in.cluster->device(DeviceId(d));
      if (in.profile->FindOpTime(*in.graph, op, device.name, device.spec.model,
                                 hw::DeviceKindName(device.kind)))
        return;
    }
  LogTo(&CliLogger(), LogLevel::kWarning,
        what + ": none of its " + std::to_string(in.profile->num_entries()) +
            " entries matches an operator of " + in.graph->name() + " on a device of " +
            in.cluster->name() +
            " (by device name, model or kind): every op time comes from the roofline");
}

}  // namespace

StatusOr<PlanningInputs> LoadPlanningInputs(const std::string& model_spec,
                                            const graph::ZooOptions& options,
                                            const std::string& cluster_spec,
                                            const std::string& profile_path,
                                            const CostModelArgs& cost_args) {
  HX_ASSIGN_OR_RETURN(cost::CostModelOptions cost_options, cost_args.ToOptions());
  PlanningInputs in;
  in.cluster_spec = cluster_spec;
  if (cost::IsWorkloadFile(model_spec)) {
    HX_ASSIGN_OR_RETURN(cost::Workload workload, cost::ReadWorkloadFile(model_spec));
    in.from_workload = true;
    in.graph = std::make_unique<graph::Graph>(std::move(workload.graph));
    if (!profile_path.empty())
      return InvalidArgument("--profile: " + model_spec + " is a " + workload.format +
                             " workload that carries its own profile; give one or the other");
    in.profile = std::make_unique<cost::Profile>(std::move(workload.profile));
    if (cluster_spec.empty()) {
      if (!workload.cluster)
        return InvalidArgument(model_spec + ": this " + workload.format +
                               " workload names no devices; give --cluster");
      in.cluster = std::make_unique<hw::Cluster>(std::move(*workload.cluster));
    }
  } else {
    HX_ASSIGN_OR_RETURN(graph::Graph graph, graph::LoadModel(model_spec, options, &CliLogger()));
    in.graph = std::make_unique<graph::Graph>(std::move(graph));
    if (cluster_spec.empty())
      return InvalidArgument("--cluster: required for " + model_spec +
                             " (only workload files that name their devices may omit it)");
    if (!profile_path.empty()) {
      auto profile = cost::Profile::ReadFile(profile_path);
      if (!profile.ok()) return profile.status().WithContext("--profile");
      in.profile = std::make_unique<cost::Profile>(std::move(*profile));
    }
  }
  if (!in.cluster) {
    auto cluster = hw::LoadCluster(cluster_spec, &CliLogger());
    if (!cluster.ok()) return cluster.status().WithContext("--cluster");
    in.cluster = std::make_unique<hw::Cluster>(std::move(*cluster));
  }
  if (!profile_path.empty() && in.profile)
    WarnIfProfileMatchesNothing("--profile " + profile_path, in);
  // A workload's measured times are keyed to its own devices; on another cluster they may not
  // apply.
  if (in.from_workload && !cluster_spec.empty() && in.profile)
    WarnIfProfileMatchesNothing(
        model_spec + " (its measured times, with --cluster " + cluster_spec + ")", in);
  in.cost = std::make_unique<cost::CostModel>(*in.graph, *in.cluster, std::move(cost_options),
                                              in.profile.get());
  return in;
}

StatusOr<PlanningInputs> LoadPlanningInputs(const ModelArgs& model, const std::string& cluster_spec,
                                            const std::string& profile_path,
                                            const CostModelArgs& cost_args) {
  HX_ASSIGN_OR_RETURN(graph::ZooOptions options, model.ToZooOptions());
  return LoadPlanningInputs(model.model, options, cluster_spec, profile_path, cost_args);
}

}  // namespace hx::cli
