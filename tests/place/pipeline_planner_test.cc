// `pipeline`: contiguous stages of a topological order, cut by simulation.
#include <gtest/gtest.h>

#include <map>

#include "hexplan/cost/cost_model.h"
#include "hexplan/graph/zoo.h"
#include "hexplan/hw/presets.h"
#include "hexplan/place/planner.h"
#include "hexplan/plan/plan_json.h"
#include "hexplan/plan/validator.h"
#include "testing/graph_builders.h"

namespace hx::place {
namespace {

// A stacked LSTM on two core groups where every op takes 10 us and a hand-off 5 us (1 us of it
// the sender's): what `hexplan profile` measures on a small machine, in round numbers.
struct LstmOnCoreGroups {
  graph::Graph graph;
  hw::Cluster cluster;
  cost::Profile profile;
  std::unique_ptr<cost::CostModel> cost;

  static std::unique_ptr<LstmOnCoreGroups> Make(int64_t layers, int64_t seq) {
    auto f = std::make_unique<LstmOnCoreGroups>();
    graph::ZooOptions o;
    o.lstm_layers = layers;
    o.lstm_io = 16;
    o.seq = seq;
    auto g = graph::BuildZooModel("lstm", o);
    HX_CHECK_MSG(g.ok(), g.status().ToString());
    f->graph = std::move(g).value();
    auto c = hw::LoadCluster("local-cpu:groups=2,cores=2");
    HX_CHECK_MSG(c.ok(), c.status().ToString());
    f->cluster = std::move(c).value();
    const std::string model = f->cluster.device(DeviceId(0)).spec.model;
    for (NodeId op : f->graph.Ops()) {
      f->profile.SetNodeTime(f->graph.node(op).name, model, 10e-6);
      f->profile.SetTransferTime(f->graph.node(op).name, model, model, 5e-6);
    }
    f->profile.SetSendCost(model, model, 1e-6);
    f->cost = std::make_unique<cost::CostModel>(f->graph, f->cluster, cost::CostModelOptions{},
                                                &f->profile);
    return f;
  }
};

PlanRequest PipelineRequest(const cost::CostModel& cost) {
  PlanRequest r;
  r.cost = &cost;
  r.model_spec = "lstm";
  r.cluster_spec = "local-cpu:groups=2,cores=2";
  r.options.cpu_weights_in_place = true;
  return r;
}

// The stage of each op: the index of its device in the plan.
std::map<uint32_t, size_t> StageOf(const plan::Plan& p) {
  std::map<uint32_t, size_t> stage;
  for (size_t d = 0; d < p.devices.size(); ++d)
    for (const plan::Subgraph& sg : p.devices[d].subgraphs)
      for (NodeId op : sg.ops) stage[op.value()] = d;
  return stage;
}

// Cut between its layers, the LSTM runs on both core groups at once: well over 1.6x as fast as
// one group, with a few hand-offs per step.
TEST(PipelinePlannerTest, CutsAStackedLstmBetweenLayers) {
  auto f = LstmOnCoreGroups::Make(4, 16);
  auto pipe = RunPlanner("pipeline", PipelineRequest(*f->cost));
  ASSERT_TRUE(pipe.ok()) << pipe.status().ToString();
  auto single = RunPlanner("single", PipelineRequest(*f->cost));
  ASSERT_TRUE(single.ok());
  const plan::Plan& p = pipe->result.plan;
  EXPECT_EQ(p.algo, "pipeline");
  EXPECT_EQ(pipe->result.status, PlanStatus::kHeuristic);
  EXPECT_NE(pipe->result.detail.find("2 stages"), std::string::npos) << pipe->result.detail;
  EXPECT_TRUE(plan::ValidatePlan(p, *f->cost).empty());
  ASSERT_EQ(p.devices.size(), 2u);
  EXPECT_LT(pipe->sim.makespan_s, 0.6 * single->sim.makespan_s);
  // A pipeline: every activation goes forward, from the first stage to the second, about one
  // hand-off (hidden state, and the step's slice of the input or constants) per step.
  const auto stage = StageOf(p);
  size_t activations = 0;
  for (const plan::Transfer& t : p.transfers) {
    if (t.kind != plan::TransferKind::kActivation) continue;
    ++activations;
    const NodeId producer = f->graph.tensor(t.tensor).producer;
    EXPECT_EQ(stage.at(producer.value()), 0u) << f->graph.tensor(t.tensor).name;
  }
  EXPECT_GE(activations, 16u);
  EXPECT_LE(activations, 4u * 16u);
  // Each layer's weights are read by one stage only: the cut falls between layers.
  for (NodeId w : f->graph.Weights()) {
    std::set<size_t> readers;
    for (NodeId c : f->graph.tensor(f->graph.node(w).outputs[0]).consumers)
      readers.insert(stage.at(c.value()));
    EXPECT_EQ(readers.size(), 1u) << f->graph.node(w).name;
  }
  // Stages are runs of ops, not one subgraph per op: a subgraph breaks only where a stage reads
  // from or sends to the other.
  size_t subgraphs = p.devices[0].subgraphs.size() + p.devices[1].subgraphs.size();
  EXPECT_LE(subgraphs, 2 * activations + 2);
}

TEST(PipelinePlannerTest, SameRequestSamePlan) {
  auto f = LstmOnCoreGroups::Make(3, 8);
  auto a = RunPlanner("pipeline", PipelineRequest(*f->cost));
  auto b = RunPlanner("pipeline", PipelineRequest(*f->cost));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(plan::PlanToJson(a->result.plan, f->graph, f->cluster),
            plan::PlanToJson(b->result.plan, f->graph, f->cluster));
  EXPECT_EQ(a->result.detail, b->result.detail);
}

// One device, or a graph with no parallelism worth a hand-off: the fastest device alone, never
// slower than `single`.
TEST(PipelinePlannerTest, NeverSlowerThanTheSingleDeviceBaseline) {
  for (const char* preset : {"sortinghat-v100", "chrion-1080ti"}) {
    auto cluster = hw::LoadCluster(preset);
    ASSERT_TRUE(cluster.ok());
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      graph::Graph g = testing::MakeRandomDag(24, seed, 128);
      cost::CostModel cost(g, *cluster);
      PlanRequest r;
      r.cost = &cost;
      auto pipe = RunPlanner("pipeline", r);
      auto single = RunPlanner("single", r);
      ASSERT_TRUE(pipe.ok()) << pipe.status().ToString();
      ASSERT_TRUE(single.ok()) << single.status().ToString();
      EXPECT_LE(pipe->sim.makespan_s, single->sim.makespan_s * (1 + 1e-9) + 1e-12)
          << preset << " seed " << seed;
    }
  }
  auto f = LstmOnCoreGroups::Make(2, 4);
  auto one = hw::LoadCluster("local-cpu:groups=1,cores=1");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  cost::CostModel cost(f->graph, *one);
  PlanRequest r;
  r.cost = &cost;
  auto pipe = RunPlanner("pipeline", r);
  ASSERT_TRUE(pipe.ok()) << pipe.status().ToString();
  EXPECT_EQ(pipe->result.plan.devices.size(), 1u);
  EXPECT_TRUE(pipe->result.plan.transfers.empty() ||
              pipe->result.plan.transfers[0].kind != plan::TransferKind::kActivation);
}

// The time limit ends the search with the best plan found so far, and says so.
TEST(PipelinePlannerTest, TimeLimitReturnsTheBestPlanFound) {
  auto f = LstmOnCoreGroups::Make(4, 16);
  PlanRequest r = PipelineRequest(*f->cost);
  r.options.time_limit_s = 1e-9;
  auto out = RunPlanner("pipeline", r);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->result.status, PlanStatus::kTimeLimit);
  EXPECT_NE(out->result.detail.find("time limit"), std::string::npos);
  EXPECT_TRUE(plan::ValidatePlan(out->result.plan, *f->cost).empty());
}

}  // namespace
}  // namespace hx::place
