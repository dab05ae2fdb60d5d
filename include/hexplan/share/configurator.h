#pragma once
// ParvaGPU's Segment Configurator (Algorithm 1): Optimal Triplet Decision and Demand Matching, and
// the segment covers the exact search explores.

#include <vector>

#include "hexplan/share/plan.h"

namespace hx::share {

// Optimal Triplet Decision: per instance size, the point of maximum throughput whose latency is
// strictly below `limit_ms`, with at most `max_processes` processes (0: any). Ties go to the lower
// latency.
TripletArray TripletDecision(const ServiceProfile& profile, double limit_ms, int max_processes);

// One segment of a service before placement.
struct Segment {
  int service = 0;
  Triplet triplet;
};

// Demand Matching: floor(rate / tp) optimal segments (maximum throughput per GPC) plus the smallest
// segment that covers what is left. Empty if no triplet is valid.
std::vector<Segment> DemandMatching(int service, double rate, const TripletArray& triplets);

// Demand Matching as the published implementation does it (github.com/MunQ-Lee/ParvaGPU_SC24,
// src/configurator.c): floor(rate / tp) optimal segments, one fewer when tp divides the rate, then
// always the smallest segment that covers the rest (the largest valid one when none covers it).
std::vector<Segment> DemandMatchingPublished(int service, double rate,
                                             const TripletArray& triplets);

// The triplets of every service under the options (SLO x slo_factor). Services no configuration can
// serve are all named in the error.
StatusOr<std::vector<TripletArray>> DecideTriplets(const ShareProblem& problem,
                                                   const ShareOptions& options, int max_processes);

// The minimal covers of `rate` with the segments of `triplets` (counts per size; removing any one
// segment would leave the rate uncovered), sorted by GPCs then segment count.
std::vector<SizeCounts> MinimalCovers(double rate, const TripletArray& triplets);

}  // namespace hx::share
