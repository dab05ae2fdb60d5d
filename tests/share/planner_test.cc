#include "hexplan/share/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "hexplan/share/allocator.h"
#include "hexplan/share/configurator.h"
#include "hexplan/share/exact.h"
#include "hexplan/share/serving_sim.h"
#include "hexplan/share/slo_repair.h"
#include "share/share_test_util.h"

namespace hx::share {
namespace {

ServiceProfile HandProfile() {
  ServiceProfile p;
  p.model = "hand";
  auto add = [&](int g, int b, int k, double tp, double lat) {
    p.points.push_back({g, b, k, tp, lat});
  };
  add(1, 1, 1, 100, 5);
  add(1, 4, 1, 300, 12);  // too slow for a 10 ms limit
  add(1, 2, 2, 250, 9);
  add(2, 4, 1, 500, 8);
  add(3, 8, 1, 900, 30);  // too slow
  add(3, 4, 2, 700, 9);
  add(7, 8, 3, 2000, 9.5);
  return p;
}

TEST(ConfiguratorTest, TripletDecisionTakesTheFastestThroughputUnderTheLimit) {
  const TripletArray t = TripletDecision(HandProfile(), 10, 0);
  EXPECT_EQ(t[0].batch, 2);
  EXPECT_EQ(t[0].processes, 2);
  EXPECT_DOUBLE_EQ(t[0].throughput, 250);
  EXPECT_DOUBLE_EQ(t[1].throughput, 500);
  EXPECT_DOUBLE_EQ(t[2].throughput, 700);
  EXPECT_FALSE(t[3].valid());  // no 4g point
  EXPECT_DOUBLE_EQ(t[4].throughput, 2000);
  // One process only (parvagpu-single): the 1g best is the batch-1 point.
  EXPECT_DOUBLE_EQ(TripletDecision(HandProfile(), 10, 1)[0].throughput, 100);
  // The limit is strict: a 9 ms point does not qualify under 9 ms.
  EXPECT_DOUBLE_EQ(TripletDecision(HandProfile(), 9, 0)[0].throughput, 100);
}

TEST(ConfiguratorTest, DemandMatchingUsesTheBestPerGpcThenTheSmallestCover) {
  const TripletArray t = TripletDecision(HandProfile(), 10, 0);
  // Best throughput per GPC: 7g (2000/7). 4600 = 2 x 2000 + 600, and 3g (700) is the smallest
  // size covering 600.
  auto segs = DemandMatching(3, 4600, t);
  ASSERT_EQ(segs.size(), 3u);
  EXPECT_EQ(segs[0].triplet.gpcs, 7);
  EXPECT_EQ(segs[1].triplet.gpcs, 7);
  EXPECT_EQ(segs[2].triplet.gpcs, 3);
  EXPECT_EQ(segs[2].service, 3);
  // A small rate: no optimal segment, one small last segment.
  segs = DemandMatching(0, 240, t);
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].triplet.gpcs, 1);
  // An exact multiple needs no last segment.
  EXPECT_EQ(DemandMatching(0, 4000, t).size(), 2u);
}

TEST(ConfiguratorTest, MinimalCoversAreMinimalAndCover) {
  const TripletArray t = TripletDecision(HandProfile(), 10, 0);
  const auto covers = MinimalCovers(1200, t);
  ASSERT_FALSE(covers.empty());
  for (const auto& c : covers) {
    double cap = 0;
    for (int i = 0; i < kNumInstanceSizes; ++i) cap += c.n[i] * t[i].throughput;
    EXPECT_GE(cap, 1200);
    for (int i = 0; i < kNumInstanceSizes; ++i) {
      if (c.n[i] > 0) EXPECT_LT(cap - t[i].throughput, 1200);
    }
  }
  // The cheapest take 5 GPCs (e.g. 2g + 2g + 1g = 1250, or 3g + 2g = 1200); 7g alone takes 7.
  EXPECT_EQ(covers.front().Gpcs(), 5);
}

TEST(AllocatorTest, RelocationPlacesLargestFirstAtPreferredSlots) {
  const GpuModel gpu = *GetGpuModel("a100-80gb");
  auto seg = [](int gpcs) { return Segment{0, Triplet{gpcs, 1, 1, 1, 1}}; };
  std::vector<GpuAssignment> gpus;
  AllocateSegments(gpu, {seg(3), seg(3), seg(2), seg(1), seg(1), seg(1), seg(4)}, &gpus);
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(LayoutString(gpus[0].ToLayout()), "4-3");
  EXPECT_EQ(gpus[0].segments[1].start, 4);  // 3g prefers slot 4
  EXPECT_EQ(LayoutString(gpus[1].ToLayout()), "2-1-1-3");
  EXPECT_EQ(LayoutString(gpus[2].ToLayout()), "1");
  for (const auto& g : gpus) EXPECT_TRUE(ValidateLayout(gpu, g.ToLayout()).ok());
  EXPECT_EQ(PreferredStarts(2), (std::vector<int>{0, 2, 4}));
}

