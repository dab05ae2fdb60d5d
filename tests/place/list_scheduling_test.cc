#include "hexplan/place/list/list_scheduling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

namespace hx::place {
namespace {

// Topcuoglu, Hariri and Wu (2002), Fig. 2: 10 tasks on 3 processors.
SchedulingProblem HeftPaperExample() {
  const double w[10][3] = {{14, 16, 9}, {13, 19, 18}, {11, 13, 19}, {13, 8, 17},  {12, 13, 10},
                           {13, 16, 9}, {7, 15, 11},  {5, 11, 14},  {18, 12, 20}, {21, 7, 16}};
  SchedulingProblem p(10, 3);
  for (int t = 0; t < 10; ++t)
    for (int d = 0; d < 3; ++d) p.SetCost(t, d, w[t][d]);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) p.SetLink(a, b, 0.0, 1.0);  // comm = the edge's cost
  const int edges[15][3] = {{1, 2, 18}, {1, 3, 12}, {1, 4, 9},   {1, 5, 11},  {1, 6, 14},
                            {2, 8, 19}, {2, 9, 16}, {3, 7, 23},  {4, 8, 27},  {4, 9, 23},
                            {5, 9, 13}, {6, 8, 15}, {7, 10, 17}, {8, 10, 11}, {9, 10, 13}};
  for (const auto& e : edges) p.AddEdge(e[0] - 1, e[1] - 1, e[2]);
  return p;
}

SchedulingProblem RandomProblem(int n, int devices, uint64_t seed) {
  std::mt19937_64 rng(seed);
  SchedulingProblem p(n, devices);
  for (int t = 0; t < n; ++t)
    for (int d = 0; d < devices; ++d) p.SetCost(t, d, 1 + rng() % 20);
  for (int a = 0; a < devices; ++a)
    for (int b = 0; b < devices; ++b) p.SetLink(a, b, 0.5, 0.1 * (1 + (a + b) % 3));
  for (int t = 1; t < n; ++t) {
    int fan = 1 + rng() % 3;
    for (int k = 0; k < fan; ++k) p.AddEdge(rng() % t, t, rng() % 50);
  }
  return p;
}

TEST(HeftTest, PaperExampleHasMakespan80) {
  SchedulingProblem p = HeftPaperExample();
  auto ranks = UpwardRanks(p);
  // The paper's Table: rank_u(n1) = 108, rank_u(n10) = 14.67.
  EXPECT_NEAR(ranks[0], 108.0, 1e-9);
  EXPECT_NEAR(ranks[9], 44.0 / 3.0, 1e-9);
  auto s = ScheduleHeft(p);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->Check(p), "");
  EXPECT_NEAR(s->makespan, 80.0, 1e-9);
}

TEST(PeftTest, PaperExampleScheduleIsValidAndCompetitive) {
  SchedulingProblem p = HeftPaperExample();
  auto s = SchedulePeft(p);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->Check(p), "");
  // Each task's fastest cost along n1 -> n2 -> n9 -> n10 (9 + 13 + 12 + 7) bounds any schedule.
  EXPECT_GE(s->makespan, 41.0);
  std::printf("PEFT makespan on the HEFT example: %g\n", s->makespan);
}

// OCT by its definition, evaluated by brute-force recursion.
double OctBrute(const SchedulingProblem& p, int t, int k) {
  double worst = 0.0;
  for (int e : p.out_edges(t)) {
    int s = p.edges()[e].dst;
    double best = 1e300;
    for (int w = 0; w < p.num_devices(); ++w)
      best = std::min(best, OctBrute(p, s, w) + p.cost(s, w) + (w == k ? 0 : p.MeanCommTime(e)));
    worst = std::max(worst, best);
  }
  return worst;
}

TEST(PeftTest, OptimisticCostTableMatchesDefinition) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SchedulingProblem p = RandomProblem(9, 3, seed);
    auto oct = OptimisticCostTable(p);
    for (int t = 0; t < p.num_tasks(); ++t)
      for (int k = 0; k < 3; ++k) EXPECT_NEAR(oct[t][k], OctBrute(p, t, k), 1e-9);
  }
}

class ListSchedulingProperty : public ::testing::TestWithParam<int> {};

TEST_P(ListSchedulingProperty, SchedulesAreValidAndAboveTheBound) {
  const int devices = GetParam();
  for (uint64_t seed = 1; seed <= 15; ++seed) {
    SchedulingProblem p = RandomProblem(60, devices, seed * 31 + devices);
    // Bound: longest path with each task at its fastest cost and free communication.
    std::vector<double> longest(p.num_tasks(), 0.0);
    double bound = 0.0;
    for (int t : p.TopologicalOrder()) {
      double best = 1e300;
      for (int d = 0; d < devices; ++d) best = std::min(best, p.cost(t, d));
      double ready = 0.0;
      for (int e : p.in_edges(t)) ready = std::max(ready, longest[p.edges()[e].src]);
      longest[t] = ready + best;
      bound = std::max(bound, longest[t]);
    }
    for (auto scheduler : {ScheduleHeft, SchedulePeft}) {
      auto s = scheduler(p);
      ASSERT_TRUE(s.ok());
      EXPECT_EQ(s->Check(p), "") << "seed " << seed;
      EXPECT_GE(s->makespan, bound - 1e-9);
      // Deterministic: the same input gives the same schedule.
      auto again = scheduler(p);
      EXPECT_EQ(again->device, s->device);
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Devices, ListSchedulingProperty, ::testing::Values(1, 2, 3, 8));

TEST(ListSchedulingTest, MemoryLimitsAreHonouredOrNamed) {
  SchedulingProblem p(4, 2);
  for (int t = 0; t < 4; ++t) {
    p.SetCost(t, 0, 1);
    p.SetCost(t, 1, 5);
    p.SetTaskMemory(t, 10);
  }
  p.SetDeviceMemory(0, 20);
  p.SetDeviceMemory(1, 20);
  auto s = ScheduleHeft(p);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->Check(p), "");
  EXPECT_EQ(std::count(s->device.begin(), s->device.end(), 0), 2);
  p.SetDeviceMemory(1, 5);
  auto fail = ScheduleHeft(p);
  ASSERT_FALSE(fail.ok());
  EXPECT_NE(fail.status().message().find("t2"), std::string::npos);
}

TEST(ListSchedulingTest, UnsupportedDevicesAreAvoided) {
  SchedulingProblem p(3, 2);
  p.SetCost(0, 0, 1);
  p.SetCost(0, 1, kUnsupported);
  p.SetCost(1, 0, 100);
  p.SetCost(1, 1, 1);
  p.SetCost(2, 0, kUnsupported);
  p.SetCost(2, 1, kUnsupported);
  EXPECT_FALSE(ScheduleHeft(p).ok());  // task 2 runs nowhere
  p.SetCost(2, 1, 1);
  auto s = ScheduleHeft(p);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->device[0], 0);
  EXPECT_EQ(s->device[2], 1);
}

}  // namespace
}  // namespace hx::place
