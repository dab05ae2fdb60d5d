// The exact planners on the abstract scheduling problem: `moirai` (GCOF, then MOIRAI's MILP) and
// `getf` (GETF's group-assignment MILP, then ETF within groups), both warm-started from the best
// fast schedule and never worse than it.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

#include "hexplan/core/stopwatch.h"
#include "hexplan/place/coarsened_planning.h"
#include "hexplan/place/getf.h"
#include "hexplan/place/moirai_milp.h"
#include "hexplan/place/problem_builder.h"
#include "hexplan/place/warm_start.h"
#include "hexplan/sim/simulator.h"
#include "place/builtin_planners.h"

namespace hx::place {
namespace {

std::string Ms(double seconds) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f ms", seconds * 1e3);
  return buf;
}

// What is left of the request's time limit for the MILP, keeping a little for turning its
// schedule into a plan (at least a few milliseconds: the MILP then keeps its warm start).
double TimeLeft(const PlanRequest& request, const Stopwatch& clock) {
  const double limit = request.options.time_limit_s;
  return std::max(0.01, limit - std::min(0.25, 0.03 * limit) - clock.ElapsedSeconds());
}

StatusOr<WarmStart> WarmStartFor(const SchedulingProblem& p, const std::string& planner,
                                 Logger* logger,
                                 const std::function<double(const Schedule&)>& score = nullptr) {
  auto warm = BestFastSchedule(p, score);
  if (!warm.ok())
    LogTo(logger, LogLevel::kInfo,
          planner + ": no warm start from the fast planners (" + warm.status().message() + ")");
  return warm;
}

// The MILP's model is not the simulator's (MOIRAI's channels, GETF's groups): when the warm start's
// plan simulates faster than the MILP's, the warm start is returned (status "warm_start"), so an
// exact planner is never worse than the fast planners it started from.
Status KeepWarmStartIfFaster(const GraphProblem& problem, const StatusOr<WarmStart>& warm,
                             double warm_model_objective, const cost::CostModel& cost,
                             PlanResult* result) {
  if (!warm.ok() || result->status == "warm_start") return Status::Ok();
  auto warm_plan = PlanFromSchedule(problem, warm->schedule, cost);
  if (!warm_plan.ok()) return Status::Ok();
  HX_ASSIGN_OR_RETURN(sim::SimResult milp_sim, sim::Simulate(result->plan, cost));
  auto warm_sim = sim::Simulate(*warm_plan, cost);
  if (!warm_sim.ok() || warm_sim->makespan_s >= milp_sim.makespan_s * (1.0 - 1e-9))
    return Status::Ok();
  result->detail += "; kept the warm start: it simulates to " + Ms(warm_sim->makespan_s) +
                    ", the MILP's plan (" + result->status + ") to " + Ms(milp_sim.makespan_s);
  result->plan = std::move(*warm_plan);
  result->status = "warm_start";
  result->model_objective_s = warm_model_objective;
  if (result->solver_bound_s && warm_model_objective > 0.0)
    result->solver_gap =
        std::max(0.0, (warm_model_objective - *result->solver_bound_s) / warm_model_objective);
  return Status::Ok();
}

class MoiraiPlanner final : public Planner {
 public:
  std::string Name() const override { return "moirai"; }
  std::string Description() const override {
    return "MOIRAI: GCOF operator fusion, then its MILP on CBC (memory, non-overlap, "
           "per-direction channels, congestion), warm-started from the best of HEFT, PEFT and "
           "m-ETF";
  }
  StatusOr<PlanResult> Plan(const PlanRequest& request) override {
    // MOIRAI = GCOF + MILP: coarsen first unless asked not to (or already done by RunPlanner).
    if (request.options.coarsen.empty()) return PlanCoarsened(*this, request);
    Stopwatch clock;
    HX_ASSIGN_OR_RETURN(GraphProblem problem, BuildGraphProblem(*request.cost));
    // The warm start that is best under the MILP's own model (transfers contend for channels).
    auto warm = WarmStartFor(problem.problem, "moirai", request.logger,
                             [&](const Schedule& s) { return ModelMakespan(problem.problem, s); });
    MoiraiOptions options;
    options.time_limit_s = TimeLeft(request, clock);
    options.relative_gap = request.options.relative_gap;
    options.threads = request.options.threads;
    options.seed = static_cast<int>(request.options.seed % 1000000);
    options.export_lp = request.options.export_lp_path;
    options.export_mps = request.options.export_mps_path;
    options.solution_path = request.options.solution_path;
    HX_ASSIGN_OR_RETURN(MoiraiResult milp,
                        ScheduleMoirai(problem.problem, warm.ok() ? &warm->schedule : nullptr,
                                       options, request.logger));
    PlanResult result;
    HX_ASSIGN_OR_RETURN(result.plan, PlanFromSchedule(problem, milp.schedule, *request.cost));
    result.status = milp.status;
    result.model_objective_s = milp.model_objective;
    if (milp.has_bound) {
      result.solver_bound_s = milp.bound;
      result.solver_gap = milp.gap;
    }
    result.detail =
        "warm start " +
        (warm.ok() ? warm->source + " " + Ms(warm->schedule.makespan)
                   : std::string("from a memory-packing MILP")) +
        (milp.num_constraints > 0
             ? "; MILP " + std::to_string(milp.num_binaries) + " binaries, " +
                   std::to_string(milp.num_constraints) + " constraints"
             : "; MILP not solved (about " + std::to_string(milp.estimated_constraints) +
                   " constraints; bound from GETF's assignment MILP)");
    if (!options.solution_path.empty())
      result.detail += "; from " + options.solution_path +
                       (milp.solution_violations
                            ? " (" + std::to_string(milp.solution_violations) + " violations)"
                            : "");
    else if (warm.ok())
      HX_RETURN_IF_ERROR(KeepWarmStartIfFaster(
          problem, warm, ModelMakespan(problem.problem, warm->schedule), *request.cost, &result));
    return result;
  }
};

class GetfPlanner final : public Planner {
 public:
  std::string Name() const override { return "getf"; }
  std::string Description() const override {
    return "GETF (Su et al. 2020): group assignment MILP on CBC, then earliest time first within "
           "groups; warm-started from the best of HEFT, PEFT and m-ETF";
  }
  StatusOr<PlanResult> Plan(const PlanRequest& request) override {
    Stopwatch clock;
    HX_ASSIGN_OR_RETURN(GraphProblem problem, BuildGraphProblem(*request.cost));
    auto warm = WarmStartFor(problem.problem, "getf", request.logger);
    GetfOptions options;
    options.time_limit_s = TimeLeft(request, clock);
    options.relative_gap = request.options.relative_gap;
    options.threads = request.options.threads;
    options.seed = static_cast<int>(request.options.seed % 1000000);
    HX_ASSIGN_OR_RETURN(GetfResult getf,
                        ScheduleGetf(problem.problem, warm.ok() ? &warm->schedule : nullptr,
                                     options, request.logger));
    PlanResult result;
    HX_ASSIGN_OR_RETURN(result.plan, PlanFromSchedule(problem, getf.schedule, *request.cost));
    result.status = getf.status;
    result.model_objective_s = getf.schedule.makespan;
    result.solver_bound_s = getf.bound;
    result.solver_gap = getf.gap;
    result.detail =
        "warm start " +
        (warm.ok() ? warm->source + " " + Ms(warm->schedule.makespan) : std::string("none")) +
        "; " + std::to_string(getf.num_groups) + " device groups, " +
        std::to_string(getf.num_binaries) + " binaries";
    if (warm.ok())
      HX_RETURN_IF_ERROR(
          KeepWarmStartIfFaster(problem, warm, warm->schedule.makespan, *request.cost, &result));
    return result;
  }
};

}  // namespace

std::unique_ptr<Planner> MakeMoiraiPlanner() { return std::make_unique<MoiraiPlanner>(); }
std::unique_ptr<Planner> MakeGetfPlanner() { return std::make_unique<GetfPlanner>(); }

}  // namespace hx::place
