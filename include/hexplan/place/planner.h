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
#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/plan/plan.h"
#include "hexplan/sim/lower_bound.h"
#include "hexplan/sim/simulator.h"

namespace hx::place {

struct PlannerOptions {
  double time_limit_s = 60.0;  // wall-clock budget for planners that search
  uint64_t seed = 1;           // every random choice comes from it

  // Graph coarsening in front of any planner (`--coarsen`): "" or "none", or "fusion" (MOIRAI's
  // GCOF operator fusion driven by `fusion_rules_path`, or the built-in rules when empty).
  std::string coarsen;
  std::string fusion_rules_path;

  // `--cpu-weights-in-place`: after any planner, CPU devices read their weights from host memory
  // (plan::ReadCpuWeightsInPlace) instead of loading a copy; for plans run on CPU core groups.
  bool cpu_weights_in_place = false;

  // Chrion (`--alpha`): weight of GPU memory against finish time in its greedy cost EFT +
  // alpha*mem.
  double alpha = 0.0;

  // Exact (MILP) planners.
  double relative_gap = 1e-4;   // stop when the incumbent is proven this close to the bound
  int threads = 1;              // solver threads (1 keeps runs deterministic)
  std::string export_lp_path;   // `--export-lp`: write the model (LP format) and go on solving
  std::string export_mps_path;  // `--export-mps`: the same in free MPS
  std::string solution_path;    // `--solution`: read an external solver's solution, do not solve

  // SortingHat.
  int subgraphs_per_gpu = 6;         // --q
  int dominators_per_submodel = 1;   // --ndom
  double submodel_time_limit_s = 0;  // per-submodel MILP limit; 0: time_limit_s split evenly
  std::string ablation;              // "", "no-contention", "no-topology", "independent"

  Status Validate() const;
};

struct PlanRequest {
  const cost::CostModel* cost = nullptr;  // its graph and cluster are the ones to plan for
  PlannerOptions options;
  Logger* logger = nullptr;
  // Copied into the plan so that `simulate PLAN` can rebuild the graph and cluster.
  std::string model_spec;
  graph::ZooOptions model_options;
  std::string cluster_spec;

  const graph::Graph& graph() const { return cost->graph(); }
  const hw::Cluster& cluster() const { return cost->cluster(); }
};

struct PlanResult {
  plan::Plan plan;
  // "optimal" (proved), "feasible" (a solver's incumbent), "time_limit" (stopped by the limit with
  // a plan), "heuristic" (a rule, no optimality claim).
  std::string status = "heuristic";
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

// What `hexplan place` reports: the plan, its simulated latency and the lower bound.
struct PlacementOutcome {
  PlanResult result;
  sim::SimResult sim;
  sim::LowerBound lower_bound;
};

// Runs the named planner: validates the request, times the call, stamps the plan with the model and
// cluster, checks it (all violations) and simulates it.
StatusOr<PlacementOutcome> RunPlanner(const std::string& name, const PlanRequest& request);

}  // namespace hx::place
