#include "hexplan/plan/plan_match.h"

namespace hx::plan {

const char* PlanInputName(PlanInput input) {
  return input == PlanInput::kModel ? "model" : "cluster";
}

std::vector<PlanMismatch> FindPlanMismatches(const PlanHeader& header, const graph::Graph& graph,
                                             const hw::Cluster& cluster,
                                             const PlanMatchOptions& options) {
  auto differs = [](uint64_t stamped, uint64_t built) { return stamped != 0 && stamped != built; };
  std::vector<PlanMismatch> out;
  if (differs(header.model.hash, GraphFingerprint(graph)))
    out.push_back({PlanInput::kModel, options.model_overridden});
  if (differs(header.cluster.hash, ClusterFingerprint(cluster)))
    out.push_back({PlanInput::kCluster, options.cluster_overridden});
  return out;
}

}  // namespace hx::plan
