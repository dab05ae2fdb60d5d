#include "hexplan/share/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "hexplan/share/algorithms.h"
#include "hexplan/share/caps.h"

namespace hx::share {

int GpuAssignment::Gpcs() const {
  int t = 0;
  for (const auto& s : segments) t += s.share_gpcs;
  return t;
}

Layout GpuAssignment::ToLayout() const {
  Layout l;
  for (const auto& s : segments) l.push_back({s.triplet.gpcs, s.start});
  return l;
}

Status ShareOptions::Validate() const {
  if (!(slo_factor > 0 && slo_factor <= 1)) {
    return InvalidArgument("--slo-factor: expected a value in (0, 1], found " +
                           std::to_string(slo_factor));
  }
  if (max_processes < 0) return InvalidArgument("max_processes: expected >= 0");
  if (optimize_threshold < 0 || optimize_threshold > kGpcsPerGpu) {
    return InvalidArgument("optimize_threshold: expected 0..7");
  }
  if (!(interference_margin >= 0 && interference_margin < 1)) {
    return InvalidArgument("interference_margin: expected a value in [0, 1)");
  }
  if (node_limit < 1 || node_limit > kMaxShareNodeLimit) {
    return InvalidArgument("--node-limit: expected 1.." + std::to_string(kMaxShareNodeLimit) +
                           ", got " + std::to_string(node_limit));
  }
  if (exact_node_limit < 1) return InvalidArgument("exact_node_limit: expected >= 1");
  if (verify_seeds < 0 || verify_seeds > kMaxSimSeeds) {
    return InvalidArgument("--verify-seeds: expected 0.." + std::to_string(kMaxSimSeeds) +
                           ", got " + std::to_string(verify_seeds));
  }
  if (!(verify_seconds > 0 && verify_seconds <= kMaxSimSeconds)) {
    return InvalidArgument("--verify-seconds: expected a duration in (0, 1e6], got " +
                           std::to_string(verify_seconds));
  }
  if (!(verify_margin >= 0 && verify_margin < 1)) {
    return InvalidArgument("verify_margin: expected a value in [0, 1)");
  }
  if (!(verify_max_load > 0 && verify_max_load <= 1)) {
    return InvalidArgument("--verify-max-load: expected a value in (0, 1]");
  }
  return ShareAlgorithmRegistry().Find(algo).status();
}

StatusOr<ShareProblem> MakeProblem(const GpuModel& gpu, const std::vector<Service>& services,
                                   const std::vector<ServiceProfile>& profiles) {
  ShareProblem p;
  p.gpu = gpu;
  std::string missing;
  for (const auto& s : services) {
    auto it = std::find_if(profiles.begin(), profiles.end(),
                           [&](const ServiceProfile& pr) { return pr.model == s.Model(); });
    if (it == profiles.end()) {
      missing += "\n  service '" + s.name + "': no profile (expected " + s.Model() + ".csv or " +
                 s.Model() + ".json in the profile directory)";
      continue;
    }
    p.services.push_back(s);
    p.profiles.push_back(*it);
  }
  if (!missing.empty()) return NotFound("services without a profile:" + missing);
  if (p.services.empty()) return InvalidArgument("the scenario has no services");
  return p;
}

std::vector<double> ServiceCapacity(const ShareProblem& problem, const SharePlan& plan) {
  std::vector<double> cap(problem.services.size(), 0.0);
  for (const auto& g : plan.gpus) {
    for (const auto& s : g.segments) cap[s.service] += s.triplet.throughput;
  }
  return cap;
}

void ComputeMetrics(const ShareProblem& problem, SharePlan* plan) {
  ShareMetrics& m = plan->metrics;
  m.gpus = static_cast<int>(plan->gpus.size());
  m.gpcs = 0;
  const auto cap = ServiceCapacity(problem, *plan);
  double used = 0;
  for (const auto& g : plan->gpus) {
    for (const auto& s : g.segments) {
      m.gpcs += s.share_gpcs;
      const double util = cap[s.service] > 0
                              ? std::min(1.0, problem.services[s.service].rate / cap[s.service])
                              : 0.0;
      used += s.triplet.gpcs * util;
    }
  }
  m.external_fragmentation =
      m.gpus > 0 ? 1.0 - static_cast<double>(m.gpcs) / (m.gpus * kGpcsPerGpu) : 0;
  m.internal_slack = m.gpcs > 0 ? 1.0 - used / m.gpcs : 0;
}

std::vector<std::string> PlanViolations(const ShareProblem& problem, const ShareOptions& options,
                                        const SharePlan& plan) {
  std::vector<std::string> out;
  const double margin = plan.mig ? 0.0 : options.interference_margin;
  for (size_t gi = 0; gi < plan.gpus.size(); ++gi) {
    const auto& g = plan.gpus[gi];
    const std::string gpu = "GPU " + std::to_string(gi);
    if (g.segments.empty()) out.push_back(gpu + ": no segments");
    if (plan.mig) {
      Status st = ValidateLayout(problem.gpu, g.ToLayout());
      if (!st.ok()) out.push_back(gpu + ": invalid MIG layout: " + st.message());
    } else if (g.Gpcs() > kGpcsPerGpu) {
      out.push_back(gpu + ": MPS shares add up to " + std::to_string(g.Gpcs()) + " GPCs (> 7)");
    }
    for (const auto& s : g.segments) {
      if (s.service < 0 || s.service >= static_cast<int>(problem.services.size())) {
        out.push_back(gpu + ": segment of unknown service " + std::to_string(s.service));
        continue;
      }
      const Service& svc = problem.services[s.service];
      const auto& pts = problem.profiles[s.service].points;
      const Triplet& t = s.triplet;
      const bool profiled = std::any_of(pts.begin(), pts.end(), [&](const ProfilePoint& p) {
        return p.gpcs == t.gpcs && p.batch == t.batch && p.processes == t.processes &&
               std::fabs(p.throughput - t.throughput * (1 + margin)) < 1e-6 * p.throughput + 1e-9 &&
               std::fabs(p.latency_ms * (1 + margin) - t.latency_ms) < 1e-6 * t.latency_ms + 1e-9;
      });
      if (!profiled) {
        out.push_back(gpu + ": " + svc.name + " segment " + std::to_string(t.gpcs) + "g batch " +
                      std::to_string(t.batch) + " x" + std::to_string(t.processes) +
                      " is not a profiled point");
      }
      if (!(t.latency_ms < svc.slo_ms * options.slo_factor)) {
        char buf[256];
        std::snprintf(buf, sizeof buf, "%s: %s segment latency %.1f ms >= SLO share %.1f ms",
                      gpu.c_str(), svc.name.c_str(), t.latency_ms, svc.slo_ms * options.slo_factor);
        out.push_back(buf);
      }
      if (s.share_gpcs < t.gpcs) out.push_back(gpu + ": " + svc.name + " share below its size");
    }
  }
  const auto cap = ServiceCapacity(problem, plan);
  for (size_t i = 0; i < problem.services.size(); ++i) {
    const auto& svc = problem.services[i];
    const bool unsupported =
        std::any_of(plan.unsupported.begin(), plan.unsupported.end(),
                    [&](const ServiceIssue& u) { return u.service == svc.name; });
    if (unsupported) continue;
    if (cap[i] + 1e-9 < svc.rate) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s: capacity %.1f req/s < rate %.1f req/s", svc.name.c_str(),
                    cap[i], svc.rate);
      out.push_back(buf);
    }
  }
  return out;
}

}  // namespace hx::share
