#include "hexplan/place/exact/moirai_milp.h"

#include <gtest/gtest.h>

#include <random>

#include "hexplan/cost/cost_model.h"
#include "hexplan/cost/workload.h"
#include "hexplan/milp/solver.h"
#include "hexplan/place/list/list_scheduling.h"
#include "hexplan/place/problem_builder.h"
#include "testing/cli_runner.h"
#include "testing/test_paths.h"

namespace hx::place {
namespace {

SchedulingProblem SmallRandom(int n, int devices, uint64_t seed) {
  std::mt19937_64 rng(seed);
  SchedulingProblem p(n, devices);
  for (int t = 0; t < n; ++t)
    for (int d = 0; d < devices; ++d) p.SetCost(t, d, 1 + rng() % 9);
  for (int a = 0; a < devices; ++a)
    for (int b = 0; b < devices; ++b) p.SetLink(a, b, 0.0, 1.0);
  for (int t = 1; t < n; ++t) p.AddEdge(rng() % t, t, 1 + rng() % 4);
  return p;
}

TEST(MoiraiMilpTest, NeverWorseThanItsWarmStartAndValid) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SchedulingProblem p = SmallRandom(7, 2, seed);
    auto heft = ScheduleHeft(p);
    ASSERT_TRUE(heft.ok());
    MoiraiOptions options;
    options.time_limit_s = 20;
    auto r = ScheduleMoirai(p, &*heft, options);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->schedule.Check(p), "");
    EXPECT_LE(r->schedule.makespan, heft->makespan + 1e-9);
    // In the model's own terms too: no worse than the warm start timed under the MILP's rules.
    EXPECT_LE(r->model_objective, ModelMakespan(p, *heft) + 1e-9);
    EXPECT_EQ(r->status, PlanStatus::kOptimal);
    EXPECT_LE(r->bound, r->model_objective + 1e-6);
  }
}

// The combinatorial bound: the cheapest path, or the cheapest work over the devices.
TEST(MoiraiMilpTest, MakespanLowerBoundIsThePathOrTheWork) {
  SchedulingProblem chain(3, 2);
  const double cost[3][2] = {{2, 3}, {6, 3}, {2, 1}};
  for (int t = 0; t < 3; ++t)
    for (int d = 0; d < 2; ++d) chain.SetCost(t, d, cost[t][d]);
  chain.AddEdge(0, 1, 10);
  chain.AddEdge(1, 2, 10);
  EXPECT_NEAR(MakespanLowerBound(chain), 2 + 3 + 1, 1e-12);
  SchedulingProblem wide(4, 2);  // independent tasks: work 4 x 3 over 2 devices
  for (int t = 0; t < 4; ++t)
    for (int d = 0; d < 2; ++d) wide.SetCost(t, d, 3);
  EXPECT_NEAR(MakespanLowerBound(wide), 6, 1e-12);
}

// A MILP cut short (here before CBC can prove anything on 40 tasks) still reports a bound, never
// above its objective, and a gap; the bound is at least the combinatorial one.
TEST(MoiraiMilpTest, AMilpCutShortStillReportsABoundAndAGap) {
  SchedulingProblem p = SmallRandom(40, 3, 9);
  auto heft = ScheduleHeft(p);
  ASSERT_TRUE(heft.ok());
  MoiraiOptions options;
  options.time_limit_s = 0.05;
  auto r = ScheduleMoirai(p, &*heft, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->has_bound);
  EXPECT_GE(r->bound, MakespanLowerBound(p) - 1e-9);
  EXPECT_LE(r->bound, r->model_objective + 1e-9);
  EXPECT_GE(r->gap, 0.0);
  EXPECT_LE(r->gap, 1.0);
}

TEST(MoiraiMilpTest, KeepsAChainTogetherWhenCommunicationIsExpensive) {
  // Two devices: device 1 is 2x faster for the middle task but moving data costs 10 each way.
  SchedulingProblem p(3, 2);
  const double cost[3][2] = {{2, 3}, {6, 3}, {2, 3}};
  for (int t = 0; t < 3; ++t)
    for (int d = 0; d < 2; ++d) p.SetCost(t, d, cost[t][d]);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) p.SetLink(a, b, 0.0, 1.0);
  p.AddEdge(0, 1, 10);
  p.AddEdge(1, 2, 10);
  // Best: all on device 0 (2 + 6 + 2 = 10) or all on device 1 (9): 9.
  auto heft = ScheduleHeft(p);
  ASSERT_TRUE(heft.ok());
  auto r = ScheduleMoirai(p, &*heft, MoiraiOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->schedule.makespan, 9.0, 1e-6);
  EXPECT_NEAR(r->model_objective, 9.0, 1e-6);
}

