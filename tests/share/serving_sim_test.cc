#include "hexplan/share/serving_sim.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "share/share_test_util.h"

namespace hx::share {
namespace {

// The shortcuts of the verification give the answers of the plain computation: the early-exit
// quantile test agrees with sorting every latency, and unit-rate arrivals scaled to a rate are the
// arrivals GenerateArrivals draws at that rate from the same seed (up to rounding).
TEST(ServingSimTest, ShortcutsAgreeWithThePlainComputation) {
  ServingSimOptions sim;
  sim.duration_s = 5;
  UnitPoissonArrivals unit(7);
  const Triplet t{3, 8, 2, 900, 20};
  for (double rate : {300.0, 600.0, 800.0, 900.0, 1000.0}) {
    std::mt19937_64 rng(7);
    const std::vector<double> direct = GenerateArrivals(rate, sim, &rng);
    const std::vector<double> scaled = unit.At(rate, sim.duration_s);
    ASSERT_NEAR(static_cast<double>(scaled.size()), static_cast<double>(direct.size()), 1) << rate;
    for (size_t k = 0; k < std::min(direct.size(), scaled.size()); ++k) {
      ASSERT_NEAR(scaled[k], direct[k], 1e-9) << rate << " " << k;
    }
    std::vector<double> lat = ServeSegment(t, scaled);
    const double p99 = Percentile(lat, 0.99);
    for (double limit : {p99 * 0.9, p99, p99 * 1.1}) {
      EXPECT_EQ(QuantileWithin(t, scaled, 0.99, limit), p99 <= limit) << rate << " " << limit;
    }
  }
  EXPECT_TRUE(QuantileWithin(t, {}, 0.99, 0));
}

// Each service draws from its own stream: its results depend only on its own segments, so a
// cached result is the one a fresh simulation gives, and a change to one service's segments
// leaves every other service's results as they were.
TEST(ServingSimTest, AServicesResultsDependOnlyOnItsOwnSegments) {
  const ShareProblem problem = testing::Scenario("S3");
  ShareOptions o;
  o.algo = "parvagpu";
  SharePlan plan = *PlanShare(problem, o);
  ServingSimOptions sim;
  sim.duration_s = 2;
  sim.seeds = 2;
  ServingSimCache cache;
  const ServingSimResult fresh = *SimulateServing(problem, plan, sim);
  const ServingSimResult first = *SimulateServing(problem, plan, sim, &cache);
  const ServingSimResult cached = *SimulateServing(problem, plan, sim, &cache);
  for (size_t i = 0; i < problem.services.size(); ++i) {
    EXPECT_EQ(first.services[i].requests, fresh.services[i].requests);
    EXPECT_EQ(cached.services[i].p99_ms, fresh.services[i].p99_ms);
    EXPECT_EQ(cached.services[i].slo_compliance, fresh.services[i].slo_compliance);
  }
  // Double one service's first segment's weight: no other service's results move.
  const int changed = plan.gpus[0].segments[0].service;
  plan.gpus[0].segments[0].route_weight = 2 * plan.gpus[0].segments[0].RouteWeight();
  const ServingSimResult after = *SimulateServing(problem, plan, sim, &cache);
  for (size_t i = 0; i < problem.services.size(); ++i) {
    if (static_cast<int>(i) == changed) continue;
    EXPECT_EQ(after.services[i].requests, fresh.services[i].requests) << i;
    EXPECT_EQ(after.services[i].p99_ms, fresh.services[i].p99_ms) << i;
  }
  // The changed service is simulated again (the cache does not return its old result).
  const ServingSimResult after_fresh = *SimulateServing(problem, plan, sim);
  EXPECT_EQ(after.services[changed].p99_ms, after_fresh.services[changed].p99_ms);
  EXPECT_EQ(after.services[changed].requests, after_fresh.services[changed].requests);
}

}  // namespace
}  // namespace hx::share