TEST(AllocatorTest, OptimizationSplitsALightGpuIntoTheFreeSlots) {
  const GpuModel gpu = *GetGpuModel("a100-80gb");
  std::vector<TripletArray> triplets(3);
  for (auto& t : triplets) {
    t[0] = {1, 1, 1, 100, 1};
    t[1] = {2, 1, 1, 100, 1};
    t[3] = {4, 1, 1, 400, 1};
  }
  std::vector<GpuAssignment> gpus;
  AllocateSegments(gpu, {{0, triplets[0][3]}, {1, triplets[1][1]}, {2, triplets[2][1]}}, &gpus);
  ASSERT_EQ(gpus.size(), 2u);  // 4g + 2g on GPU 0, the second 2g alone on GPU 1
  OptimizeAllocation(gpu, triplets, 4, &gpus);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(LayoutString(gpus[0].ToLayout()), "4-2-1");
  EXPECT_TRUE(ValidateLayout(gpu, gpus[0].ToLayout()).ok());
  // Service 2 still gets its 100 req/s, now from a 1g segment.
  EXPECT_EQ(gpus[0].segments.back().service, 2);
  EXPECT_DOUBLE_EQ(gpus[0].segments.back().triplet.throughput, 100);
}

class ScenarioTest : public ::testing::TestWithParam<int> {};

TEST_P(ScenarioTest, EveryPlanIsValidMeetsItsSlosAndHexplanNeverLoses) {
  const std::string k = "S" + std::to_string(GetParam());
  const ShareProblem problem = testing::Scenario(k);
  std::map<std::string, SharePlan> plans;
  for (const auto& algo : AlgoNames()) {
    ShareOptions o;
    o.algo = algo;
    o.verify_seconds = 10;  // hexplan's own SLO check, shortened for the test
    o.verify_seeds = 1;
    auto plan = PlanShare(problem, o);
    ASSERT_TRUE(plan.ok()) << k << " " << algo << ": " << plan.status().message();
    const auto v = PlanViolations(problem, o, *plan);
    EXPECT_TRUE(v.empty()) << k << " " << algo << ": " << (v.empty() ? "" : v.front());
    if (algo != "igniter") EXPECT_TRUE(plan->unsupported.empty()) << k << " " << algo;
    plans[algo] = *plan;
  }
  EXPECT_TRUE(plans["hexplan"].slo.verified) << k;
  // exact-pack packs parvagpu's Demand Matching segments (before its optimisation) exactly.
  EXPECT_LE(plans["exact-pack"].metrics.gpus, plans["parvagpu-unoptimized"].metrics.gpus) << k;
  // The exact bound is proven on these sizes and no MIG algorithm beats it.
  ASSERT_TRUE(plans["exact"].proven_optimal) << k;
  for (const char* algo : {"parvagpu", "parvagpu-single", "parvagpu-unoptimized", "mig-serving",
                           "exact-pack", "hexplan"}) {
    EXPECT_GE(plans[algo].metrics.gpus, plans["exact"].metrics.gpus) << k << " " << algo;
  }
  // Golden counts with every plan verified (the check shortened to seed 1 x 10 s for the test; the
  // default 60 s x seeds 1-5 gives the same counts, docs/sharing.md): 46 GPUs on S1-S6, never more
  // than ParvaGPU's plans (46 at 0.5, which miss on 4 scenarios).
  const int golden[] = {2, 3, 5, 7, 13, 16};
  EXPECT_EQ(plans["hexplan"].metrics.gpus, golden[GetParam() - 1]) << k;
  EXPECT_LE(plans["hexplan"].metrics.gpus, plans["parvagpu"].metrics.gpus) << k;
  // hexplan's verdict is the judge's: the whole plan in the serving simulation.
  EXPECT_EQ(plans["hexplan"].slo.how.rfind("judge:", 0), 0u) << plans["hexplan"].slo.how;
  // iGniter cannot serve the high-rate scenarios (as in the paper).
  EXPECT_EQ(plans["igniter"].unsupported.empty(), GetParam() <= 4) << k;
  // Metrics are consistent with the layout.
  const auto& h = plans["hexplan"];
  int gpcs = 0;
  for (const auto& g : h.gpus) gpcs += g.Gpcs();
  EXPECT_EQ(h.metrics.gpcs, gpcs);
  EXPECT_NEAR(h.metrics.external_fragmentation, 1.0 - gpcs / (7.0 * h.gpus.size()), 1e-12);
  EXPECT_GE(h.metrics.internal_slack, 0);
  EXPECT_LT(h.metrics.internal_slack, 1);
}

