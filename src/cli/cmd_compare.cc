// hexplan compare MODEL --cluster C [--algos a,b,...]: runs several planners on the same inputs and
// prints one row each, fastest first (the winner marked '*', failures last with their reason):
// simulated latency, speedup over `single` (or why there is none), gap to the lower bound,
// planning time and peak memory per device. --json prints {"results": [<place --json object>,
// ...], "winner": ...}.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_progress.h"
#include "cli/command.h"
#include "cli/placement_report.h"
#include "cli/planning_inputs.h"
#include "hexplan/core/format_number.h"
#include "hexplan/core/interrupt.h"
#include "hexplan/core/json_text.h"
#include "hexplan/core/stopwatch.h"
#include "hexplan/place/critical_path_bound.h"
#include "hexplan/place/planner.h"

namespace hx::cli {
namespace {

struct CompareArgs {
  ModelArgs model;
  std::string cluster;
  std::string profile;
  CostModelArgs cost;  // --cost-model, --calibration
  std::string algos;
  PlannerFlags planner;
  bool json = false;
};

double CompareMs(double s) { return s * 1e3; }

// SortingHat's critical-path figure: a bound reported beside the planners, not a planner.
constexpr char kCriticalPath[] = "critical-path";

std::vector<std::string> SplitAlgos(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// The default list: every registered planner that makes a plan quickly.
std::vector<std::string> DefaultAlgos() {
  std::vector<std::string> out;
  for (const std::string& name : place::PlannerNames())
    if (name != "auto") out.push_back(name);
  out.push_back(kCriticalPath);
  return out;
}

// Every planner option given must belong to at least one planner compared.
Status CheckOptionsOwned(const OptionSet& given, const std::vector<std::string>& algos) {
  for (const auto& [name, value] : given.given()) {
    bool owned = false;
    for (const std::string& a : algos) {
      auto specs = place::PlannerOptionSpecs(a);
      if (!specs.ok()) continue;
      for (const OptionSpec& s : *specs) owned = owned || s.name == name;
    }
    if (!owned)
      return InvalidArgument("--" + name + ": not an option of any planner compared (" + [&] {
        std::string list;
        for (const std::string& a : algos) list += (list.empty() ? "" : ", ") + a;
        return list;
      }() + ")");
  }
  return Status::Ok();
}

struct Row {
  std::string algo;
  StatusOr<place::PlacementOutcome> outcome;
  std::optional<double> bound_s;  // critical-path: a bound, not a plan
  double time_s = 0.0;
};

// `single`'s latency, the reference for speedups, or why there is none.
struct Reference {
  std::optional<double> single_s;
  std::string why_none;  // "single: <error>" or "single: interrupted"
};

// Runs each planner in turn (Ctrl-C: the one running stops; the rest are skipped), with a
// progress line while one runs long and a line per finished planner once the run is long.
std::vector<Row> RunAll(const std::vector<std::string>& algos, const place::PlanRequest& request,
                        const PlanningInputs& inputs, CliProgress* progress) {
  std::vector<Row> rows;
  for (const std::string& a : algos) {
    if (StopRequested()) break;
    Stopwatch watch;
    if (a == kCriticalPath) {
      progress->reporter().Start(a);
      auto bound = place::CriticalPathBound(*inputs.cost);
      Row row{a, bound.status(), std::nullopt, watch.ElapsedSeconds()};
      if (bound.ok()) row.bound_s = *bound;
      progress->reporter().Finish(
          a + "  " + (bound.ok() ? "bound " + FormatNumber(CompareMs(*bound)) + " ms" : "failed") +
          "  " + FormatNumber(row.time_s, 1) + " s");
      rows.push_back(std::move(row));
      continue;
    }
    // Each planner takes the given options it owns.
    place::PlanRequest own = request;
    auto specs = place::PlannerOptionSpecs(a);
    own.planner_options =
        request.planner_options.Restrict(specs.ok() ? *specs : std::vector<OptionSpec>{});
    progress->StartPlanner(a, &own);
    rows.push_back({a, place::RunPlanner(a, own), std::nullopt, 0.0});
    rows.back().time_s = watch.ElapsedSeconds();
    progress->reporter().Finish(PlannerDoneText(a, rows.back().outcome, rows.back().time_s));
  }
  return rows;
}

// "single: <the first line of why it failed>".
std::string SingleFailure(const Status& status) {
  std::string why = status.message().substr(0, status.message().find('\n'));
  while (!why.empty() && (why.back() == ':' || why.back() == ' ')) why.pop_back();
  return why.rfind("single", 0) == 0 ? why : "single: " + why;
}

// `single`'s latency from the rows, or from a run of its own when it is not in the list.
Reference SingleReference(const std::vector<Row>& rows, const place::PlanRequest& request,
                          CliProgress* progress) {
  Reference ref;
  for (const Row& r : rows) {
    if (r.algo != "single") continue;
    if (r.outcome.ok()) ref.single_s = r.outcome->sim.makespan_s;
    if (!r.outcome.ok()) ref.why_none = SingleFailure(r.outcome.status());
    return ref;
  }
  if (StopRequested()) {
    ref.why_none = "single: interrupted";
    return ref;
  }
  place::PlanRequest plain = request;
  plain.planner_options = OptionSet();
  Stopwatch watch;
  progress->StartPlanner("single (the reference for speedups)", &plain);
  auto single = place::RunPlanner("single", plain);
  progress->reporter().Finish(PlannerDoneText("single", single, watch.ElapsedSeconds()));
  if (single.ok()) {
    ref.single_s = single->sim.makespan_s;
  } else {
    ref.why_none = SingleFailure(single.status());
  }
  return ref;
}

// The rows to print, in order: plans by simulated latency, then the bound, then failures (as run).
std::vector<const Row*> RankedRows(const std::vector<Row>& rows) {
  std::vector<const Row*> out;
  for (const Row& r : rows) out.push_back(&r);
  auto group = [](const Row* r) { return r->bound_s ? 1 : r->outcome.ok() ? 0 : 2; };
  std::stable_sort(out.begin(), out.end(), [&](const Row* a, const Row* b) {
    if (group(a) != group(b)) return group(a) < group(b);
    return group(a) == 0 && a->outcome->sim.makespan_s < b->outcome->sim.makespan_s;
  });
  return out;
}

nlohmann::json CompareJson(const std::vector<Row>& rows, const Reference& ref,
                           const PlanningInputs& inputs, double warm) {
  nlohmann::json out;
  out["model"] = inputs.graph->name();
  out["cluster"] = inputs.cluster->name();
  out["warm"] = warm;
  std::vector<const Row*> ranked = RankedRows(rows);
  auto rank_of = [&](const Row& r) {
    return std::find(ranked.begin(), ranked.end(), &r) - ranked.begin() + 1;
  };
  nlohmann::json results = nlohmann::json::array();
  for (const Row& r : rows) {
    if (r.bound_s) {
      nlohmann::json j = {{"algo", r.algo},
                          {"status", "bound"},
                          {"latency_ms", CompareMs(*r.bound_s)},
                          {"planning_time_s", r.time_s},
                          {"detail", "a bound (model parallelism alone), not a plan"}};
      if (ref.single_s && *r.bound_s > 0) j["speedup_over_single"] = *ref.single_s / *r.bound_s;
      results.push_back(std::move(j));
    } else if (r.outcome.ok()) {
      nlohmann::json j = PlacementJson(*r.outcome, inputs);
      if (ref.single_s && r.outcome->sim.makespan_s > 0)
        j["speedup_over_single"] = *ref.single_s / r.outcome->sim.makespan_s;
      j["rank"] = rank_of(r);
      results.push_back(std::move(j));
    } else {
      results.push_back(
          {{"algo", r.algo}, {"status", "error"}, {"error", r.outcome.status().message()}});
    }
  }
  out["results"] = std::move(results);
  if (!ranked.empty() && ranked.front()->outcome.ok() && !ranked.front()->bound_s)
    out["winner"] = ranked.front()->algo;
  if (ref.single_s) out["single_latency_ms"] = CompareMs(*ref.single_s);
  if (!ref.single_s) out["single_error"] = ref.why_none;
  return out;
}

std::string PeakMemoryText(const place::PlacementOutcome& o) {
  std::string memory;
  for (const sim::DeviceStats& d : o.sim.devices) {
    if (d.peak_memory_bytes <= 0) continue;
    memory +=
        (memory.empty() ? "" : ", ") + d.name + " " + FormatNumber(d.peak_memory_bytes / 1e9, 2);
  }
  return memory;
}

std::string SpeedupText(const Reference& ref, double latency_s) {
  if (!ref.single_s || !(latency_s > 0)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", *ref.single_s / latency_s);
  return buf;
}

void PrintTable(const std::vector<Row>& rows, const Reference& ref, const PlanningInputs& inputs,
                double warm) {
  std::printf(
      "%s on %s%s\n", inputs.graph->name().c_str(), inputs.cluster->name().c_str(),
      warm > 0 ? (", planned for warm runs (warm " + FormatNumber(warm, 2) + ")").c_str() : "");
  std::printf("  %-14s %-10s %12s %8s %8s %10s  %s\n", "planner", "status", "latency_ms", "speedup",
              "vs_bound", "plan_s", "peak memory per device (GB)");
  const std::vector<const Row*> ranked = RankedRows(rows);
  const Row* winner = !ranked.empty() && ranked.front()->outcome.ok() && !ranked.front()->bound_s
                          ? ranked.front()
                          : nullptr;
  for (const Row* r : ranked) {
    const char* mark = r == winner ? "*" : " ";
    if (r->bound_s) {
      std::printf("%s %-14s %-10s %12s %8s %8s %10.3f  (a bound, not a plan)\n", mark,
                  r->algo.c_str(), "bound", FormatNumber(CompareMs(*r->bound_s)).c_str(),
                  SpeedupText(ref, *r->bound_s).c_str(), "", r->time_s);
    } else if (!r->outcome.ok()) {
      // A message's further lines indented under it, apart from the rows.
      std::string why = r->outcome.status().message();
      for (size_t at = why.find('\n'); at != std::string::npos; at = why.find('\n', at + 1))
        why.insert(at + 1, "      ");
      std::printf("%s %-14s %-10s %s\n", mark, r->algo.c_str(), "error", why.c_str());
    } else {
      const place::PlacementOutcome& o = *r->outcome;
      const double bound = o.lower_bound.value_s();
      std::printf(
          "%s %-14s %-10s %12s %8s %7.2fx %10.3f  %s\n", mark, r->algo.c_str(),
          place::PlanStatusName(o.result.status), FormatNumber(CompareMs(o.sim.makespan_s)).c_str(),
          SpeedupText(ref, o.sim.makespan_s).c_str(), bound > 0 ? o.sim.makespan_s / bound : 0.0,
          o.result.planning_time_s, PeakMemoryText(o).c_str());
    }
  }
  if (winner != nullptr) std::printf("fastest plan: %s (marked *)\n", winner->algo.c_str());
  if (!ref.single_s) std::printf("speedup n/a (%s)\n", ref.why_none.c_str());
}

int RunCompare(const CompareArgs& args) {
  auto zoo_options = args.model.ToZooOptions();
  if (!zoo_options.ok()) return ReportError(zoo_options.status());
  std::vector<std::string> algos = args.algos.empty() ? DefaultAlgos() : SplitAlgos(args.algos);
  if (algos.empty()) return ReportError(InvalidArgument("--algos: no planner named"));
  for (const std::string& a : algos) {
    if (a == kCriticalPath) continue;
    auto planner = place::MakePlanner(a);
    if (!planner.ok()) return ReportError(planner.status().WithContext("--algos"));
  }
  auto inputs = LoadPlanningInputs(args.model, args.cluster, args.profile, args.cost);
  if (!inputs.ok()) return ReportError(inputs.status());

  place::PlanRequest request;
  request.cost = inputs->cost.get();
  if (Status s = args.planner.Apply(&request); !s.ok()) return ReportError(s);
  request.logger = &CliLogger();
  request.model_spec = args.model.model;
  request.model_options = *zoo_options;
  request.cluster_spec = inputs->cluster_spec;

  if (Status s = CheckOptionsOwned(request.planner_options, algos); !s.ok()) return ReportError(s);

  StopOnSignals stop_on_signals;  // Ctrl-C: the planner running stops; the rest are skipped
  std::vector<Row> rows;
  Reference ref;
  {
    CliProgress progress;
    rows = RunAll(algos, request, *inputs, &progress);
    ref = SingleReference(rows, request, &progress);
  }

  if (args.json) {
    std::printf("%s\n", DumpJson(CompareJson(rows, ref, *inputs, request.warm), 2).c_str());
    return StopRequested() ? kExitInterrupted : 0;
  }
  PrintTable(rows, ref, *inputs, request.warm);
  bool all_failed = true;
  for (const Row& r : rows) all_failed = all_failed && !r.outcome.ok() && !r.bound_s;
  if (StopRequested()) {
    std::fprintf(stderr, "hexplan: interrupted after %zu of %zu planners\n", rows.size(),
                 algos.size());
    return kExitInterrupted;
  }
  if (all_failed) return ReportError(rows.front().outcome.status());
  return 0;
}

}  // namespace

Command AddCompareCommand(CLI::App& root) {
  auto* app = root.add_subcommand("compare", "run several planners on one model and compare");
  auto args = std::make_shared<CompareArgs>();
  args->model.AddTo(app);
  app->add_option("--cluster", args->cluster,
                  "a cluster preset or file (optional for workload files that name devices)");
  app->add_option("--profile", args->profile,
                  "measured op times (hexplan profile, or a profile JSON/CSV) before the roofline");
  args->cost.AddTo(app);
  app->add_option("--algos", args->algos,
                  "comma-separated planners, and critical-path for that bound (default: all)");
  AddPlannerOptions(app, args->planner);
  app->add_flag("--json", args->json, "print one JSON object with `results`");
  return {app, [args]() { return RunCompare(*args); }};
}

}  // namespace hx::cli
