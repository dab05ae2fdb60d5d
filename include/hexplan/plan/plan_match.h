#pragma once
// Whether a plan was made for the graph and cluster built here: the fingerprints StampPlan wrote
// (ModelRef::hash, ClusterRef::hash) against GraphFingerprint and ClusterFingerprint of what the
// caller built. A plan without a fingerprint (hash 0: written by hand) matches anything.

#include <cstdint>
#include <vector>

#include "hexplan/graph/graph.h"
#include "hexplan/hw/cluster.h"
#include "hexplan/plan/plan.h"
#include "hexplan/plan/plan_json.h"

namespace hx::plan {

// PlanInput (plan.h): the inputs a plan is made for.
const char* PlanInputName(PlanInput input);  // "model", "cluster"

struct PlanMatchOptions {
  // The caller built the input from a spec of its own choosing instead of the plan's (the CLI's
  // --model, --cluster): a mismatch is then what was asked for, and only worth a warning.
  bool model_overridden = false;
  bool cluster_overridden = false;
};

struct PlanMismatch {
  PlanInput input = PlanInput::kModel;
  bool tolerated = false;  // the input was overridden: warn and go on; otherwise refuse the plan
};

// The inputs that differ from those the plan was made for, model first; empty when it matches.
std::vector<PlanMismatch> FindPlanMismatches(const PlanHeader& header, const graph::Graph& graph,
                                             const hw::Cluster& cluster,
                                             const PlanMatchOptions& options = {});

}  // namespace hx::plan
