#pragma once
// hexplan's SLO verification and repair. A plan sized by capacities alone can still miss its SLOs
// when served, so the planner simulates what it planned and gives the services that miss more:
//  - check: every segment of a service receives its share of the service's Poisson arrivals
//    (rate x route weight / the service's total weight), so identical segments behave alike;
//    each distinct class (triplet and share) is simulated once, for `verify_seconds` and each
//    seed 1..verify_seeds; a service passes when every class keeps its p99 within
//    (1 - verify_margin) x SLO and its load (arrivals x batch latency / (batch x processes)) at
//    most verify_max_load;
//  - judge: a plan that passes is simulated whole (SimulateServing, every service and segment
//    together, the same seeds and seconds); its verdict is the plan's (`how` starts "judge:");
//  - repair: a service that misses has its segments sized for a higher rate (headroom x rate, by
//    2-10% a round, at most 1.6), then a tighter latency budget; the planner runs again, until the
//    judge passes the plan or the rounds run out (the plan is then reported as not verified);
//  - trim: each service's headroom is put back to 1 alone; a plan on fewer GPUs that the check
//    and the judge pass is kept.

#include <functional>

#include "hexplan/share/plan.h"
#include "hexplan/share/serving_sim.h"

namespace hx::share {

using PlanFn = std::function<StatusOr<SharePlan>(const ShareProblem& sized)>;

// Plans `problem` with `plan_fn` (which receives the problem with each service's rate multiplied
// by its headroom and SLO by its budget), checks, judges, repairs and trims the plan as above;
// fills plan.slo.
StatusOr<SharePlan> PlanMeetingSlos(const ShareProblem& problem, const ShareOptions& options,
                                    const PlanFn& plan_fn);

// The check alone: fills plan->slo from the per-class simulation (no repair).
void CheckSlosByClass(const ShareProblem& problem, const ShareOptions& options, SharePlan* plan);

// The judge alone: the serving simulation of the whole plan (Poisson, `verify_seconds` x seeds
// 1..verify_seeds) recorded in plan->slo (headroom and budgets kept); whether every service meets
// its SLO. `cache` (optional) keeps each service's results for plans that keep its segments.
StatusOr<bool> JudgePlan(const ShareProblem& problem, const ShareOptions& options, SharePlan* plan,
                         ServingSimCache* cache = nullptr);

}  // namespace hx::share
