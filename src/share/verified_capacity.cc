#include "hexplan/share/verified_capacity.h"

#include <algorithm>

#include "hexplan/share/serving_sim.h"

namespace hx::share {
namespace {

constexpr int kCapacitySeeds = 2;
constexpr double kCapacityRequests = 5000;  // per seed
constexpr int kCapacitySteps = 6;           // bisection over [hi / 2, hi]: within 1% of hi
constexpr double kCapacitySafety = 0.98;
// Per size, only points within this share of the size's best throughput are simulated.
constexpr double kCapacityCandidates = 0.9;

}  // namespace

// Whether one segment of `t` at `lambda` req/s keeps its p99 within `target_ms` over the short
// simulation (kCapacityRequests arrivals per seed, every seed); a seed that fails ends the probe.
bool VerifiedCapacity::Keeps(const Triplet& t, double lambda, double target_ms) {
  if (streams_.empty()) {
    for (int k = 0; k < kCapacitySeeds; ++k) streams_.emplace_back(1 + static_cast<uint64_t>(k));
  }
  for (auto& stream : streams_) {
    if (!QuantileWithin(t, stream.At(lambda, kCapacityRequests / lambda), 0.99, target_ms)) {
      return false;
    }
  }
  return true;
}

double VerifiedCapacity::Of(const std::string& model, const Triplet& t, double target_ms) {
  const auto key = std::make_tuple(model, t.gpcs, t.batch, t.processes, target_ms);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  double lo = 0;
  if (t.latency_ms <= target_ms) {
    const double batch_capacity = 1e3 * t.batch * t.processes / t.latency_ms;
    double hi = std::min(t.throughput, max_load_ * batch_capacity);
    lo = hi / 2;
    if (Keeps(t, hi, target_ms)) {
      lo = hi;
    } else if (!Keeps(t, lo, target_ms)) {
      lo = 0;  // not worth a segment
    } else {
      for (int k = 0; k < kCapacitySteps; ++k) {
        const double mid = (lo + hi) / 2;
        (Keeps(t, mid, target_ms) ? lo : hi) = mid;
      }
    }
  }
  return cache_[key] = lo * kCapacitySafety;
}

TripletArray VerifiedCapacity::Decide(const ServiceProfile& profile, double limit_ms,
                                      double target_ms, int max_processes) {
  std::array<double, kNumInstanceSizes> best_tp{};
  auto eligible = [&](const ProfilePoint& p) {
    return p.latency_ms < limit_ms && (max_processes == 0 || p.processes <= max_processes) &&
           SizeIndex(p.gpcs) >= 0;
  };
  for (const auto& p : profile.points) {
    if (eligible(p))
      best_tp[SizeIndex(p.gpcs)] = std::max(best_tp[SizeIndex(p.gpcs)], p.throughput);
  }
  TripletArray out{};
  for (const auto& p : profile.points) {
    const int idx = eligible(p) ? SizeIndex(p.gpcs) : -1;
    if (idx < 0 || p.throughput < kCapacityCandidates * best_tp[idx]) continue;
    Triplet t{p.gpcs, p.batch, p.processes, p.throughput, p.latency_ms};
    t.throughput = Of(profile.model, t, target_ms);
    if (t.throughput > 0 && (!out[idx].valid() || t.throughput > out[idx].throughput)) out[idx] = t;
  }
  return out;
}

}  // namespace hx::share
