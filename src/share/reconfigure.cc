#include "hexplan/share/reconfigure.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <tuple>

#include "hexplan/share/allocator.h"
#include "hexplan/share/caps.h"
#include "hexplan/share/configurator.h"

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

StatusOr<ReconfigureResult> Reconfigure(const ShareProblem& problem, const SharePlan& plan,
                                        const ShareOptions& options, const ServiceChange& change) {
  if (!plan.mig)
    return InvalidArgument("reconfiguration needs a MIG plan, not '" + plan.algo + "'");
  int sid = -1;
  for (size_t i = 0; i < problem.services.size(); ++i) {
    if (problem.services[i].name == change.service) sid = static_cast<int>(i);
  }
  if (sid < 0) return NotFound("--change: no service '" + change.service + "' in the scenario");
  ReconfigureResult r;
  r.problem = problem;
  Service& svc = r.problem.services[sid];
  if (change.rate > 0) svc.rate = change.rate;
  if (change.slo_ms > 0) svc.slo_ms = change.slo_ms;
  HX_RETURN_IF_ERROR(CheckProblemCaps(r.problem, options).WithContext("--change"));
  const int max_procs = plan.algo == "parvagpu-single" ? 1 : options.max_processes;
  const TripletArray t =
      TripletDecision(r.problem.profiles[sid], svc.slo_ms * options.slo_factor, max_procs);
  auto segments = DemandMatching(sid, svc.rate, t);
  if (segments.empty()) {
    return InvalidArgument("--change: service '" + svc.name +
                           "': no profiled configuration meets "
                           "the new SLO share of " +
                           std::to_string(svc.slo_ms * options.slo_factor) + " ms");
  }
  r.plan = plan;
  r.plan.algo = plan.algo + "+reconfigured";
  for (auto& g : r.plan.gpus) {
    std::erase_if(g.segments, [&](const PlacedSegment& s) { return s.service == sid; });
  }
  // Relocate into the free space; an emptied GPU keeps its number and is reused first-fit.
  std::vector<GpuAssignment> work = r.plan.gpus;
  const size_t before = work.size();
  AllocateSegments(problem.gpu, segments, &work);
  r.plan.gpus = work;
  for (size_t g = 0; g < r.plan.gpus.size(); ++g) {
    auto key = [](const GpuAssignment& a) {
      std::vector<std::tuple<int, int, int, int, int>> k;
      for (const auto& s : a.segments) {
        k.emplace_back(s.start, s.service, s.triplet.gpcs, s.triplet.batch, s.triplet.processes);
      }
      std::sort(k.begin(), k.end());
      return k;
    };
    if (g >= before) {
      r.added.push_back(static_cast<int>(g));
      r.touched.push_back(static_cast<int>(g));
    } else if (key(r.plan.gpus[g]) != key(plan.gpus[g])) {
      r.touched.push_back(static_cast<int>(g));
    }
    if (r.plan.gpus[g].segments.empty()) r.released.push_back(static_cast<int>(g));
  }
  // Released GPUs are dropped from the map only at the end, so the numbers of the others hold.
  while (!r.plan.gpus.empty() && r.plan.gpus.back().segments.empty()) r.plan.gpus.pop_back();
  ComputeMetrics(r.problem, &r.plan);
  return r;
}

}  // namespace hx::share
