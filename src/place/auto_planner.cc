// `auto`: a portfolio. The fast planners run first, cheapest first, each while it would end within
// the time limit (all run until one has a plan); each plan is checked and simulated (RunPlanner)
// and the fastest simulated plan wins, ties to the earlier planner. When time remains, the exact
// planners that are registered (MOIRAI, EfficientMIP, GETF, SortingHat) share what is left and
// compete the same way, each starting from the plans made so far. Each member plans as it would
// alone: `--coarsen fusion` is passed on to each (one GCOF model for all), so that a member whose
// expanded plan overflows a device plans the original graph as it does alone. `detail` names the
// winner and every contender's latency.

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>

#include "hexplan/core/interrupt.h"
#include "hexplan/core/stopwatch.h"
#include "hexplan/place/coarsened_planning.h"
#include "hexplan/place/exact/exact_planner.h"
#include "place/auto_order.h"
#include "place/builtin_planners.h"
#include "place/format_units.h"

namespace hx::place {

// Cheapest first: single, DeepPlan and HEFT are about linear in the ops; then m-ETF, admitted when
// an ETF pass estimated at three times HEFT's time fits (EtfSeconds), and m-SCT, whose LP takes
// half its limit, admitted when that and m-ETF's time fit (on alphafold2-87m on moirai-intra its
// LP needs 0.8 s for the fastest plan, and behind PEFT's 0.9 s of memory retries it did not get
// them; on alphafold2-930m on moirai-inter it takes 2.3 s and PEFT's is the fastest plan, in 0.13
// s); then PEFT, pipeline (1.8 s on graphs of 9,000 ops; before, m-ETF and pipeline pushed
// DeepPlan, m-SCT and every MILP out of a 3 s limit) and m-topo, the slowest plan nearly
// everywhere. On a cluster of CPUs and GPUs (Chrion's) pipeline wins and goes right after HEFT and
// PEFT, before m-ETF (1.1 s there) and m-SCT (its LP took all of a 3 s limit there).
std::vector<std::string> AutoFastOrder(bool hybrid) {
  if (hybrid)
    return {"single", "heft", "peft", "pipeline", "m-etf", "deepplan", "chrion", "m-topo", "m-sct"};
  return {"single", "deepplan", "heft", "m-etf", "m-sct", "peft", "pipeline", "m-topo"};
}

size_t AutoCheapMembers() { return 3; }

bool LoadBound(const plan::Plan& plan, const sim::SimResult& sim) {
  double loading = 0.0;
  for (const sim::CriticalStep& step : sim.critical_path)
    if (!step.is_op && step.transfer < plan.transfers.size() &&
        plan.transfers[step.transfer].kind != plan::TransferKind::kActivation)
      loading += step.finish - step.start;
  return sim.makespan_s > 0.0 && loading >= 0.5 * sim.makespan_s;
}

// MOIRAI, EfficientMIP, GETF, SortingHat as registered. SortingHat's model is the exact form of
// DeepPlan's load parallelism (weights over every host link at once): when the fast round's best
// plan is load-bound (LoadBound) or DeepPlan's, SortingHat goes first; otherwise the scheduling
// MILPs (MOIRAI, GETF) and EfficientMIP lead, as listed.
std::vector<std::string> AutoExactOrder(const std::vector<std::string>& registered,
                                        const std::string& fast_winner, bool load_bound) {
  std::vector<std::string> order;
  for (const char* name : {"moirai", "efficientmip", "getf", "sortinghat"})
    if (std::find(registered.begin(), registered.end(), name) != registered.end())
      order.push_back(name);
  auto sortinghat = std::find(order.begin(), order.end(), "sortinghat");
  const bool loads = fast_winner == "deepplan" || load_bound;
  if (loads && sortinghat != order.end()) std::rotate(order.begin(), sortinghat, sortinghat + 1);
  return order;
}

namespace {

// An exact planner is only worth starting with this much time left (a MILP stopped in CBC's
// preprocessing has nothing to offer, and CBC has crashed there on limits of a few ms). Each gets
// an even share of what is left, at least this much: with 1 s, the first MILP of a 3 s portfolio
// took the time of all the others (bert_l-12: MOIRAI ran, EfficientMIP, which reaches its 3 s
// plan within 0.3 s, did not).
constexpr double kMinExactSeconds = 0.4;

bool HasKind(const hw::Cluster& cluster, hw::DeviceKind kind) {
  return !cluster.DevicesOfKind(kind).empty();
}

void Append(std::string& list, const std::string& item, const char* sep = ", ") {
  list += (list.empty() ? "" : sep) + item;
}

// One `auto` request: its members' outcomes, the best so far, and what the detail line says.
class Portfolio {
 public:
  explicit Portfolio(const PlanRequest& request) : request_(request) {}

