// GETF, the moirai planner's solver plumbing (--solution, statuses, bounds) and planning on a
// GCOF-coarsened graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>

#include "hexplan/cost/cost_model.h"
#include "hexplan/graph/fusion.h"
#include "hexplan/graph/zoo.h"
#include "hexplan/hw/presets.h"
#include "hexplan/milp/solver.h"
#include "hexplan/place/coarsened_planning.h"
#include "hexplan/place/exact/getf.h"
#include "hexplan/place/exact/moirai_milp.h"
#include "hexplan/place/list/list_scheduling.h"
#include "hexplan/place/planner.h"
#include "hexplan/place/warm_start.h"
#include "testing/cli_runner.h"

namespace hx::place {
namespace {

SchedulingProblem Uniform(int n, int devices) {
  SchedulingProblem p(n, devices);
  for (int a = 0; a < devices; ++a)
    for (int b = 0; b < devices; ++b) p.SetLink(a, b, 0.0, 1.0);
  return p;
}

// a -> {b, c} -> d on two identical devices, every transfer 1: the optimum runs b and c in
// parallel and d after the later of them, 1 + 4 + 1 + 1 = 7 (one device alone takes 10).
SchedulingProblem ForkJoin() {
  SchedulingProblem p = Uniform(4, 2);
  const double cost[4] = {1, 4, 4, 1};
  for (int t = 0; t < 4; ++t)
    for (int d = 0; d < 2; ++d) p.SetCost(t, d, cost[t]);
  p.AddEdge(0, 1, 1);
  p.AddEdge(0, 2, 1);
  p.AddEdge(1, 3, 1);
  p.AddEdge(2, 3, 1);
  return p;
}

// A chain where device 1 is faster for the middle task but moving data costs 10: all on device 1
// (3 + 3 + 3 = 9) beats all on device 0 (10) and every split (>= 12).
SchedulingProblem ExpensiveChain() {
  SchedulingProblem p = Uniform(3, 2);
  const double cost[3][2] = {{2, 3}, {6, 3}, {2, 3}};
  for (int t = 0; t < 3; ++t)
    for (int d = 0; d < 2; ++d) p.SetCost(t, d, cost[t][d]);
  p.AddEdge(0, 1, 10);
  p.AddEdge(1, 2, 10);
  return p;
}

SchedulingProblem Random(int n, int devices, uint64_t seed) {
  std::mt19937_64 rng(seed);
  SchedulingProblem p = Uniform(n, devices);
  for (int t = 0; t < n; ++t)
    for (int d = 0; d < devices; ++d) p.SetCost(t, d, 1 + rng() % 9);
  for (int t = 1; t < n; ++t) {
    p.AddEdge(rng() % t, t, 1 + rng() % 4);
    if (t > 2 && rng() % 2) p.AddEdge(rng() % (t - 1), t, 1 + rng() % 3);
  }
  return p;
}

TEST(GetfTest, HandSolvableDagsReachTheirOptimum) {
  for (auto [p, optimum] : {std::pair{ForkJoin(), 7.0}, std::pair{ExpensiveChain(), 9.0}}) {
    auto warm = BestFastSchedule(p);
    ASSERT_TRUE(warm.ok());
    auto r = ScheduleGetf(p, &warm->schedule, GetfOptions{});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->schedule.Check(p), "");
    EXPECT_NEAR(r->schedule.makespan, optimum, 1e-9);
    EXPECT_LE(r->bound, optimum + 1e-9);
  }
  // Heterogeneous devices are groups of one, so the chain's bound is the optimum itself.
  auto chain = ScheduleGetf(ExpensiveChain(), nullptr, GetfOptions{});
  ASSERT_TRUE(chain.ok());
  EXPECT_EQ(chain->status, PlanStatus::kOptimal);
  EXPECT_NEAR(chain->bound, 9.0, 1e-6);
}

TEST(GetfTest, IdenticalDevicesFormOneGroup) {
  SchedulingProblem p = Uniform(2, 5);
  for (int t = 0; t < 2; ++t)
    for (int d = 0; d < 5; ++d) p.SetCost(t, d, d == 3 ? 2.0 : 1.0 + t);
  auto groups = RelatedDeviceGroups(p);
  EXPECT_EQ(groups, (std::vector<std::vector<int>>{{0, 1, 2, 4}, {3}}));
  // The fork-join's two devices are one group: its bound (6: the critical path alone) is below
  // the optimum 7, and the status says the plan is not proven.
  auto r = ScheduleGetf(ForkJoin(), nullptr, GetfOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->num_groups, 1);
  EXPECT_NEAR(r->bound, 6.0, 1e-6);
  EXPECT_EQ(r->status, PlanStatus::kFeasible);
  EXPECT_NEAR(r->gap, 1.0 / 7.0, 1e-6);
}

TEST(GetfTest, NeverWorseThanItsWarmStartAndItsBoundHolds) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SchedulingProblem p = Random(12, 3, seed);
    if (seed % 2) p.SetCost(5, 1, kUnsupported);
    auto warm = BestFastSchedule(p);
    ASSERT_TRUE(warm.ok());
    GetfOptions options;
    options.time_limit_s = 10;
    auto r = ScheduleGetf(p, &warm->schedule, options);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->schedule.Check(p, 1e-9), "") << seed;
    EXPECT_LE(r->schedule.makespan, warm->schedule.makespan + 1e-9) << seed;
    // The assignment MILP relaxes scheduling: its bound is below every schedule found.
    EXPECT_LE(r->bound, r->schedule.makespan + 1e-9) << seed;
    EXPECT_GT(r->bound, 0.0);
  }
}

