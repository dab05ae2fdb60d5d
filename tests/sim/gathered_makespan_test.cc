#include "hexplan/sim/gathered_makespan.h"

#include <gtest/gtest.h>

#include "hexplan/plan/plan_builder.h"
#include "plan/plan_fixtures.h"
#include "testing/graph_builders.h"

namespace hx::sim {
namespace {

using plan::Plan;
using plan::Subgraph;
using testing::CostFixture;

// op0 on gpu0, op1 (whose output is the graph's) on gpu2.
struct SplitChain {
  std::unique_ptr<CostFixture> f =
      CostFixture::Make(testing::MakeChain(2), testing::MakeBusCluster(), 1e-3);
  Plan plan;
  SimResult result;

  SplitChain() {
    plan.devices.push_back({DeviceId(0), {Subgraph{{*f->graph.FindNode("op0")}}}});
    plan.devices.push_back({DeviceId(2), {Subgraph{{*f->graph.FindNode("op1")}}}});
    EXPECT_TRUE(plan::CompleteTransfers(plan, f->graph, f->cluster).ok());
    auto r = Simulate(plan, *f->cost);
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (r.ok()) result = std::move(r).value();
  }
  // The time to move the graph's output from gpu2 to `to`.
  double OutputHop(DeviceId to) const {
    const NodeId out = f->graph.Outputs().at(0);
    return f->cost->TensorTransferTime(f->graph.node(out).inputs.at(0), DeviceId(2), to);
  }
};

TEST(GatheredMakespanTest, AnOutputMadeInAnotherGroupIsSentAfterThatGroupsLastOp) {
  SplitChain s;
  const int devices = static_cast<int>(s.f->cluster.num_devices());
  std::vector<int> group(devices, 0);
  group[2] = 1;  // gpu2 is another rank's; the outputs go to group 0 (gpu0 first)
  const double hop = s.OutputHop(DeviceId(0));
  ASSERT_GT(hop, 0.0);
  EXPECT_DOUBLE_EQ(GatheredMakespan(s.result, *s.f->cost, group, 0), s.result.makespan_s + hop);
  // Gathered on group 1 instead, where the output already is: the makespan.
  EXPECT_DOUBLE_EQ(GatheredMakespan(s.result, *s.f->cost, group, 1), s.result.makespan_s);
}

TEST(GatheredMakespanTest, OneGroupOrAGroupWithNoDeviceIsTheMakespan) {
  SplitChain s;
  const std::vector<int> one(s.f->cluster.num_devices(), 0);
  EXPECT_DOUBLE_EQ(GatheredMakespan(s.result, *s.f->cost, one, 0), s.result.makespan_s);
  EXPECT_DOUBLE_EQ(GatheredMakespan(s.result, *s.f->cost, one, 7), s.result.makespan_s);
}

}  // namespace
}  // namespace hx::sim