  // Builds the GCOF model the members share under `--coarsen fusion`.
  Status Prepare() {
    if (request_.options.coarsen != Coarsening::kFusion) return Status::Ok();
    HX_ASSIGN_OR_RETURN(coarsened_, CoarsenedModelFor(request_));
    return Status::Ok();
  }

  // Runs member `name` with `budget` seconds as its limit; an exact member also gets the plans
  // made so far (PlanRequest::known_plans).
  void Run(const std::string& name, double budget, bool exact) {
    PlanRequest sub = request_;
    sub.options.time_limit_s = budget;
    sub.coarsened = coarsened_;
    if (exact && request_.warm == 0.0) sub.known_plans = KnownPlans();
    auto own = PlannerOptionSpecs(name);
    sub.planner_options =
        request_.planner_options.Restrict(own.ok() ? *own : std::vector<OptionSpec>{});
    const double start = watch_.ElapsedSeconds();
    auto out = RunPlanner(name, sub);
    ++runs_;
    ran_.push_back(name);
    char took[64];
    std::snprintf(took, sizeof took, " (%.3f s from %.3f s)", watch_.ElapsedSeconds() - start,
                  start);
    if (!out.ok()) {
      Append(failed_, name + ": " + out.status().message(), "; ");
      LogTo(request_.logger, LogLevel::kInfo,
            "auto: " + name + " failed" + took + ": " + out.status().message());
      return;
    }
    LogTo(request_.logger, LogLevel::kInfo,
          "auto: " + name + " simulates " + FormatMs(out->sim.makespan_s) + took);
    Keep(name, std::move(*out));
  }

  void Skip(const std::string& name) { Append(skipped_, name); }
  double Elapsed() const { return watch_.ElapsedSeconds(); }
  bool HasPlan() const { return best_.has_value(); }
  bool Ran(const std::string& name) const {
    return std::find(ran_.begin(), ran_.end(), name) != ran_.end();
  }
  const std::string& BestName() const { return best_name_; }
  // The fast round's winner as AutoExactOrder reads it: DeepPlan's win counts only when its load
  // parallelism gained at least 0.1% over the single-device plan (on alphafold2-87m on
  // moirai-inter it won by 0.006 ms, sent SortingHat first, and MOIRAI, 0.5% faster, got no time;
  // on gpt2-xl b32 s64 on sortinghat-v100-hetero its 0.3% is a win SortingHat improves on).
  std::string ClearWinner() const {
    auto single = makespan_.find("single");
    if (best_name_ == "deepplan" && single != makespan_.end() &&
        best_->sim.makespan_s > 0.999 * single->second)
      return "single";
    return best_name_;
  }
  // True when the best plan so far is load-bound (LoadBound).
  bool BestLoadBound() const { return best_ && LoadBound(best_->result.plan, best_->sim); }

  StatusOr<PlanResult> Result() {
    if (!best_)
      return ResourceExhausted("auto: no planner found a plan for '" + request_.graph().name() +
                               "' on '" + request_.cluster().name() + "': " + failed_);
    PlanResult result = std::move(best_->result);
    result.detail = "best of " + std::to_string(runs_) + ": " + best_name_ + " (" + tried_ + ")";
    if (!skipped_.empty()) result.detail += "; out of time before " + skipped_;
    LogTo(request_.logger, LogLevel::kInfo, "auto: " + result.detail);
    return result;
  }

