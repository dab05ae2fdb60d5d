#pragma once
// The planner contract and registry behind `hexplan place --algo NAME`. A planner turns a graph, a
// cluster and a cost model into a plan; Plan() here validates the request, times the call, checks
// the plan and simulates it, so every planner reports the same things.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hexplan/core/logger.h"
#include "hexplan/core/options.h"
#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/milp/solver.h"
#include "hexplan/place/plan_status.h"
#include "hexplan/plan/plan.h"
#include "hexplan/sim/lower_bound.h"
#include "hexplan/sim/simulator.h"

namespace hx::place {

class CoarsenedModel;  // coarsened_planning.h

// Graph coarsening in front of a planner (`--coarsen`).
enum class Coarsening {
  kPlannerDefault,  // "" : the planner's own default (MOIRAI fuses, the others do not)
  kNone,            // "none"
  kFusion,          // "fusion": MOIRAI's GCOF operator fusion (coarsened_planning.h)
};
const char* CoarseningName(Coarsening coarsening);              // "", "none", "fusion"
StatusOr<Coarsening> ParseCoarsening(const std::string& name);  // error names --coarsen

// A seed as the MILP solver takes it (a non-negative int): one reduction for every planner.
inline int MilpSeed(uint64_t seed) { return static_cast<int>(seed % 1000000007ULL); }

// What every planner shares. A planner's own options (Chrion's --alpha, SortingHat's --q, the exact
// planners' --export-lp...) are typed records it registers (Planner::Options) and reads from
// PlanRequest::planner_options.
struct PlannerOptions {
  double time_limit_s = 60.0;  // wall-clock budget for planners that search
  uint64_t seed = 1;           // every random choice comes from it

  // Graph coarsening in front of any planner; fusion follows `fusion_rules_path`, or the
  // built-in rules when empty. RunPlanner decides it, in one place.
  Coarsening coarsen = Coarsening::kPlannerDefault;
  std::string fusion_rules_path;

  // `--cpu-weights-in-place`: after any planner, CPU devices read their weights from host memory
  // (plan::ReadCpuWeightsInPlace) instead of loading a copy; for plans run on CPU core groups.
  bool cpu_weights_in_place = false;

  // Exact (MILP) planners.
  double relative_gap = 1e-4;  // stop when the incumbent is proven this close to the bound
  int threads = 1;             // solver threads (1 keeps runs deterministic)
  // `--no-warm-start` clears it: exact planners then start from their own feasibility step
  // instead of the best plan of the fast planners.
  bool warm_start = true;

  Status Validate() const;
  // The seed as the MILP solver takes it (a non-negative int), the same for every planner.
  int SolverSeed() const { return MilpSeed(seed); }
};

// A plan one planner made for a request (PlanRequest::known_plans).
struct KnownPlan {
  std::string planner;
  plan::Plan plan;
};

struct PlanRequest {
  const cost::CostModel* cost = nullptr;  // its graph and cluster are the ones to plan for
  PlannerOptions options;
  // The planner's own options: the values a user gave (a set without specs) until RunPlanner
  // resolves them against the planner's Options(); planners read them through ResolveOptions.
  OptionSet planner_options;
  Logger* logger = nullptr;
  // Called by exact planners on every new incumbent or bound of their solver (may be null).
  std::function<void(const milp::ProgressPoint&)> on_solver_progress;
  // Copied into the plan so that `simulate PLAN` can rebuild the graph and cluster.
  std::string model_spec;
  graph::ZooOptions model_options;
  std::string cluster_spec;
  // Plan for warm runs (`--warm F`, in [0, 1]; 0 is a cold start): the fraction of the weight
  // bytes that stays on its device between requests. RunPlanner gives the planner a cost model
  // whose weight loads cost (1 - F) of a cold load (CostModelOptions::resident_weight_fraction;
  // memory unchanged), marks the finished plan's weights resident (plan::ApplyWarmStart, the plan's
  // `warm`) and simulates it so; it also plans cold and keeps the cold plan when that simulates
  // faster warm.
  double warm = 0.0;

