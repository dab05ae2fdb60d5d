// The sharing algorithms, listed in the order of the comparison table. Each is a small function
// over the configurator (triplets), the allocator and the exact packer.
#include "hexplan/share/algorithms.h"

#include <algorithm>

#include "hexplan/share/allocator.h"
#include "hexplan/share/baselines.h"
#include "hexplan/share/configurator.h"
#include "hexplan/share/exact.h"
#include "hexplan/share/slo_repair.h"
#include "hexplan/share/verified_capacity.h"

namespace hx::share {
namespace {

std::vector<Segment> ConfigureSegments(const ShareProblem& problem,
                                       const std::vector<TripletArray>& triplets) {
  std::vector<Segment> segs;
  for (size_t i = 0; i < problem.services.size(); ++i) {
    auto s = DemandMatchingPublished(static_cast<int>(i), problem.services[i].rate, triplets[i]);
    segs.insert(segs.end(), s.begin(), s.end());
  }
  return segs;
}

// ParvaGPU's Algorithm 1 (segment allocation), then Algorithm 2 (allocation optimization) when
// `optimize`.
SharePlan AllocateParvaGpu(const ShareProblem& problem, const std::vector<TripletArray>& triplets,
                           bool optimize, int threshold) {
  SharePlan plan;
  AllocateBestFit(problem.gpu, ConfigureSegments(problem, triplets), &plan.gpus);
  if (optimize) OptimizeAllocationPublished(problem.gpu, triplets, threshold, &plan.gpus);
  return plan;
}

// Per-service instance counts of a list of segments (each segment uses its size's triplet).
std::vector<SizeCounts> CountsOf(size_t services, const std::vector<Segment>& segs) {
  std::vector<SizeCounts> c(services);
  for (const auto& s : segs) c[s.service].n[SizeIndex(s.triplet.gpcs)]++;
  return c;
}

std::vector<SizeCounts> CountsOf(size_t services, const SharePlan& plan) {
  std::vector<Segment> segs;
  for (const auto& g : plan.gpus) {
    for (const auto& s : g.segments) segs.push_back({s.service, s.triplet});
  }
  return CountsOf(services, segs);
}

SizeCounts Sum(const std::vector<SizeCounts>& choice) {
  SizeCounts t;
  for (const auto& c : choice) {
    for (int i = 0; i < kNumInstanceSizes; ++i) t.n[i] += c.n[i];
  }
  return t;
}

// hexplan and the exact bound: the best of ParvaGPU's segment sets and the cheapest covers, each
// packed exactly, then the exact search for fewer GPUs (and fewest GPCs) within `budget` states.
SharePlan SearchFewestGpus(const ShareProblem& problem, const std::vector<TripletArray>& triplets,
                           const ShareOptions& options, int64_t budget) {
  const size_t n = problem.services.size();
  std::vector<std::vector<SizeCounts>> candidates;
  candidates.push_back(CountsOf(n, ConfigureSegments(problem, triplets)));
  candidates.push_back(
      CountsOf(n, AllocateParvaGpu(problem, triplets, true, options.optimize_threshold)));
  std::vector<SizeCounts> cheapest(n);
  for (size_t i = 0; i < n; ++i) {
    auto covers = MinimalCovers(problem.services[i].rate, triplets[i]);
    if (!covers.empty()) cheapest[i] = covers.front();
  }
  candidates.push_back(cheapest);
  const std::vector<SizeCounts>* best = nullptr;
  int best_gpus = 0, best_gpcs = 0;
  for (const auto& c : candidates) {
    const SizeCounts total = Sum(c);
    const int g = MinGpus(total);
    if (best == nullptr || g < best_gpus || (g == best_gpus && total.Gpcs() < best_gpcs)) {
      best = &c;
      best_gpus = g;
      best_gpcs = total.Gpcs();
    }
  }
  std::vector<SizeCounts> choice =
      ImproveChoice(problem.services, triplets, *best, /*max_iterations=*/2000);
  best_gpus = MinGpus(Sum(choice));
  best_gpcs = Sum(choice).Gpcs();
  ExactResult r = MinGpusOverChoices(problem.services, triplets, best_gpus, best_gpcs, budget);
  int lower_bound = std::max(r.lower_bound, GpuLowerBound(problem.services, triplets));
  bool proven = false;
  if (r.found && (r.gpus < best_gpus || (r.gpus == best_gpus && r.gpcs <= best_gpcs))) {
    choice = r.choice;
    proven = r.proven;
  }
  SharePlan plan = PlaceChoice(problem, triplets, choice);
  plan.lower_bound = std::min(lower_bound, static_cast<int>(plan.gpus.size()));
  plan.proven_optimal = proven || plan.lower_bound == static_cast<int>(plan.gpus.size());
  plan.note = "search states " + std::to_string(r.nodes) +
              (r.proven || proven ? " (complete)" : " (budget reached)");
  return plan;
}

// The published implementation profiles and plans at most 3 MPS processes (MAX_NUM_PROC).
constexpr int kParvaMaxProcesses = 3;

int ParvaProcesses(const ShareOptions& options) {
  return options.max_processes > 0 ? options.max_processes : kParvaMaxProcesses;
}

StatusOr<SharePlan> PlanParvaGpu(const ShareProblem& problem, const ShareOptions& options) {
  HX_ASSIGN_OR_RETURN(auto triplets, DecideTriplets(problem, options, ParvaProcesses(options)));
  return AllocateParvaGpu(problem, triplets, true, options.optimize_threshold);
}

StatusOr<SharePlan> PlanParvaGpuSingle(const ShareProblem& problem, const ShareOptions& options) {
  HX_ASSIGN_OR_RETURN(auto triplets, DecideTriplets(problem, options, /*max_processes=*/1));
  return AllocateParvaGpu(problem, triplets, true, options.optimize_threshold);
}

StatusOr<SharePlan> PlanParvaGpuUnoptimized(const ShareProblem& problem,
                                            const ShareOptions& options) {
  HX_ASSIGN_OR_RETURN(auto triplets, DecideTriplets(problem, options, ParvaProcesses(options)));
  return AllocateParvaGpu(problem, triplets, false, options.optimize_threshold);
}

StatusOr<SharePlan> PlanExactPack(const ShareProblem& problem, const ShareOptions& options) {
  HX_ASSIGN_OR_RETURN(auto triplets, DecideTriplets(problem, options, ParvaProcesses(options)));
  return PlaceChoice(problem, triplets,
                     CountsOf(problem.services.size(), ConfigureSegments(problem, triplets)));
}

constexpr char kLatencyBudget[] =
    "the latency budget (batch latency < slo-factor x SLO, capacity >= rate)";

StatusOr<SharePlan> PlanExact(const ShareProblem& problem, const ShareOptions& options) {
  HX_ASSIGN_OR_RETURN(auto triplets, DecideTriplets(problem, options, options.max_processes));
  SharePlan plan = SearchFewestGpus(problem, triplets, options, options.exact_node_limit);
  plan.minimal_under = kLatencyBudget;
  return plan;
}

// Per service and size, the point that keeps the most arrivals within its SLO (less the check's
// margin), with that verified capacity as its throughput (verified_capacity.h).
std::vector<TripletArray> VerifiedTriplets(const ShareProblem& sized, const ShareOptions& options,
                                           VerifiedCapacity* capacity) {
  std::vector<TripletArray> out;
  for (size_t i = 0; i < sized.services.size(); ++i) {
    const double slo = sized.services[i].slo_ms;
    out.push_back(capacity->Decide(sized.profiles[i], slo * options.slo_factor,
                                   slo * (1 - options.verify_margin), options.max_processes));
  }
  return out;
}

// A plan made with verified capacities in place of throughputs: each segment routes by its
// capacity and carries its profiled throughput again.
void RouteByVerifiedCapacity(const ShareProblem& problem, SharePlan* plan) {
  for (auto& g : plan->gpus) {
    for (auto& s : g.segments) {
      s.route_weight = s.triplet.throughput;
      for (const auto& p : problem.profiles[s.service].points) {
        if (p.gpcs == s.triplet.gpcs && p.batch == s.triplet.batch &&
            p.processes == s.triplet.processes) {
          s.triplet.throughput = p.throughput;
          break;
        }
      }
    }
  }
}

constexpr char kVerifiedCapacities[] =
    "the verified capacities (each segment's p99 within the SLO at its share of the requests, "
    "short simulation) with the per-service headroom and budgets its check needed (capacity >= "
    "headroom x rate, batch latency < slo-factor x budget x SLO)";

// The search over verified capacities (the latency budget alone with --verify-seeds 0), then
// checked and repaired in the serving simulation (slo_repair.h): services that miss are sized for
// more than their rate.
StatusOr<SharePlan> PlanHexplan(const ShareProblem& problem, const ShareOptions& options) {
  VerifiedCapacity capacity(options.verify_max_load);
  auto search = [&](const ShareProblem& sized) -> StatusOr<SharePlan> {
    HX_ASSIGN_OR_RETURN(auto triplets, DecideTriplets(sized, options, options.max_processes));
    if (options.verify_seeds == 0) {
      return SearchFewestGpus(sized, triplets, options, options.node_limit);
    }
    SharePlan plan = SearchFewestGpus(sized, VerifiedTriplets(sized, options, &capacity), options,
                                      options.node_limit);
    RouteByVerifiedCapacity(sized, &plan);
    return plan;
  };
  HX_ASSIGN_OR_RETURN(SharePlan plan, PlanMeetingSlos(problem, options, search));
  plan.minimal_under = options.verify_seeds == 0 ? kLatencyBudget : kVerifiedCapacities;
  return plan;
}

}  // namespace

const std::vector<ShareAlgorithm>& ShareAlgorithms() {
  static const std::vector<ShareAlgorithm> algorithms = {
      {"parvagpu", "ParvaGPU's Algorithms 1 and 2 (MIG + MPS)", PlanParvaGpu},
      {"parvagpu-single", "ParvaGPU with MIG only, one process per instance", PlanParvaGpuSingle},
      {"parvagpu-unoptimized", "ParvaGPU without Allocation Optimization", PlanParvaGpuUnoptimized},
      {"gpulet", "MPS shares without MIG, at most two services per GPU", PlanGpulet},
      {"igniter", "MPS shares without MIG plus an interference margin, one share per service",
       PlanIgniter},
      {"mig-serving", "MIG only, its fast greedy (one best-scoring GPU configuration at a time)",
       PlanMigServing},
      {"exact-pack", "ParvaGPU's segments on the fewest GPUs (exact packer)", PlanExactPack},
      {"exact", "the fewest GPUs over all segment choices (branch and bound, exact packer)",
       PlanExact},
      {"hexplan",
       "ours: the fewest GPUs under the latency budget, checked and repaired in the "
       "serving simulation (docs/sharing.md)",
       PlanHexplan},
  };
  return algorithms;
}

const Registry<ShareAlgorithm>& ShareAlgorithmRegistry() {
  static Registry<ShareAlgorithm> registry("--algo: unknown algorithm");
  static const bool listed = [] {
    for (const ShareAlgorithm& a : ShareAlgorithms()) registry.Register(a.name, a);
    return true;
  }();
  (void)listed;
  return registry;
}

std::vector<std::string> AlgoNames() {
  std::vector<std::string> names;
  for (const ShareAlgorithm& a : ShareAlgorithms()) names.push_back(a.name);
  return names;
}

SharePlan PlaceChoice(const ShareProblem& problem, const std::vector<TripletArray>& triplets,
                      const std::vector<SizeCounts>& choice) {
  SharePlan plan;
  const auto layouts = PackExact(Sum(choice));
  plan.gpus.resize(layouts.size());
  // Segments of each size in service order; instances of each size in GPU order.
  for (int idx = 0; idx < kNumInstanceSizes; ++idx) {
    std::vector<std::pair<int, int>> slots;  // (gpu, start)
    for (size_t g = 0; g < layouts.size(); ++g) {
      for (const auto& inst : layouts[g]) {
        if (inst.gpcs == kInstanceSizes[idx]) slots.push_back({static_cast<int>(g), inst.start});
      }
    }
    size_t k = 0;
    for (size_t s = 0; s < choice.size(); ++s) {
      for (int c = 0; c < choice[s].n[idx]; ++c, ++k) {
        plan.gpus[slots[k].first].segments.push_back(
            {static_cast<int>(s), triplets[s][idx], slots[k].second, kInstanceSizes[idx]});
      }
    }
  }
  for (auto& g : plan.gpus) {
    std::sort(g.segments.begin(), g.segments.end(),
              [](const PlacedSegment& a, const PlacedSegment& b) { return a.start < b.start; });
  }
  return plan;
}

}  // namespace hx::share