 private:
  void Keep(const std::string& name, PlacementOutcome out) {
    const double ms = out.sim.makespan_s;
    makespan_[name] = ms;
    Append(tried_, name + " " + FormatMs(ms));
    // Fastest first, ties in the order they ran.
    auto at =
        std::find_if(known_.begin(), known_.end(), [&](const auto& k) { return k.first > ms; });
    known_.insert(at, {ms, KnownPlan{name, out.result.plan}});
    if (!best_ || ms < best_->sim.makespan_s) {
      best_ = std::move(out);
      best_name_ = name;
    }
  }

  std::shared_ptr<const std::vector<KnownPlan>> KnownPlans() const {
    auto plans = std::make_shared<std::vector<KnownPlan>>();
    for (const auto& k : known_) plans->push_back(k.second);
    return plans;
  }

  const PlanRequest& request_;
  Stopwatch watch_;
  std::shared_ptr<const CoarsenedModel> coarsened_;
  std::optional<PlacementOutcome> best_;
  std::string best_name_, tried_, skipped_, failed_;
  std::vector<std::string> ran_;
  std::vector<std::pair<double, KnownPlan>> known_;
  std::map<std::string, double> makespan_;  // seconds, by member
  int runs_ = 0;
};

class AutoPlanner final : public Planner {
 public:
  std::string Name() const override { return "auto"; }
  std::string Description() const override {
    return "the fast planners within the time limit, then the registered exact ones with the "
           "time left; the fastest simulated plan wins";
  }
  bool CoarsensEachMember() const override { return true; }

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
    Portfolio portfolio(request);
    HX_RETURN_IF_ERROR(portfolio.Prepare());
    RunFast(request, portfolio);
    RunExact(request, portfolio);
    return portfolio.Result();
  }

 private:
  // A fast planner starts only when it would end within the limit, estimated at the longest one
  // has taken so far (BaselineBudget, as the exact planners' baselines) and, for m-ETF and m-SCT,
  // at EtfSeconds; each gets what is left as its own limit (the list planners stop their memory
  // retries there). After the cheap ones (AutoCheapMembers), a load-bound run gives SortingHat its
  // share (RunLoadBoundFirst).
  static void RunFast(const PlanRequest& request, Portfolio& portfolio) {
    const double limit = request.options.time_limit_s;
    const std::vector<std::string> known = PlannerNames();
    const bool hybrid = HasKind(request.cluster(), hw::DeviceKind::kCpu) &&
                        (HasKind(request.cluster(), hw::DeviceKind::kGpu) ||
                         HasKind(request.cluster(), hw::DeviceKind::kMig));
    BaselineBudget budget(limit, request.graph().num_nodes());
    std::map<std::string, double> took;  // seconds, by member
    const std::vector<std::string> order = AutoFastOrder(hybrid);
    for (size_t i = 0; i < order.size(); ++i) {
      const std::string& name = order[i];
      if (i == AutoCheapMembers()) RunLoadBoundFirst(request, portfolio);
      if (std::find(known.begin(), known.end(), name) == known.end()) continue;
      if (name == "chrion" && !hybrid) continue;
      const double now = portfolio.Elapsed();
      const bool fits =
          budget.Admit(name, now) && now + EtfSeconds(name, took, limit - now) <= limit;
      if (portfolio.HasPlan() && (now >= limit || StopRequested() || !fits)) {
        portfolio.Skip(name);
        continue;
      }
      portfolio.Run(name, std::max(limit - now - ExactReserve(request), 1e-3), false);
      budget.Ran(portfolio.Elapsed() - now);
      took[name] = portfolio.Elapsed() - now;
    }
  }

