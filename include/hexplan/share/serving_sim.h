#pragma once
// A serving simulation of a sharing plan, so its SLOs are verified, not assumed: per service,
// Poisson or bursty (on/off modulated Poisson) arrivals at the service's rate, each request routed
// to one of the service's segments with probability proportional to the segment's throughput; in a
// segment, each of its MPS processes takes, whenever it is free, every waiting request up to its
// batch size and finishes them after the profiled batch latency (the full batch's, conservatively).

#include <cstdint>
#include <string>
#include <vector>

#include "hexplan/share/plan.h"

namespace hx::share {

struct ServingSimOptions {
  double duration_s = 10;
  std::string arrivals = "poisson";  // or "bursty"
  double burst_factor = 3;           // bursty: rate multiplier while on
  double burst_on_fraction = 0.2;    // bursty: share of each period that is on
  double burst_period_s = 1;
  uint64_t seed = 1;
  Status Validate() const;
};

struct ServiceServingStats {
  std::string service;
  int64_t requests = 0;
  double slo_ms = 0;
  double slo_compliance = 0;  // share of requests finished within the SLO
  double p50_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0;
};

struct ServingSimResult {
  std::vector<ServiceServingStats> services;
  double slo_compliance = 0;  // over all requests
};

StatusOr<ServingSimResult> SimulateServing(const ShareProblem& problem, const SharePlan& plan,
                                           const ServingSimOptions& options);

}  // namespace hx::share
