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

std::string PlanToJson(const Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster);
Status WritePlanFile(const std::string& path, const Plan& plan, const graph::Graph& graph,
                     const hw::Cluster& cluster);

}  // namespace hx::plan
