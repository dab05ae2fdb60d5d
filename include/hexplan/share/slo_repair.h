#pragma once
// hexplan's SLO verification and repair. A plan sized by the latency budget alone (batch latency
// under slo-factor x SLO, capacity >= rate) can still miss its SLOs when served: a segment run
// close to its capacity queues. So the planner simulates what it planned, the way the serving
// simulation judges it (serving_sim.h), and gives the services that miss more capacity:
//  - every segment of a service receives its share of the service's Poisson arrivals
//    (rate x throughput / capacity), so identical segments behave alike; each distinct segment
//    (triplet and share) is simulated once, for `verify_seconds` and each seed 1..verify_seeds;
//    a service passes when every one of its segment classes keeps its p99 within
//    (1 - verify_margin) x SLO (the p99 of a mix of classes is at most the worst class's p99) and
//    its load (arrivals x batch latency / (batch x processes)) at most 0.91, beyond which the p99
//    varies too much between runs to be vouched for;
//  - a service that misses has its segments sized for a higher rate (headroom x rate, by 3-10%
//    a round) when its worst class is loaded (>= 80% of its batch capacity), or else, when the
//    batch latency itself is too long, a tighter latency budget (SLO x 0.9 a round, to half); the
//    planner runs again, until every service passes or the rounds run out (the plan is then
//    reported as not verified).

#include <functional>

#include "hexplan/share/plan.h"

namespace hx::share {

using PlanFn = std::function<StatusOr<SharePlan>(const ShareProblem& sized)>;

// Plans `problem` with `plan_fn` (which receives the problem with each service's rate multiplied
// by its headroom), checks the plan as above and repairs it; fills plan.slo.
StatusOr<SharePlan> PlanMeetingSlos(const ShareProblem& problem, const ShareOptions& options,
                                    const PlanFn& plan_fn);

// The check alone: fills plan->slo from the per-class simulation (no repair).
void CheckSlosByClass(const ShareProblem& problem, const ShareOptions& options, SharePlan* plan);

}  // namespace hx::share
