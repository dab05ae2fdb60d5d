#include "hexplan/share/reconfigure.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <tuple>

#include "hexplan/share/allocator.h"
#include "hexplan/share/caps.h"
#include "hexplan/share/configurator.h"
#include "hexplan/share/slo_repair.h"

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
// for `target` req/s. Returns the capacity left.
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
        cap += segs[k].triplet.throughput;
      }
    }
  }
  // Largest first; from the last GPU first, so the lower GPUs stay as they are.
  std::stable_sort(mine.begin(), mine.end(), [&](const auto& a, const auto& b) {
    const auto& sa = (*gpus)[a.first].segments[a.second];
    const auto& sb = (*gpus)[b.first].segments[b.second];
    if (sa.triplet.throughput != sb.triplet.throughput)
      return sa.triplet.throughput > sb.triplet.throughput;
    return a.first > b.first;
  });
  std::vector<std::pair<int, size_t>> drop;
  for (const auto& m : mine) {
    const double tp = (*gpus)[m.first].segments[m.second].triplet.throughput;
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
  const double limit = svc.slo_ms * options.slo_factor;
  const TripletArray t = TripletDecision(r.problem.profiles[sid], limit, max_procs);
  if (std::none_of(t.begin(), t.end(), [](const Triplet& x) { return x.valid(); })) {
    return InvalidArgument("--change: service '" + svc.name +
                           "': no profiled configuration meets the new SLO share of " +
                           std::to_string(limit) + " ms");
  }
  // The capacity the service is sized for: its rate times the headroom the planner verified.
  const double headroom =
      static_cast<size_t>(sid) < plan.slo.headroom.size() ? plan.slo.headroom[sid] : 1.0;
  r.plan = plan;
  r.plan.algo = plan.algo + "+reconfigured";
  r.plan.slo = SloCheck{};
  // Keep the service's segments that still meet the SLO share and are needed; add the missing
  // capacity as new segments in the free space (first fit, preferred slots, new GPUs last).
  double capacity = TrimSegments(sid, limit, svc.rate * headroom, &r.plan.gpus);
  auto add = [&](double target) {
    if (target - capacity <= 1e-9) return;
    std::vector<Segment> segments = DemandMatching(sid, target - capacity, t);
    for (const auto& seg : segments) capacity += seg.triplet.throughput;
    AllocateSegments(problem.gpu, segments, &r.plan.gpus);
  };
  add(svc.rate * headroom);
  // A plan its planner checked is checked again; the changed service gets more capacity (5% of
  // its rate at a time, other services untouched) until it passes.
  const bool check = plan.slo.checked && options.verify_seeds > 0;
  for (int round = 0; check; ++round) {
    CheckSlosByClass(r.problem, options, &r.plan);
    if (r.plan.slo.meets_slo[sid] || round == kMaxChangeRounds) break;
    add(capacity + 0.05 * svc.rate);
  }
  ListChanges(plan, &r);
  // Released GPUs are dropped from the map only at the end, so the numbers of the others hold.
  while (!r.plan.gpus.empty() && r.plan.gpus.back().segments.empty()) r.plan.gpus.pop_back();
  ComputeMetrics(r.problem, &r.plan);
  return r;
}

}  // namespace hx::share
