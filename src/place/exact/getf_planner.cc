// `getf`: GETF (Su et al. 2020) on the exact-planner skeleton: its group-assignment MILP, then
// earliest time first within the groups, warm-started from the best fast schedule.
#include <cstdio>
#include <string>

#include "hexplan/core/stopwatch.h"
#include "hexplan/place/exact/exact_planner.h"
#include "hexplan/place/exact/getf.h"
#include "hexplan/place/problem_builder.h"
#include "hexplan/place/warm_start.h"
#include "place/builtin_planners.h"
#include "place/format_units.h"

namespace hx::place {
namespace {

class GetfPlanner final : public ExactPlanner {
 public:
  std::string Name() const override { return "getf"; }
  std::string Description() const override {
    return "GETF (Su et al. 2020): group assignment MILP on CBC, then earliest time first within "
           "groups; warm-started from the best of HEFT, PEFT and m-ETF";
  }

 protected:
  StatusOr<ExactAnswer> SolveModel(const PlanRequest& request, const OptionSet&,
                                   const MilpSettings& settings) override {
    Stopwatch clock;
    const cost::CostModel& cost = *request.cost;
    HX_ASSIGN_OR_RETURN(GraphProblem problem, BuildGraphProblem(cost));
    auto warm = WarmStartFor(problem.problem, request.options.warm_start, "getf", request.logger);
    GetfOptions options;
    ApplyMilpSettings(settings, TimeLeftForModel(request, clock.ElapsedSeconds()), &options);
    HX_ASSIGN_OR_RETURN(GetfResult getf,
                        ScheduleGetf(problem.problem, warm.ok() ? &warm->schedule : nullptr,
                                     options, request.logger));
    ExactAnswer answer;
    HX_ASSIGN_OR_RETURN(answer.plan, PlanFromSchedule(problem, getf.schedule, cost));
    answer.status = getf.status;
    answer.model_objective_s = getf.schedule.makespan;
    answer.bound_s = getf.bound;
    answer.gap = getf.gap;
    answer.detail =
        "warm start " +
        (warm.ok() ? warm->source + " " + FormatMs(warm->schedule.makespan) : std::string("none")) +
        "; " + std::to_string(getf.num_groups) + " device groups, " +
        std::to_string(getf.num_binaries) + " binaries" +
        (options.solution_path.empty() ? std::string() : "; from " + options.solution_path);
    answer.from_solution_file = !options.solution_path.empty();
    if (warm.ok()) {
      if (auto plan = PlanFromSchedule(problem, warm->schedule, cost); plan.ok())
        answer.warm_plans.push_back({warm->source, std::move(*plan), warm->schedule.makespan});
    }
    return answer;
  }
};

}  // namespace

std::unique_ptr<Planner> MakeGetfPlanner() { return std::make_unique<GetfPlanner>(); }

}  // namespace hx::place
