#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hexplan/place/planner.h"
#include "hexplan/plan/validator.h"
#include "plan/plan_fixtures.h"
#include "testing/graph_builders.h"

namespace hx::place {
namespace {

using testing::CostFixture;
using ::testing::HasSubstr;

PlanRequest SingleRequest(const CostFixture& f) {
  PlanRequest r;
  r.cost = f.cost.get();
  r.model_spec = "chain";
  r.cluster_spec = "test-bus";
  return r;
}

TEST(PlannerRegistryTest, KnowsSingleAndRejectsUnknownNames) {
  EXPECT_THAT(PlannerNames(), ::testing::Contains("single"));
  auto p = MakePlanner("no-such-planner");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("known: "));
}

TEST(SinglePlannerTest, PutsEverythingOnTheFastestDeviceThatFits) {
  auto f = CostFixture::Make(hx::testing::MakeChain(6), testing::MakeBusCluster(), -1);
  // gpu1 twice as fast for every op.
  for (NodeId op : f->graph.Ops()) {
    f->profile.SetNodeTime(f->graph.node(op).name, "gpu0", 2e-3);
    f->profile.SetNodeTime(f->graph.node(op).name, "gpu1", 1e-3);
    f->profile.SetNodeTime(f->graph.node(op).name, "gpu2", 2e-3);
  }
  f->cost = std::make_unique<cost::CostModel>(f->graph, f->cluster, cost::CostModelOptions{},
                                              &f->profile);
  auto out = RunPlanner("single", SingleRequest(*f));
  ASSERT_TRUE(out.ok()) << out.status().message();
  const plan::Plan& p = out->result.plan;
  ASSERT_EQ(p.devices.size(), 1u);
  EXPECT_EQ(p.devices[0].device, DeviceId(1));
  EXPECT_EQ(p.devices[0].subgraphs.size(), 6u);
  EXPECT_EQ(p.algo, "single");
  EXPECT_EQ(out->result.status, PlanStatus::kHeuristic);
  EXPECT_THAT(plan::ValidatePlan(p, *f->cost), ::testing::IsEmpty());
  // Loads (1 ms each) overlap 1 ms ops: the first load, then the ops back to back.
  EXPECT_NEAR(out->sim.makespan_s, 1e-3 + 6 * 1e-3, 1e-12);
  EXPECT_GE(out->sim.makespan_s, out->lower_bound.value_s());
  EXPECT_EQ(p.model.spec, "chain");
  EXPECT_EQ(p.model.hash, plan::GraphFingerprint(f->graph));
}

TEST(SinglePlannerTest, SaysWhichDeviceLacksHowMuchMemory) {
  // 6 weights of 16 KiB on 64 KiB GPUs.
  auto f = CostFixture::Make(hx::testing::MakeChain(6), testing::MakeBusCluster(64 * 1024), 1e-3);
  auto out = RunPlanner("single", SingleRequest(*f));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(out.status().message(),
              ::testing::AllOf(HasSubstr("gpu0 needs"), HasSubstr("short by")));
}

TEST(SinglePlannerTest, RejectsBadOptions) {
  auto f = CostFixture::Make(hx::testing::MakeChain(2), testing::MakeBusCluster(), 1e-3);
  PlanRequest r = SingleRequest(*f);
  r.options.time_limit_s = 0;
  EXPECT_FALSE(RunPlanner("single", r).ok());
}

}  // namespace
}  // namespace hx::place
