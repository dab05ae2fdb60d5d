#include "hexplan/share/serving_sim.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <queue>
#include <random>

#include "hexplan/share/caps.h"

namespace hx::share {

Status ServingSimOptions::Validate() const {
  if (!(duration_s > 0 && duration_s <= kMaxSimSeconds)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "--sim-seconds: expected a duration in (0, %g], got %g",
                  kMaxSimSeconds, duration_s);
    return InvalidArgument(buf);
  }
  if (seeds < 1 || seeds > kMaxSimSeeds) {
    return InvalidArgument("--seeds: expected 1.." + std::to_string(kMaxSimSeeds) + ", got " +
                           std::to_string(seeds));
  }
  if (arrivals != "poisson" && arrivals != "bursty") {
    return InvalidArgument("--arrivals: expected poisson or bursty, found '" + arrivals + "'");
  }
  if (!(burst_on_fraction > 0 && burst_on_fraction < 1) || !(burst_factor >= 1) ||
      burst_factor * burst_on_fraction > 1 || !(burst_period_s > 0)) {
    return InvalidArgument(
        "bursty arrivals: expected 0 < on fraction < 1, factor >= 1, factor x on fraction <= 1, "
        "period > 0");
  }
  return Status::Ok();
}

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const size_t k =
      std::min(v.size() - 1, static_cast<size_t>(std::ceil(q * v.size())) - (q > 0 ? 1 : 0));
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

std::vector<double> GenerateArrivals(double rate, const ServingSimOptions& options,
                                     std::mt19937_64* rng) {
  const bool poisson = options.arrivals == "poisson";
  auto rate_at = [&](double t) {
    if (poisson) return rate;
    const double phase = std::fmod(t, options.burst_period_s) / options.burst_period_s;
    const double off = rate * (1 - options.burst_factor * options.burst_on_fraction) /
                       (1 - options.burst_on_fraction);
    return phase < options.burst_on_fraction ? rate * options.burst_factor : off;
  };
  const double peak = poisson ? rate : rate * options.burst_factor;
  std::exponential_distribution<double> gap(peak);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> arrivals;
  arrivals.reserve(static_cast<size_t>(rate * options.duration_s * 1.05) + 16);
  for (double t = gap(*rng); t < options.duration_s; t += gap(*rng)) {
    if (poisson || u(*rng) * peak <= rate_at(t)) arrivals.push_back(t);  // thinning
  }
  return arrivals;
}

std::vector<double> ServeSegment(const Triplet& t, const std::vector<double>& arrivals) {
  std::vector<double> lat;
  lat.reserve(arrivals.size());
  std::priority_queue<double, std::vector<double>, std::greater<double>> free;
  for (int p = 0; p < t.processes; ++p) free.push(0.0);
  size_t idx = 0;
  while (idx < arrivals.size()) {
    const double tf = free.top();
    free.pop();
    const double start = std::max(tf, arrivals[idx]);
    const double done = start + t.latency_ms / 1e3;
    int taken = 0;
    while (idx < arrivals.size() && arrivals[idx] <= start && taken < t.batch) {
      lat.push_back((done - arrivals[idx]) * 1e3);
      ++idx;
      ++taken;
    }
    free.push(done);
  }
  return lat;
}

namespace {

// One seed's latencies of service `i` (every request of it, in no particular order).
std::vector<double> ServiceLatencies(const Service& svc,
                                     const std::vector<const PlacedSegment*>& segs,
                                     const ServingSimOptions& options, std::mt19937_64* rng) {
  const std::vector<double> arrivals = GenerateArrivals(svc.rate, options, rng);
  std::vector<double> weights;
  for (const auto* s : segs) weights.push_back(s->RouteWeight());
  std::discrete_distribution<size_t> route(weights.begin(), weights.end());
  std::vector<std::vector<double>> per_seg(segs.size());
  for (double a : arrivals) per_seg[route(*rng)].push_back(a);
  std::vector<double> lat;
  lat.reserve(arrivals.size());
  for (size_t k = 0; k < segs.size(); ++k) {
    const auto l = ServeSegment(segs[k]->triplet, per_seg[k]);
    lat.insert(lat.end(), l.begin(), l.end());
  }
  return lat;
}

// Folds one seed's latencies into `st` (worst-seed percentiles); returns the requests met.
int64_t AddSeed(std::vector<double>& lat, ServiceServingStats* st) {
  int64_t met = 0;
  for (double l : lat) met += l <= st->slo_ms ? 1 : 0;
  st->requests += static_cast<int64_t>(lat.size());
  st->p50_ms = std::max(st->p50_ms, Percentile(lat, 0.50));
  st->p95_ms = std::max(st->p95_ms, Percentile(lat, 0.95));
  st->p99_ms = std::max(st->p99_ms, Percentile(lat, 0.99));
  if (!lat.empty()) st->max_ms = std::max(st->max_ms, *std::max_element(lat.begin(), lat.end()));
  return met;
}

}  // namespace

StatusOr<ServingSimResult> SimulateServing(const ShareProblem& problem, const SharePlan& plan,
                                           const ServingSimOptions& options) {
  HX_RETURN_IF_ERROR(CheckSimulationCaps(problem, options));
  const size_t n = problem.services.size();
  std::vector<std::vector<const PlacedSegment*>> segs(n);
  for (const auto& g : plan.gpus) {
    for (const auto& s : g.segments) segs[s.service].push_back(&s);
  }
  ServingSimResult result;
  result.services.resize(n);
  std::vector<int64_t> met(n, 0);
  for (size_t i = 0; i < n; ++i) {
    result.services[i].service = problem.services[i].name;
    result.services[i].slo_ms = problem.services[i].slo_ms;
  }
  for (int k = 0; k < options.seeds; ++k) {
    std::mt19937_64 rng(options.seed + static_cast<uint64_t>(k));
    for (size_t i = 0; i < n; ++i) {
      if (segs[i].empty()) continue;  // unserved: every request misses
      std::vector<double> lat = ServiceLatencies(problem.services[i], segs[i], options, &rng);
      met[i] += AddSeed(lat, &result.services[i]);
    }
  }
  int64_t total = 0, met_total = 0;
  result.verified = true;
  for (size_t i = 0; i < n; ++i) {
    ServiceServingStats& st = result.services[i];
    st.slo_compliance = segs[i].empty()   ? 0.0
                        : st.requests > 0 ? static_cast<double>(met[i]) / st.requests
                                          : 1.0;
    st.meets_slo = !segs[i].empty() && st.p99_ms <= st.slo_ms;
    result.verified = result.verified && st.meets_slo;
    total += st.requests;
    met_total += met[i];
  }
  result.slo_compliance = total > 0 ? static_cast<double>(met_total) / total : 1.0;
  return result;
}

void RecordSimulation(const ServingSimResult& result, const ServingSimOptions& options,
                      SloCheck* check) {
  check->checked = true;
  check->verified = result.verified;
  check->slo_compliance = result.slo_compliance;
  check->p99_ms.clear();
  check->compliance.clear();
  check->meets_slo.clear();
  for (const auto& s : result.services) {
    check->p99_ms.push_back(s.p99_ms);
    check->compliance.push_back(s.slo_compliance);
    check->meets_slo.push_back(s.meets_slo);
  }
  char how[128];
  std::snprintf(how, sizeof how, "simulation: %s, %g s x seeds %llu-%llu", options.arrivals.c_str(),
                options.duration_s, static_cast<unsigned long long>(options.seed),
                static_cast<unsigned long long>(options.seed + options.seeds - 1));
  check->how = how;
}

}  // namespace hx::share
