// `moirai`: GCOF operator fusion (the planner's default coarsening), then MOIRAI's MILP on the
// exact-planner skeleton, warm-started from the fast schedule that is best under the MILP's model.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>

#include "hexplan/core/stopwatch.h"
#include "hexplan/place/exact/exact_planner.h"
#include "hexplan/place/exact/moirai_milp.h"
#include "hexplan/place/exact/task_coarsening.h"
#include "hexplan/place/problem_builder.h"
#include "hexplan/place/warm_start.h"
#include "hexplan/plan/validator.h"
#include "hexplan/sim/simulator.h"
#include "place/builtin_planners.h"
#include "place/format_units.h"

namespace hx::place {
namespace {

std::string MoiraiDetail(const StatusOr<WarmStart>& warm, const MoiraiResult& milp,
                         const MoiraiOptions& options) {
  std::string detail =
      "warm start " +
      (warm.ok() ? warm->source + " " + FormatMs(warm->schedule.makespan)
                 : std::string("from a memory-packing MILP")) +
      (milp.num_constraints > 0
           ? "; MILP " + std::to_string(milp.num_binaries) + " binaries, " +
                 std::to_string(milp.num_constraints) + " constraints"
           : "; MILP not solved (about " + std::to_string(milp.estimated_constraints) +
                 " constraints; bound from GETF's assignment MILP)");
  if (!options.solution_path.empty())
    detail +=
        "; from " + options.solution_path +
        (milp.solution_violations ? " (" + std::to_string(milp.solution_violations) + " violations)"
                                  : "");
  return detail;
}

// The simulated latency of a plan the validator accepts (infinity otherwise).
double MoiraiSimulatedSeconds(const plan::Plan& plan, const cost::CostModel& cost) {
  if (!plan::CheckPlan(plan, cost, "moirai").ok()) return std::numeric_limits<double>::infinity();
  auto sim = sim::Simulate(plan, cost);
  return sim.ok() ? sim->makespan_s : std::numeric_limits<double>::infinity();
}

// The coarse MILP's schedule on the original graph: expanded, refined at the device boundaries,
// and whichever of the two plans simulates faster (refinement never makes the plan slower).
struct MoiraiExpanded {
  plan::Plan plan;
  bool refined = false;
};
StatusOr<MoiraiExpanded> ExpandAndRefine(const GraphProblem& problem,
                                         const TaskCoarsening& coarsening, const Schedule& coarse,
                                         const cost::CostModel& cost, double refine_seconds) {
  const Schedule expanded = ExpandCoarseSchedule(problem.problem, coarsening, coarse);
  const Schedule refined = RefineBoundary(problem.problem, expanded, 4, refine_seconds);
  MoiraiExpanded out;
  HX_ASSIGN_OR_RETURN(out.plan, PlanFromSchedule(problem, expanded, cost));
  if (refined.device == expanded.device) return out;
  HX_ASSIGN_OR_RETURN(plan::Plan better, PlanFromSchedule(problem, refined, cost));
  if (MoiraiSimulatedSeconds(better, cost) < MoiraiSimulatedSeconds(out.plan, cost)) {
    out.plan = std::move(better);
    out.refined = true;
  }
  return out;
}

// At most this many coarse tasks for a time limit: one per second, at least 16. Measured on this
// project's loaded 2-core machine (docs/placement.md): CBC proves swin-6.6b's 30 blocks optimal
// within 60 s, and finds no bound at all for its 102 scopes before the limit.
int MaxCoarseTasks(double time_limit_s) {
  return static_cast<int>(std::clamp(time_limit_s, 16.0, 2000.0));
}

std::string CoarseDetail(const TaskCoarsening& c, int tasks, const MoiraiResult& milp, int rounds,
                         bool refined) {
  return "coarsened " + c.Summary(tasks) + "; MILP " + std::to_string(milp.num_binaries) +
         " binaries, " + std::to_string(milp.num_constraints) + " constraints, " +
         PlanStatusName(milp.status) +
         (milp.has_bound ? "; bound and gap are the coarse model's (plans that keep each coarse "
                           "task on one device), not a bound for every plan"
                         : "") +
         (rounds > 1 ? "; " + std::to_string(rounds) + " rounds for memory" : "") +
         (refined ? "; boundary refinement kept" : "");
}

// MOIRAI on a coarsened problem: the MILP on the coarse tasks (warm-started from the fast
// schedulers on them), expanded and refined; when the plan overflows a device once activations
// are counted as the validator counts them, that device's room is lowered and the MILP solved
// again with the time left (up to four rounds, each lowering by 1.05 times the overflow; a
// growing margin lost swin-6.6b's best placement).
StatusOr<ExactAnswer> SolveCoarseMoirai(const PlanRequest& request, GraphProblem& problem,
                                        TaskCoarsening& coarsening, MoiraiOptions options,
                                        const Stopwatch& clock) {
  const cost::CostModel& cost = *request.cost;
  ExactAnswer answer;
  bool have = false;
  constexpr int kRounds = 4;
  for (int round = 1; round <= kRounds; ++round) {
    const double left = TimeLeftForModel(request, clock.ElapsedSeconds());
    auto warm =
        WarmStartFor(coarsening.coarse, request.options.warm_start, "moirai", request.logger,
                     [&](const Schedule& s) { return ModelMakespan(coarsening.coarse, s); });
    // Most of the time to the first solve; a round for memory gets what is left (at least a
    // twentieth of the limit, so it may run past it a little).
    options.time_limit_s =
        round == 1 ? 0.85 * left : std::max(left, 0.05 * request.options.time_limit_s);
    auto milp = ScheduleMoirai(coarsening.coarse, warm.ok() ? &warm->schedule : nullptr, options,
                               request.logger);
    if (!milp.ok() && have) break;  // the lowered room holds no placement: keep the last
    HX_RETURN_IF_ERROR(milp.status());
    HX_ASSIGN_OR_RETURN(MoiraiExpanded expanded,
                        ExpandAndRefine(problem, coarsening, milp->schedule, cost,
                                        std::min(2.0, 0.1 * request.options.time_limit_s)));
    answer.plan = std::move(expanded.plan);
    answer.status = milp->status;
    answer.model_objective_s = milp->model_objective;
    answer.bound_s.reset();
    answer.gap.reset();
    if (milp->has_bound) {
      answer.bound_s = milp->bound;
      answer.gap = milp->gap;
    }
    answer.detail =
        CoarseDetail(coarsening, problem.problem.num_tasks(), *milp, round, expanded.refined);
    answer.from_solution_file = !options.solution_path.empty();
    have = true;
    if (answer.from_solution_file || round == kRounds ||
        ShrinkOverfullDevices(answer.plan, cost, problem) == 0)
      break;
    for (int d = 0; d < problem.problem.num_devices(); ++d)
      coarsening.coarse.SetDeviceMemory(d, problem.problem.device_memory(d));
  }
  return answer;
}

class MoiraiPlanner final : public ExactPlanner {
 public:
  std::string Name() const override { return "moirai"; }
  std::string Description() const override {
    return "MOIRAI: GCOF operator fusion (then scopes or blocks when the MILP would be too "
           "large), then its MILP on CBC (memory, non-overlap, per-direction channels, "
           "congestion, load cuts), warm-started from the best of HEFT, PEFT and m-ETF";
  }
  // MOIRAI = GCOF + MILP: it coarsens unless `--coarsen none`.
  Coarsening DefaultCoarsening() const override { return Coarsening::kFusion; }

