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

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const size_t k =
      std::min(v.size() - 1, static_cast<size_t>(std::ceil(q * v.size())) - (q > 0 ? 1 : 0));
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

}  // namespace

StatusOr<ServingSimResult> SimulateServing(const ShareProblem& problem, const SharePlan& plan,
                                           const ServingSimOptions& options) {
  HX_RETURN_IF_ERROR(CheckSimulationCaps(problem, options));
  std::mt19937_64 rng(options.seed);
  const size_t n = problem.services.size();
  std::vector<std::vector<const PlacedSegment*>> segs(n);
  for (const auto& g : plan.gpus) {
    for (const auto& s : g.segments) segs[s.service].push_back(&s);
  }
  ServingSimResult result;
  int64_t total = 0, met_total = 0;
  for (size_t i = 0; i < n; ++i) {
    const Service& svc = problem.services[i];
    ServiceServingStats st;
    st.service = svc.name;
    st.slo_ms = svc.slo_ms;
    if (segs[i].empty()) {  // unserved: every request misses
      st.slo_compliance = 0;
      result.services.push_back(st);
      continue;
    }
    // Arrivals.
    std::vector<double> arrivals;
    auto rate_at = [&](double t) {
      if (options.arrivals == "poisson") return svc.rate;
      const double phase = std::fmod(t, options.burst_period_s) / options.burst_period_s;
      const double on = svc.rate * options.burst_factor;
      const double off = svc.rate * (1 - options.burst_factor * options.burst_on_fraction) /
                         (1 - options.burst_on_fraction);
      return phase < options.burst_on_fraction ? on : off;
    };
    const double peak = options.arrivals == "poisson" ? svc.rate : svc.rate * options.burst_factor;
    std::exponential_distribution<double> gap(peak);
    std::uniform_real_distribution<double> u(0, 1);
    for (double t = gap(rng); t < options.duration_s; t += gap(rng)) {
      if (u(rng) * peak <= rate_at(t)) arrivals.push_back(t);  // thinning
    }
    // Routing by throughput.
    std::vector<double> weights;
    for (const auto* s : segs[i]) weights.push_back(s->triplet.throughput);
    std::discrete_distribution<size_t> route(weights.begin(), weights.end());
    std::vector<std::vector<double>> per_seg(segs[i].size());
    for (double a : arrivals) per_seg[route(rng)].push_back(a);
    std::vector<double> lat;
    lat.reserve(arrivals.size());
    for (size_t k = 0; k < segs[i].size(); ++k) {
      const Triplet& t = segs[i][k]->triplet;
      const auto& arr = per_seg[k];
      std::priority_queue<double, std::vector<double>, std::greater<double>> free;
      for (int p = 0; p < t.processes; ++p) free.push(0.0);
      size_t idx = 0;
      while (idx < arr.size()) {
        const double tf = free.top();
        free.pop();
        const double start = std::max(tf, arr[idx]);
        const double done = start + t.latency_ms / 1e3;
        int taken = 0;
        while (idx < arr.size() && arr[idx] <= start && taken < t.batch) {
          lat.push_back((done - arr[idx]) * 1e3);
          ++idx;
          ++taken;
        }
        free.push(done);
      }
    }
    st.requests = static_cast<int64_t>(lat.size());
    int64_t met = 0;
    for (double l : lat) met += l <= svc.slo_ms ? 1 : 0;
    st.slo_compliance = lat.empty() ? 1.0 : static_cast<double>(met) / lat.size();
    st.p50_ms = Percentile(lat, 0.50);
    st.p95_ms = Percentile(lat, 0.95);
    st.p99_ms = Percentile(lat, 0.99);
    st.max_ms = lat.empty() ? 0 : *std::max_element(lat.begin(), lat.end());
    total += st.requests;
    met_total += met;
    result.services.push_back(st);
  }
  result.slo_compliance = total > 0 ? static_cast<double>(met_total) / total : 1.0;
  return result;
}

}  // namespace hx::share
