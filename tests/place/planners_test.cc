// Properties every registered planner must have, on random DAGs and on a zoo model: a valid plan
// (RunPlanner checks it: each op placed once, dependencies, memory, routes), a simulated latency no
// lower than the lower bound, every op after its inputs, no two ops at once on a device, and the
// same plan for the same input and seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "hexplan/cost/cost_model.h"
#include "hexplan/graph/zoo.h"
#include "hexplan/hw/presets.h"
#include "hexplan/place/planner.h"
#include "testing/graph_builders.h"

namespace hx::place {
namespace {

const char* kPlanners[] = {"single", "heft", "peft", "m-topo", "m-etf", "m-sct", "moirai"};

void ExpectSoundOutcome(const PlacementOutcome& out, const graph::Graph& g,
                        const std::string& who) {
  const auto& sim = out.sim;
  EXPECT_GE(sim.makespan_s * (1 + 1e-9), out.lower_bound.value_s()) << who;
  EXPECT_TRUE(sim.memory_overflows.empty()) << who;
  // Each op starts after every producer op finishes.
  for (NodeId id : g.Ops()) {
    for (NodeId pred : g.predecessors(id)) {
      if (!g.node(pred).is_op()) continue;
      EXPECT_GE(sim.ops[id.index()].start + 1e-12, sim.ops[pred.index()].finish)
          << who << ": " << g.node(id).name << " starts before " << g.node(pred).name;
    }
  }
  // A device never runs two ops at once.
  std::map<uint32_t, std::vector<std::pair<double, double>>> by_device;
  for (NodeId id : g.Ops()) {
    const auto& r = sim.ops[id.index()];
    by_device[r.device.value()].push_back({r.start, r.finish});
  }
  for (auto& [dev, spans] : by_device) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i)
      EXPECT_GE(spans[i].first + 1e-12, spans[i - 1].second)
          << who << " overlaps on device " << dev;
  }
}

class PlannerProperty : public ::testing::TestWithParam<const char*> {};

TEST_P(PlannerProperty, RandomDagsOnFourV100s) {
  auto cluster = hw::LoadCluster("sortinghat-v100");
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  // The MILP planner is exercised on smaller graphs with a short limit: its time-limited search is
  // the one planner that may legitimately return different incumbents run to run.
  const bool exact = std::string(GetParam()) == "moirai";
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    graph::Graph g = testing::MakeRandomDag(exact ? 8 : 24, seed, 256);
    cost::CostModel cost(g, *cluster);
    PlanRequest request;
    request.cost = &cost;
    request.options.time_limit_s = exact ? 1 : 5;
    request.model_spec = g.name();
    request.cluster_spec = "sortinghat-v100";
    auto out = RunPlanner(GetParam(), request);
    ASSERT_TRUE(out.ok()) << GetParam() << ": " << out.status().ToString();
    ExpectSoundOutcome(*out, g, GetParam());
    if (exact) continue;
    auto again = RunPlanner(GetParam(), request);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->result.plan.OpDevices(g.num_nodes()),
              out->result.plan.OpDevices(g.num_nodes()))
        << GetParam() << " is not deterministic";
  }
}

TEST_P(PlannerProperty, SmallGpt2OnFourV100s) {
  auto cluster = hw::LoadCluster("sortinghat-v100");
  ASSERT_TRUE(cluster.ok());
  graph::ZooOptions zoo;
  zoo.seq = 32;
  auto g = graph::BuildZooModel("gpt2", zoo);
  ASSERT_TRUE(g.ok());
  cost::CostModel cost(*g, *cluster);
  PlanRequest request;
  request.cost = &cost;
  request.options.time_limit_s = 5;
  request.model_spec = "gpt2";
  request.model_options = zoo;
  request.cluster_spec = "sortinghat-v100";
  auto out = RunPlanner(GetParam(), request);
  ASSERT_TRUE(out.ok()) << GetParam() << ": " << out.status().ToString();
  ExpectSoundOutcome(*out, *g, GetParam());
}

INSTANTIATE_TEST_SUITE_P(All, PlannerProperty, ::testing::ValuesIn(kPlanners),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace hx::place
