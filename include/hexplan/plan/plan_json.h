#pragma once
// The plan file (docs/formats.md, "Plan JSON"): {"format": "hexplan-plan", "version": 1, ...}.
// Nodes, tensors, devices, places and links are named, so a plan is readable and survives id
// changes. Reading resolves the names against the graph and cluster; errors name the file and the
// JSON path
// ("plan.json: /devices/0/subgraphs/3/1: unknown op 'h.0.attn'").

#include <string>

#include "hexplan/core/status.h"
#include "hexplan/graph/graph.h"
#include "hexplan/hw/cluster.h"
#include "hexplan/plan/plan.h"

namespace hx::plan {

// What a plan was made for: read first, so that the caller can rebuild the graph and the cluster.
struct PlanHeader {
  ModelRef model;
  ClusterRef cluster;
  std::string algo;
};
StatusOr<PlanHeader> ParsePlanHeader(const std::string& text, const std::string& source_name);

// The whole plan, names resolved against `graph` and `cluster`. A transfer without "route" gets the
// cluster's route. Structural checks are the validator's job (validator.h).
StatusOr<Plan> ParsePlan(const std::string& text, const std::string& source_name,
                         const graph::Graph& graph, const hw::Cluster& cluster);

// Model and cluster specs that name files are stored relative to the plan file's directory, so a
// plan read from any working directory finds them; zoo names, presets and absolute paths are
// stored as they are. SpecForPlanFile is what WritePlanFile stores for a spec given relative to the
// working directory; ResolvePlanSpec turns a stored spec back into one usable from the working
// directory. A plan written before specs were stored this way holds paths relative to the
// directory it was made in: when the spec names no file beside the plan but does from the
// working directory, that is used and `from_working_directory` says so (the CLI warns).
std::string SpecForPlanFile(const std::string& spec, const std::string& plan_path, PlanInput input);
struct ResolvedSpec {
  std::string spec;
  bool from_working_directory = false;
};
ResolvedSpec ResolvePlanSpec(const std::string& stored, const std::string& plan_path,
                             PlanInput input);

std::string PlanToJson(const Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster);
// Writes PlanToJson with the specs stored as SpecForPlanFile says.
Status WritePlanFile(const std::string& path, const Plan& plan, const graph::Graph& graph,
                     const hw::Cluster& cluster);

}  // namespace hx::plan
