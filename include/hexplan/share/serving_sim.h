#pragma once
// A serving simulation of a sharing plan, the judge of its SLOs: per service, Poisson or bursty
// (on/off modulated Poisson) arrivals at the service's rate, each request routed to one of the
// service's segments with probability proportional to the segment's routing weight
// (PlacedSegment::RouteWeight; simulated as the equivalent independent per-segment arrivals at
// those shares of the rate, one random stream per service and seed); in a
// segment, each of its MPS processes takes, whenever it is free, every waiting request up to its
// batch size and finishes them after the profiled batch latency (the full batch's,
// conservatively). A request's latency is its queueing and batching wait plus its batch's
// execution time. A service meets its SLO when its p99 latency is within its SLO latency, in
// every seed simulated.

#include <cstdint>
#include <map>
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

// One service's results in one seed of the serving simulation.
struct ServiceSeedStats {
  int64_t requests = 0, met = 0;  // met: within the SLO
  double p50_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0;
};

// Each service draws its arrivals and routing from its own stream (seeded by the seed and the
// service's index), and services share no segment, so a service's results in a seed depend only
// on the service (rate, SLO) and its segments in plan order. The cache keeps them across calls
// with plans that keep some services' segments (the planner's repair rounds, --change).
class ServingSimCache {
 public:
  // The key of service `i` of `plan` in `seed` under `options`.
  static std::vector<double> Key(const ShareProblem& problem,
                                 const std::vector<const PlacedSegment*>& segs, size_t i,
                                 uint64_t seed, const ServingSimOptions& options);
  const ServiceSeedStats* Find(const std::vector<double>& key) const;
  void Add(std::vector<double> key, const ServiceSeedStats& stats);

 private:
  std::map<std::vector<double>, ServiceSeedStats> stats_;
};

// The serving simulation of every service of `plan` (`cache`, when given, is read and filled).
StatusOr<ServingSimResult> SimulateServing(const ShareProblem& problem, const SharePlan& plan,
                                           const ServingSimOptions& options,
                                           ServingSimCache* cache = nullptr);

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

// Whether the q-quantile of those latencies is within `limit_ms` (Percentile(ServeSegment(..), q)
// <= limit_ms), stopping as soon as too many requests are late to keep it.
bool QuantileWithin(const Triplet& t, const std::vector<double>& arrivals, double q,
                    double limit_ms);

// Unit-rate Poisson arrival times of one seed, generated once and grown on demand. Arrivals at
// `rate` are these divided by `rate`: the same draws GenerateArrivals makes at that rate from the
// same seed (up to rounding), so simulations of one segment at many rates (a bisection over the
// rate, segment classes) share one generation.
class UnitPoissonArrivals {
 public:
  explicit UnitPoissonArrivals(uint64_t seed) : rng_(seed) {}
  // Poisson arrivals in [0, duration_s) at `rate` req/s.
  std::vector<double> At(double rate, double duration_s);

 private:
  std::mt19937_64 rng_;
  std::vector<double> unit_;  // increasing; the last one is past every bound asked so far
};

// The q-quantile (0 < q <= 1) of `values` (reorders them); 0 when empty.
double Percentile(std::vector<double>& values, double q);

}  // namespace hx::share
