#include "hexplan/share/configurator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

namespace hx::share {

TripletArray TripletDecision(const ServiceProfile& profile, double limit_ms, int max_processes) {
  TripletArray best{};
  for (const auto& p : profile.points) {
    if (!(p.latency_ms < limit_ms)) continue;
    if (max_processes > 0 && p.processes > max_processes) continue;
    const int idx = SizeIndex(p.gpcs);
    if (idx < 0) continue;
    Triplet& b = best[idx];
    if (!b.valid() || p.throughput > b.throughput ||
        (p.throughput == b.throughput && p.latency_ms < b.latency_ms)) {
      b = {p.gpcs, p.batch, p.processes, p.throughput, p.latency_ms};
    }
  }
  return best;
}

namespace {

// The instance size whose triplet serves the most requests per GPC (the first on ties); -1 if none.
int MostEfficientSize(const TripletArray& triplets) {
  int opt = -1;
  for (int i = 0; i < kNumInstanceSizes; ++i) {
    if (!triplets[i].valid()) continue;
    if (opt < 0 ||
        triplets[i].throughput / triplets[i].gpcs > triplets[opt].throughput / triplets[opt].gpcs) {
      opt = i;
    }
  }
  return opt;
}

}  // namespace

std::vector<Segment> DemandMatching(int service, double rate, const TripletArray& triplets) {
  // OPTSEG: the triplet of maximum throughput per GPC.
  const int opt = MostEfficientSize(triplets);
  std::vector<Segment> out;
  if (opt < 0) return out;
  const Triplet& o = triplets[opt];
  const int num = static_cast<int>(std::floor(rate / o.throughput));
  for (int k = 0; k < num; ++k) out.push_back({service, o});
  const double left = rate - num * o.throughput;
  if (left > 1e-9) {
    // LASTSEG: the smallest instance size that covers what is left.
    for (int i = 0; i < kNumInstanceSizes; ++i) {
      if (triplets[i].valid() && triplets[i].throughput >= left) {
        out.push_back({service, triplets[i]});
        break;
      }
    }
  }
  return out;
}

std::vector<Segment> DemandMatchingPublished(int service, double rate,
                                             const TripletArray& triplets) {
  const int opt = MostEfficientSize(triplets);
  int largest = -1;
  for (int i = 0; i < kNumInstanceSizes; ++i) {
    if (triplets[i].valid()) largest = i;
  }
  std::vector<Segment> out;
  if (opt < 0) return out;
  const Triplet& o = triplets[opt];
  int num = static_cast<int>(std::floor(rate / o.throughput));
  if (std::fmod(rate, o.throughput) == 0) --num;
  for (int k = 0; k < num; ++k) out.push_back({service, o});
  const double left = rate - num * o.throughput;
  int last = largest;
  for (int i = 0; i < kNumInstanceSizes; ++i) {
    if (triplets[i].valid() && triplets[i].throughput >= left) {
      last = i;
      break;
    }
  }
  out.push_back({service, triplets[last]});
  return out;
}

StatusOr<std::vector<TripletArray>> DecideTriplets(const ShareProblem& problem,
                                                   const ShareOptions& options, int max_processes) {
  std::vector<TripletArray> out;
  std::string bad;
  for (size_t i = 0; i < problem.services.size(); ++i) {
    const Service& s = problem.services[i];
    const double limit = s.slo_ms * options.slo_factor;
    TripletArray t = TripletDecision(problem.profiles[i], limit, max_processes);
    const bool any = std::any_of(t.begin(), t.end(), [](const Triplet& x) { return x.valid(); });
    if (!any) {
      double fastest = -1;
      for (const auto& p : problem.profiles[i].points) {
        if (max_processes > 0 && p.processes > max_processes) continue;
        if (fastest < 0 || p.latency_ms < fastest) fastest = p.latency_ms;
      }
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "\n  service '%s': no profiled configuration has a batch latency below %.2f ms "
                    "(SLO %.2f ms x slo-factor %.2f); the fastest in %s takes %.2f ms",
                    s.name.c_str(), limit, s.slo_ms, options.slo_factor,
                    problem.profiles[i].source.c_str(), fastest);
      bad += buf;
    }
    out.push_back(t);
  }
  if (!bad.empty()) return InvalidArgument("SLOs no configuration can meet:" + bad);
  return out;
}

std::vector<SizeCounts> MinimalCovers(double rate, const TripletArray& triplets) {
  std::vector<int> sizes;  // valid size indices, largest first
  for (int i = kNumInstanceSizes - 1; i >= 0; --i) {
    if (triplets[i].valid()) sizes.push_back(i);
  }
  std::vector<SizeCounts> out;
  if (sizes.empty()) return out;
  SizeCounts cur;
  std::function<void(size_t, double)> rec = [&](size_t k, double rem) {
    const int idx = sizes[k];
    const double tp = triplets[idx].throughput;
    const int need = rem > 1e-9 ? static_cast<int>(std::ceil(rem / tp - 1e-12)) : 0;
    if (k + 1 == sizes.size()) {
      cur.n[idx] = need;
      out.push_back(cur);
      cur.n[idx] = 0;
      return;
    }
    for (int c = 0; c <= need; ++c) {
      cur.n[idx] = c;
      rec(k + 1, rem - c * tp);
    }
    cur.n[idx] = 0;
  };
  rec(0, rate);
  // Keep the minimal covers: removing any one segment must uncover the rate.
  std::vector<SizeCounts> minimal;
  for (const auto& c : out) {
    double cap = 0;
    for (int i = 0; i < kNumInstanceSizes; ++i) cap += c.n[i] * triplets[i].throughput;
    bool is_min = c.Total() > 0;
    for (int i = 0; i < kNumInstanceSizes && is_min; ++i) {
      if (c.n[i] > 0 && cap - triplets[i].throughput >= rate - 1e-9) is_min = false;
    }
    if (is_min) minimal.push_back(c);
  }
  std::sort(minimal.begin(), minimal.end(), [](const SizeCounts& a, const SizeCounts& b) {
    if (a.Gpcs() != b.Gpcs()) return a.Gpcs() < b.Gpcs();
    return a.Total() < b.Total();
  });
  return minimal;
}

}  // namespace hx::share
