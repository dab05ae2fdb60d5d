#include "hexplan/share/reconfigure.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <tuple>

#include "hexplan/share/allocator.h"
#include "hexplan/share/caps.h"
#include "hexplan/share/configurator.h"
#include "hexplan/share/slo_repair.h"
#include "hexplan/share/verified_capacity.h"

namespace hx::share {

StatusOr<ServiceChange> ParseServiceChange(const std::string& text) {
  ServiceChange c;
  const size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgument("--change: expected NAME:rate=R,slo=S, found '" + text + "'");
  }
  c.service = text.substr(0, colon);
  std::stringstream ss(text.substr(colon + 1));
  std::string kv;
  while (std::getline(ss, kv, ',')) {
    const size_t eq = kv.find('=');
    char* end = nullptr;
    const std::string key = eq == std::string::npos ? kv : kv.substr(0, eq);
    const std::string val = eq == std::string::npos ? "" : kv.substr(eq + 1);
    const double v = std::strtod(val.c_str(), &end);
    if (val.empty() || end != val.c_str() + val.size() || !(v > 0)) {
      return InvalidArgument("--change: '" + kv + "': expected rate=R or slo=S with a value > 0");
    }
    if (key == "rate" && v > kMaxServiceRate) {
      return InvalidArgument("--change: rate=" + val + ": expected a rate in (0, " +
                             std::to_string(static_cast<int64_t>(kMaxServiceRate)) + "] req/s");
    } else if (key == "rate") {
      c.rate = v;
    } else if (key == "slo")
      c.slo_ms = v;
    else
      return InvalidArgument("--change: unknown key '" + key + "' (expected rate or slo)");
  }
  if (c.rate <= 0 && c.slo_ms <= 0) return InvalidArgument("--change: nothing to change");
  return c;
}

StatusOr<int> FindServiceById(const ShareProblem& problem, const std::string& id) {
  std::vector<int> same_model;
  std::string ids;
  for (size_t i = 0; i < problem.services.size(); ++i) {
    const Service& s = problem.services[i];
    if (s.name == id) return static_cast<int>(i);
    if (s.Model() == id) same_model.push_back(static_cast<int>(i));
    ids += (ids.empty() ? "" : ", ") + s.name;
  }
  if (same_model.size() == 1) return same_model.front();
  if (same_model.size() > 1) {
    std::string list;
    for (int i : same_model) list += (list.empty() ? "" : ", ") + problem.services[i].name;
    return InvalidArgument("--change: '" + id +
                           "' is ambiguous: " + std::to_string(same_model.size()) +
                           " services run that model (" + list + "); name one by its id");
  }
  return NotFound("--change: no service '" + id + "' in the scenario (services: " + ids + ")");
}

