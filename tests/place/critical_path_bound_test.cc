// SortingHat's model-parallel minimum: the longest path of fastest op times.
#include "hexplan/place/critical_path_bound.h"

#include <gtest/gtest.h>

#include "hexplan/cost/cost_model.h"
#include "hexplan/hw/presets.h"
#include "hexplan/place/planner.h"
#include "hexplan/sim/lower_bound.h"
#include "testing/graph_builders.h"

namespace hx::place {
namespace {

TEST(CriticalPathBound, DiamondIsTheLongerBranch) {
  auto cluster = hw::LoadCluster("sortinghat-v100-hetero");
  ASSERT_TRUE(cluster.ok());
  graph::Graph g = testing::MakeDiamond(128);
  cost::CostModel cost(g, *cluster);
  auto detail = CriticalPathBoundDetail(cost);
  ASSERT_TRUE(detail.ok()) << detail.status().ToString();
  // By hand: a -> max(b, c) -> d, each at its best time over the four GPUs.
  auto find = [&](const std::string& name) {
    for (NodeId id : g.Ops())
      if (g.node(id).name == name) return sim::BestOpTime(cost, id);
    ADD_FAILURE() << "no op " << name;
    return 0.0;
  };
  std::vector<std::string> names;
  for (NodeId id : g.Ops()) names.push_back(g.node(id).name);
  ASSERT_EQ(names.size(), 4u);
  // The ops in topological (id) order: a, b, c, d.
  const double expected =
      find(names[0]) + std::max(find(names[1]), find(names[2])) + find(names[3]);
  EXPECT_NEAR(detail->seconds, expected, 1e-15);
  EXPECT_EQ(detail->ops.size(), 3u);
  auto seconds = CriticalPathBound(cost);
  ASSERT_TRUE(seconds.ok());
  EXPECT_DOUBLE_EQ(*seconds, detail->seconds);
  // Fastest times: on the full-clock GPUs, never on the down-clocked ones.
  double slow = 0.0;
  for (NodeId id : g.Ops()) slow = std::max(slow, cost.OpTime(id, *cluster->FindDevice("gpu1")));
  EXPECT_LT(detail->seconds, 3 * slow);
}

TEST(CriticalPathBound, NoPlanBeatsItAndItIsTheLowerBoundsPathTerm) {
  auto cluster = hw::LoadCluster("sortinghat-v100");
  ASSERT_TRUE(cluster.ok());
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    graph::Graph g = testing::MakeRandomDag(30, seed, 256);
    cost::CostModel cost(g, *cluster);
    auto bound = CriticalPathBound(cost);
    ASSERT_TRUE(bound.ok());
    auto lb = sim::ComputeLowerBound(cost);
    ASSERT_TRUE(lb.ok());
    EXPECT_DOUBLE_EQ(*bound, lb->critical_path_s);
    for (const char* algo : {"single", "heft", "deepplan"}) {
      PlanRequest r;
      r.cost = &cost;
      auto out = RunPlanner(algo, r);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_GE(out->sim.makespan_s * (1 + 1e-12), *bound) << algo;
    }
  }
}

}  // namespace
}  // namespace hx::place