TEST(GetfTest, EtfKeepsTasksInTheirGroupsAndHonoursMemory) {
  SchedulingProblem p = Random(10, 3, 7);
  for (int t = 0; t < 10; ++t) p.SetTaskMemory(t, 1);
  p.SetDeviceMemory(0, 3);
  p.SetDeviceMemory(1, 4);
  p.SetDeviceMemory(2, 10);
  std::vector<std::vector<int>> groups = {{0}, {1}, {2}};
  std::vector<int> task_group(10, 0);  // everything wants device 0, which holds 3
  auto s = ScheduleEtfWithinGroups(p, groups, task_group);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->Check(p), "");
  EXPECT_EQ(std::count(s->device.begin(), s->device.end(), 0), 3);
  p.SetDeviceMemory(2, 2);  // 3 + 4 + 2 < 10
  auto fail = ScheduleEtfWithinGroups(p, groups, task_group);
  ASSERT_FALSE(fail.ok());
  EXPECT_NE(fail.status().message().find("no device has memory left"), std::string::npos);
  auto r = ScheduleGetf(p, nullptr, GetfOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("group memory constraints"), std::string::npos);
  EXPECT_NE(r.status().message().find("short by 1"), std::string::npos) << r.status().message();
}

TEST(MoiraiPlumbingTest, ForkJoinOptimumAndStatus) {
  SchedulingProblem p = ForkJoin();
  auto warm = BestFastSchedule(p);
  ASSERT_TRUE(warm.ok());
  auto r = ScheduleMoirai(p, &warm->schedule, MoiraiOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, PlanStatus::kOptimal);
  EXPECT_TRUE(r->has_bound);
  EXPECT_NEAR(r->model_objective, 7.0, 1e-6);
  EXPECT_NEAR(r->schedule.makespan, 7.0, 1e-9);
}

// Solves an exported model with CBC outside the planner and writes a Gurobi-style solution file.
double SolveExportedAndWriteSolution(const std::string& lp, const std::string& sol) {
  auto model = milp::ReadModelFile(lp);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  auto solved = milp::SolveWithCbc(*model, milp::SolveOptions{});
  EXPECT_TRUE(solved.ok() && solved->has_solution());
  std::ofstream out(sol);
  out << "# Objective value = " << solved->objective << "\n";
  char buf[64];
  for (size_t v = 0; v < model->num_vars(); ++v) {
    std::snprintf(buf, sizeof buf, "%.17g", solved->values[v]);
    out << model->vars()[v].name << " " << buf << "\n";
  }
  return solved->objective;
}

