// Planners built on the abstract scheduling problem: HEFT, PEFT, Baechi's m-TOPO / m-ETF / m-SCT.
// The exact planners (moirai, getf) are in exact_planners.cc.
#include <algorithm>
#include <functional>
#include <optional>

#include "hexplan/core/stopwatch.h"
#include "hexplan/place/list/baechi.h"
#include "hexplan/place/list/list_scheduling.h"
#include "hexplan/place/problem_builder.h"
#include "place/builtin_planners.h"

namespace hx::place {
namespace {

using ScheduleFn = std::function<StatusOr<Schedule>(const SchedulingProblem&)>;
// Makes the schedule function of one request from its problem (m-SCT solves its LP here, once for
// all of PlanWithinMemory's tries).
using ScheduleFnFactory =
    std::function<StatusOr<ScheduleFn>(const SchedulingProblem&, const PlanRequest&)>;

// A factory for a scheduler that needs nothing but the problem.
template <typename Fn>
ScheduleFnFactory Plainly(Fn fn) {
  return [fn](const SchedulingProblem&, const PlanRequest&) -> StatusOr<ScheduleFn> {
    return ScheduleFn(fn);
  };
}

class SchedulePlanner final : public Planner {
 public:
  SchedulePlanner(std::string name, std::string description, ScheduleFnFactory fn)
      : name_(std::move(name)), description_(std::move(description)), fn_(std::move(fn)) {}
  std::string Name() const override { return name_; }
  std::string Description() const override { return description_; }
  StatusOr<PlanResult> Plan(const PlanRequest& request) override {
    const Stopwatch clock;
    ProblemBuildOptions build;
    build.live_activations = true;
    HX_ASSIGN_OR_RETURN(GraphProblem problem, BuildGraphProblem(*request.cost, build));
    HX_ASSIGN_OR_RETURN(ScheduleFn schedule, fn_(problem.problem, request));
    PlanResult result;
    // The memory retries stop at the time limit, counted from the start of planning: m-SCT's LP
    // (up to half the limit) comes out of it (counted from the retries' own start, m-SCT ran 1.3 s
    // past a 3 s limit on alphafold2-2.4b). The first try always runs.
    const double left = request.options.time_limit_s - clock.ElapsedSeconds();
    HX_ASSIGN_OR_RETURN(result.plan, PlanWithinMemory(problem, *request.cost, schedule, name_, 5,
                                                      std::max(0.0, left)));
    result.status = PlanStatus::kHeuristic;
    return result;
  }

 private:
  std::string name_, description_;
  ScheduleFnFactory fn_;
};

}  // namespace

std::unique_ptr<Planner> MakeHeftPlanner() {
  return std::make_unique<SchedulePlanner>(
      "heft", "HEFT (Topcuoglu et al. 2002): upward rank, insertion-based earliest finish time",
      Plainly([](const SchedulingProblem& p) { return ScheduleHeft(p); }));
}
std::unique_ptr<Planner> MakePeftPlanner() {
  return std::make_unique<SchedulePlanner>(
      "peft", "PEFT (Arabnejad and Barbosa 2014): optimistic cost table",
      Plainly([](const SchedulingProblem& p) { return SchedulePeft(p); }));
}
std::unique_ptr<Planner> MakeMTopoPlanner() {
  return std::make_unique<SchedulePlanner>(
      "m-topo", "Baechi m-TOPO: topological order filling equal memory shares",
      Plainly([](const SchedulingProblem& p) { return ScheduleMTopo(p); }));
}
std::unique_ptr<Planner> MakeMEtfPlanner() {
  return std::make_unique<SchedulePlanner>(
      "m-etf", "Baechi m-ETF: memory-constrained earliest task first",
      Plainly([](const SchedulingProblem& p) { return ScheduleMEtf(p); }));
}
std::unique_ptr<Planner> MakeMSctPlanner() {
  return std::make_unique<SchedulePlanner>(
      "m-sct", "Baechi m-SCT: favourite children from an LP relaxation, then m-ETF",
      [](const SchedulingProblem& p, const PlanRequest& r) -> StatusOr<ScheduleFn> {
        // The LP gets half the limit: m-ETF's schedule, the memory count and the simulation
        // come after it (on Chrion's 12-layer LSTM the LP took all of a 3 s limit and m-SCT
        // ended after 4.2 s).
        HX_ASSIGN_OR_RETURN(std::vector<int> child,
                            FavouriteChildren(p, std::min(10.0, 0.5 * r.options.time_limit_s)));
        return ScheduleFn(
            [child](const SchedulingProblem& q) { return ScheduleMSctWith(q, child); });
      });
}

}  // namespace hx::place
