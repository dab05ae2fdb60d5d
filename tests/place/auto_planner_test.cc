// `auto`: the fastest simulated plan of the portfolio, the winner named, deterministic.
#include <gtest/gtest.h>

#include "hexplan/cost/cost_model.h"
#include "hexplan/hw/presets.h"
#include "hexplan/place/planner.h"
#include "testing/graph_builders.h"

namespace hx::place {
namespace {

TEST(AutoPlanner, NoSlowerThanAnyFastPlannerAndNamesTheWinner) {
  auto cluster = hw::LoadCluster("chrion-1080ti");
  ASSERT_TRUE(cluster.ok());
  graph::Graph g = testing::MakeRandomDag(16, 7, 256);
  cost::CostModel cost(g, *cluster);
  PlanRequest r;
  r.cost = &cost;
  r.options.time_limit_s = 0.2;
  auto best = RunPlanner("auto", r);
  ASSERT_TRUE(best.ok()) << best.status().ToString();
  EXPECT_EQ(best->result.plan.algo, "auto");
  EXPECT_EQ(best->result.detail.rfind("best of ", 0), 0u) << best->result.detail;
  double fastest = 1e300;
  std::string winner;
  for (const char* algo :
       {"single", "heft", "peft", "m-etf", "m-sct", "m-topo", "deepplan", "chrion"}) {
    auto out = RunPlanner(algo, r);
    ASSERT_TRUE(out.ok()) << algo << ": " << out.status().ToString();
    EXPECT_LE(best->sim.makespan_s, out->sim.makespan_s * (1 + 1e-12)) << algo;
    EXPECT_NE(best->result.detail.find(algo), std::string::npos) << best->result.detail;
    if (out->sim.makespan_s < fastest) {
      fastest = out->sim.makespan_s;
      winner = algo;
    }
  }
  // Unless an exact planner did better still, the winner is the fastest of the fast ones.
  if (best->sim.makespan_s >= fastest * (1 - 1e-12)) {
    EXPECT_NE(best->result.detail.find(": " + winner + " ("), std::string::npos)
        << best->result.detail;
  }
  // Deterministic: the same input gives the same plan (unless a time-limited exact planner won,
  // whose incumbent may differ run to run).
  auto again = RunPlanner("auto", r);
  ASSERT_TRUE(again.ok());
  if (again->result.detail == best->result.detail) {
    EXPECT_EQ(again->result.plan.OpDevices(g.num_nodes()),
              best->result.plan.OpDevices(g.num_nodes()));
  }
}

// Nothing fits: refused before any member runs, with the arithmetic (memory_bound.h).
TEST(AutoPlanner, FailsWithTheArithmeticWhenNothingFits) {
  auto cluster = hw::LoadCluster("sortinghat-v100");
  ASSERT_TRUE(cluster.ok());
  graph::Graph g = testing::MakeChain(3, 256, 64);
  hw::Cluster small = *cluster;
  for (DeviceId d : small.DeviceIds()) small.mutable_device(d).spec.memory_bytes = 1000;
  ASSERT_TRUE(small.Finalize().ok());
  cost::CostModel cost(g, small);
  PlanRequest r;
  r.cost = &cost;
  r.options.time_limit_s = 1;
  auto out = RunPlanner("auto", r);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(out.status().message().find("short by"), std::string::npos) << out.status().message();
}

}  // namespace
}  // namespace hx::place