TEST(MoiraiMilpTest, ExampleOneReachesTheProvenOptimum30) {
  auto workload = cost::ReadMoiraiCsv(testing::SharedDataDir() +
                                      "/placement/moirai/sample-data-csv/example-1.csv");
  ASSERT_TRUE(workload.ok()) << workload.status().ToString();
  ASSERT_TRUE(workload->cluster.has_value());
  cost::CostModel cost(workload->graph, *workload->cluster, {}, &workload->profile);
  ProblemBuildOptions build;
  build.cold_start_loads = false;
  build.activation_reserve_fraction = 0.0;
  auto problem = BuildGraphProblem(cost, build);
  ASSERT_TRUE(problem.ok()) << problem.status().ToString();
  // Memory is exactly tight (44 units over 14 + 14 + 16): HEFT places it only through its memory
  // reservation (list/memory_reservation.h); the MILP starts from scratch.
  auto heft = ScheduleHeft(problem->problem);
  ASSERT_TRUE(heft.ok()) << heft.status().ToString();
  EXPECT_EQ(heft->Check(problem->problem), "");
  MoiraiOptions options;
  // About 20 s in Release and 200 s under ASan on a 2-core VM; generous for slow or shared
  // machines.
  options.time_limit_s = 900;
  auto r = ScheduleMoirai(problem->problem, nullptr, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, PlanStatus::kOptimal);
  // The CSV's times are milliseconds; the cost model works in seconds.
  EXPECT_NEAR(r->model_objective, 0.030, 1e-9);
  EXPECT_LE(r->schedule.makespan, 0.030 + 1e-9);
  EXPECT_EQ(r->schedule.Check(problem->problem), "");
}

TEST(MoiraiMilpTest, ExportedModelSolvesToTheSameObjective) {
  SchedulingProblem p = SmallRandom(5, 2, 11);
  auto heft = ScheduleHeft(p);
  ASSERT_TRUE(heft.ok());
  std::string dir = testing::MakeTempDir();
  MoiraiOptions options;
  options.export_lp = dir + "/moirai.lp";
  options.export_mps = dir + "/moirai.mps";
  auto r = ScheduleMoirai(p, &*heft, options);
  ASSERT_TRUE(r.ok());
  for (const std::string& path : {options.export_lp, options.export_mps}) {
    auto model = milp::ReadModelFile(path);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    auto again = milp::SolveWithCbc(*model, milp::SolveOptions{});
    ASSERT_TRUE(again.ok());
    EXPECT_NEAR(again->objective, r->model_objective, 1e-6) << path;
  }
}

TEST(MoiraiMilpTest, MemoryShortfallNamesTheConstraintClass) {
  SchedulingProblem p(3, 2);
  for (int t = 0; t < 3; ++t) {
    p.SetCost(t, 0, 1);
    p.SetCost(t, 1, 1);
    p.SetTaskMemory(t, 10);
  }
  p.SetDeviceMemory(0, 12);
  p.SetDeviceMemory(1, 12);
  auto r = ScheduleMoirai(p, nullptr, MoiraiOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("memory constraints (5)"), std::string::npos);
  EXPECT_NE(r.status().message().find("short by 6"), std::string::npos);
}

TEST(MoiraiMilpTest, TooLargeModelsFallBackToTheWarmStart) {
  SchedulingProblem p = SmallRandom(30, 3, 5);
  auto heft = ScheduleHeft(p);
  ASSERT_TRUE(heft.ok());
  MoiraiOptions options;
  options.max_constraints = 10;
  CollectingLogger log;
  auto r = ScheduleMoirai(p, &*heft, options, &log);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, PlanStatus::kWarmStart);
  EXPECT_DOUBLE_EQ(r->schedule.makespan, heft->makespan);
  // The bound then comes from GETF's assignment MILP, a relaxation of the model.
  EXPECT_TRUE(r->has_bound);
  EXPECT_GT(r->bound, 0.0);
  EXPECT_LE(r->bound, heft->makespan + 1e-9);
  EXPECT_EQ(log.Count(LogLevel::kWarning), 1u);
}

}  // namespace
}  // namespace hx::place