 protected:
  std::vector<OptionSpec> ModelOptions() const override {
    return {IntOption("coarse-tasks",
                      "at most this many tasks in the MILP: scopes, blocks, groups of blocks or "
                      "chunks until it fits (0: by the time limit)",
                      0, 0, 100000)};
  }

  StatusOr<ExactAnswer> SolveModel(const PlanRequest& request, const OptionSet& own,
                                   const MilpSettings& settings) override {
    Stopwatch clock;
    const cost::CostModel& cost = *request.cost;
    HX_ASSIGN_OR_RETURN(GraphProblem problem, BuildGraphProblem(cost));
    // The warm start that is best under the MILP's own model (transfers contend for channels).
    auto warm = WarmStartFor(problem.problem, request.options.warm_start, "moirai", request.logger,
                             [&](const Schedule& s) { return ModelMakespan(problem.problem, s); });
    MoiraiOptions options;
    ApplyMilpSettings(settings, TimeLeftForModel(request, clock.ElapsedSeconds()), &options);
    TaskCoarseningOptions coarse_options;
    coarse_options.max_tasks = own.Int("coarse-tasks") > 0
                                   ? static_cast<int>(own.Int("coarse-tasks"))
                                   : MaxCoarseTasks(request.options.time_limit_s);
    coarse_options.max_constraints = options.max_constraints;
    // Coarsened when asked (--coarse-tasks), or when the MILP of the graph as it is would be too
    // large to build (the paper's size, as before: those models are solved as they are).
    const int tasks = problem.problem.num_tasks();
    const bool coarsen = own.Int("coarse-tasks") > 0
                             ? tasks > coarse_options.max_tasks
                             : tasks > 2000 || EstimateMoiraiConstraints(problem.problem, true,
                                                                         options.max_constraints) >
                                                   options.max_constraints;
    if (coarsen) {
      HX_ASSIGN_OR_RETURN(TaskCoarsening coarsening, CoarsenTasks(problem.problem, coarse_options));
      LogTo(request.logger, LogLevel::kInfo,
            "moirai: " + coarsening.Summary(problem.problem.num_tasks()));
      const double prepared_s = clock.ElapsedSeconds();
      HX_ASSIGN_OR_RETURN(ExactAnswer answer,
                          SolveCoarseMoirai(request, problem, coarsening, options, clock));
      char when[64];
      std::snprintf(when, sizeof when, "; coarse model ready after %.1f s", prepared_s);
      answer.detail += when;
      // The warm start has no objective in the coarse model's terms (no gap for it).
      if (warm.ok()) {
        if (auto plan = PlanFromSchedule(problem, warm->schedule, cost); plan.ok())
          answer.warm_plans.push_back({warm->source, std::move(*plan), std::nullopt});
      }
      return answer;
    }
    HX_ASSIGN_OR_RETURN(MoiraiResult milp,
                        ScheduleMoirai(problem.problem, warm.ok() ? &warm->schedule : nullptr,
                                       options, request.logger));
    ExactAnswer answer;
    HX_ASSIGN_OR_RETURN(answer.plan, PlanFromSchedule(problem, milp.schedule, cost));
    answer.status = milp.status;
    answer.model_objective_s = milp.model_objective;
    if (milp.has_bound) {
      answer.bound_s = milp.bound;
      answer.gap = milp.gap;
    }
    answer.detail = MoiraiDetail(warm, milp, options);
    answer.from_solution_file = !options.solution_path.empty();
    if (warm.ok()) {
      if (auto plan = PlanFromSchedule(problem, warm->schedule, cost); plan.ok())
        answer.warm_plans.push_back(
            {warm->source, std::move(*plan), ModelMakespan(problem.problem, warm->schedule)});
    }
    return answer;
  }
};

}  // namespace

std::unique_ptr<Planner> MakeMoiraiPlanner() { return std::make_unique<MoiraiPlanner>(); }

}  // namespace hx::place
