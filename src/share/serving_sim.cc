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

namespace {

// The index Percentile reads: the q-quantile of n values is the k-th smallest.
size_t ServingQuantileIndex(size_t n, double q) {
  return std::min(n - 1, static_cast<size_t>(std::ceil(q * n)) - (q > 0 ? 1 : 0));
}

// Serves `arrivals` at one segment (ServeSegment's model) and calls on_request(latency_ms) for
// each request in turn until it returns false. The processes' free times are few (at most the
// profiled process count), so the earliest is found by a scan.
template <class OnRequest>
void ServeEachRequest(const Triplet& t, const std::vector<double>& arrivals,
                      OnRequest&& on_request) {
  std::vector<double> free(static_cast<size_t>(std::max(t.processes, 1)), 0.0);
  size_t idx = 0;
  while (idx < arrivals.size()) {
    const auto earliest = std::min_element(free.begin(), free.end());
    const double start = std::max(*earliest, arrivals[idx]);
    const double done = start + t.latency_ms / 1e3;
    int taken = 0;
    while (idx < arrivals.size() && arrivals[idx] <= start && taken < t.batch) {
      if (!on_request((done - arrivals[idx]) * 1e3)) return;
      ++idx;
      ++taken;
    }
    *earliest = done;
  }
}

}  // namespace

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = ServingQuantileIndex(v.size(), q);
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

std::vector<double> UnitPoissonArrivals::At(double rate, double duration_s) {
  const double bound = rate * duration_s;  // in unit time
  std::exponential_distribution<double> gap(1.0);
  while (unit_.empty() || unit_.back() < bound) {
    unit_.push_back((unit_.empty() ? 0.0 : unit_.back()) + gap(rng_));
  }
  const size_t n =
      static_cast<size_t>(std::lower_bound(unit_.begin(), unit_.end(), bound) - unit_.begin());
  std::vector<double> out(n);
  for (size_t k = 0; k < n; ++k) out[k] = unit_[k] / rate;
  return out;
}

std::vector<double> ServeSegment(const Triplet& t, const std::vector<double>& arrivals) {
  std::vector<double> lat;
  lat.reserve(arrivals.size());
  ServeEachRequest(t, arrivals, [&](double l) {
    lat.push_back(l);
    return true;
  });
  return lat;
}

bool QuantileWithin(const Triplet& t, const std::vector<double>& arrivals, double q,
                    double limit_ms) {
  if (arrivals.empty()) return true;
  // The k-th smallest latency is within the limit iff at most n - k - 1 requests are late.
  const size_t allowed_late = arrivals.size() - ServingQuantileIndex(arrivals.size(), q) - 1;
  size_t late = 0;
  ServeEachRequest(t, arrivals, [&](double l) {
    late += l > limit_ms ? 1 : 0;
    return late <= allowed_late;
  });
  return late <= allowed_late;
}

namespace {

// One seed's latencies of a service (every request of it, in no particular order). Routing each
// request of a Poisson (or on/off modulated Poisson) process to segment j independently with
// probability w_j / sum(w) splits it into independent processes of the same kind at rate x
// w_j / sum(w) (the splitting theorem), so each segment's arrivals are drawn directly at its
// share of the rate, one segment after another from the service's stream.
std::vector<double> ServiceLatencies(const Service& svc,
                                     const std::vector<const PlacedSegment*>& segs,
                                     const ServingSimOptions& options, std::mt19937_64* rng) {
  double total_weight = 0;
  for (const auto* s : segs) total_weight += s->RouteWeight();
  std::vector<double> lat;
  lat.reserve(static_cast<size_t>(svc.rate * options.duration_s * 1.05) + 16);
  for (const auto* s : segs) {
    const double rate = svc.rate * s->RouteWeight() / total_weight;
    ServeEachRequest(s->triplet, GenerateArrivals(rate, options, rng), [&](double l) {
      lat.push_back(l);
      return true;
    });
  }
  return lat;
}

// One seed's statistics of a service's latencies (reorders them). The percentiles are taken in
// increasing order, each from the part above the previous one.
ServiceSeedStats SeedStatsOf(std::vector<double>& lat, double slo_ms) {
  ServiceSeedStats st;
  st.requests = static_cast<int64_t>(lat.size());
  for (double l : lat) st.met += l <= slo_ms ? 1 : 0;
  if (lat.empty()) return st;
  size_t from = 0;
  double* out[] = {&st.p50_ms, &st.p95_ms, &st.p99_ms};
  const double qs[] = {0.50, 0.95, 0.99};
  for (int j = 0; j < 3; ++j) {
    const size_t k = ServingQuantileIndex(lat.size(), qs[j]);
    std::nth_element(lat.begin() + static_cast<std::ptrdiff_t>(from),
                     lat.begin() + static_cast<std::ptrdiff_t>(k), lat.end());
    *out[j] = lat[k];
    from = k;
  }
  st.max_ms = *std::max_element(lat.begin() + static_cast<std::ptrdiff_t>(from), lat.end());
  return st;
}

// The stream of service `i` in `seed`.
std::mt19937_64 ServiceStream(uint64_t seed, size_t i) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(i)};
  return std::mt19937_64(seq);
}

