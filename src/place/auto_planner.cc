// `auto`: a portfolio. The fast planners run first, in a fixed order, each while it would end
// within the time limit at the longest time one has taken so far (all run until one has a plan);
// each plan is checked and simulated (RunPlanner) and the fastest simulated plan wins, ties to the
// earlier planner. When time remains, the exact planners that are registered (MOIRAI, EfficientMIP,
// GETF, SortingHat) share what is left (an even share each, at least kMinExactSeconds, while that
// much is left) and compete the same way. `detail` names the winner and every contender's latency.

#include <algorithm>
#include <cstdio>
#include <optional>

#include "hexplan/core/interrupt.h"
#include "hexplan/core/stopwatch.h"
#include "hexplan/place/exact/exact_planner.h"
#include "place/builtin_planners.h"
#include "place/format_units.h"

namespace hx::place {
namespace {

// The fast planners, the likelier winners of the placement suite first (m-sct, whose LP takes half
// its limit, wins no case alone; m-topo is the slowest plan nearly everywhere), so that a short or
// loaded limit skips the rarer winners. On a cluster of CPUs and GPUs (Chrion's) pipeline wins and
// goes before m-etf, which took 1.1 s there and left it no time under load; on the others m-etf
// comes first (pipeline took 1.8 s on alphafold2-930m and pushed m-etf and the MILPs out).
const char* const kFastPlanners[] = {"single",   "heft",   "peft",   "m-etf", "pipeline",
                                     "deepplan", "chrion", "m-topo", "m-sct"};

const char* const kExactPlanners[] = {"moirai", "efficientmip", "getf", "sortinghat"};
// An exact planner is only worth starting with this much time left (a MILP stopped in CBC's
// preprocessing has nothing to offer, and CBC has crashed there on limits of a few ms). Each gets
// an even share of what is left, at least this much: with 1 s, the first MILP of a 3 s portfolio
// took the time of all the others (bert_l-12: MOIRAI ran, EfficientMIP, which reaches its 3 s
// plan within 0.3 s, did not).
constexpr double kMinExactSeconds = 0.4;

// kFastPlanners in the order they run on this cluster.
std::vector<std::string> FastOrder(bool hybrid) {
  std::vector<std::string> order(std::begin(kFastPlanners), std::end(kFastPlanners));
  if (hybrid) {
    auto etf = std::find(order.begin(), order.end(), "m-etf");
    auto pipeline = std::find(order.begin(), order.end(), "pipeline");
    std::iter_swap(etf, pipeline);
  }
  return order;
}

// The registered exact planners in the order they get the time left. SortingHat's model is the
// exact form of DeepPlan's load parallelism (weights over every host link at once), so when
// `deepplan` won the fast round, the run is load-bound and SortingHat goes first; otherwise the
// scheduling MILPs (MOIRAI, GETF) and EfficientMIP lead, as listed.
std::vector<std::string> ExactOrder(const std::vector<std::string>& registered,
                                    const std::string& fast_winner) {
  std::vector<std::string> order;
  for (const char* name : kExactPlanners)
    if (std::find(registered.begin(), registered.end(), name) != registered.end())
      order.push_back(name);
  auto sortinghat = std::find(order.begin(), order.end(), "sortinghat");
  if (fast_winner == "deepplan" && sortinghat != order.end())
    std::rotate(order.begin(), sortinghat, sortinghat + 1);
  return order;
}

bool HasKind(const hw::Cluster& cluster, hw::DeviceKind kind) {
  return !cluster.DevicesOfKind(kind).empty();
}

class AutoPlanner final : public Planner {
 public:
  std::string Name() const override { return "auto"; }
  std::string Description() const override {
    return "the fast planners within the time limit, then the registered exact ones with the "
           "time left; the fastest simulated plan wins";
  }

  // The options of its members, each passed on to the members that own it.
  std::vector<OptionSpec> Options() const override {
    std::vector<OptionSpec> all;
    for (const std::string& name : PlannerNames()) {
      if (name == Name()) continue;
      auto specs = PlannerOptionSpecs(name);
      if (!specs.ok()) continue;
      for (const OptionSpec& s : *specs) {
        bool seen = false;
        for (const OptionSpec& a : all) seen = seen || a.name == s.name;
        if (!seen) all.push_back(s);
      }
    }
    return all;
  }

