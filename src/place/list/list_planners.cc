// Planners built on the abstract scheduling problem: HEFT, PEFT, Baechi's m-TOPO / m-ETF / m-SCT.
// The exact planners (moirai, getf) are in exact_planners.cc.
#include <algorithm>
#include <functional>
#include <optional>

#include "hexplan/place/list/baechi.h"
#include "hexplan/place/list/list_scheduling.h"
#include "hexplan/place/problem_builder.h"
#include "place/builtin_planners.h"

namespace hx::place {
namespace {

using ScheduleFn = std::function<StatusOr<Schedule>(const SchedulingProblem&, const PlanRequest&)>;

class SchedulePlanner final : public Planner {
 public:
  SchedulePlanner(std::string name, std::string description, ScheduleFn fn)
      : name_(std::move(name)), description_(std::move(description)), fn_(std::move(fn)) {}
  std::string Name() const override { return name_; }
  std::string Description() const override { return description_; }
  StatusOr<PlanResult> Plan(const PlanRequest& request) override {
    HX_ASSIGN_OR_RETURN(GraphProblem problem, BuildGraphProblem(*request.cost));
    PlanResult result;
    HX_ASSIGN_OR_RETURN(result.plan,
                        PlanWithinMemory(
                            problem, *request.cost,
                            [&](const SchedulingProblem& p) { return fn_(p, request); }, name_));
    result.status = PlanStatus::kHeuristic;
    return result;
  }

 private:
  std::string name_, description_;
  ScheduleFn fn_;
};

}  // namespace

std::unique_ptr<Planner> MakeHeftPlanner() {
  return std::make_unique<SchedulePlanner>(
      "heft", "HEFT (Topcuoglu et al. 2002): upward rank, insertion-based earliest finish time",
      [](const SchedulingProblem& p, const PlanRequest&) { return ScheduleHeft(p); });
}
std::unique_ptr<Planner> MakePeftPlanner() {
  return std::make_unique<SchedulePlanner>(
      "peft", "PEFT (Arabnejad and Barbosa 2014): optimistic cost table",
      [](const SchedulingProblem& p, const PlanRequest&) { return SchedulePeft(p); });
}
std::unique_ptr<Planner> MakeMTopoPlanner() {
  return std::make_unique<SchedulePlanner>(
      "m-topo", "Baechi m-TOPO: topological order filling equal memory shares",
      [](const SchedulingProblem& p, const PlanRequest&) { return ScheduleMTopo(p); });
}
std::unique_ptr<Planner> MakeMEtfPlanner() {
  return std::make_unique<SchedulePlanner>(
      "m-etf", "Baechi m-ETF: memory-constrained earliest task first",
      [](const SchedulingProblem& p, const PlanRequest&) { return ScheduleMEtf(p); });
}
std::unique_ptr<Planner> MakeMSctPlanner() {
  return std::make_unique<SchedulePlanner>(
      "m-sct", "Baechi m-SCT: favourite children from an LP relaxation, then m-ETF",
      [](const SchedulingProblem& p, const PlanRequest& r) {
        return ScheduleMSct(p, std::min(10.0, r.options.time_limit_s));
      });
}

}  // namespace hx::place
