#include "hexplan/tp/grouping.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace hx::tp {
namespace {

TEST(GroupingTest, Fig4ExampleGroupsAndSplits) {
  std::vector<double> caps = {1, 1, 2, 3, 3};
  for (GroupAlgo algo : {GroupAlgo::kGreedy, GroupAlgo::kExact, GroupAlgo::kOptimized}) {
    GroupingOptions o;
    o.algo = algo;
    auto r = FormGroups(caps, 2, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    // Groups {1,1,2} and {3,3} (in some ring order).
    std::vector<std::vector<int>> g = r->grouping.groups;
    std::sort(g.begin(), g.end());
    EXPECT_EQ(g, (std::vector<std::vector<int>>{{0, 1, 2}, {3, 4}})) << GroupAlgoName(algo);
    EXPECT_NEAR(r->cost.all_gather, 0.3, 1e-12);
    EXPECT_NEAR(r->cost.reduce_scatter, 0.3, 1e-12);
  }
  EXPECT_EQ(ProportionalSplit(12, {1, 1, 2}), (std::vector<int64_t>{3, 3, 6}));
  EXPECT_EQ(ProportionalSplit(8, {3, 3}), (std::vector<int64_t>{4, 4}));
  // Automatic k picks the two groups as well.
  auto a = FormGroupsAutoK(caps);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->best.grouping.k(), 2);
  EXPECT_NEAR(a->cost_per_k[0], 0.9, 1e-12);  // k=1: (10-1)/10
  EXPECT_NEAR(a->cost_per_k[4], 1.2, 1e-12);  // k=5: 4 steps of the largest share 3/10
}

TEST(GroupingTest, BatchSplitIsProportional) {
  auto b = BatchSplit(200, {1, 1, 2, 3, 3});
  EXPECT_DOUBLE_EQ(b[0], 20);
  EXPECT_DOUBLE_EQ(b[2], 40);
  EXPECT_DOUBLE_EQ(b[4], 60);
  auto s = ProportionalSplit(7, {1, 1, 1});
  EXPECT_EQ(s[0] + s[1] + s[2], 7);
  EXPECT_EQ(s, (std::vector<int64_t>{3, 2, 2}));
}

TEST(GroupingTest, ReducesToSymmetric2D) {
  // Eq. 7: g equal nodes in k equal groups cost B/g ((k-1) + (g/k-1)), for every valid (g, k).
  for (int g : {4, 6, 8, 12, 16}) {
    for (int k = 1; k <= g; ++k) {
      if (g % k) continue;
      std::vector<double> caps(g, 2.5);
      Grouping grouping;
      grouping.groups.assign(k, {});
      for (int i = 0; i < g; ++i) grouping.groups[i / (g / k)].push_back(i);
      AsymCost c = EvaluateAsymCost(caps, grouping, 200.0);
      EXPECT_NEAR(c.total(), SymmetricCost(200.0, g, k), 1e-9) << "g=" << g << " k=" << k;
      EXPECT_NEAR(c.all_gather, 200.0 / g * (k - 1), 1e-9);
    }
  }
  EXPECT_NEAR(OneDCost(1.0, 4), 0.75, 1e-12);
}

TEST(GroupingTest, InitialGroupingIsSortedAndBalanced) {
  Grouping g = SortedInitialGrouping({3, 1, 3, 2, 1}, 2);
  ASSERT_EQ(g.k(), 2);
  EXPECT_EQ(g.groups[0], (std::vector<int>{1, 3, 4}));  // capabilities 1, 2, 1
  EXPECT_EQ(g.groups[1], (std::vector<int>{0, 2}));
  // Every group non-empty even when the target would leave one empty.
  Grouping h = SortedInitialGrouping({1, 1, 100}, 3);
  for (const auto& grp : h.groups) EXPECT_FALSE(grp.empty());
}

TEST(GroupingTest, OptimizedNeverWorseThanGreedyAndExactIsOptimal) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> cap(1, 4);
  double worst_gap = 0.0;
  for (int trial = 0; trial < 12; ++trial) {
    int n = 4 + trial % 4;  // 4..7 nodes
    std::vector<double> caps(n);
    for (auto& c : caps) c = cap(rng);
    for (int k = 1; k <= n; ++k) {
      GroupingOptions greedy, exact, opt;
      greedy.algo = GroupAlgo::kGreedy;
      exact.algo = GroupAlgo::kExact;
      opt.algo = GroupAlgo::kOptimized;
      auto g = FormGroups(caps, k, greedy);
      auto e = FormGroups(caps, k, exact);
      auto o = FormGroups(caps, k, opt);
      ASSERT_TRUE(g.ok() && e.ok() && o.ok());
      ASSERT_TRUE(ValidateGrouping(g->grouping, n).ok());
      ASSERT_TRUE(ValidateGrouping(o->grouping, n).ok());
      EXPECT_EQ(g->grouping.k(), k);
      EXPECT_LE(e->cost.total(), g->cost.total() + 1e-12);
      EXPECT_LE(o->cost.total(), g->cost.total() + 1e-12);
      EXPECT_NEAR(o->cost.total(), e->cost.total(), 1e-12);  // small N: exact inside
      worst_gap = std::max(worst_gap, g->cost.total() / e->cost.total() - 1.0);
    }
  }
  // The greedy is not always optimal on these instances (otherwise the exact search is pointless).
  EXPECT_GT(worst_gap, 0.0);
}

