#include "hexplan/place/planner.h"

#include <cmath>
#include <memory>
#include <utility>

#include "hexplan/core/format_number.h"
#include "hexplan/core/interrupt.h"
#include "hexplan/core/logger.h"
#include "hexplan/core/registry.h"
#include "hexplan/core/stopwatch.h"
#include "hexplan/place/coarsened_planning.h"
#include "hexplan/place/memory_bound.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/plan/validator.h"
#include "place/builtin_planners.h"
#include "place/format_units.h"

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

Status CheckWarmFraction(double warm) {
  if (!(warm >= 0.0 && warm <= 1.0))  // NaN fails too
    return InvalidArgument(
        "--warm: the fraction of the weights resident between requests must "
        "be a number in [0, 1], got " +
        std::to_string(warm));
  return Status::Ok();
}

namespace {

// `cost` with `fraction` of every weight resident: `cost` itself when it already is, else a copy
// kept in `storage`.
const cost::CostModel& WithResidency(const cost::CostModel& cost, double fraction,
                                     std::unique_ptr<cost::CostModel>& storage) {
  if (cost.options().resident_weight_fraction == fraction) return cost;
  cost::CostModelOptions options = cost.options();
  options.resident_weight_fraction = fraction;
  storage =
      std::make_unique<cost::CostModel>(cost.graph(), cost.cluster(), options, cost.profile());
  return *storage;
}

// Runs the planner once on `planning` (its cost model is what the planner sees), warms the plan
// by `warm` unless the planner already did (a portfolio's member), then checks and simulates it
// with `cold` (the simulator copies what the plan says; it never reads the residency).
StatusOr<PlacementOutcome> PlanOnce(const std::string& name, const PlanRequest& planning,
                                    const cost::CostModel& cold, double warm) {
  HX_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner, MakePlanner(name));
  // The planner's own options, checked before any work.
  PlanRequest resolved = planning;
  HX_ASSIGN_OR_RETURN(resolved.planner_options, ResolveOptions(planning, *planner));
  Stopwatch watch;
  // Coarsening is decided here only: `--coarsen`, else the planner's default. With fusion the
  // planner plans the GCOF-coarsened graph, expanded back (coarsened_planning.h).
  const Coarsening coarsen = planning.options.coarsen == Coarsening::kPlannerDefault
                                 ? planner->DefaultCoarsening()
                                 : planning.options.coarsen;
  if (coarsen != Coarsening::kFusion && !planning.options.fusion_rules_path.empty())
    LogTo(planning.logger, LogLevel::kWarning,
          "--fusion-rules '" + planning.options.fusion_rules_path + "' is not used: " + name +
              " does not coarsen with fusion here (give --coarsen fusion)");
  // A portfolio that coarsens each member passes `--coarsen` on (CoarsensEachMember).
  const bool whole = coarsen == Coarsening::kFusion && !planner->CoarsensEachMember();
  if (coarsen == Coarsening::kFusion && !whole) resolved.options.coarsen = Coarsening::kFusion;
  HX_ASSIGN_OR_RETURN(PlanResult result,
                      whole ? PlanCoarsened(*planner, resolved) : planner->Plan(resolved));
  if (StopRequested()) {  // the planner ended early with its best plan so far
    result.status = PlanStatus::kInterrupted;
    result.detail += std::string(result.detail.empty() ? "" : "; ") + "interrupted";
  }
  if (planning.options.cpu_weights_in_place)
    plan::ReadCpuWeightsInPlace(result.plan, planning.graph(), planning.cluster());
  if (warm > 0.0 && !result.plan.warm) {
    HX_RETURN_IF_ERROR(
        plan::ApplyWarmStart(result.plan, planning.graph(), planning.cluster(), warm));
    result.plan.warm = warm;
  }
  result.planning_time_s = watch.ElapsedSeconds();
  result.plan.algo = planner->Name();
  plan::StampPlan(result.plan, planning.graph(), planning.cluster(), planning.model_spec,
                  planning.model_options, planning.cluster_spec);
  Status valid = plan::CheckPlan(result.plan, cold, "planner '" + name + "'");
  if (!valid.ok()) return Internal(valid.message());
  PlacementOutcome out;
  out.warm = warm;
  HX_ASSIGN_OR_RETURN(out.sim, sim::Simulate(result.plan, cold));
  HX_ASSIGN_OR_RETURN(out.lower_bound, sim::ComputeLowerBound(cold, warm));
  HX_RETURN_IF_ERROR(CheckFiniteTimes(name, result.plan, out));
  out.result = std::move(result);
  return out;
}

// The warm-planned outcome, or the cold-planned one (warmed) when that simulates faster; the
// choice is recorded in warm_planning and said in the detail line.
PlacementOutcome KeepFasterWarm(PlacementOutcome warm_out, StatusOr<PlacementOutcome> cold_out) {
  WarmPlanning w;
  w.warm_planned_s = warm_out.sim.makespan_s;
  const std::string planned =
      "warm " + FormatNumber(warm_out.warm, 2) + ": planned warm " + FormatMs(w.warm_planned_s);
  const double warm_time = warm_out.result.planning_time_s;
  std::string line;
  PlacementOutcome kept;
  if (!cold_out.ok()) {
    line = planned + "; planning cold failed (" + cold_out.status().message() + ")";
    kept = std::move(warm_out);
  } else {
    w.cold_planned_s = cold_out->sim.makespan_s;
    w.kept_cold_plan = *w.cold_planned_s < w.warm_planned_s;
    line = planned + ", planned cold " + FormatMs(*w.cold_planned_s) + "; kept the " +
           (w.kept_cold_plan ? "cold plan (faster warm)" : "warm plan");
    const double cold_time = cold_out->result.planning_time_s;
    kept = w.kept_cold_plan ? std::move(*cold_out) : std::move(warm_out);
    kept.result.planning_time_s = warm_time + cold_time;
  }
  std::string& detail = kept.result.detail;
  detail = line + (detail.empty() ? "" : "; " + detail);
  kept.warm_planning = w;
  return kept;
}

}  // namespace

StatusOr<PlacementOutcome> RunPlanner(const std::string& name, const PlanRequest& request) {
  if (!request.cost) return InvalidArgument("plan request without a cost model");
  HX_RETURN_IF_ERROR(request.options.Validate());
  HX_RETURN_IF_ERROR(CheckWarmFraction(request.warm));
  // The cold model: what the plan is checked and simulated with, and what cold planning sees (a
  // portfolio's members get their portfolio's warm model).
  std::unique_ptr<cost::CostModel> cold_storage, warm_storage;
  const cost::CostModel& cold = WithResidency(*request.cost, 0.0, cold_storage);
  PlanRequest cold_request = request;
  cold_request.cost = &cold;
  cold_request.warm = 0.0;
  // A request no plan can fit is refused here, with the arithmetic (memory_bound.h).
  HX_RETURN_IF_ERROR(CheckMemoryFeasible(cold));
  if (request.warm == 0.0) return PlanOnce(name, cold_request, cold, 0.0);

  PlanRequest warm_request = request;
  warm_request.cost = &WithResidency(*request.cost, request.warm, warm_storage);
  HX_ASSIGN_OR_RETURN(PlacementOutcome warm_out, PlanOnce(name, warm_request, cold, request.warm));
  if (StopRequested()) return warm_out;
  return KeepFasterWarm(std::move(warm_out), PlanOnce(name, cold_request, cold, request.warm));
}

}  // namespace hx::place
