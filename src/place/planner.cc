#include "hexplan/place/planner.h"

#include <map>
#include <mutex>

#include "hexplan/core/stopwatch.h"
#include "hexplan/place/coarsened_planning.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/plan/validator.h"
#include "place/builtin_planners.h"

namespace hx::place {
namespace {

// The built-in planners are listed here rather than registered by static initialisers, which a
// static library's linker may drop.
std::map<std::string, PlannerFactory>& Registry() {
  static std::map<std::string, PlannerFactory> registry = {
      {"single", MakeSinglePlanner},
      {"heft", MakeHeftPlanner},
      {"peft", MakePeftPlanner},
      {"m-topo", MakeMTopoPlanner},
      {"m-etf", MakeMEtfPlanner},
      {"m-sct", MakeMSctPlanner},
      {"moirai", MakeMoiraiPlanner},
      {"getf", MakeGetfPlanner},
      {"deepplan", MakeDeepPlanPlanner},
      {"chrion", MakeChrionPlanner},
      {"pipeline", MakePipelinePlanner},
      {"auto", MakeAutoPlanner},
      {"efficientmip", MakeEfficientMipPlanner},
      {"sortinghat", MakeSortingHatPlanner},
  };
  return registry;
}
std::mutex& RegistryMutex() {
  static std::mutex mu;
  return mu;
}

}  // namespace

Status PlannerOptions::Validate() const {
  if (!(time_limit_s > 0.0))
    return InvalidArgument("--time-limit: must be positive seconds, got " +
                           std::to_string(time_limit_s));
  if (!coarsen.empty() && coarsen != "none" && coarsen != "fusion")
    return InvalidArgument("--coarsen: expected 'none' or 'fusion', got '" + coarsen + "'");
  if (!(alpha >= 0.0))
    return InvalidArgument("--alpha: must be >= 0, got " + std::to_string(alpha));
  if (!(relative_gap >= 0.0 && relative_gap < 1.0))
    return InvalidArgument("--gap: must be in [0, 1), got " + std::to_string(relative_gap));
  if (threads < 1)
    return InvalidArgument("--threads: must be >= 1, got " + std::to_string(threads));
  if (subgraphs_per_gpu < 1)
    return InvalidArgument("--q: must be >= 1, got " + std::to_string(subgraphs_per_gpu));
  if (dominators_per_submodel < 1)
    return InvalidArgument("--ndom: must be >= 1, got " + std::to_string(dominators_per_submodel));
  if (!(submodel_time_limit_s >= 0.0))
    return InvalidArgument("--submodel-time-limit: must be >= 0 seconds");
  if (!ablation.empty() && ablation != "no-contention" && ablation != "no-topology" &&
      ablation != "independent")
    return InvalidArgument("--ablation: expected no-contention, no-topology or independent, got '" +
                           ablation + "'");
  return Status::Ok();
}

bool RegisterPlanner(const std::string& name, PlannerFactory factory) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  return Registry().emplace(name, std::move(factory)).second;
}

std::vector<std::string> PlannerNames() {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  std::vector<std::string> names;
  for (const auto& [name, f] : Registry()) names.push_back(name);
  return names;
}

StatusOr<std::unique_ptr<Planner>> MakePlanner(const std::string& name) {
  PlannerFactory factory;
  {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    auto it = Registry().find(name);
    if (it != Registry().end()) factory = it->second;
  }
  if (!factory) {
    std::string known;
    for (const auto& n : PlannerNames()) known += (known.empty() ? "" : ", ") + n;
    return NotFound("--algo: unknown planner '" + name + "' (known: " + known + ")");
  }
  return factory();
}

StatusOr<PlacementOutcome> RunPlanner(const std::string& name, const PlanRequest& request) {
  if (!request.cost) return InvalidArgument("plan request without a cost model");
  HX_RETURN_IF_ERROR(request.options.Validate());
  HX_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner, MakePlanner(name));
  Stopwatch watch;
  // `--coarsen fusion`: plan on the GCOF-coarsened graph, expanded back (coarsened_planning.h).
  HX_ASSIGN_OR_RETURN(PlanResult result, request.options.coarsen == "fusion"
                                             ? PlanCoarsened(*planner, request)
                                             : planner->Plan(request));
  if (request.options.cpu_weights_in_place)
    plan::ReadCpuWeightsInPlace(result.plan, request.graph(), request.cluster());
  result.planning_time_s = watch.ElapsedSeconds();
  result.plan.algo = planner->Name();
  plan::StampPlan(result.plan, request.graph(), request.cluster(), request.model_spec,
                  request.model_options, request.cluster_spec);
  Status valid = plan::CheckPlan(result.plan, *request.cost, "planner '" + name + "'");
  if (!valid.ok()) return Internal(valid.message());
  PlacementOutcome out;
  HX_ASSIGN_OR_RETURN(out.sim, sim::Simulate(result.plan, *request.cost));
  HX_ASSIGN_OR_RETURN(out.lower_bound, sim::ComputeLowerBound(*request.cost));
  out.result = std::move(result);
  return out;
}

}  // namespace hx::place