TEST(MoiraiPlumbingTest, SolutionFileReproducesTheSolve) {
  SchedulingProblem p = Random(6, 2, 3);
  auto warm = BestFastSchedule(p);
  ASSERT_TRUE(warm.ok());
  const std::string dir = testing::MakeTempDir();
  MoiraiOptions options;
  options.export_lp = dir + "/m.lp";
  auto solved = ScheduleMoirai(p, &warm->schedule, options);
  ASSERT_TRUE(solved.ok());
  ASSERT_EQ(solved->status, PlanStatus::kOptimal);
  const double objective = SolveExportedAndWriteSolution(dir + "/m.lp", dir + "/m.sol");
  EXPECT_NEAR(objective, solved->model_objective, 1e-6);
  MoiraiOptions load;
  load.solution_path = dir + "/m.sol";
  auto loaded = ScheduleMoirai(p, &warm->schedule, load);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->status, PlanStatus::kFeasible);
  EXPECT_FALSE(loaded->has_bound);
  EXPECT_EQ(loaded->schedule.Check(p), "");
  EXPECT_NEAR(loaded->model_objective, solved->model_objective, 1e-6);
  EXPECT_NEAR(loaded->schedule.makespan, solved->schedule.makespan, 1e-6);
}

TEST(MoiraiPlumbingTest, BadSolutionFilesNameTheConstraint) {
  SchedulingProblem p = ExpensiveChain();
  for (int t = 0; t < 3; ++t) p.SetTaskMemory(t, 5);
  p.SetDeviceMemory(0, 10);
  p.SetDeviceMemory(1, 10);
  const std::string dir = testing::MakeTempDir();
  {
    std::ofstream out(dir + "/two.sol");
    out << "x_0_0 1\nx_0_1 1\nx_1_0 1\nx_2_0 1\n";
    std::ofstream mem(dir + "/mem.sol");
    mem << "x_0_0 1\nx_1_0 1\nx_2_0 1\nS_1 2\nS_2 8\n";
  }
  MoiraiOptions options;
  options.solution_path = dir + "/two.sol";
  auto two = ScheduleMoirai(p, nullptr, options);
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("two.sol"), std::string::npos);
  EXPECT_NE(two.status().message().find("assignment constraint (4c)"), std::string::npos)
      << two.status().message();
  options.solution_path = dir + "/mem.sol";
  auto mem = ScheduleMoirai(p, nullptr, options);
  ASSERT_FALSE(mem.ok());
  EXPECT_NE(mem.status().message().find("memory constraint (5) mem_0"), std::string::npos)
      << mem.status().message();
  EXPECT_NE(mem.status().message().find("over by 5"), std::string::npos);
}

TEST(MoiraiPlumbingTest, NoSolutionInTheLimitKeepsTheWarmStart) {
  // A warm start and a short time budget for a 16-task model: never an error. (Not shorter: CBC
  // 2.10 can crash in CglPreProcess::postProcess when the limit ends inside preprocessing.)
  SchedulingProblem p = Random(16, 3, 9);
  auto warm = BestFastSchedule(p);
  ASSERT_TRUE(warm.ok());
  MoiraiOptions options;
  options.time_limit_s = 1.0;
  auto r = ScheduleMoirai(p, &warm->schedule, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->status == PlanStatus::kWarmStart || r->status == PlanStatus::kTimeLimit ||
              r->status == PlanStatus::kOptimal)
      << PlanStatusName(r->status);
  EXPECT_LE(r->schedule.makespan, warm->schedule.makespan + 1e-9);
  EXPECT_EQ(r->schedule.Check(p, 1e-9), "");
}

// ---- Planning on the coarsened graph.

