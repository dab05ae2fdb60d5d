#pragma once
// What `simulate PLAN` and `show PLAN` share: read a plan file, rebuild the graph and cluster it
// was made for (or those --model and --cluster name), refuse a plan made for other inputs (warn
// when the user overrode them), resolve it and check it.

#include <string>

#include "cli/planning_inputs.h"
#include "hexplan/core/status.h"
#include "hexplan/plan/plan.h"
#include "hexplan/plan/plan_match.h"

namespace hx::cli {

struct PlanFileArgs {
  std::string path;
  std::string model;    // --model: rebuild the graph from this instead of the plan's model
  std::string cluster;  // --cluster: use this instead of the plan's cluster
  std::string profile;  // --profile: measured op times
  CostModelArgs cost;   // --cost-model, --calibration
};

struct LoadedPlan {
  PlanningInputs inputs;
  plan::Plan plan;
};

// A model or cluster spec stored in the plan at `plan_path`, as a spec to load from the working
// directory (plan::ResolvePlanSpec; warns when an older plan's path resolves only from here).
std::string PlanSpecToLoad(const std::string& plan_path, const std::string& stored,
                           plan::PlanInput input);

// Errors name the file; a plan that fails the validator is refused with its violations.
StatusOr<LoadedPlan> LoadPlanFile(const PlanFileArgs& args);

// What `run MODEL --plan PLAN` and `export MODEL --plan PLAN` share: MODEL, built with its
// options, must be the model the plan was made for (else exit 2 naming the plan file); the
// cluster is the plan's, or `cluster` (--cluster), when a mismatch only warns. The plan is parsed,
// not validated (plan::CheckPlan).
StatusOr<LoadedPlan> LoadPlanForModel(const std::string& plan_path, const ModelArgs& model,
                                      const std::string& cluster);

}  // namespace hx::cli