namespace {

// Rounds of added capacity for a changed service that misses hexplan's SLO check.
constexpr int kMaxChangeRounds = 10;

// Removes `sid`'s segments that no longer meet `limit_ms`, then, largest first, those not needed
// for `target` req/s. A segment's capacity is its routing weight (hexplan: its verified capacity;
// otherwise its profiled throughput). Returns the capacity left.
double TrimSegments(int sid, double limit_ms, double target, std::vector<GpuAssignment>* gpus) {
  double cap = 0;
  std::vector<std::pair<int, size_t>> mine;  // (gpu, index)
  for (size_t g = 0; g < gpus->size(); ++g) {
    auto& segs = (*gpus)[g].segments;
    std::erase_if(segs, [&](const PlacedSegment& s) {
      return s.service == sid && !(s.triplet.latency_ms < limit_ms);
    });
    for (size_t k = 0; k < segs.size(); ++k) {
      if (segs[k].service == sid) {
        mine.push_back({static_cast<int>(g), k});
        cap += segs[k].RouteWeight();
      }
    }
  }
  // Largest first; from the last GPU first, so the lower GPUs stay as they are.
  std::stable_sort(mine.begin(), mine.end(), [&](const auto& a, const auto& b) {
    const auto& sa = (*gpus)[a.first].segments[a.second];
    const auto& sb = (*gpus)[b.first].segments[b.second];
    if (sa.RouteWeight() != sb.RouteWeight()) return sa.RouteWeight() > sb.RouteWeight();
    return a.first > b.first;
  });
  std::vector<std::pair<int, size_t>> drop;
  for (const auto& m : mine) {
    const double tp = (*gpus)[m.first].segments[m.second].RouteWeight();
    if (cap - tp >= target - 1e-9) {
      cap -= tp;
      drop.push_back(m);
    }
  }
  std::sort(drop.rbegin(), drop.rend());  // erase from the back of each GPU
  for (const auto& [g, k] : drop) {
    auto& segs = (*gpus)[g].segments;
    segs.erase(segs.begin() + static_cast<std::ptrdiff_t>(k));
  }
  return cap;
}

// The segments of a GPU as a comparable key.
std::vector<std::tuple<int, int, int, int, int>> Key(const GpuAssignment& a) {
  std::vector<std::tuple<int, int, int, int, int>> k;
  for (const auto& s : a.segments) {
    k.emplace_back(s.start, s.service, s.triplet.gpcs, s.triplet.batch, s.triplet.processes);
  }
  std::sort(k.begin(), k.end());
  return k;
}

void ListChanges(const SharePlan& before, ReconfigureResult* r) {
  for (size_t g = 0; g < r->plan.gpus.size(); ++g) {
    const int gi = static_cast<int>(g);
    if (g >= before.gpus.size()) {
      r->added.push_back(gi);
      r->touched.push_back(gi);
    } else if (Key(r->plan.gpus[g]) != Key(before.gpus[g])) {
      r->touched.push_back(gi);
    }
    if (r->plan.gpus[g].segments.empty()) r->released.push_back(gi);
  }
}

// Whether a plan routes by verified capacity (hexplan's plans: segments carry route weights).
bool RoutesByCapacity(const SharePlan& plan) {
  for (const auto& g : plan.gpus) {
    for (const auto& s : g.segments) {
      if (s.route_weight > 0) return true;
    }
  }
  return false;
}

// The changed service's segments: kept, trimmed and added consistently with how the plan routes.
// In a capacity-routed plan every segment of the service, kept or new, routes by its verified
// capacity against the new SLO target (a kept segment's old weight was verified against the old
// one), new segments are sized by those capacities and carry their profiled throughput again.
class ChangedService {
 public:
  ChangedService(const ShareProblem& problem, const SharePlan& plan, const ShareOptions& options,
                 int sid, int max_procs)
      : problem_(problem),
        sid_(sid),
        by_capacity_(RoutesByCapacity(plan)),
        capacity_(options.verify_max_load) {
    const Service& svc = problem.services[sid];
    // hexplan sized the service for its SLO x the budget its check needed (slo_repair.h).
    const double budget = by_capacity_ && static_cast<size_t>(sid) < plan.slo.budget.size()
                              ? plan.slo.budget[sid]
                              : 1.0;
    limit_ms_ = svc.slo_ms * budget * options.slo_factor;
    target_ms_ = svc.slo_ms * budget * (1 - options.verify_margin);
    const ServiceProfile& profile = problem.profiles[sid];
    triplets_ = by_capacity_ ? capacity_.Decide(profile, limit_ms_, target_ms_, max_procs)
                             : TripletDecision(profile, limit_ms_, max_procs);
  }
  bool serveable() const {
    return std::any_of(triplets_.begin(), triplets_.end(),
                       [](const Triplet& x) { return x.valid(); });
  }
  double limit_ms() const { return limit_ms_; }

  // Re-weighs the kept segments (capacity routing) and trims them to `target` req/s.
  void Keep(double target, std::vector<GpuAssignment>* gpus) {
    if (by_capacity_) {
      const std::string& model = problem_.profiles[sid_].model;
      for (auto& g : *gpus) {
        for (auto& s : g.segments) {
          if (s.service == sid_) s.route_weight = capacity_.Of(model, s.triplet, target_ms_);
        }
        // A segment that keeps nothing within the new target goes.
        std::erase_if(g.segments, [&](const PlacedSegment& s) {
          return s.service == sid_ && !(s.route_weight > 0);
        });
      }
    }
    capacity_now_ = TrimSegments(sid_, limit_ms_, target, gpus);
  }

