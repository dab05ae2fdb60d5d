#include "hexplan/place/planner.h"

#include <cmath>
#include <utility>

#include "hexplan/core/interrupt.h"
#include "hexplan/core/registry.h"
#include "hexplan/core/stopwatch.h"
#include "hexplan/place/coarsened_planning.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/plan/validator.h"
#include "place/builtin_planners.h"

namespace hx::place {
namespace {

// The built-in planners are listed here rather than registered by static initialisers, which a
// static library's linker may drop.
Registry<PlannerFactory>& Planners() {
  static Registry<PlannerFactory>* registry = [] {
    auto* r = new Registry<PlannerFactory>("--algo: unknown planner");
    const std::pair<const char*, PlannerFactory> builtin[] = {
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
    for (const auto& [name, factory] : builtin) r->Register(name, factory);
    return r;
  }();
  return *registry;
}

// The planners that own an option, for the error when another planner is given it.
std::string OwnersOf(const std::string& option) {
  std::string owners;
  for (const std::string& name : PlannerNames()) {
    if (name == "auto") continue;  // auto takes its members' options
    auto specs = PlannerOptionSpecs(name);
    if (!specs.ok()) continue;
    for (const OptionSpec& s : *specs)
      if (s.name == option) owners += (owners.empty() ? "" : ", ") + name;
  }
  return owners;
}

}  // namespace

const char* CoarseningName(Coarsening coarsening) {
  switch (coarsening) {
    case Coarsening::kPlannerDefault:
      return "";
    case Coarsening::kNone:
      return "none";
    case Coarsening::kFusion:
      return "fusion";
  }
  return "";
}

StatusOr<Coarsening> ParseCoarsening(const std::string& name) {
  for (Coarsening c : {Coarsening::kPlannerDefault, Coarsening::kNone, Coarsening::kFusion})
    if (name == CoarseningName(c)) return c;
  return InvalidArgument("--coarsen: expected 'none' or 'fusion', got '" + name + "'");
}

Status PlannerOptions::Validate() const {
  if (!(time_limit_s > 0.0))
    return InvalidArgument("--time-limit: must be positive seconds, got " +
                           std::to_string(time_limit_s));
  if (!(relative_gap >= 0.0 && relative_gap < 1.0))
    return InvalidArgument("--gap: must be in [0, 1), got " + std::to_string(relative_gap));
  if (threads < 1)
    return InvalidArgument("--threads: must be >= 1, got " + std::to_string(threads));
  return Status::Ok();
}

bool RegisterPlanner(const std::string& name, PlannerFactory factory) {
  return Planners().Register(name, std::move(factory));
}

std::vector<std::string> PlannerNames() { return Planners().Names(); }

StatusOr<std::unique_ptr<Planner>> MakePlanner(const std::string& name) {
  HX_ASSIGN_OR_RETURN(PlannerFactory factory, Planners().Find(name));
  return factory();
}

StatusOr<std::vector<OptionSpec>> PlannerOptionSpecs(const std::string& name) {
  HX_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner, MakePlanner(name));
  return planner->Options();
}

StatusOr<OptionSet> ResolveOptions(const PlanRequest& request, const Planner& planner) {
  auto resolved =
      request.planner_options.Resolve(planner.Options(), "planner '" + planner.Name() + "'");
  if (resolved.ok()) return resolved;
  // Say which planners take an option the chosen one does not.
  for (const auto& [name, value] : request.planner_options.given()) {
    bool own = false;
    for (const OptionSpec& s : planner.Options()) own = own || s.name == name;
    if (own) continue;
    const std::string owners = OwnersOf(name);
    if (!owners.empty())
      return InvalidArgument(resolved.status().message() + "; --" + name + " is an option of " +
                             owners);
  }
  return resolved.status();
}

namespace {

// Every time a plan file or report carries must be a number: JSON has no infinity (it would be
// written as null, which no reader accepts). Times overflow only when the inputs' figures are
// extreme (readers cap stated times, docs/formats.md "Caps"), so this is the user's to fix.
Status CheckFiniteTimes(const std::string& name, const plan::Plan& plan,
                        const PlacementOutcome& out) {
  const std::pair<const char*, double> times[] = {{"estimate", plan.estimate_ms.value_or(0.0)},
                                                  {"simulated makespan", out.sim.makespan_s},
                                                  {"lower bound", out.lower_bound.value_s()}};
  for (const auto& [what, value] : times) {
    if (!std::isfinite(value)) {
      return InvalidArgument("planner '" + name + "': the plan's " + what +
                             " is not a finite number of seconds (the profile's or cluster's "
                             "times overflow); check their figures against docs/formats.md, Caps");
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<PlacementOutcome> RunPlanner(const std::string& name, const PlanRequest& request) {
  if (!request.cost) return InvalidArgument("plan request without a cost model");
  HX_RETURN_IF_ERROR(request.options.Validate());
  HX_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner, MakePlanner(name));
  // The planner's own options, checked before any work.
  PlanRequest resolved = request;
  HX_ASSIGN_OR_RETURN(resolved.planner_options, ResolveOptions(request, *planner));
  Stopwatch watch;
  // Coarsening is decided here only: `--coarsen`, else the planner's default. With fusion the
  // planner plans the GCOF-coarsened graph, expanded back (coarsened_planning.h).
  const Coarsening coarsen = request.options.coarsen == Coarsening::kPlannerDefault
                                 ? planner->DefaultCoarsening()
                                 : request.options.coarsen;
  HX_ASSIGN_OR_RETURN(PlanResult result, coarsen == Coarsening::kFusion
                                             ? PlanCoarsened(*planner, resolved)
                                             : planner->Plan(resolved));
  if (StopRequested()) {  // the planner ended early with its best plan so far
    result.status = PlanStatus::kInterrupted;
    result.detail += std::string(result.detail.empty() ? "" : "; ") + "interrupted";
  }
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
  HX_RETURN_IF_ERROR(CheckFiniteTimes(name, result.plan, out));
  out.result = std::move(result);
  return out;
}

}  // namespace hx::place
