#pragma once
// Deployment outputs of a sharing plan. Every writer first checks every GPU's layout
// (ValidateLayout) and returns an error instead of output for an invalid plan.
//  - mig-parted config (NVIDIA mig-parted, `version: v1`, `mig-configs`, per GPU `mig-devices`
//    counts by profile name)
//  - the explicit placement list (GPU, start slot, profile, service, batch, processes)
//  - a shell script: `nvidia-smi mig -i GPU -cgi PROFILE_ID:START -C` per instance (largest first)
//    and per instance one MPS control daemon with its process count and batch size
//  - JSON of the plan and an SVG map (7 GPC slots per GPU, coloured by service)

#include <string>
#include <vector>

#include "hexplan/share/plan.h"

namespace hx::share {

// Validates every GPU of a MIG plan; MPS plans (gpulet, igniter) have no MIG layout to deploy.
Status ValidateForDeployment(const ShareProblem& problem, const SharePlan& plan);

// The GPUs a deployment output covers: every GPU of the plan, or only `gpus` (after --change: the
// GPUs that change; a listed GPU without segments is emptied).
struct DeployScope {
  bool all = true;
  std::vector<int> gpus;
  static DeployScope Only(std::vector<int> gpus) { return {false, std::move(gpus)}; }
};

StatusOr<std::string> MigPartedYaml(const ShareProblem& problem, const SharePlan& plan,
                                    const std::string& config_name, const DeployScope& scope = {});

struct PlacementRow {
  int gpu = 0;
  int start = 0;  // memory slice
  std::string profile;
  int gi_profile_id = 0;
  std::string service;
  int batch = 0;
  int processes = 0;
};
StatusOr<std::vector<PlacementRow>> Placements(const ShareProblem& problem, const SharePlan& plan);

StatusOr<std::string> DeploymentScript(const ShareProblem& problem, const SharePlan& plan,
                                       const DeployScope& scope = {});

// The plan as JSON: gpus, gpcs, external_fragmentation, internal_slack, scheduling_time_ms,
// slo_violations (PlanViolations), unsupported, lower_bound, proven_optimal and layout (per GPU:
// segments with service, profile, start, gpcs, batch, processes, throughput, latency_ms).
std::string PlanJson(const ShareProblem& problem, const ShareOptions& options,
                     const SharePlan& plan);

// The SVG map: one row per GPU, 7 GPC slots, each segment a box coloured by service.
std::string PlanSvg(const ShareProblem& problem, const SharePlan& plan, const std::string& title);

}  // namespace hx::share
