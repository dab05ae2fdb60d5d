#pragma once
// A serving simulation of a sharing plan, the judge of its SLOs: per service, Poisson or bursty
// (on/off modulated Poisson) arrivals at the service's rate, each request routed to one of the
// service's segments with probability proportional to the segment's profiled throughput; in a
// segment, each of its MPS processes takes, whenever it is free, every waiting request up to its
// batch size and finishes them after the profiled batch latency (the full batch's,
// conservatively). A request's latency is its queueing and batching wait plus its batch's
// execution time. A service meets its SLO when its p99 latency is within its SLO latency, in
// every seed simulated.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "hexplan/share/plan.h"

namespace hx::share {

struct ServingSimOptions {
  double duration_s = 60;
  std::string arrivals = "poisson";  // or "bursty"
  double burst_factor = 3;           // bursty: rate multiplier while on
  double burst_on_fraction = 0.2;    // bursty: share of each period that is on
  double burst_period_s = 1;
  uint64_t seed = 1;
  int seeds = 1;  // runs seed, seed + 1, ..., seed + seeds - 1
  Status Validate() const;
};

struct ServiceServingStats {
  std::string service;
  int64_t requests = 0;  // over all seeds
  double slo_ms = 0;
  double slo_compliance = 0;  // share of requests finished within the SLO, over all seeds
  // Percentiles of the worst seed (the largest value over the seeds), and the maximum.
  double p50_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0;
  bool meets_slo = false;  // p99_ms <= slo_ms (every seed)
};

struct ServingSimResult {
  std::vector<ServiceServingStats> services;
  double slo_compliance = 0;  // over all requests
  bool verified = false;      // every service meets its SLO
};

StatusOr<ServingSimResult> SimulateServing(const ShareProblem& problem, const SharePlan& plan,
                                           const ServingSimOptions& options);

// The simulation's verdict as a plan's SloCheck (keeping `headroom`, which the planner set).
void RecordSimulation(const ServingSimResult& result, const ServingSimOptions& options,
                      SloCheck* check);

// The arrival times in [0, duration_s) of one service at `rate` req/s under `options`' arrival
// process (thinning for bursty arrivals).
std::vector<double> GenerateArrivals(double rate, const ServingSimOptions& options,
                                     std::mt19937_64* rng);

// The latencies (ms) of the requests arriving at `arrivals` (sorted, seconds) at one segment of
// `t.processes` MPS processes with batch `t.batch` and batch latency `t.latency_ms`.
std::vector<double> ServeSegment(const Triplet& t, const std::vector<double>& arrivals);

// The q-quantile (0 < q <= 1) of `values` (reorders them); 0 when empty.
double Percentile(std::vector<double>& values, double q);

}  // namespace hx::share