INSTANTIATE_TEST_SUITE_P(S1ToS6, ScenarioTest, ::testing::Range(1, 7));

// Golden counts: the published implementation (github.com/MunQ-Lee/ParvaGPU_SC24 at 5f3de1e,
// `./parva_sched K`) uses these GPUs and GPCs on S1-S6 at its latency factor 0.45; our parvagpu
// gives the same with valid MIG layouts (docs/sharing.md, "ParvaGPU as published").
TEST(ParvaGpuTest, GivesThePublishedCountsAtItsLatencyFactor) {
  const int gpus[] = {2, 3, 5, 7, 13, 17}, gpcs[] = {10, 20, 33, 48, 89, 114};
  for (int k = 1; k <= 6; ++k) {
    const ShareProblem problem = testing::Scenario("S" + std::to_string(k));
    ShareOptions o;
    o.algo = "parvagpu";
    o.slo_factor = 0.45;
    auto plan = PlanShare(problem, o);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->metrics.gpus, gpus[k - 1]) << "S" << k;
    EXPECT_EQ(plan->metrics.gpcs, gpcs[k - 1]) << "S" << k;
    EXPECT_TRUE(PlanViolations(problem, o, *plan).empty()) << "S" << k;
  }
}

TEST(HexplanTest, UsesFewerGpusThanParvaGpuOnTheHighRateScenarios) {
  for (const char* k : {"S5", "S6"}) {
    const ShareProblem problem = testing::Scenario(k);
    ShareOptions o;
    o.algo = "parvagpu";
    const int parva = PlanShare(problem, o)->metrics.gpus;
    o.algo = "hexplan";
    o.verify_seeds = 0;  // the search under the latency budget alone, as parvagpu plans
    const int ours = PlanShare(problem, o)->metrics.gpus;
    EXPECT_LT(ours, parva) << k;
  }
}

// A plan that misses is reported as such: ParvaGPU's S5 plan, which no headroom changes (the
// plan function ignores it), ends the repair rounds unverified, with the misses named.
TEST(HexplanTest, VerificationReportsAPlanThatMisses) {
  const ShareProblem problem = testing::Scenario("S5");
  ShareOptions o;
  o.algo = "parvagpu";
  o.verify_seeds = 1;
  o.verify_seconds = 10;
  auto parva = PlanShare(problem, o);
  ASSERT_TRUE(parva.ok());
  auto plan = PlanMeetingSlos(problem, o, [&](const ShareProblem&) { return *parva; });
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->slo.checked);
  EXPECT_FALSE(plan->slo.verified);
  EXPECT_EQ(plan->slo.how.rfind("judge:", 0), 0u) << plan->slo.how;
  ASSERT_EQ(plan->slo.meets_slo.size(), problem.services.size());
  EXPECT_TRUE(std::count(plan->slo.meets_slo.begin(), plan->slo.meets_slo.end(), false) > 0);
  EXPECT_LT(plan->slo.slo_compliance, 1.0);
  // The judge alone agrees.
  ServingSimOptions sim;
  sim.duration_s = 10;
  auto judged = SimulateServing(problem, *parva, sim);
  ASSERT_TRUE(judged.ok());
  EXPECT_FALSE(judged->verified);
}

TEST(HexplanTest, SloFactorChangesTheSegments) {
  const ShareProblem problem = testing::Scenario("S3");
  ShareOptions o;
  o.algo = "hexplan";
  o.verify_seeds = 0;
  o.slo_factor = 1.0;
  auto loose = PlanShare(problem, o);
  ASSERT_TRUE(loose.ok());
  EXPECT_TRUE(PlanViolations(problem, o, *loose).empty());
  o.slo_factor = 0.5;
  auto tight = PlanShare(problem, o);
  EXPECT_LE(loose->metrics.gpcs, tight->metrics.gpcs);
  o.slo_factor = 0;
  EXPECT_FALSE(PlanShare(problem, o).ok());
  o.slo_factor = 0.5;
  o.algo = "nope";
  EXPECT_FALSE(PlanShare(problem, o).ok());
}

TEST(HexplanTest, WorksOnEveryGpuModel) {
  for (const auto& gpu : GpuModelNames()) {
    const ShareProblem problem = testing::Scenario("S2", gpu);
    ShareOptions o;
    o.algo = "hexplan";
    o.verify_seeds = 0;  // the search alone: the SLO check is the same on every GPU (and costly)
    auto plan = PlanShare(problem, o);
    ASSERT_TRUE(plan.ok());
    EXPECT_TRUE(PlanViolations(problem, o, *plan).empty()) << gpu;
  }
}

}  // namespace
}  // namespace hx::share
