#include "hexplan/share/slo_repair.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <tuple>

#include "hexplan/share/serving_sim.h"

namespace hx::share {
namespace {

// Rounds of added capacity before a plan is reported as not verified, and the most headroom a
// service is given.
constexpr int kMaxRepairRounds = 20;
constexpr double kMaxHeadroom = 1.6;
// Once a service's headroom is at kMaxHeadroom, its latency budget is tightened instead (by 10% a
// round, to at most half).
constexpr double kMinBudget = 0.5;
// The most arrivals per seed the check keeps generated for its classes (8 MB a seed).
constexpr double kMaxStoredArrivals = 1e6;

struct ClassResult {
  double p99_ms = 0;  // worst seed
  int64_t requests = 0;
  int64_t met = 0;
};

// One segment class: the model and SLO, the triplet and the arrival rate it receives.
using ClassKey = std::tuple<std::string, double, int, int, int, double, double>;

// Simulated segment classes, shared between rounds and between copies of a service (--scale).
class ClassCache {
 public:
  explicit ClassCache(const ShareOptions& options) : options_(options) {}

  const ClassResult& Get(const Service& svc, const Triplet& t, double lambda) {
    const ClassKey key{svc.Model(), svc.slo_ms, t.gpcs, t.batch, t.processes, t.latency_ms, lambda};
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, Simulate(svc.slo_ms, t, lambda)).first;
    return it->second;
  }

 private:
  // Seeds 1..verify_seeds; each seed's arrivals are generated once, at unit rate, and scaled to
  // each class's rate. A class with more arrivals than kMaxStoredArrivals draws them itself (the
  // same draws), so the stored streams stay small.
  ClassResult Simulate(double slo_ms, const Triplet& t, double lambda) {
    if (streams_.empty()) {
      for (int k = 0; k < options_.verify_seeds; ++k) {
        streams_.emplace_back(1 + static_cast<uint64_t>(k));
      }
    }
    ClassResult r;
    ServingSimOptions sim;
    sim.duration_s = options_.verify_seconds;
    for (size_t k = 0; k < streams_.size(); ++k) {
      std::mt19937_64 rng(1 + k);
      std::vector<double> lat = ServeSegment(t, lambda * sim.duration_s <= kMaxStoredArrivals
                                                    ? streams_[k].At(lambda, sim.duration_s)
                                                    : GenerateArrivals(lambda, sim, &rng));
      for (double l : lat) r.met += l <= slo_ms ? 1 : 0;
      r.requests += static_cast<int64_t>(lat.size());
      r.p99_ms = std::max(r.p99_ms, Percentile(lat, 0.99));
    }
    return r;
  }