graph::Graph ConvNet() {
  graph::Graph g("convnet");
  TensorId x = g.node(g.AddInput("x", graph::DType::kF32, {1, 16, 32, 32})).outputs[0];
  auto weight = [&](const std::string& name) {
    return g.node(g.AddWeight(name, graph::DType::kF32, {16, 16, 3, 3})).outputs[0];
  };
  auto op = [&](const std::string& type, const std::string& name, std::vector<TensorId> in) {
    graph::Attributes attrs;
    if (type == "Conv") {
      attrs.Set("kernel_shape", std::vector<int64_t>{3, 3});
      attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
    }
    NodeId n = g.AddOpWithOutputs(type, name, std::move(in),
                                  {{name + ":0", graph::DType::kF32, {1, 16, 32, 32}}}, attrs);
    return g.node(n).outputs[0];
  };
  TensorId a = op("Relu", "r0", {op("Conv", "c0", {x, weight("w0")})});
  TensorId b = op("Relu", "r1", {op("Conv", "c1", {a, weight("w1")})});
  TensorId c = op("Relu", "r2", {op("Add", "add", {op("Conv", "c2", {a, weight("w2")}), b})});
  g.AddOutput(c);
  return g;
}

TEST(CoarsenedPlanningTest, FusedOpsCostTheSumOfTheirMembers) {
  graph::Graph g = ConvNet();
  auto cluster = hw::LoadCluster("moirai-intra");
  ASSERT_TRUE(cluster.ok());
  cost::CostModel cost(g, *cluster);
  auto model = CoarsenedModel::Build(cost, graph::BuiltinFusionRules());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const auto& f = (*model)->fusion();
  ASSERT_EQ(f.num_fused_groups, 3u);  // c0+r0, c1+r1, c2+add+r2
  for (NodeId op : (*model)->graph().Ops()) {
    const auto& group = f.groups[f.group_of_node[op.index()]];
    for (DeviceId d : cluster->DeviceIds()) {
      double sum = 0.0;
      for (NodeId m : group.ops) sum += cost.OpTime(m, d);
      EXPECT_NEAR((*model)->cost().OpTime(op, d), sum, 1e-15);
    }
    double weights = 0.0;
    for (NodeId m : group.ops) weights += cost.OpWeightBytes(m);
    EXPECT_EQ((*model)->cost().OpWeightBytes(op), weights);
  }
}

TEST(CoarsenedPlanningTest, FusedMembersRunTogetherOnTheOriginalGraph) {
  graph::Graph g = ConvNet();
  auto cluster = hw::LoadCluster("moirai-intra");
  ASSERT_TRUE(cluster.ok());
  cost::CostModel cost(g, *cluster);
  for (const char* algo : {"heft", "getf"}) {
    PlanRequest request;
    request.cost = &cost;
    request.options.coarsen = Coarsening::kFusion;
    request.options.time_limit_s = 10;
    auto out = RunPlanner(algo, request);
    ASSERT_TRUE(out.ok()) << algo << ": " << out.status().ToString();
    EXPECT_EQ(out->result.plan.NumOps(), g.Ops().size());
    EXPECT_NE(out->result.detail.find("GCOF: 7 ops -> 3"), std::string::npos) << out->result.detail;
    // c2, add and r2 are one fused op: same device, back to back in one subgraph.
    bool found = false;
    for (const auto& ds : out->result.plan.devices)
      for (const auto& sg : ds.subgraphs)
        for (size_t i = 0; i + 2 < sg.ops.size(); ++i)
          if (g.node(sg.ops[i]).name == "c2")
            found = g.node(sg.ops[i + 1]).name == "add" && g.node(sg.ops[i + 2]).name == "r2";
    EXPECT_TRUE(found) << algo;
  }
}

TEST(CoarsenedPlanningTest, MoiraiFusesByDefaultAndNotWithCoarsenNone) {
  graph::Graph g = ConvNet();
  auto cluster = hw::LoadCluster("moirai-intra");
  ASSERT_TRUE(cluster.ok());
  cost::CostModel cost(g, *cluster);
  PlanRequest request;
  request.cost = &cost;
  request.options.time_limit_s = 20;
  auto fused = RunPlanner("moirai", request);
  ASSERT_TRUE(fused.ok()) << fused.status().ToString();
  EXPECT_NE(fused->result.detail.find("GCOF"), std::string::npos);
  EXPECT_EQ(fused->result.status, PlanStatus::kOptimal);
  ASSERT_TRUE(fused->result.model_objective_s.has_value());
  ASSERT_TRUE(fused->result.solver_bound_s.has_value());
  request.options.coarsen = Coarsening::kNone;
  auto plain = RunPlanner("moirai", request);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->result.detail.find("GCOF"), std::string::npos);
  // Fusion only removes choices: the unfused optimum is never worse under the same model.
  EXPECT_LE(*plain->result.model_objective_s, *fused->result.model_objective_s + 1e-12);
}

