// Coarsening for MOIRAI's MILP (task_coarsening.h): every task once, exact sums, an acyclic coarse
// graph at every level; the coarse MILP solved (not skipped) on a zoo transformer; refinement
// never makes a schedule longer.
#include "hexplan/place/exact/task_coarsening.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "hexplan/cost/cost_model.h"
#include "hexplan/graph/zoo.h"
#include "hexplan/hw/presets.h"
#include "hexplan/place/exact/moirai_milp.h"
#include "hexplan/place/list/baechi.h"
#include "hexplan/place/planner.h"
#include "hexplan/place/problem_builder.h"
#include "hexplan/plan/validator.h"

namespace hx::place {
namespace {

struct CoarseningFixture {
  graph::Graph graph;
  hw::Cluster cluster;
  std::unique_ptr<cost::CostModel> cost;
};

CoarseningFixture Gpt2OnMoiraiInter() {
  graph::ZooOptions zoo;
  zoo.seq = 32;
  auto g = graph::BuildZooModel("gpt2", zoo);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  auto cluster = hw::LoadCluster("moirai-inter");
  EXPECT_TRUE(cluster.ok()) << cluster.status().ToString();
  CoarseningFixture f{std::move(*g), std::move(*cluster), nullptr};
  f.cost = std::make_unique<cost::CostModel>(f.graph, f.cluster);
  return f;
}

// Every task in exactly one coarse task; costs, loads and memory summed; the coarse graph acyclic
// and every original edge between two coarse tasks present between them.
void ExpectExactCoarsening(const SchedulingProblem& p, const TaskCoarsening& c) {
  ASSERT_EQ(c.coarse_of.size(), static_cast<size_t>(p.num_tasks()));
  std::vector<int> seen(p.num_tasks(), 0);
  for (int g = 0; g < c.coarse.num_tasks(); ++g) {
    double memory = 0.0;
    for (int t : c.members[g]) {
      ++seen[t];
      EXPECT_EQ(c.coarse_of[t], g);
      memory += p.task_memory(t);
    }
    EXPECT_DOUBLE_EQ(c.coarse.task_memory(g), memory);
    for (int d = 0; d < p.num_devices(); ++d) {
      double cost = 0.0, load = 0.0;
      for (int t : c.members[g]) cost += p.cost(t, d), load += p.load_time(t, d);
      EXPECT_NEAR(c.coarse.cost(g, d), cost, 1e-9 * std::max(1.0, cost));
      EXPECT_NEAR(c.coarse.load_time(g, d), load, 1e-9 * std::max(1.0, load));
    }
  }
  for (int t = 0; t < p.num_tasks(); ++t) EXPECT_EQ(seen[t], 1) << p.name(t);
  EXPECT_TRUE(c.coarse.Validate().ok()) << c.coarse.Validate().ToString();  // acyclic
  std::set<std::pair<int, int>> coarse_edges;
  for (const SchedulingEdge& e : c.coarse.edges()) coarse_edges.insert({e.src, e.dst});
  for (const SchedulingEdge& e : p.edges()) {
    const int a = c.coarse_of[e.src], b = c.coarse_of[e.dst];
    if (a != b) EXPECT_TRUE(coarse_edges.count({a, b})) << a << " -> " << b;
  }
}

TEST(TaskCoarseningTest, EveryLevelKeepsTasksOnceSumsExactAndTheGraphAcyclic) {
  CoarseningFixture f = Gpt2OnMoiraiInter();
  auto problem = BuildGraphProblem(*f.cost);
  ASSERT_TRUE(problem.ok()) << problem.status().ToString();
  const SchedulingProblem& p = problem->problem;
  std::set<CoarseLevel> levels;
  for (int max_tasks : {400, 120, 40, 12, 3}) {
    TaskCoarseningOptions options;
    options.max_tasks = max_tasks;
    auto c = CoarsenTasks(p, options);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    SCOPED_TRACE(c->Summary(p.num_tasks()));
    EXPECT_LE(c->coarse.num_tasks(), max_tasks);
    EXPECT_LE(c->estimated_constraints, options.max_constraints);
    ExpectExactCoarsening(p, *c);
    levels.insert(c->level);
  }
  // The names' structure is read: GPT-2's scopes (h.3/attn) and blocks (h.3) are levels reached.
  EXPECT_TRUE(levels.count(CoarseLevel::kScope) || levels.count(CoarseLevel::kBlock));
  EXPECT_TRUE(levels.count(CoarseLevel::kBlockGroups));
}

TEST(TaskCoarseningTest, BlocksAreReadFromTheNames) {
  // Two numbered blocks of two scopes each, plus a head; names in the ONNX exporters' style.
  SchedulingProblem p(9, 2);
  const char* names[9] = {"/m/embed/Gather",    "/m/h.0/attn/MatMul",
                          "/m/h.0/attn/Add",    "/m/h.0/mlp/MatMul",
                          "/m/h.1/attn/MatMul", "/m/h.1/attn/Add",
                          "/m/h.1/mlp/MatMul",  "/m/h.1/mlp/Add+/m/h.1/mlp/Relu",
                          "/head/MatMul"};
  for (int t = 0; t < 9; ++t) {
    p.SetName(t, names[t]);
    for (int d = 0; d < 2; ++d) p.SetCost(t, d, 1.0 + t);
    if (t > 0) p.AddEdge(t - 1, t, 1.0);
  }
  TaskCoarseningOptions options;
  options.max_tasks = 6;  // the 9 tasks do not fit; scopes (6) do
  auto c = CoarsenTasks(p, options);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->level, CoarseLevel::kScope);
  EXPECT_EQ(c->coarse.num_tasks(), 6);
  EXPECT_EQ(c->coarse_of[1], c->coarse_of[2]);  // h.0/attn
  EXPECT_EQ(c->coarse_of[6], c->coarse_of[7]);  // h.1/mlp, the fused op read by its first name
  options.max_tasks = 4;                        // blocks: embed, h.0, h.1, head
  c = CoarsenTasks(p, options);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->level, CoarseLevel::kBlock);
  EXPECT_EQ(c->coarse_of[1], c->coarse_of[3]);
  EXPECT_NE(c->coarse_of[3], c->coarse_of[4]);
  options.max_tasks = 3;  // two blocks per task
  c = CoarsenTasks(p, options);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->level, CoarseLevel::kBlockGroups);
  EXPECT_EQ(c->coarse_of[1], c->coarse_of[7]);
  ExpectExactCoarsening(p, *c);
}