  const ShareOptions& options_;
  std::map<ClassKey, ClassResult> cache_;
  std::vector<UnitPoissonArrivals> streams_;
};

// A segment's triplet with the share of requests routed to it.
struct ClassTriplet : Triplet {
  double route_weight = 0;
};

// Per service: its segments' triplets with their counts, keyed by (gpcs, batch, processes,
// route weight).
using Classes = std::map<std::tuple<int, int, int, double>, std::pair<ClassTriplet, int>>;

std::vector<Classes> ClassesOf(size_t services, const SharePlan& plan) {
  std::vector<Classes> out(services);
  for (const auto& g : plan.gpus) {
    for (const auto& s : g.segments) {
      const Triplet& t = s.triplet;
      auto& c = out[s.service][{t.gpcs, t.batch, t.processes, s.RouteWeight()}];
      static_cast<Triplet&>(c.first) = t;
      c.first.route_weight = s.RouteWeight();
      ++c.second;
    }
  }
  return out;
}

// Fills plan->slo.
void Check(const ShareProblem& problem, const ShareOptions& options, ClassCache* cache,
           SharePlan* plan) {
  const size_t n = problem.services.size();
  SloCheck& c = plan->slo;
  c.checked = true;
  c.verified = true;
  c.p99_ms.assign(n, 0.0);
  c.compliance.assign(n, 0.0);
  c.meets_slo.assign(n, false);
  c.load.assign(n, 0.0);
  const auto classes = ClassesOf(n, *plan);
  std::vector<double> weight(n, 0.0);  // per service, the sum of its segments' route weights
  for (const auto& g : plan->gpus) {
    for (const auto& s : g.segments) weight[s.service] += s.RouteWeight();
  }
  double met_rate = 0, rate = 0;
  for (size_t i = 0; i < n; ++i) {
    const Service& svc = problem.services[i];
    rate += svc.rate;
    if (classes[i].empty()) {  // unserved
      c.verified = false;
      continue;
    }
    double within = 0;    // requests/s within the SLO
    double max_load = 0;  // the busiest class's load
    for (const auto& [key, tc] : classes[i]) {
      const double lambda = svc.rate * tc.first.route_weight / weight[i];
      const Triplet& t = tc.first;
      max_load = std::max(max_load, lambda * t.latency_ms / (1e3 * t.batch * t.processes));
      const ClassResult& r = cache->Get(svc, tc.first, lambda);
      c.p99_ms[i] = std::max(c.p99_ms[i], r.p99_ms);
      within += tc.second * lambda * (r.requests > 0 ? static_cast<double>(r.met) / r.requests : 1);
    }
    c.compliance[i] = within / svc.rate;
    met_rate += within;
    c.load[i] = max_load;
    c.meets_slo[i] = c.p99_ms[i] <= (1 - options.verify_margin) * svc.slo_ms &&
                     max_load <= options.verify_max_load;
    c.verified = c.verified && c.meets_slo[i];
  }
  c.slo_compliance = rate > 0 ? met_rate / rate : 1;
  char how[160];
  std::snprintf(how, sizeof how,
                "planner: poisson, %g s x seeds 1-%d, per segment class, p99 <= %g x SLO",
                options.verify_seconds, options.verify_seeds, 1 - options.verify_margin);
  c.how = how;
}

// The headroom step for a service whose p99 is `p99` against `target`: 3% when close, up to 10%
// when far (a queue that grows without bound). Small steps: every step may cost GPUs.
double Step(double p99, double target) {
  const double ratio = target > 0 ? p99 / target : 2;
  return std::clamp(1 + 0.1 * (ratio - 1), 1.02, 1.10);
}

// Gives each service that misses in plan.slo more headroom or a tighter latency budget; false when
// nothing more can be tried.
bool RaiseMissing(const ShareProblem& problem, const ShareOptions& options, const SharePlan& plan,
                  std::vector<double>* headroom, std::vector<double>* budget) {
  bool raised = false;
  for (size_t i = 0; i < problem.services.size(); ++i) {
    if (plan.slo.meets_slo[i]) continue;
    const double target = (1 - options.verify_margin) * problem.services[i].slo_ms;
    double& h = (*headroom)[i];
    double& b = (*budget)[i];
    // The capacities were estimated with a shorter simulation, so a miss is most often a
    // segment run a little past what the full check allows: more headroom. Only where headroom
    // has run out is the latency budget tightened (faster segments).
    if (h < kMaxHeadroom) {
      h = std::min(kMaxHeadroom, h * Step(plan.slo.p99_ms[i], target));
      raised = true;
    } else if (b > kMinBudget) {
      b = std::max(kMinBudget, b * 0.9);
      raised = true;
    }
  }
  return raised;
}

}  // namespace

void CheckSlosByClass(const ShareProblem& problem, const ShareOptions& options, SharePlan* plan) {
  ClassCache cache(options);
  Check(problem, options, &cache, plan);
}

