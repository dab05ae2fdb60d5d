#pragma once
// Verified capacity: the arrival rate a segment can take while its p99 stays within a latency
// target in the serving simulation's segment model (serving_sim.h). A segment's profiled
// throughput is what it completes when saturated; under Poisson arrivals a segment run at that
// rate queues without bound, and how much below it the p99 holds depends on the segment (a large
// segment pools its arrivals over more processes and keeps ~95% of its throughput; a 1g with one
// process 60-80%). hexplan plans with these capacities in place of the throughputs, so it chooses
// per instance size the point (batch, processes) that serves the most within the SLO and covers
// each service's rate with segments that keep it, and routes each service's requests to its
// segments in proportion to them (PlacedSegment::route_weight).

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "hexplan/share/plan.h"
#include "hexplan/share/serving_sim.h"

namespace hx::share {

// Estimates, cached by (point, target): a bisection over the arrival rate in [hi / 2, hi] (hi: the
// throughput, at most `max_load` x the point's batch capacity) with a short simulation (2 seeds x
// 5,000 requests), less 2%; points below hi / 2 are not used. Per size only the points within
// 90% of the size's best throughput are simulated. The planner's
// check (slo_repair.h) then simulates the plan as the judge does.
class VerifiedCapacity {
 public:
  explicit VerifiedCapacity(double max_load) : max_load_(max_load) {}

  // Per instance size, the point with batch latency below `limit_ms` and at most `max_processes`
  // processes (0: any) that keeps the most arrivals within `target_ms`, with its verified capacity
  // in `throughput` (invalid where no point qualifies).
  TripletArray Decide(const ServiceProfile& profile, double limit_ms, double target_ms,
                      int max_processes);

  // The verified capacity of one point of `model`'s profile (`t.throughput`: its profiled
  // throughput) against `target_ms`.
  double Of(const std::string& model, const Triplet& t, double target_ms);

 private:
  bool Keeps(const Triplet& t, double lambda, double target_ms);

  double max_load_;
  std::vector<UnitPoissonArrivals> streams_;  // the short simulation's seeds, shared by every probe
  std::map<std::tuple<std::string, int, int, int, double>, double> cache_;  // by model
};

}  // namespace hx::share