SchedulingProblem RandomForRefinement(int n, int devices, uint64_t seed) {
  std::mt19937_64 rng(seed);
  SchedulingProblem p(n, devices);
  for (int a = 0; a < devices; ++a)
    for (int b = 0; b < devices; ++b) p.SetLink(a, b, 0.5, 1.0);
  for (int t = 0; t < n; ++t) {
    p.SetName(t, "op" + std::to_string(t));
    p.SetTaskMemory(t, 1.0 + rng() % 3);
    for (int d = 0; d < devices; ++d) p.SetCost(t, d, 1 + rng() % 9);
  }
  for (int d = 0; d < devices; ++d) p.SetDeviceMemory(d, 3.0 * n / devices);
  for (int t = 1; t < n; ++t) p.AddEdge(rng() % t, t, 1 + rng() % 4);
  return p;
}

TEST(TaskCoarseningTest, ExpansionIsValidAndRefinementNeverLonger) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SchedulingProblem p = RandomForRefinement(60, 3, seed);
    TaskCoarseningOptions options;
    options.max_tasks = 8;
    auto c = CoarsenTasks(p, options);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ExpectExactCoarsening(p, *c);
    auto coarse = ScheduleMEtf(c->coarse);  // within the devices' memory
    ASSERT_TRUE(coarse.ok()) << coarse.status().ToString();
    const Schedule expanded = ExpandCoarseSchedule(p, *c, *coarse);
    EXPECT_EQ(expanded.Check(p, 1e-9), "");
    for (int t = 0; t < p.num_tasks(); ++t)
      EXPECT_EQ(expanded.device[t], coarse->device[c->coarse_of[t]]);
    const Schedule refined = RefineBoundary(p, expanded);
    EXPECT_EQ(refined.Check(p, 1e-9), "");  // memory included
    EXPECT_LE(refined.makespan, expanded.makespan + 1e-12);
  }
}

TEST(TaskCoarseningTest, MoiraiSolvesTheCoarseMilpOfATransformer) {
  CoarseningFixture f = Gpt2OnMoiraiInter();
  PlanRequest request;
  request.cost = f.cost.get();
  request.options.time_limit_s = 2;
  auto out = RunPlanner("moirai", request);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const PlanResult& r = out->result;
  EXPECT_TRUE(plan::CheckPlan(r.plan, *f.cost, "moirai").ok());
  EXPECT_EQ(r.plan.NumOps(), f.graph.Ops().size());
  // The MILP was built and solved on the coarse tasks, not skipped.
  EXPECT_NE(r.detail.find("coarsened"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find(" binaries, "), std::string::npos) << r.detail;
  EXPECT_EQ(r.detail.find("not solved"), std::string::npos) << r.detail;
  ASSERT_TRUE(r.solver_bound_s.has_value()) << r.detail;
  EXPECT_TRUE(std::isfinite(*r.solver_bound_s));
  if (r.status != PlanStatus::kWarmStart) {
    ASSERT_TRUE(r.solver_gap.has_value());
    EXPECT_GE(*r.solver_gap, 0.0);
    EXPECT_LE(*r.solver_gap, 1.0);
  }
  // Never slower than the fast planners it is compared with.
  for (const char* fast : {"heft", "single"}) {
    PlanRequest sub = request;
    auto other = RunPlanner(fast, sub);
    if (other.ok()) EXPECT_LE(out->sim.makespan_s, other->sim.makespan_s * (1 + 1e-9)) << fast;
  }
}

}  // namespace
}  // namespace hx::place