StatusOr<bool> JudgePlan(const ShareProblem& problem, const ShareOptions& options, SharePlan* plan,
                         ServingSimCache* cache) {
  ServingSimOptions sim;
  sim.duration_s = options.verify_seconds;
  sim.seed = 1;
  sim.seeds = options.verify_seeds;
  HX_ASSIGN_OR_RETURN(const ServingSimResult result, SimulateServing(problem, *plan, sim, cache));
  RecordSimulation(result, sim, &plan->slo);
  plan->slo.how = "judge: the whole plan in the serving simulation (" + plan->slo.how + ")";
  return result.verified;
}

namespace {

// Plans `problem` with each service's rate x its headroom and SLO x its budget.
StatusOr<SharePlan> PlanSized(const ShareProblem& problem, const PlanFn& plan_fn,
                              const std::vector<double>& headroom,
                              const std::vector<double>& budget) {
  ShareProblem sized = problem;
  for (size_t i = 0; i < problem.services.size(); ++i) {
    sized.services[i].rate *= headroom[i];
    sized.services[i].slo_ms *= budget[i];
  }
  HX_ASSIGN_OR_RETURN(SharePlan plan, plan_fn(sized));
  plan.slo.headroom = headroom;
  plan.slo.budget = budget;
  return plan;
}

// Fewer GPUs after a verified plan: the repair raises every service that misses at once, and a
// raise can cost a GPU that one service's part of it did not need. So each service with headroom
// has it lowered back, one at a time; a plan on fewer GPUs is kept when the check and the judge
// pass it.
StatusOr<SharePlan> TrimHeadroom(const ShareProblem& problem, const ShareOptions& options,
                                 const PlanFn& plan_fn, ClassCache* cache, ServingSimCache* judged,
                                 SharePlan best) {
  for (size_t i = 0; i < problem.services.size(); ++i) {
    std::vector<double> headroom = best.slo.headroom;
    if (headroom[i] <= 1) continue;
    headroom[i] = 1;
    HX_ASSIGN_OR_RETURN(SharePlan plan, PlanSized(problem, plan_fn, headroom, best.slo.budget));
    if (plan.gpus.size() >= best.gpus.size()) continue;
    Check(problem, options, cache, &plan);
    if (!plan.slo.verified) continue;
    plan.slo.headroom = headroom;
    plan.slo.budget = best.slo.budget;
    plan.slo.repair_rounds = best.slo.repair_rounds;
    HX_ASSIGN_OR_RETURN(const bool passed, JudgePlan(problem, options, &plan, judged));
    if (passed) best = std::move(plan);
  }
  return best;
}

}  // namespace

StatusOr<SharePlan> PlanMeetingSlos(const ShareProblem& problem, const ShareOptions& options,
                                    const PlanFn& plan_fn) {
  if (options.verify_seeds == 0) return plan_fn(problem);
  const size_t n = problem.services.size();
  std::vector<double> headroom(n, 1.0), budget(n, 1.0);
  ClassCache cache(options);
  ServingSimCache judged;  // the judge's per-service results, across rounds and the trim
  for (int round = 0;; ++round) {
    HX_ASSIGN_OR_RETURN(SharePlan plan, PlanSized(problem, plan_fn, headroom, budget));
    Check(problem, options, &cache, &plan);
    plan.slo.headroom = headroom;
    plan.slo.budget = budget;
    plan.slo.repair_rounds = round;
    // The per-class check screens a plan; the judge decides (and names what it finds missing).
    const bool screened = plan.slo.verified;
    const bool last = round == kMaxRepairRounds;
    if (screened || last) {
      HX_ASSIGN_OR_RETURN(const bool passed, JudgePlan(problem, options, &plan, &judged));
      if (passed) return TrimHeadroom(problem, options, plan_fn, &cache, &judged, std::move(plan));
      if (last) return plan;
    }
    if (!RaiseMissing(problem, options, plan, &headroom, &budget)) {
      if (!screened) HX_RETURN_IF_ERROR(JudgePlan(problem, options, &plan, &judged).status());
      return plan;  // nothing more to try
    }
  }
}

}  // namespace hx::share
