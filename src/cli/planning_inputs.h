#pragma once
// What every planning command (place, compare, simulate) needs: the graph, the cluster, the
// profile an imported workload carries, and the cost model over them. A MODEL that is a workload
// file (MOIRAI CSV, EfficientMIP JSON, PipeDream graph) brings its own profile and, when the file
// describes devices, its own cluster: with no --cluster, those devices are used.

#include <memory>
#include <string>

#include "cli/command.h"
#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/cost/profile.h"
#include "hexplan/graph/graph.h"
#include "hexplan/hw/cluster.h"

namespace hx::cli {

struct PlanningInputs {
  std::unique_ptr<graph::Graph> graph;
  std::unique_ptr<hw::Cluster> cluster;
  std::unique_ptr<cost::Profile> profile;  // the workload file's, or --profile's; else null
  std::unique_ptr<cost::CostModel> cost;
  std::string cluster_spec;  // "" when the cluster is the workload's own
  bool from_workload = false;
};

// `cluster_spec` may be empty only when `model` is a workload file that names its devices.
// `profile_path` (optional; `--profile`) is a measured profile (`hexplan profile`, or a profile
// JSON/CSV of docs/formats.md) the cost model uses before its roofline; workload files carry their
// own and reject one.
// `cost_args`: --cost-model and --calibration.
StatusOr<PlanningInputs> LoadPlanningInputs(const ModelArgs& model, const std::string& cluster_spec,
                                            const std::string& profile_path = "",
                                            const CostModelArgs& cost_args = {});
// The same from a model spec with already-resolved zoo options (for `simulate PLAN`).
StatusOr<PlanningInputs> LoadPlanningInputs(const std::string& model_spec,
                                            const graph::ZooOptions& options,
                                            const std::string& cluster_spec,
                                            const std::string& profile_path = "",
                                            const CostModelArgs& cost_args = {});

}  // namespace hx::cli