TEST(GroupingTest, LocalSearchNeverWorseOnLargerSystems) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> cap(1, 2);
  for (int n : {16, 24, 40}) {
    std::vector<double> caps(n);
    for (auto& c : caps) c = cap(rng);
    for (int k : {2, 4, 6}) {
      GroupingOptions greedy;
      greedy.algo = GroupAlgo::kGreedy;
      auto g = FormGroups(caps, k, greedy);
      auto o = FormGroups(caps, k);
      ASSERT_TRUE(g.ok() && o.ok());
      EXPECT_LE(o->cost.total(), g->cost.total() + 1e-12);
      EXPECT_TRUE(ValidateGrouping(o->grouping, n).ok());
    }
  }
}

TEST(GroupingTest, PrimeNodeCountsFormNearSquareGroups) {
  // 37 equal nodes: AutoDDL can only use 1x37; AsymGroup forms ~6 uneven groups.
  std::vector<double> caps(37, 1.0);
  auto a = FormGroupsAutoK(caps);
  ASSERT_TRUE(a.ok());
  EXPECT_GE(a->best.grouping.k(), 5);
  EXPECT_LE(a->best.grouping.k(), 7);
  EXPECT_LT(a->best.cost.total(), SymmetricCost(1.0, 37, 1) * 0.5);
}

TEST(GroupingTest, RejectsBadInput) {
  EXPECT_FALSE(FormGroups({1, 0, 2}, 2).ok());
  auto zero = FormGroups({1, 0, 2}, 2);
  EXPECT_NE(zero.status().message().find("node 1"), std::string::npos);
  EXPECT_FALSE(FormGroups({1, 2}, 3).ok());
  EXPECT_FALSE(FormGroups({1, 2}, 0).ok());
  GroupingOptions exact;
  exact.algo = GroupAlgo::kExact;
  EXPECT_FALSE(FormGroups(std::vector<double>(20, 1.0), 3, exact).ok());
  EXPECT_FALSE(FormGroupsAutoK({}).ok());
  EXPECT_FALSE(FormGroups({1, std::nan("")}, 1).ok());
  Grouping bad;
  bad.groups = {{0, 1}, {1}};
  EXPECT_FALSE(ValidateGrouping(bad, 2).ok());
}

TEST(GroupAlgoRegistryTest, EveryNameResolvesAndGroups) {
  std::vector<std::string> listed;
  for (const GroupAlgoEntry& a : GroupAlgos()) listed.push_back(a.name);
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(GroupAlgoRegistry().Names(), listed);
  const std::vector<double> caps = {1, 1, 2, 3, 3};
  for (const std::string& name : GroupAlgoRegistry().Names()) {
    auto algo = ParseGroupAlgo(name);
    ASSERT_TRUE(algo.ok()) << name << ": " << algo.status().message();
    EXPECT_EQ(GroupAlgoName(*algo), name);
    GroupingOptions o;
    o.algo = *algo;
    auto r = FormGroups(caps, 2, o);
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().message();
    EXPECT_EQ(r->grouping.groups.size(), 2u) << name;
  }
}

TEST(GroupAlgoRegistryTest, UnknownNameIsNotFoundListingTheKnownNames) {
  auto algo = ParseGroupAlgo("random");
  ASSERT_FALSE(algo.ok());
  EXPECT_EQ(algo.status().code(), StatusCode::kNotFound);
  EXPECT_NE(algo.status().message().find("--group-algo"), std::string::npos);
  EXPECT_NE(algo.status().message().find("exact, greedy, optimized"), std::string::npos)
      << algo.status().message();
}

}  // namespace
}  // namespace hx::tp