  // When the cheap members' best plan is load-bound (LoadBound; DeepPlan's, winning by a hair on
  // alphafold2-3.2b on moirai-intra, is not), SortingHat leads the exact planners and runs right
  // away with its even share of what is left, before m-SCT, m-ETF and pipeline, schedulers of
  // computation that took 0.4-1.4 s on OpenLLaMA-7B on sortinghat-v100 on a loaded machine and
  // left SortingHat no time (1,139.2 ms against its 1,137.9 ms alone, which it reaches within
  // 0.5 s).
  static void RunLoadBoundFirst(const PlanRequest& request, Portfolio& portfolio) {
    const std::vector<std::string> exact =
        AutoExactOrder(PlannerNames(), portfolio.ClearWinner(), portfolio.BestLoadBound());
    if (exact.empty() || exact.front() != "sortinghat" || !portfolio.BestLoadBound()) return;
    const double left = ExactTimeLeft(request, portfolio);
    if (left < kMinExactSeconds || StopRequested()) return;
    portfolio.Run(exact.front(),
                  std::max(kMinExactSeconds, left / static_cast<double>(exact.size())), true);
  }

  // What a fast member leaves of the limit for the exact round (its own limit ends before it), when
  // any exact planner is registered: the exact planners' minimum and twice ExactTimeLeft's margin
  // (the member's own check and simulation come after its limit). Given all that was left, m-SCT's
  // memory retries ran to the end of the limit on alphafold2-87m on moirai-inter, and MOIRAI, whose
  // plan is 0.5% faster and found within 0.4 s, never ran.
  static double ExactReserve(const PlanRequest& request) {
    if (AutoExactOrder(PlannerNames(), "", false).empty()) return 0.0;
    return kMinExactSeconds + 2.0 * std::min(0.5, 0.05 * request.options.time_limit_s);
  }

  // What is left of the limit for the exact planners, keeping a little for checking and
  // simulating each plan (RunPlanner).
  static double ExactTimeLeft(const PlanRequest& request, const Portfolio& portfolio) {
    const double limit = request.options.time_limit_s;
    return limit - std::min(0.5, 0.05 * limit) - portfolio.Elapsed();
  }

  // The time m-ETF and m-SCT are estimated to take with `left` seconds as their limit (0 for the
  // other members), from the members' times so far (`took`): an ETF pass took up to 3.4 times
  // HEFT's time (alphafold2-2.4b on moirai-inter: 1.7 against 0.5 s), or m-ETF's own once it ran;
  // m-SCT's LP takes up to half its limit before it.
  static double EtfSeconds(const std::string& name, const std::map<std::string, double>& took,
                           double left) {
    auto seconds = [&](const char* member) {
      auto it = took.find(member);
      return it == took.end() ? 0.0 : it->second;
    };
    const double etf = took.count("m-etf") ? seconds("m-etf") : 3.0 * seconds("heft");
    if (name == "m-etf") return etf;
    if (name == "m-sct") return 0.5 * left + etf;
    return 0.0;
  }

  // The exact planners share what is left evenly (time one does not use goes to the next); one
  // that ran already (RunLoadBoundFirst) does not run again.
  static void RunExact(const PlanRequest& request, Portfolio& portfolio) {
    std::vector<std::string> exact;
    for (const std::string& name :
         AutoExactOrder(PlannerNames(), portfolio.ClearWinner(), portfolio.BestLoadBound()))
      if (!portfolio.Ran(name)) exact.push_back(name);
    for (size_t i = 0; i < exact.size(); ++i) {
      const double left = ExactTimeLeft(request, portfolio);
      if (left < kMinExactSeconds || (portfolio.HasPlan() && StopRequested())) {
        portfolio.Skip(exact[i]);
        continue;
      }
      portfolio.Run(exact[i],
                    std::max(kMinExactSeconds, left / static_cast<double>(exact.size() - i)), true);
    }
  }
};

}  // namespace

std::unique_ptr<Planner> MakeAutoPlanner() { return std::make_unique<AutoPlanner>(); }

}  // namespace hx::place
