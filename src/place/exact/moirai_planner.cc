// `moirai`: GCOF operator fusion (the planner's default coarsening), then MOIRAI's MILP on the
// exact-planner skeleton, warm-started from the fast schedule that is best under the MILP's model.
#include <cstdio>
#include <string>

#include "hexplan/core/stopwatch.h"
#include "hexplan/place/exact/exact_planner.h"
#include "hexplan/place/exact/moirai_milp.h"
#include "hexplan/place/problem_builder.h"
#include "hexplan/place/warm_start.h"
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

class MoiraiPlanner final : public ExactPlanner {
 public:
  std::string Name() const override { return "moirai"; }
  std::string Description() const override {
    return "MOIRAI: GCOF operator fusion, then its MILP on CBC (memory, non-overlap, "
           "per-direction channels, congestion), warm-started from the best of HEFT, PEFT and "
           "m-ETF";
  }
  // MOIRAI = GCOF + MILP: it coarsens unless `--coarsen none`.
  Coarsening DefaultCoarsening() const override { return Coarsening::kFusion; }

 protected:
  StatusOr<ExactAnswer> SolveModel(const PlanRequest& request, const OptionSet&,
                                   const MilpSettings& settings) override {
    Stopwatch clock;
    const cost::CostModel& cost = *request.cost;
    HX_ASSIGN_OR_RETURN(GraphProblem problem, BuildGraphProblem(cost));
    // The warm start that is best under the MILP's own model (transfers contend for channels).
    auto warm = WarmStartFor(problem.problem, request.options.warm_start, "moirai", request.logger,
                             [&](const Schedule& s) { return ModelMakespan(problem.problem, s); });
    MoiraiOptions options;
    ApplyMilpSettings(settings, TimeLeftForModel(request, clock.ElapsedSeconds()), &options);
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
