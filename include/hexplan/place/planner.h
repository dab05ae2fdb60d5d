#pragma once
// The planner contract and registry behind `hexplan place --algo NAME`. A planner turns a graph, a
// cluster and a cost model into a plan; Plan() here validates the request, times the call, checks
// the plan and simulates it, so every planner reports the same things.

#include <functional>
#include <memory>
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
