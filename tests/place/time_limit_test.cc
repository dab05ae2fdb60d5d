// The exact planners under a short --time-limit, on inputs large enough that they would overrun
// it without a budget: each still returns a valid plan (the incumbent, or the warm start), with a
// status saying which. Timing itself is measured in bench/sortinghat_bench.cc, not asserted here.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "hexplan/core/stopwatch.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/hw/presets.h"
#include "hexplan/place/exact/exact_planner.h"
#include "hexplan/place/exact/getf.h"
#include "hexplan/place/exact/moirai_milp.h"
#include "hexplan/place/planner.h"
#include "hexplan/place/problem_builder.h"
#include "hexplan/place/sortinghat/sortinghat.h"
#include "hexplan/place/warm_start.h"
#include "hexplan/plan/validator.h"
#include "testing/graph_builders.h"

namespace hx::place {
namespace {

// n tasks on `devices` identical devices, unit links, random costs and edges (as in
// exact_planners_test.cc, larger).
SchedulingProblem TimeLimitRandomProblem(int n, int devices, uint64_t seed) {
  std::mt19937_64 rng(seed);
  SchedulingProblem p(n, devices);
  for (int a = 0; a < devices; ++a)
    for (int b = 0; b < devices; ++b) p.SetLink(a, b, 0.0, 1.0);
  for (int t = 0; t < n; ++t)
    for (int d = 0; d < devices; ++d) p.SetCost(t, d, 1 + static_cast<double>(rng() % 9));
  for (int t = 1; t < n; ++t) {
    p.AddEdge(static_cast<int>(rng() % t), t, 1 + static_cast<double>(rng() % 4));
    if (t > 2 && rng() % 2) p.AddEdge(static_cast<int>(rng() % (t - 1)), t, 1 + rng() % 3);
  }
  return p;
}

TEST(TimeLimitTest, MoiraiKeepsItsWarmStartWhenTheLimitEndsWhileBuilding) {
  // 70 tasks and about 100 flows: tens of thousands of non-overlap and congestion rows, more than
  // 0.1 s builds and solves; the limit may end while building, presolving or branching.
  SchedulingProblem p = TimeLimitRandomProblem(70, 3, 5);
  auto warm = BestFastSchedule(p);
  ASSERT_TRUE(warm.ok());
  MoiraiOptions options;
  options.time_limit_s = 0.1;
  auto r = ScheduleMoirai(p, &warm->schedule, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->schedule.Check(p, 1e-9), "");
  const std::set<PlanStatus> statuses = {PlanStatus::kWarmStart, PlanStatus::kTimeLimit,
                                         PlanStatus::kOptimal};
  EXPECT_TRUE(statuses.count(r->status)) << PlanStatusName(r->status);
  // Never worse than the warm start in the model's terms; the warm start itself when kept.
  EXPECT_LE(r->model_objective, ModelMakespan(p, warm->schedule) * (1 + 1e-9));
  if (r->status == PlanStatus::kWarmStart) {
    EXPECT_EQ(r->schedule.device, warm->schedule.device);
  }
}

TEST(TimeLimitTest, GetfReturnsAValidScheduleUnderAShortLimit) {
  SchedulingProblem p = TimeLimitRandomProblem(150, 4, 7);
  auto warm = BestFastSchedule(p);
  ASSERT_TRUE(warm.ok());
  GetfOptions options;
  options.time_limit_s = 0.05;
  auto r = ScheduleGetf(p, &warm->schedule, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->schedule.Check(p, 1e-9), "");
  const std::set<PlanStatus> statuses = {PlanStatus::kWarmStart, PlanStatus::kFeasible,
                                         PlanStatus::kOptimal};
  EXPECT_TRUE(statuses.count(r->status)) << PlanStatusName(r->status);
  EXPECT_LE(r->schedule.makespan, warm->schedule.makespan + 1e-9);
  EXPECT_LE(r->bound, r->schedule.makespan + 1e-9);
}

struct TimeLimitInputs {
  graph::Graph graph;
  hw::Cluster cluster;
  std::unique_ptr<cost::CostModel> cost;
};
std::unique_ptr<TimeLimitInputs> MakeTimeLimitInputs(graph::Graph g, const std::string& preset) {
  auto c = hw::BuildPreset(preset);
  EXPECT_TRUE(c.ok());
  auto s = std::make_unique<TimeLimitInputs>(TimeLimitInputs{std::move(g), std::move(*c), nullptr});
  // The roofline: these solver cases were sized on its numbers (issue 21 kept it as an option).
  cost::CostModelOptions options;
  options.kind = cost::CostModelKind::kRoofline;
  s->cost = std::make_unique<cost::CostModel>(s->graph, s->cluster, options);
  return s;
}

TEST(TimeLimitTest, SortingHatKeepsWarmStartsForSubmodelsPastTheLimit) {
  // A chain of 40 ops cut into 40 submodels at its dominators, each a MILP over 4 GPUs x 6 slots:
  // 0.2 s cannot solve them all, so later submodels keep their warm starts.
  auto s = MakeTimeLimitInputs(testing::MakeChain(40, 512, 64), "sortinghat-v100");
  PlanRequest r;
  r.cost = s->cost.get();
  r.options.time_limit_s = 0.2;
  SortingHatReport report;
  auto out = PlanSortingHat(r, &report);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(plan::CheckPlan(out->plan, *s->cost, "sortinghat").ok());
  const std::set<PlanStatus> statuses = {PlanStatus::kFeasible, PlanStatus::kTimeLimit,
                                         PlanStatus::kHeuristic};
  EXPECT_TRUE(statuses.count(out->status)) << PlanStatusName(out->status);
  // The report and the status agree on what the limit cut short.
  int warm = 0;
  for (const SortingHatSubmodelStats& st : report.submodels)
    warm += st.status == PlanStatus::kWarmStart;
  EXPECT_LE(report.out_of_time, warm);
  if (report.out_of_time > 0) {
    EXPECT_NE(out->status, PlanStatus::kFeasible);
    if (report.kept_milp) {
      EXPECT_NE(out->detail.find("kept their warm start"), std::string::npos) << out->detail;
    }
  }
  EXPECT_EQ(report.submodels.size(), 40u);
}

TEST(TimeLimitTest, EveryExactPlannerAndAutoGiveAValidPlanUnderAShortLimit) {
  auto s = MakeTimeLimitInputs(testing::MakeRandomDag(60, 11, 256), "sortinghat-v100");
  PlanRequest r;
  r.cost = s->cost.get();
  r.options.time_limit_s = 0.3;
  for (const char* algo : {"moirai", "getf", "sortinghat", "auto"}) {
    auto out = RunPlanner(algo, r);
    ASSERT_TRUE(out.ok()) << algo << ": " << out.status().ToString();
    EXPECT_TRUE(std::isfinite(out->sim.makespan_s) && out->sim.makespan_s > 0) << algo;
    const std::set<PlanStatus> statuses = {PlanStatus::kOptimal, PlanStatus::kFeasible,
                                           PlanStatus::kTimeLimit, PlanStatus::kHeuristic,
                                           PlanStatus::kWarmStart};
    EXPECT_TRUE(statuses.count(out->result.status))
        << algo << ": " << PlanStatusName(out->result.status);
  }
}

// The baselines an exact planner runs after its model, fitted to the limit's end: each estimated
// at the longest so far and at least kBaselineSecondsPerOp per op; those that cannot end by the
// deadline are skipped and named.
TEST(TimeLimitTest, BaselineBudgetSkipsWhatCannotEndByTheDeadline) {
  BaselineBudget budget(/*deadline_s=*/10.0, /*ops=*/100000);  // at least 1 s each
  EXPECT_DOUBLE_EQ(budget.Estimate(), 100000 * kBaselineSecondsPerOp);
  EXPECT_TRUE(budget.Admit("single", 2.0));
  budget.Ran(0.5);  // shorter than the per-op floor: the floor stays
  EXPECT_DOUBLE_EQ(budget.Estimate(), 1.0);
  EXPECT_TRUE(budget.Admit("heft", 2.6));
  budget.Ran(3.0);  // the longest so far sets the estimate
  EXPECT_DOUBLE_EQ(budget.Estimate(), 3.0);
  EXPECT_TRUE(budget.Admit("peft", 7.0));    // 7 + 3 ends at the deadline
  EXPECT_FALSE(budget.Admit("m-etf", 7.5));  // would end at 10.5
  EXPECT_FALSE(budget.Admit("m-topo", 9.9));
  EXPECT_EQ(budget.skipped(), (std::vector<std::string>{"m-etf", "m-topo"}));
  EXPECT_EQ(budget.Note(), "; skipped for the time limit: m-etf, m-topo");
  EXPECT_EQ(BaselineBudget(1.0, 10).Note(), "");
}

// Six baselines (single, heft, peft, m-etf, m-topo, m-sct) and the model's own plan check.
TEST(TimeLimitTest, TheModelLeavesTheBaselinesTheirShareOfTheLimit) {
  EXPECT_DOUBLE_EQ(BaselineReserveSeconds(60.0, 1000), 7 * 1000 * kBaselineSecondsPerOp);
  EXPECT_DOUBLE_EQ(BaselineReserveSeconds(4.0, 10000000), 1.0);  // at most a quarter
  auto s = MakeTimeLimitInputs(testing::MakeChain(20), "sortinghat-v100");
  PlanRequest r;
  r.cost = s->cost.get();
  r.options.time_limit_s = 60.0;
  const double baselines = BaselineReserveSeconds(60.0, s->graph.num_nodes());
  EXPECT_NEAR(TimeLeftForModel(r, 10.0), 60.0 - 0.25 - baselines - 10.0, 1e-12);
  EXPECT_DOUBLE_EQ(TimeLeftForModel(r, 70.0), 0.01);
}

// A limit the model's warm starts alone overrun: the baselines after the model are skipped and the
// detail says which, and the plan is still valid (the warm start).
TEST(TimeLimitTest, AnExactPlannerPastItsLimitSkipsTheBaselinesAndSaysSo) {
  auto s = MakeTimeLimitInputs(testing::MakeRandomDag(300, 3, 64), "sortinghat-v100");
  PlanRequest r;
  r.cost = s->cost.get();
  r.options.time_limit_s = 1e-3;  // below HEFT's time on 300 ops, even in a release build
  auto out = RunPlanner("getf", r);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // `single` always runs (the plan never to lose to); heft is the warm start; the rest are
  // skipped.
  EXPECT_NE(out->result.detail.find("skipped for the time limit: peft"), std::string::npos)
      << out->result.detail;
}

}  // namespace
}  // namespace hx::place