  // Adds segments (Demand Matching into the free space) until the capacity reaches `target`.
  void Add(double target, std::vector<GpuAssignment>* gpus) {
    if (target - capacity_now_ <= 1e-9) return;
    std::vector<Segment> segments = DemandMatching(sid_, target - capacity_now_, triplets_);
    for (const auto& seg : segments) capacity_now_ += seg.triplet.throughput;
    AllocateSegments(problem_.gpu, segments, gpus);
    if (!by_capacity_) return;
    for (auto& g : *gpus) {
      for (auto& s : g.segments) {
        if (s.service != sid_ || s.route_weight > 0) continue;
        s.route_weight = s.triplet.throughput;  // the verified capacity it was sized with
        for (const auto& p : problem_.profiles[sid_].points) {
          if (p.gpcs == s.triplet.gpcs && p.batch == s.triplet.batch &&
              p.processes == s.triplet.processes) {
            s.triplet.throughput = p.throughput;
            break;
          }
        }
      }
    }
  }
  double capacity() const { return capacity_now_; }

 private:
  const ShareProblem& problem_;
  int sid_;
  bool by_capacity_;
  VerifiedCapacity capacity_;
  double limit_ms_ = 0, target_ms_ = 0;
  TripletArray triplets_{};
  double capacity_now_ = 0;
};

// A plan its planner checked is checked again: per class, then by the judge (the whole plan in
// the serving simulation). While the changed service misses, it gets 5% of its rate more capacity
// (other services untouched: each service's judge results depend only on its own segments, so
// they keep the verdict they had).
Status VerifyChange(const ShareOptions& options, int sid, ChangedService* changed,
                    ReconfigureResult* r) {
  const double rate = r->problem.services[sid].rate;
  ServingSimCache judged;
  for (int round = 0;; ++round) {
    CheckSlosByClass(r->problem, options, &r->plan);
    bool passed = r->plan.slo.meets_slo[sid];
    if (passed || round == kMaxChangeRounds) {
      HX_ASSIGN_OR_RETURN(const bool all, JudgePlan(r->problem, options, &r->plan, &judged));
      (void)all;
      passed = r->plan.slo.meets_slo[sid];
    }
    if (passed || round == kMaxChangeRounds) return Status::Ok();
    changed->Add(changed->capacity() + 0.05 * rate, &r->plan.gpus);
  }
}

}  // namespace

StatusOr<ReconfigureResult> Reconfigure(const ShareProblem& problem, const SharePlan& plan,
                                        const ShareOptions& options, const ServiceChange& change) {
  if (!plan.mig)
    return InvalidArgument("reconfiguration needs a MIG plan, not '" + plan.algo + "'");
  HX_ASSIGN_OR_RETURN(const int sid, FindServiceById(problem, change.service));
  ReconfigureResult r;
  r.problem = problem;
  Service& svc = r.problem.services[sid];
  if (change.rate > 0) svc.rate = change.rate;
  if (change.slo_ms > 0) svc.slo_ms = change.slo_ms;
  HX_RETURN_IF_ERROR(CheckProblemCaps(r.problem, options).WithContext("--change"));
  // The process rule of the algorithm that planned (parvagpu: at most 3, as published).
  int max_procs = options.max_processes;
  if (plan.algo == "parvagpu-single") max_procs = 1;
  if (max_procs == 0 && plan.algo.starts_with("parvagpu")) max_procs = 3;
  ChangedService changed(r.problem, plan, options, sid, max_procs);
  if (!changed.serveable()) {
    return InvalidArgument("--change: service '" + svc.name +
                           "': no profiled configuration meets the new SLO share of " +
                           std::to_string(changed.limit_ms()) + " ms");
  }
  // The capacity the service is sized for: its rate times the headroom the planner verified.
  const double headroom =
      static_cast<size_t>(sid) < plan.slo.headroom.size() ? plan.slo.headroom[sid] : 1.0;
  r.plan = plan;
  r.plan.algo = plan.algo + "+reconfigured";
  r.plan.slo = SloCheck{};
  r.plan.slo.headroom = plan.slo.headroom;
  r.plan.slo.budget = plan.slo.budget;
  // Keep the service's segments that still meet the SLO share and are needed; add the missing
  // capacity as new segments in the free space (first fit, preferred slots, new GPUs last).
  changed.Keep(svc.rate * headroom, &r.plan.gpus);
  changed.Add(svc.rate * headroom, &r.plan.gpus);
  if (plan.slo.checked && options.verify_seeds > 0) {
    HX_RETURN_IF_ERROR(VerifyChange(options, sid, &changed, &r));
  }
  ListChanges(plan, &r);
  // Released GPUs are dropped from the map only at the end, so the numbers of the others hold.
  while (!r.plan.gpus.empty() && r.plan.gpus.back().segments.empty()) r.plan.gpus.pop_back();
  ComputeMetrics(r.problem, &r.plan);
  return r;
}

}  // namespace hx::share
