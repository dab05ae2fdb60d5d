// Issue 28 ("Placement III"): every registered planner under tight, uneven device memories. Each
// either returns a plan the validator accepts (RunPlanner checks it; an invalid plan is Internal)
// or refuses the request with ResourceExhausted; where a packing is known to exist, every planner
// returns a plan. Exact planners are never slower than the fast ones, and a request no plan can
// fit is refused with the arithmetic.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "hexplan/cost/cost_model.h"
#include "hexplan/cost/profile.h"
#include "hexplan/cost/workload.h"
#include "hexplan/graph/zoo.h"
#include "hexplan/hw/presets.h"
#include "hexplan/place/list/list_scheduling.h"
#include "hexplan/place/memory_bound.h"
#include "hexplan/place/planner.h"
#include "hexplan/plan/validator.h"
#include "testing/graph_builders.h"
#include "testing/test_paths.h"

namespace hx::place {
namespace {

// The MILP planners get small inputs and a short limit.
const std::set<std::string> kExact = {"moirai", "efficientmip", "getf", "sortinghat", "auto"};
// Planners that use one GPU by design: they may refuse a model that fits only across devices.
const std::set<std::string> kOneGpu = {"single", "deepplan", "chrion"};
// The fast planners an exact planner must never lose to.
const char* const kFast[] = {"single", "heft", "peft", "m-etf", "m-topo"};

std::string Csv(const std::string& name) {
  return testing::SharedDataDir() + "/placement/moirai/sample-data-csv/" + name;
}

StatusOr<PlacementOutcome> RunWithLimit(const std::string& name, const cost::CostModel& cost,
                                        double limit) {
  PlanRequest request;
  request.cost = &cost;
  request.options.time_limit_s = limit;
  return RunPlanner(name, request);
}

// A random DAG on moirai-inter whose ops state footprints of 1-10 MB, on devices whose capacities
// come from a random assignment in the ratios 11 : 16 : 8 : 8 plus a quarter of the largest
// footprint each: a plan that fits exists, and greedy earliest-finish choices can miss it.
struct TightCase {
  graph::Graph graph;
  hw::Cluster cluster;
  cost::Profile profile;
};

TightCase MakeTightCase(int n, uint64_t seed) {
  TightCase c{testing::MakeRandomDag(n, seed, 32), *hw::LoadCluster("moirai-inter"), {}};
  std::mt19937_64 rng(seed);
  std::discrete_distribution<int> device({11, 16, 8, 8});
  std::uniform_int_distribution<int64_t> size(1000000, 10000000);
  std::vector<int64_t> assigned(4, 0);
  int64_t largest = 0;
  for (NodeId op : c.graph.Ops()) {
    const int64_t bytes = size(rng);
    c.profile.SetNodeMemory(c.graph.node(op).name, bytes);
    assigned[device(rng)] += bytes;
    largest = std::max(largest, bytes);
  }
  for (int d = 0; d < 4; ++d)
    c.cluster.mutable_device(DeviceId(d)).spec.memory_bytes = assigned[d] + largest / 4;
  HX_CHECK(c.cluster.Finalize().ok());
  return c;
}

TEST(TightMemory, EveryPlannerPlacesRandomDagsWhoseFootprintsPack) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    for (const std::string& name : PlannerNames()) {
      const bool exact = kExact.count(name) > 0;
      if (exact && seed > 1) continue;
      TightCase c = MakeTightCase(exact ? 10 : 24, seed);
      cost::CostModel cost(c.graph, c.cluster, {}, &c.profile);
      auto out = RunWithLimit(name, cost, exact ? 0.3 : 5.0);
      // pipeline cuts a topological order into contiguous stages: a random assignment of
      // footprints need not have a contiguous one.
      if ((kOneGpu.count(name) || name == "pipeline") && !out.ok())
        EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted) << name;
      else
        EXPECT_TRUE(out.ok()) << name << " seed " << seed << ": " << out.status().ToString();
    }
  }
}