ServiceSeedStats SimulateServiceSeed(const ShareProblem& problem, size_t i,
                                     const std::vector<const PlacedSegment*>& segs,
                                     const ServingSimOptions& options, uint64_t seed,
                                     ServingSimCache* cache) {
  std::vector<double> key;
  if (cache != nullptr) {
    key = ServingSimCache::Key(problem, segs, i, seed, options);
    if (const ServiceSeedStats* hit = cache->Find(key)) return *hit;
  }
  std::mt19937_64 rng = ServiceStream(seed, i);
  std::vector<double> lat = ServiceLatencies(problem.services[i], segs, options, &rng);
  const ServiceSeedStats st = SeedStatsOf(lat, problem.services[i].slo_ms);
  if (cache != nullptr) cache->Add(std::move(key), st);
  return st;
}

// Folds one seed's results into `st` (worst-seed percentiles).
void AddSeed(const ServiceSeedStats& seed, ServiceServingStats* st) {
  st->requests += seed.requests;
  st->p50_ms = std::max(st->p50_ms, seed.p50_ms);
  st->p95_ms = std::max(st->p95_ms, seed.p95_ms);
  st->p99_ms = std::max(st->p99_ms, seed.p99_ms);
  st->max_ms = std::max(st->max_ms, seed.max_ms);
}

}  // namespace

std::vector<double> ServingSimCache::Key(const ShareProblem& problem,
                                         const std::vector<const PlacedSegment*>& segs, size_t i,
                                         uint64_t seed, const ServingSimOptions& options) {
  const Service& svc = problem.services[i];
  std::vector<double> key = {static_cast<double>(i),
                             svc.rate,
                             svc.slo_ms,
                             static_cast<double>(seed),
                             options.duration_s,
                             options.arrivals == "poisson" ? 0.0 : 1.0,
                             options.burst_factor,
                             options.burst_on_fraction,
                             options.burst_period_s};
  for (const PlacedSegment* s : segs) {
    const Triplet& t = s->triplet;
    key.insert(key.end(), {static_cast<double>(t.batch), static_cast<double>(t.processes),
                           t.latency_ms, s->RouteWeight()});
  }
  return key;
}

const ServiceSeedStats* ServingSimCache::Find(const std::vector<double>& key) const {
  auto it = stats_.find(key);
  return it == stats_.end() ? nullptr : &it->second;
}

void ServingSimCache::Add(std::vector<double> key, const ServiceSeedStats& stats) {
  stats_.emplace(std::move(key), stats);
}

StatusOr<ServingSimResult> SimulateServing(const ShareProblem& problem, const SharePlan& plan,
                                           const ServingSimOptions& options,
                                           ServingSimCache* cache) {
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
    if (segs[i].empty()) continue;  // unserved: every request misses
    for (int k = 0; k < options.seeds; ++k) {
      const ServiceSeedStats st = SimulateServiceSeed(
          problem, i, segs[i], options, options.seed + static_cast<uint64_t>(k), cache);
      AddSeed(st, &result.services[i]);
      met[i] += st.met;
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
