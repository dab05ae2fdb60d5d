#include "hexplan/plan/plan_summary.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "hexplan/graph/zoo.h"
#include "hexplan/place/planner.h"
#include "plan/plan_fixtures.h"
#include "testing/graph_builders.h"

namespace hx::plan {
namespace {

using testing::CostFixture;

// GPT-2 small (12 layers) at a short sequence on the three-GPU "bus" cluster, roofline times.
std::unique_ptr<CostFixture> Gpt2OnBus() {
  auto graph = graph::BuildZooModel("gpt2", {.seq = 16});
  HX_CHECK_MSG(graph.ok(), graph.status().message());
  return CostFixture::Make(std::move(graph).value(), testing::MakeBusCluster(int64_t{4} << 30), -1);
}

Plan PlanWith(const std::string& algo, const CostFixture& f) {
  place::PlanRequest request;
  request.cost = f.cost.get();
  request.model_spec = "gpt2";
  request.cluster_spec = "test-bus";
  auto outcome = place::RunPlanner(algo, request);
  HX_CHECK_MSG(outcome.ok(), outcome.status().message());
  return outcome->result.plan;
}

class PlanSummaryTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PlanSummaryTest, EveryOpInExactlyOneRunOfOneDeviceAndComputeAddsUp) {
  auto f = Gpt2OnBus();
  const Plan plan = PlanWith(GetParam(), *f);
  auto summary = SummarizePlan(plan, f->graph, f->cluster, *f->cost);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  std::map<NodeId, int> runs_holding;
  double compute_s = 0.0;
  for (const DeviceSummary& d : summary->devices) {
    size_t run_ops = 0;
    double device_s = 0.0;
    for (const OpRun& run : d.runs) {
      run_ops += run.ops.size();
      for (NodeId op : run.ops) {
        ++runs_holding[op];
        device_s += f->cost->OpTime(op, d.device);
      }
    }
    EXPECT_EQ(run_ops, d.ops);
    EXPECT_NEAR(d.compute_s, device_s, 1e-12);
    compute_s += device_s;
  }
  EXPECT_EQ(runs_holding.size(), f->graph.Ops().size());
  for (const auto& [op, count] : runs_holding) EXPECT_EQ(count, 1) << f->graph.node(op).name;
  EXPECT_EQ(summary->ops, f->graph.Ops().size());
  EXPECT_NEAR(summary->compute_s, compute_s, 1e-12);
  EXPECT_EQ(summary->transfers.count, plan.transfers.size());
}

TEST_P(PlanSummaryTest, WeightsAndMemoryMatchThePlan) {
  auto f = Gpt2OnBus();
  const Plan plan = PlanWith(GetParam(), *f);
  auto summary = SummarizePlan(plan, f->graph, f->cluster, *f->cost);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  const WeightTallies& w = summary->weights;
  EXPECT_EQ(w.load.count + w.dha.count + w.relay.count, plan.weights.size());
  const std::vector<DeviceMemoryBound> bound = PlanMemoryBound(plan, *f->cost);
  for (const DeviceSummary& d : summary->devices) {
    EXPECT_EQ(d.memory.total(), bound[d.device.index()].total());
  }
}

INSTANTIATE_TEST_SUITE_P(Planners, PlanSummaryTest, ::testing::Values("single", "heft"));

TEST(PlanSummarySingleTest, OneDevicePlanOfTwelveLayersReadsInAFewRuns) {
  auto f = Gpt2OnBus();
  auto summary = SummarizePlan(PlanWith("single", *f), f->graph, f->cluster, *f->cost);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  ASSERT_EQ(summary->devices.size(), 1u);
  const std::vector<OpRun>& runs = summary->devices[0].runs;
  EXPECT_LE(runs.size(), 3u);
  bool layers_whole = false;
  for (const OpRun& run : runs)
    layers_whole |=
        run.label == "transformer/h.0-11" && run.blocks == 12 && run.ops.size() == run.block_ops;
  EXPECT_TRUE(layers_whole);
}

TEST(PlanSummaryErrorsTest, RejectsUnknownDevicesAndNonOps) {
  auto f = CostFixture::Make(testing::MakeChain(3), testing::MakeBusCluster(), 1e-3);
  Plan plan;
  plan.devices.push_back({.device = DeviceId(7), .subgraphs = {}});
  EXPECT_EQ(SummarizePlan(plan, f->graph, f->cluster, *f->cost).status().code(),
            StatusCode::kInvalidArgument);
  plan.devices[0] = {.device = DeviceId(0), .subgraphs = {{.ops = {f->graph.Inputs()[0]}}}};
  auto summary = SummarizePlan(plan, f->graph, f->cluster, *f->cost);
  ASSERT_FALSE(summary.ok());
  EXPECT_NE(summary.status().message().find("not an op"), std::string::npos);
}

}  // namespace
}  // namespace hx::plan