// Weights and activations only (no stated footprints): memories in the ratios 11 : 16 : 8 : 8
// summing to 1.25 times the weights. A planner may refuse (ResourceExhausted) but never return a
// plan the validator rejects (RunPlanner's Internal) or fail otherwise.
TEST(TightMemory, NoPlannerReturnsAnInvalidPlanOnTightWeights) {
  const double ratio[4] = {11, 16, 8, 8};
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    for (const std::string& name : PlannerNames()) {
      const bool exact = kExact.count(name) > 0;
      graph::Graph g = testing::MakeRandomDag(exact ? 10 : 24, seed, 256);
      hw::Cluster cluster = *hw::LoadCluster("moirai-inter");
      int64_t weights = 0;
      for (NodeId w : g.Weights()) weights += g.tensor(g.node(w).outputs[0]).Bytes();
      for (int d = 0; d < 4; ++d)
        cluster.mutable_device(DeviceId(d)).spec.memory_bytes =
            static_cast<int64_t>(1.25 * static_cast<double>(weights) * ratio[d] / 43.0);
      ASSERT_TRUE(cluster.Finalize().ok());
      cost::CostModel cost(g, cluster);
      auto out = RunWithLimit(name, cost, exact ? 0.5 : 5.0);
      if (!out.ok()) {
        EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted)
            << name << " seed " << seed << ": " << out.status().ToString();
      }
    }
  }
}

// The registry-wide property (issue 28): on seeded random DAGs whose devices hold uneven shares
// (the 11 : 16 : 8 : 8 ratios shuffled per seed) of 1.3, 3 and 1.02 times the weights, every
// planner returns a plan the validator accepts or refuses with an exit-2 status (ResourceExhausted,
// or InvalidArgument for a request a planner cannot take); never an invalid plan (Internal) or
// another failure; with room for the activations, planners do place it. The exact planners and auto
// run on the first seed only, at 0.3 s, to stay cheap.
TEST(TightMemory, EveryPlannerPlacesOrRefusesUnevenRandomMemories) {
  double ratio[4] = {11, 16, 8, 8};
  const double slack[] = {1.02, 1.3, 3.0};
  for (uint64_t seed = 3; seed <= 5; ++seed) {
    std::mt19937_64 rng(seed);
    std::shuffle(ratio, ratio + 4, rng);
    graph::Graph g = testing::MakeRandomDag(16 + static_cast<int>(rng() % 16), seed, 128);
    hw::Cluster cluster = *hw::LoadCluster("moirai-inter");
    int64_t weights = 0;
    for (NodeId w : g.Weights()) weights += g.tensor(g.node(w).outputs[0]).Bytes();
    const double room = slack[(seed + 1) % 3] * static_cast<double>(weights);
    for (int d = 0; d < 4; ++d)
      cluster.mutable_device(DeviceId(d)).spec.memory_bytes =
          static_cast<int64_t>(room * ratio[d] / 43.0);
    ASSERT_TRUE(cluster.Finalize().ok());
    cost::CostModel cost(g, cluster);
    int placed = 0;
    for (const std::string& name : PlannerNames()) {
      const bool exact = kExact.count(name) > 0;
      if (exact && seed > 3) continue;
      auto out = RunWithLimit(name, cost, exact ? 0.3 : 5.0);
      if (out.ok()) {
        EXPECT_TRUE(plan::CheckPlan(out->result.plan, cost, name).ok()) << name << " seed " << seed;
        ++placed;
        continue;
      }
      const StatusCode code = out.status().code();
      EXPECT_TRUE(code == StatusCode::kResourceExhausted || code == StatusCode::kInvalidArgument)
          << name << " seed " << seed << ": " << out.status().ToString();
    }
    // 1.3 and 3 times the weights leave room for the activations: HEFT at least places those.
    if (slack[(seed + 1) % 3] > 1.2) EXPECT_GT(placed, 1) << "seed " << seed;
  }
}

