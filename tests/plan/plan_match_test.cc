#include "hexplan/plan/plan_match.h"

#include <gtest/gtest.h>

#include "hexplan/plan/plan_builder.h"
#include "plan/plan_fixtures.h"
#include "testing/graph_builders.h"

namespace hx::plan {
namespace {

using testing::MakeBusCluster;

// The header of a plan stamped for `graph` on `cluster`, as ParsePlanHeader reads it back.
PlanHeader StampedHeader(const graph::Graph& graph, const hw::Cluster& cluster) {
  Plan plan;
  StampPlan(plan, graph, cluster, "chain", {}, "test-bus");
  return PlanHeader{plan.model, plan.cluster, "test"};
}

TEST(PlanMatchTest, ThePlansOwnInputsMatch) {
  const graph::Graph graph = testing::MakeChain(3);
  const hw::Cluster cluster = MakeBusCluster();
  EXPECT_TRUE(FindPlanMismatches(StampedHeader(graph, cluster), graph, cluster).empty());
}

TEST(PlanMatchTest, AnotherModelOrClusterIsAMismatchModelFirst) {
  const graph::Graph graph = testing::MakeChain(3);
  const hw::Cluster cluster = MakeBusCluster();
  const PlanHeader header = StampedHeader(graph, cluster);
  const graph::Graph other_graph = testing::MakeChain(4);
  const hw::Cluster other_cluster = MakeBusCluster(1 << 20);

  std::vector<PlanMismatch> m = FindPlanMismatches(header, other_graph, cluster);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].input, PlanInput::kModel);
  EXPECT_FALSE(m[0].tolerated);

  m = FindPlanMismatches(header, graph, other_cluster);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].input, PlanInput::kCluster);
  EXPECT_FALSE(m[0].tolerated);

  m = FindPlanMismatches(header, other_graph, other_cluster);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].input, PlanInput::kModel);
  EXPECT_EQ(m[1].input, PlanInput::kCluster);
  EXPECT_STREQ(PlanInputName(m[0].input), "model");
  EXPECT_STREQ(PlanInputName(m[1].input), "cluster");
}

TEST(PlanMatchTest, AnOverriddenInputsMismatchIsTolerated) {
  const graph::Graph graph = testing::MakeChain(3);
  const hw::Cluster cluster = MakeBusCluster();
  const PlanHeader header = StampedHeader(graph, cluster);
  const graph::Graph other_graph = testing::MakeChain(4);
  const hw::Cluster other_cluster = MakeBusCluster(1 << 20);

  std::vector<PlanMismatch> m =
      FindPlanMismatches(header, other_graph, other_cluster, {.cluster_overridden = true});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_FALSE(m[0].tolerated);  // the model was not overridden
  EXPECT_TRUE(m[1].tolerated);

  m = FindPlanMismatches(header, other_graph, other_cluster,
                         {.model_overridden = true, .cluster_overridden = true});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_TRUE(m[0].tolerated);
  EXPECT_TRUE(m[1].tolerated);
  // Overriding an input that matches changes nothing.
  EXPECT_TRUE(FindPlanMismatches(header, graph, cluster, {.model_overridden = true}).empty());
}

TEST(PlanMatchTest, APlanWithoutFingerprintsMatchesAnything) {
  const graph::Graph graph = testing::MakeChain(3);
  const hw::Cluster cluster = MakeBusCluster();
  PlanHeader header = StampedHeader(graph, cluster);
  header.model.hash = 0;
  header.cluster.hash = 0;
  EXPECT_TRUE(FindPlanMismatches(header, testing::MakeChain(4), MakeBusCluster(1 << 20)).empty());
}

}  // namespace
}  // namespace hx::plan
