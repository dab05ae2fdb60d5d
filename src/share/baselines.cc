#include "hexplan/share/baselines.h"

#include <algorithm>
#include <cmath>

#include "hexplan/share/configurator.h"

namespace hx::share {
namespace {

// Single-process triplets with the interference margin applied.
TripletArray MpsTriplets(const ServiceProfile& profile, const Service& s, const ShareOptions& o) {
  const double m = o.interference_margin;
  TripletArray t = TripletDecision(profile, s.slo_ms * o.slo_factor / (1 + m), 1);
  for (auto& x : t) {
    if (!x.valid()) continue;
    x.throughput /= (1 + m);
    x.latency_ms *= (1 + m);
  }
  return t;
}

struct Share {
  int service;
  Triplet triplet;
  int gpcs;
};

// Full-GPU shares for what a 7g share can take, then the smallest share covering the rest.
std::vector<Share> SplitDemand(int service, double rate, const TripletArray& t) {
  std::vector<Share> out;
  const Triplet* full = t[4].valid() ? &t[4] : nullptr;
  if (full == nullptr) {  // no whole-GPU point: use the largest size that has one
    for (int i = kNumInstanceSizes - 1; i >= 0 && full == nullptr; --i) {
      if (t[i].valid()) full = &t[i];
    }
  }
  if (full == nullptr) return out;
  double left = rate;
  while (left > full->throughput + 1e-9) {
    out.push_back({service, *full, full->gpcs});
    left -= full->throughput;
  }
  for (int i = 0; i < kNumInstanceSizes; ++i) {
    if (t[i].valid() && t[i].throughput >= left - 1e-9) {
      out.push_back({service, t[i], t[i].gpcs});
      break;
    }
  }
  return out;
}

}  // namespace

SharePlan PlanGpulet(const ShareProblem& problem, const ShareOptions& options) {
  SharePlan plan;
  plan.algo = "gpulet";
  plan.mig = false;
  std::vector<Share> shares;
  for (size_t i = 0; i < problem.services.size(); ++i) {
    const auto t = MpsTriplets(problem.profiles[i], problem.services[i], options);
    auto s = SplitDemand(static_cast<int>(i), problem.services[i].rate, t);
    if (s.empty()) {
      plan.unsupported.push_back({problem.services[i].name, "no share meets the SLO"});
    }
    shares.insert(shares.end(), s.begin(), s.end());
  }
  std::stable_sort(shares.begin(), shares.end(),
                   [](const Share& a, const Share& b) { return a.gpcs > b.gpcs; });
  for (const auto& s : shares) {
    bool placed = false;
    for (auto& g : plan.gpus) {
      if (g.segments.size() == 1 && g.segments[0].share_gpcs + s.gpcs <= kGpcsPerGpu) {
        const int first = g.segments[0].share_gpcs;
        g.segments.push_back({s.service, s.triplet, first, kGpcsPerGpu - first});
        placed = true;
        break;
      }
    }
    if (!placed) {
      GpuAssignment g;
      g.segments.push_back({s.service, s.triplet, 0, s.gpcs});
      plan.gpus.push_back(std::move(g));
    }
  }
  return plan;
}

SharePlan PlanIgniter(const ShareProblem& problem, const ShareOptions& options) {
  SharePlan plan;
  plan.algo = "igniter";
  plan.mig = false;
  for (size_t i = 0; i < problem.services.size(); ++i) {
    const Service& svc = problem.services[i];
    const auto t = MpsTriplets(problem.profiles[i], svc, options);
    const Triplet* pick = nullptr;
    for (int k = 0; k < kNumInstanceSizes && pick == nullptr; ++k) {
      if (t[k].valid() && t[k].throughput >= svc.rate - 1e-9) pick = &t[k];
    }
    if (pick == nullptr) {
      plan.unsupported.push_back(
          {svc.name, "the rate needs more than one GPU (iGniter places one share per service)"});
      continue;
    }
    const int share = std::min(
        kGpcsPerGpu,
        static_cast<int>(std::ceil(pick->gpcs * (1 + options.interference_margin) - 1e-9)));
    bool placed = false;
    for (auto& g : plan.gpus) {
      if (g.Gpcs() + share <= kGpcsPerGpu) {
        g.segments.push_back({static_cast<int>(i), *pick, g.Gpcs(), share});
        placed = true;
        break;
      }
    }
    if (!placed) {
      GpuAssignment g;
      g.segments.push_back({static_cast<int>(i), *pick, 0, share});
      plan.gpus.push_back(std::move(g));
    }
  }
  return plan;
}

SharePlan PlanMigServing(const ShareProblem& problem, const ShareOptions& options) {
  SharePlan plan;
  plan.algo = "mig-serving";
  const size_t n = problem.services.size();
  std::vector<TripletArray> t(n);
  std::vector<double> rem(n);
  for (size_t i = 0; i < n; ++i) {
    t[i] = TripletDecision(problem.profiles[i], problem.services[i].slo_ms * options.slo_factor, 1);
    rem[i] = problem.services[i].rate;
    if (!std::any_of(t[i].begin(), t[i].end(), [](const Triplet& x) { return x.valid(); })) {
      plan.unsupported.push_back({problem.services[i].name, "no MIG instance meets the SLO"});
      rem[i] = 0;
    }
  }
  const auto configs = EnumerateLayouts(problem.gpu, /*maximal_only=*/true);
  auto remaining = [&] {
    return std::any_of(rem.begin(), rem.end(), [](double r) { return r > 1e-9; });
  };
  while (remaining()) {
    double best_score = -1;
    GpuAssignment best_gpu;
    std::vector<double> best_rem;
    for (const auto& layout : configs) {
      Layout order = layout;
      std::stable_sort(order.begin(), order.end(),
                       [](const Instance& a, const Instance& b) { return a.gpcs > b.gpcs; });
      std::vector<double> r = rem;
      GpuAssignment g;
      double score = 0;
      for (const auto& inst : order) {
        const int idx = SizeIndex(inst.gpcs);
        int who = -1;
        double gain = 0;
        for (size_t s = 0; s < n; ++s) {
          if (r[s] <= 1e-9 || !t[s][idx].valid()) continue;
          const double share = std::min(t[s][idx].throughput, r[s]) / problem.services[s].rate;
          if (share > gain) {
            gain = share;
            who = static_cast<int>(s);
          }
        }
        if (who < 0) continue;
        r[who] -= t[who][idx].throughput;
        score += gain;
        g.segments.push_back({who, t[who][idx], inst.start, inst.gpcs});
      }
      if (score > best_score + 1e-12) {
        best_score = score;
        best_gpu = std::move(g);
        best_rem = std::move(r);
      }
    }
    if (best_score <= 0) break;  // nothing can make progress (cannot happen with valid triplets)
    plan.gpus.push_back(std::move(best_gpu));
    rem = std::move(best_rem);
  }
  return plan;
}

}  // namespace hx::share