// swin-6.6b on moirai-inter (26.5 GB of weights on 11 + 16 + 8 + 8 GB): m-TOPO's equal shares
// overflowed with activations whatever the per-device feedback lowered; keeping a larger share of
// every device for activations spreads the weights so that its plan fits (exit 2 before).
TEST(TightMemory, MTopoPlacesSwin66bOnMoiraiInter) {
  auto g = graph::BuildZooModel("swin-6.6b", {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  auto cluster = hw::LoadCluster("moirai-inter");
  ASSERT_TRUE(cluster.ok());
  cost::CostModel cost(*g, *cluster);
  for (const char* name : {"heft", "m-topo"}) {
    auto out = RunWithLimit(name, cost, 5.0);
    ASSERT_TRUE(out.ok()) << name << ": " << out.status().ToString();
    EXPECT_GE(out->result.plan.devices.size(), 3u) << name;  // the weights need three devices
  }
}

// PEFT on swin-6.6b on moirai-inter exited 2 on main: its plans left 15-23 GB of activations live
// on one device. It places it once the schedulers count live activations as the validator does and
// move a task to the next-best device (list/live_memory.h; m-ETF and m-SCT likewise, checked from
// the CLI in docs/placement.md: too slow for this test under ASan). GCOF's fused graph (the same
// weights and activations, fewer tasks) keeps it cheap; it fails on main too.
TEST(TightMemory, PeftPlacesSwin66bOnMoiraiInter) {
  auto g = graph::BuildZooModel("swin-6.6b", {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  auto cluster = hw::LoadCluster("moirai-inter");
  ASSERT_TRUE(cluster.ok());
  cost::CostModel cost(*g, *cluster);
  PlanRequest request;
  request.cost = &cost;
  request.options.time_limit_s = 300;  // the memory tries are not cut short on a slow machine
  request.options.coarsen = Coarsening::kFusion;
  auto out = RunPlanner("peft", request);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_GE(out->result.plan.devices.size(), 3u);
}

// MOIRAI's example-1 fills its devices exactly (44 B of footprints in 14 + 14 + 16 B); GETF's
// MILP finds a plan, and so must every other planner that spreads a model over devices.
TEST(TightMemory, EveryPlannerPlacesMoiraiExample1) {
  auto w = cost::ReadWorkloadFile(Csv("example-1.csv"));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  cost::CostModel cost(w->graph, *w->cluster, {}, &w->profile);
  for (const std::string& name : PlannerNames()) {
    auto out = RunWithLimit(name, cost, kExact.count(name) ? 0.5 : 5.0);
    if (kOneGpu.count(name) && !out.ok())
      EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted) << name;
    else
      EXPECT_TRUE(out.ok()) << name << ": " << out.status().ToString();
  }
}

// Exact planners and auto are never slower than the fast planners (on GoogLeNet.csv EfficientMIP's
// plan was 2.380 ms against HEFT's 1.585 ms).
TEST(TightMemory, ExactPlannersAreNeverSlowerThanTheFastPlanners) {
  auto w = cost::ReadWorkloadFile(Csv("GoogLeNet.csv"));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  cost::CostModel cost(w->graph, *w->cluster, {}, &w->profile);
  double fastest = 1e300;
  for (const char* name : kFast) {
    auto out = RunWithLimit(name, cost, 5.0);
    if (out.ok()) fastest = std::min(fastest, out->sim.makespan_s);
  }
  ASSERT_LT(fastest, 1e300);
  for (const std::string& name : PlannerNames()) {
    if (!kExact.count(name)) continue;
    // auto runs the fast planners first, each while time is left: give it time for all of them.
    auto out = RunWithLimit(name, cost, name == "auto" ? 2.0 : 0.5);
    ASSERT_TRUE(out.ok()) << name << ": " << out.status().ToString();
    EXPECT_LE(out->sim.makespan_s, fastest * (1 + 1e-9)) << name;
  }
}

// A request no plan can fit: every planner refuses it with the same arithmetic.
TEST(TightMemory, InfeasibleRequestsReportTheArithmetic) {
  TightCase c = MakeTightCase(10, 3);
  int64_t stated = 0;
  for (NodeId op : c.graph.Ops()) stated += *c.profile.NodeMemory(c.graph.node(op).name);
  for (int d = 0; d < 4; ++d)  // 4 x (stated / 5): 80% of the need in all
    c.cluster.mutable_device(DeviceId(d)).spec.memory_bytes = stated / 5;
  ASSERT_TRUE(c.cluster.Finalize().ok());
  cost::CostModel cost(c.graph, c.cluster, {}, &c.profile);
  const MemoryNeed need = ComputeMemoryNeed(cost);
  EXPECT_EQ(need.stated_total_bytes, stated);
  EXPECT_EQ(need.capacity_total_bytes, 4 * (stated / 5));
  for (const std::string& name : PlannerNames()) {
    auto out = RunWithLimit(name, cost, 0.5);
    ASSERT_FALSE(out.ok()) << name;
    EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted) << name;
    EXPECT_NE(out.status().message().find("stated footprints need"), std::string::npos)
        << out.status().message();
    EXPECT_NE(out.status().message().find("short by"), std::string::npos);
  }
  // One operator larger than every device: named, with its need and the room it has.
  graph::Graph g = testing::MakeChain(3, 64, 4096);  // activations of 4096 x 64 floats = 1 MiB
  hw::Cluster small = *hw::LoadCluster("moirai-inter");
  for (int d = 0; d < 4; ++d) small.mutable_device(DeviceId(d)).spec.memory_bytes = 1500000;
  ASSERT_TRUE(small.Finalize().ok());
  cost::CostModel tiny(g, small);
  auto out = RunWithLimit("heft", tiny, 1.0);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(out.status().message().find("while it runs"), std::string::npos)
      << out.status().message();
  EXPECT_NE(out.status().message().find("holds 0.002 GB (1500000 B)"), std::string::npos)
      << out.status().message();
}

}  // namespace
}  // namespace hx::place