  // Set by a portfolio (`auto`) for its members, so that each plans as it would alone without
  // repeating the portfolio's work: `coarsened`, the GCOF model of `cost` (PlanCoarsened uses it
  // instead of fusing the graph again); `known_plans`, the plans of `cost`'s graph its members
  // have made so far, fastest first (an exact planner starts from them and does not plan them
  // again: exact_planner.h, SortingHat's warm starts).
  std::shared_ptr<const CoarsenedModel> coarsened;
  std::shared_ptr<const std::vector<KnownPlan>> known_plans;

  const graph::Graph& graph() const { return cost->graph(); }
  const hw::Cluster& cluster() const { return cost->cluster(); }
};

struct PlanResult {
  plan::Plan plan;
  // What the planner found (plan_status.h); its name is the JSON `status`.
  PlanStatus status = PlanStatus::kHeuristic;
  double planning_time_s = 0.0;
  // Exact planners: the model's own objective for the returned plan, the solver's best bound and
  // its relative gap ((objective - bound) / objective). Unset for heuristics.
  std::optional<double> model_objective_s;
  std::optional<double> solver_bound_s;
  std::optional<double> solver_gap;
  // A line for people: which portfolio member won (`auto`), which warm start an exact planner kept.
  std::string detail;
};

class Planner {
 public:
  virtual ~Planner() = default;
  virtual std::string Name() const = 0;
  virtual std::string Description() const = 0;
  // The options this planner owns (name, description, default, bounds): `--help`, flag
  // validation and the docs' planner table read them.
  virtual std::vector<OptionSpec> Options() const { return {}; }
  // The coarsening `--coarsen` leaves to the planner (kNone or kFusion).
  virtual Coarsening DefaultCoarsening() const { return Coarsening::kNone; }
  // True for a portfolio that passes `--coarsen` on to each member (each member then plans the
  // coarsened graph and falls back to the original one as it does alone) instead of planning the
  // coarsened graph as a whole.
  virtual bool CoarsensEachMember() const { return false; }
  // The planner's own work: returns a complete plan (planners fill devices and weight modes, then
  // usually plan::CompleteTransfers), or an error such as ResourceExhausted naming the device short
  // of memory.
  virtual StatusOr<PlanResult> Plan(const PlanRequest& request) = 0;
};

using PlannerFactory = std::function<std::unique_ptr<Planner>()>;

// Registers a planner under its name (done once at start-up by each planner's file).
bool RegisterPlanner(const std::string& name, PlannerFactory factory);
std::vector<std::string> PlannerNames();  // sorted
StatusOr<std::unique_ptr<Planner>> MakePlanner(const std::string& name);
// The options the named planner owns.
StatusOr<std::vector<OptionSpec>> PlannerOptionSpecs(const std::string& name);
// The request's given planner options checked against `planner`'s own: an unknown or out-of-range
// option is InvalidArgument naming the flag (and, for an unknown one, which planners own it).
StatusOr<OptionSet> ResolveOptions(const PlanRequest& request, const Planner& planner);

// Planning for warm runs (PlanRequest::warm > 0): both plans, simulated warm.
struct WarmPlanning {
  double warm_planned_s = 0.0;  // the plan made with warm weight-load costs
  // The plan made with cold costs, then warmed the same way; unset when it failed.
  std::optional<double> cold_planned_s;
  bool kept_cold_plan = false;  // the cold plan simulated faster warm and was kept
};

// What `hexplan place` reports: the plan, its simulated latency and the lower bound (both warm
// when the request is: `warm`).
struct PlacementOutcome {
  PlanResult result;
  sim::SimResult sim;
  sim::LowerBound lower_bound;
  double warm = 0.0;
  std::optional<WarmPlanning> warm_planning;  // set when warm > 0
};

// Validates a warm fraction: InvalidArgument naming --warm unless finite and in [0, 1].
Status CheckWarmFraction(double warm);

// Runs the named planner: validates the request, times the call, stamps the plan with the model and
// cluster, checks it (all violations) and simulates it. With `request.warm` > 0 it plans for warm
// runs (PlanRequest::warm) and its outcome is never slower, simulated warm, than the cold plan.
StatusOr<PlacementOutcome> RunPlanner(const std::string& name, const PlanRequest& request);

}  // namespace hx::place