  StatusOr<PlanResult> Plan(const PlanRequest& request) override {
    Stopwatch watch;
    const double limit = request.options.time_limit_s;
    const std::vector<std::string> known = PlannerNames();
    auto registered = [&](const std::string& n) {
      return std::find(known.begin(), known.end(), n) != known.end();
    };
    const bool hybrid = HasKind(request.cluster(), hw::DeviceKind::kCpu) &&
                        (HasKind(request.cluster(), hw::DeviceKind::kGpu) ||
                         HasKind(request.cluster(), hw::DeviceKind::kMig));

    std::optional<PlacementOutcome> best;
    std::string best_name, tried, skipped, failed;
    int runs = 0;
    auto run = [&](const std::string& name, double budget) {
      PlanRequest sub = request;
      sub.options.time_limit_s = budget;
      auto own = PlannerOptionSpecs(name);
      sub.planner_options =
          request.planner_options.Restrict(own.ok() ? *own : std::vector<OptionSpec>{});
      auto out = RunPlanner(name, sub);
      ++runs;
      if (!out.ok()) {
        failed += (failed.empty() ? "" : "; ") + name + ": " + out.status().message();
        LogTo(request.logger, LogLevel::kInfo,
              "auto: " + name + " failed: " + out.status().message());
        return;
      }
      tried += (tried.empty() ? "" : ", ") + name + " " + FormatMs(out->sim.makespan_s);
      LogTo(request.logger, LogLevel::kInfo,
            "auto: " + name + " simulates " + FormatMs(out->sim.makespan_s));
      if (!best || out->sim.makespan_s < best->sim.makespan_s) {
        best = std::move(*out);
        best_name = name;
      }
    };

    // A fast planner starts only when it would end within the limit, estimated at the longest one
    // has taken so far (BaselineBudget, as the exact planners' baselines); each gets what is left
    // as its own limit (the list planners stop their memory retries there).
    BaselineBudget fast_budget(limit, request.graph().num_nodes());
    for (const std::string& name : FastOrder(hybrid)) {
      if (!registered(name)) continue;
      if (name == "chrion" && !hybrid) continue;
      const double now = watch.ElapsedSeconds();
      if (best && (now >= limit || StopRequested() || !fast_budget.Admit(name, now))) {
        skipped += (skipped.empty() ? "" : ", ") + name;
        continue;
      }
      run(name, std::max(limit - now, 1e-3));
      fast_budget.Ran(watch.ElapsedSeconds() - now);
    }
    // The exact planners share what is left evenly (time one does not use goes to the next),
    // keeping a little for checking and simulating each plan (RunPlanner).
    const std::vector<std::string> exact = ExactOrder(known, best_name);
    const double reserve = std::min(0.5, 0.05 * limit);
    for (size_t i = 0; i < exact.size(); ++i) {
      const double left = limit - reserve - watch.ElapsedSeconds();
      if (left < kMinExactSeconds || (best && StopRequested())) {
        skipped += (skipped.empty() ? "" : ", ") + exact[i];
        continue;
      }
      run(exact[i], std::max(kMinExactSeconds, left / static_cast<double>(exact.size() - i)));
    }
    if (!best)
      return ResourceExhausted("auto: no planner found a plan for '" + request.graph().name() +
                               "' on '" + request.cluster().name() + "': " + failed);
    PlanResult result = std::move(best->result);
    result.detail = "best of " + std::to_string(runs) + ": " + best_name + " (" + tried + ")";
    if (!skipped.empty()) result.detail += "; out of time before " + skipped;
    LogTo(request.logger, LogLevel::kInfo, "auto: " + result.detail);
    return result;
  }
};

}  // namespace

std::unique_ptr<Planner> MakeAutoPlanner() { return std::make_unique<AutoPlanner>(); }

}  // namespace hx::place