namespace hx::place {
namespace {

// `auto`'s fast members and the list planners respect the limit: PlanWithinMemory starts no new
// memory try once the limit is spent (the first always runs), counted by the schedules asked for,
// not by the clock.
TEST(TimeLimitTest, ListPlannersStopTheirMemoryTriesAtTheLimit) {
  graph::Graph g = testing::MakeRandomDag(12, 3);
  const hw::Cluster cluster = *hw::LoadCluster("moirai-inter");
  cost::CostModel cost(g, cluster);
  for (double limit : {0.0, std::numeric_limits<double>::infinity()}) {
    auto problem = BuildGraphProblem(cost);
    ASSERT_TRUE(problem.ok());
    int tries = 0;
    auto out = PlanWithinMemory(
        *problem, cost,
        [&](const SchedulingProblem&) -> StatusOr<Schedule> {
          ++tries;
          return ResourceExhausted("memory is full");
        },
        "test", 5, limit);
    EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted);
    if (limit == 0.0)
      EXPECT_EQ(tries, 1);
    else
      EXPECT_GT(tries, 10);  // weights only, live activations, dearer communication
  }
}

// With no time left after its first member, auto skips the rest and says so in its detail.
TEST(TimeLimitTest, AutoSkipsTheMembersThatCannotEndByItsLimit) {
  graph::Graph g = testing::MakeRandomDag(30, 5);
  const hw::Cluster cluster = *hw::LoadCluster("moirai-inter");
  cost::CostModel cost(g, cluster);
  PlanRequest request;
  request.cost = &cost;
  request.options.time_limit_s = 1e-6;
  auto out = RunPlanner("auto", request);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_NE(out->result.detail.find("best of 1: single"), std::string::npos) << out->result.detail;
  EXPECT_NE(out->result.detail.find(
                "out of time before deepplan, heft, m-etf, m-sct, peft, pipeline, m-topo"),
            std::string::npos)
      << out->result.detail;
}

}  // namespace
}  // namespace hx::place
