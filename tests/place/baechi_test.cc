#include "hexplan/place/list/baechi.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "hexplan/place/list/list_scheduling.h"

namespace hx::place {
namespace {

SchedulingProblem RandomProblem(int n, int devices, uint64_t seed, double memory_per_device) {
  std::mt19937_64 rng(seed);
  SchedulingProblem p(n, devices);
  for (int t = 0; t < n; ++t) {
    for (int d = 0; d < devices; ++d) p.SetCost(t, d, 1 + rng() % 20);
    p.SetTaskMemory(t, 1 + rng() % 10);
  }
  for (int d = 0; d < devices; ++d) p.SetDeviceMemory(d, memory_per_device);
  for (int a = 0; a < devices; ++a)
    for (int b = 0; b < devices; ++b) p.SetLink(a, b, 1.0, 0.2);
  for (int t = 1; t < n; ++t) {
    int fan = 1 + rng() % 2;
    for (int k = 0; k < fan; ++k) p.AddEdge(rng() % t, t, rng() % 40);
  }
  return p;
}

TEST(BaechiTest, AllThreeGiveValidMemoryRespectingSchedules) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    // 50 tasks of 1..10 memory (about 275 in all) over 4 devices of 100: tight but feasible.
    SchedulingProblem p = RandomProblem(50, 4, seed, 100);
    for (auto* scheduler : {&ScheduleMTopo, &ScheduleMEtf}) {
      auto s = (*scheduler)(p);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      EXPECT_EQ(s->Check(p), "") << "seed " << seed;
    }
    auto sct = ScheduleMSct(p);
    ASSERT_TRUE(sct.ok()) << sct.status().ToString();
    EXPECT_EQ(sct->Check(p), "");
  }
}

TEST(BaechiTest, MTopoBalancesMemoryShares) {
  SchedulingProblem p(8, 2);
  for (int t = 0; t < 8; ++t) {
    p.SetCost(t, 0, 1);
    p.SetCost(t, 1, 1);
    p.SetTaskMemory(t, 10);
    if (t) p.AddEdge(t - 1, t, 0);
  }
  auto s = ScheduleMTopo(p);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(std::count(s->device.begin(), s->device.end(), 0), 4);
  EXPECT_EQ(std::count(s->device.begin(), s->device.end(), 1), 4);
  EXPECT_EQ(s->Check(p), "");
}

TEST(BaechiTest, MEtfRunsIndependentTasksInParallel) {
  SchedulingProblem p(4, 4);
  for (int t = 0; t < 4; ++t)
    for (int d = 0; d < 4; ++d) p.SetCost(t, d, 5);
  auto s = ScheduleMEtf(p);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->makespan, 5.0);
}

TEST(BaechiTest, FavouriteChildIsOnePerTaskAndKeepsChainsTogether) {
  // A chain with expensive communication: every edge should be favourite, so m-SCT keeps the whole
  // chain on one device and pays no communication.
  SchedulingProblem p(6, 3);
  for (int t = 0; t < 6; ++t)
    for (int d = 0; d < 3; ++d) p.SetCost(t, d, 2);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) p.SetLink(a, b, 0.0, 1.0);
  for (int t = 1; t < 6; ++t) p.AddEdge(t - 1, t, 100);
  auto children = FavouriteChildren(p);
  ASSERT_TRUE(children.ok());
  for (int t = 0; t < 5; ++t) EXPECT_EQ((*children)[t], t + 1);
  EXPECT_EQ((*children)[5], -1);
  auto s = ScheduleMSct(p);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->makespan, 12.0);
  // Fan-out: a task has at most one favourite child.
  SchedulingProblem fan(4, 2);
  for (int t = 0; t < 4; ++t)
    for (int d = 0; d < 2; ++d) fan.SetCost(t, d, 1);
  for (int t = 1; t < 4; ++t) fan.AddEdge(0, t, 10);
  auto fc = FavouriteChildren(fan);
  ASSERT_TRUE(fc.ok());
  EXPECT_GE((*fc)[0], 1);
}

TEST(BaechiTest, OutOfMemoryNamesTheTask) {
  SchedulingProblem p(3, 2);
  for (int t = 0; t < 3; ++t) {
    p.SetCost(t, 0, 1);
    p.SetCost(t, 1, 1);
    p.SetTaskMemory(t, 60);
  }
  p.SetDeviceMemory(0, 100);
  p.SetDeviceMemory(1, 100);
  p.SetName(2, "big_op");
  p.AddEdge(0, 1, 1);
  p.AddEdge(1, 2, 1);
  auto s = ScheduleMEtf(p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("big_op"), std::string::npos);
  EXPECT_FALSE(ScheduleMTopo(p).ok());
}

}  // namespace
}  // namespace hx::place
