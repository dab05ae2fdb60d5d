// Issue 28: the list schedulers count live activations the way the plan validator does
// (list/live_memory.h), so that they move a task to the next-best device instead of handing back
// a plan the validator rejects. The count must never be below the validator's.
#include "hexplan/place/list/live_memory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include "hexplan/cost/cost_model.h"
#include "hexplan/hw/presets.h"
#include "hexplan/place/list/list_scheduling.h"
#include "hexplan/place/problem_builder.h"
#include "hexplan/plan/validator.h"
#include "testing/graph_builders.h"

namespace hx::place {
namespace {

// Places a schedule's tasks into a LiveMemory in the order a list scheduler could have (a
// topological order, shuffled among ready tasks so that some land in gaps before tasks placed
// earlier), and returns each device's count.
std::vector<double> CountedPeaks(const SchedulingProblem& p, const Schedule& s, uint64_t seed) {
  LiveMemory live(p);
  EXPECT_TRUE(live.active());
  std::mt19937_64 rng(seed);
  std::vector<int> missing(p.num_tasks(), 0), ready;
  for (const SchedulingEdge& e : p.edges()) ++missing[e.dst];
  for (int t = 0; t < p.num_tasks(); ++t)
    if (missing[t] == 0) ready.push_back(t);
  while (!ready.empty()) {
    const size_t pick = rng() % ready.size();
    const int t = ready[pick];
    ready.erase(ready.begin() + static_cast<long>(pick));
    live.Place(t, s.device[t], {s.start[t], s.finish[t]}, std::numeric_limits<double>::infinity());
    for (int e : p.out_edges(t))
      if (--missing[p.edges()[e].dst] == 0) ready.push_back(p.edges()[e].dst);
  }
  std::vector<double> peaks;
  for (int d = 0; d < p.num_devices(); ++d) peaks.push_back(live.peak(d));
  return peaks;
}

TEST(LiveMemoryTest, NeverCountsLessThanTheValidator) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    graph::Graph g = testing::MakeRandomDag(40, seed, 64);
    hw::Cluster cluster = *hw::LoadCluster("moirai-inter");
    cost::CostModel cost(g, cluster);
    ProblemBuildOptions build;
    build.live_activations = true;
    auto problem = BuildGraphProblem(cost, build);
    ASSERT_TRUE(problem.ok()) << problem.status().ToString();
    // Devices chosen at random (many crossings), start times from a valid list schedule's order.
    SchedulingProblem& p = problem->problem;
    auto heft = ScheduleHeft(p);
    ASSERT_TRUE(heft.ok());
    Schedule s = *heft;
    std::mt19937_64 rng(seed);
    for (int t = 0; t < p.num_tasks(); ++t) s.device[t] = static_cast<int>(rng() % 4);
    auto plan = PlanFromSchedule(*problem, s, cost);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    const std::vector<double> counted = CountedPeaks(p, s, seed);
    for (const plan::DeviceMemoryBound& m : plan::PlanMemoryBound(*plan, cost)) {
      const size_t d = m.device.index();
      EXPECT_GE(counted[d] * (1 + 1e-9), static_cast<double>(m.peak_activation_bytes))
          << "seed " << seed << " device " << d;
    }
  }
}

// A task appended at the end of a device's order (ETF) is counted exactly: on a chain on one device
// only the output being read and the one being written are live at once.
TEST(LiveMemoryTest, AChainOnOneDeviceHoldsTwoActivationsAtATime) {
  SchedulingProblem p(3, 1);
  p.SetDeviceCapacity(0, 1e9);
  for (int t = 0; t < 3; ++t) p.SetCost(t, 0, 1.0);
  p.AddEdge(0, 1, 1);
  p.AddEdge(1, 2, 1);
  p.AddLiveTensor({0, 100, false, {1}});
  p.AddLiveTensor({1, 10, false, {2}});
  p.AddLiveTensor({2, 1, true, {}});
  LiveMemory live(p);
  for (int t = 0; t < 3; ++t) {
    live.Place(t, 0, {double(t), t + 1.0}, 1e9);
  }
  EXPECT_DOUBLE_EQ(live.peak(0), 110);
  // The same chain split over two devices: the first output stays on device 0 for good and
  // arrives on device 1 from its start.
  SchedulingProblem q(3, 2);
  for (int t = 0; t < 3; ++t)
    for (int d = 0; d < 2; ++d) q.SetCost(t, d, 1.0);
  q.SetDeviceCapacity(0, 1e9);
  q.AddEdge(0, 1, 1);
  q.AddEdge(1, 2, 1);
  q.AddLiveTensor({0, 100, false, {1}});
  q.AddLiveTensor({1, 10, false, {2}});
  LiveMemory split(q);
  split.Place(0, 0, {0, 1}, 1e9);
  EXPECT_DOUBLE_EQ(split.PeakWith(1, 1, {1, 2}), 110);
  split.Place(1, 1, {1, 2}, 1e9);
  split.Place(2, 1, {2, 3}, 1e9);
  EXPECT_DOUBLE_EQ(split.peak(0), 100);
  EXPECT_DOUBLE_EQ(split.peak(1), 110);
}

}  // namespace
}  // namespace hx::place