// A portfolio builds the GCOF model once and its members use it (PlanRequest::coarsened): the
// model is reused only for the cost model it was built from, and a member plans with it as it
// does alone.
TEST(CoarsenedPlanningTest, PortfolioMembersShareOneModel) {
  graph::Graph g = ConvNet();
  auto cluster = hw::LoadCluster("moirai-intra");
  ASSERT_TRUE(cluster.ok());
  cost::CostModel cost(g, *cluster), other(g, *cluster);
  PlanRequest request;
  request.cost = &cost;
  request.options.coarsen = Coarsening::kFusion;
  request.options.time_limit_s = 10;
  auto alone = RunPlanner("heft", request);
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  auto model = CoarsenedModelFor(request);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  request.coarsened = *model;
  auto again = CoarsenedModelFor(request);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), model->get());
  auto shared = RunPlanner("heft", request);
  ASSERT_TRUE(shared.ok()) << shared.status().ToString();
  EXPECT_EQ(shared->result.plan.OpDevices(g.num_nodes()),
            alone->result.plan.OpDevices(g.num_nodes()));
  EXPECT_EQ(shared->sim.makespan_s, alone->sim.makespan_s);
  request.cost = &other;  // built for another cost model: not used
  auto fresh = CoarsenedModelFor(request);
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(fresh->get(), model->get());
}

// `auto --coarsen fusion` passes the coarsening on to each member, which plans the fused graph and
// falls back to the original one as it does alone (HEFT on alphafold2-930m on moirai-inter:
// 14,423.8 ms alone, where `auto`, planning the fused graph as a whole, kept single's 14,428.6 ms).
// Its detail is the portfolio's (planning the whole, it began with the GCOF summary), and its plan
// is no slower than any fast member's under the same coarsening.
TEST(CoarsenedPlanningTest, AutoCoarsensEachMember) {
  graph::Graph g = ConvNet();
  auto cluster = hw::LoadCluster("moirai-intra");
  ASSERT_TRUE(cluster.ok());
  cost::CostModel cost(g, *cluster);
  PlanRequest request;
  request.cost = &cost;
  request.options.coarsen = Coarsening::kFusion;
  request.options.time_limit_s = 4;
  auto portfolio = RunPlanner("auto", request);
  ASSERT_TRUE(portfolio.ok()) << portfolio.status().ToString();
  EXPECT_EQ(portfolio->result.detail.rfind("best of ", 0), 0u) << portfolio->result.detail;
  EXPECT_EQ(portfolio->result.plan.NumOps(), g.Ops().size());
  for (const char* algo : {"single", "heft", "peft", "m-etf", "m-topo", "deepplan"}) {
    auto out = RunPlanner(algo, request);
    ASSERT_TRUE(out.ok()) << algo << ": " << out.status().ToString();
    EXPECT_LE(portfolio->sim.makespan_s, out->sim.makespan_s * (1 + 1e-12)) << algo;
  }
}

TEST(CoarsenedPlanningTest, BadRulesFileIsReported) {
  graph::Graph g = ConvNet();
  auto cluster = hw::LoadCluster("moirai-intra");
  ASSERT_TRUE(cluster.ok());
  cost::CostModel cost(g, *cluster);
  PlanRequest request;
  request.cost = &cost;
  request.options.coarsen = Coarsening::kFusion;
  request.options.fusion_rules_path = "/nonexistent/rules.json";
  auto out = RunPlanner("heft", request);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("/nonexistent/rules.json"), std::string::npos);
}

}  // namespace
}  // namespace hx::place
