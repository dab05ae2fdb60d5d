#pragma once
// What `simulate PLAN` and `show PLAN` share: read a plan file, rebuild the graph and cluster it
// was made for (or those --model and --cluster name), refuse a plan made for other inputs (warn
// when the user overrode them), resolve it and check it.

#include <string>

#include "cli/planning_inputs.h"
#include "hexplan/core/status.h"
#include "hexplan/plan/plan.h"

namespace hx::cli {

struct PlanFileArgs {
  std::string path;
  std::string model;    // --model: rebuild the graph from this instead of the plan's model
  std::string cluster;  // --cluster: use this instead of the plan's cluster
  std::string profile;  // --profile: measured op times
};

struct LoadedPlan {
  PlanningInputs inputs;
  plan::Plan plan;
};

// Errors name the file; a plan that fails the validator is refused with its violations.
StatusOr<LoadedPlan> LoadPlanFile(const PlanFileArgs& args);

}  // namespace hx::cli
