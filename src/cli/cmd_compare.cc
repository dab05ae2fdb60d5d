// hexplan compare MODEL --cluster C [--algos a,b,...]: runs several planners on the same inputs and
// prints one row each: simulated latency, speedup over `single`, gap to the lower bound, planning
// time and peak memory per device. --json prints {"results": [<place --json object>, ...]}.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

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
  std::string algos;
  PlannerFlags planner;
  bool json = false;
};

double Ms(double s) { return s * 1e3; }

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
  auto inputs = LoadPlanningInputs(args.model, args.cluster, args.profile);
  if (!inputs.ok()) return ReportError(inputs.status());

  place::PlanRequest request;
  request.cost = inputs->cost.get();
  if (Status s = args.planner.Apply(&request); !s.ok()) return ReportError(s);
  request.logger = &CliLogger();
  request.model_spec = args.model.model;
  request.model_options = *zoo_options;
  request.cluster_spec = inputs->cluster_spec;

  if (Status s = CheckOptionsOwned(request.planner_options, algos); !s.ok()) return ReportError(s);

  struct Row {
    std::string algo;
    StatusOr<place::PlacementOutcome> outcome;
    std::optional<double> bound_s;  // critical-path: a bound, not a plan
    double time_s = 0.0;
  };
  std::vector<Row> rows;
  StopOnSignals stop_on_signals;  // Ctrl-C: the planner running stops; the rest are skipped
  for (const std::string& a : algos) {
    if (StopRequested()) break;
    if (a == kCriticalPath) {
      Stopwatch watch;
      auto bound = place::CriticalPathBound(*inputs->cost);
      Row row{a, bound.status(), std::nullopt, watch.ElapsedSeconds()};
      if (bound.ok()) row.bound_s = *bound;
      rows.push_back(std::move(row));
      continue;
    }
    // Each planner takes the given options it owns.
    place::PlanRequest own = request;
    auto specs = place::PlannerOptionSpecs(a);
    own.planner_options =
        request.planner_options.Restrict(specs.ok() ? *specs : std::vector<OptionSpec>{});
    rows.push_back({a, place::RunPlanner(a, own)});
  }

  // `single` is the reference for speedups; run it when it is not in the list.
  std::optional<double> single_s;
  for (const Row& r : rows)
    if (r.algo == "single" && r.outcome.ok()) single_s = r.outcome->sim.makespan_s;
  if (!single_s && !StopRequested()) {
    place::PlanRequest plain = request;
    plain.planner_options = OptionSet();
    auto single = place::RunPlanner("single", plain);
    if (single.ok()) single_s = single->sim.makespan_s;
  }

  if (args.json) {
    nlohmann::json out;
    out["model"] = inputs->graph->name();
    out["cluster"] = inputs->cluster->name();
    out["warm"] = request.warm;
    nlohmann::json results = nlohmann::json::array();
    for (const Row& r : rows) {
      if (r.bound_s) {
        nlohmann::json j = {{"algo", r.algo},
                            {"status", "bound"},
                            {"latency_ms", Ms(*r.bound_s)},
                            {"planning_time_s", r.time_s},
                            {"detail", "a bound (model parallelism alone), not a plan"}};
        if (single_s && *r.bound_s > 0) j["speedup_over_single"] = *single_s / *r.bound_s;
        results.push_back(std::move(j));
      } else if (r.outcome.ok()) {
        nlohmann::json j = PlacementJson(*r.outcome, *inputs);
        if (single_s && r.outcome->sim.makespan_s > 0)
          j["speedup_over_single"] = *single_s / r.outcome->sim.makespan_s;
        results.push_back(std::move(j));
      } else {
        results.push_back(
            {{"algo", r.algo}, {"status", "error"}, {"error", r.outcome.status().message()}});
      }
    }
    out["results"] = std::move(results);
    if (single_s) out["single_latency_ms"] = Ms(*single_s);
    std::printf("%s\n", DumpJson(out, 2).c_str());
    return StopRequested() ? kExitInterrupted : 0;
  }
  std::printf("%s on %s%s\n", inputs->graph->name().c_str(), inputs->cluster->name().c_str(),
              request.warm > 0
                  ? (", planned for warm runs (warm " + FormatNumber(request.warm, 2) + ")").c_str()
                  : "");
  std::printf("%-14s %-10s %12s %8s %8s %10s  %s\n", "planner", "status", "latency_ms", "speedup",
              "vs_bound", "plan_s", "peak memory per device (GB)");
  for (const Row& r : rows) {
    if (r.bound_s) {
      std::printf("%-14s %-10s %12s %7.2fx %8s %10.3f  (a bound, not a plan)\n", r.algo.c_str(),
                  "bound", FormatNumber(Ms(*r.bound_s)).c_str(),
                  single_s ? *single_s / *r.bound_s : 0.0, "", r.time_s);
      continue;
    }
    if (!r.outcome.ok()) {
      std::printf("%-14s %-10s %s\n", r.algo.c_str(), "error",
                  r.outcome.status().message().c_str());
      continue;
    }
    const place::PlacementOutcome& o = *r.outcome;
    const double bound = o.lower_bound.value_s();
    std::string memory;
    for (const sim::DeviceStats& d : o.sim.devices) {
      if (d.peak_memory_bytes <= 0) continue;
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s%s %s", memory.empty() ? "" : ", ", d.name.c_str(),
                    FormatNumber(d.peak_memory_bytes / 1e9, 2).c_str());
      memory += buf;
    }
    std::printf("%-14s %-10s %12s %7.2fx %7.2fx %10.3f  %s\n", r.algo.c_str(),
                place::PlanStatusName(o.result.status), FormatNumber(Ms(o.sim.makespan_s)).c_str(),
                single_s && o.sim.makespan_s > 0 ? *single_s / o.sim.makespan_s : 0.0,
                bound > 0 ? o.sim.makespan_s / bound : 0.0, o.result.planning_time_s,
                memory.c_str());
  }
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
  app->add_option("--algos", args->algos,
                  "comma-separated planners, and critical-path for that bound (default: all)");
  AddPlannerOptions(app, args->planner);
  app->add_flag("--json", args->json, "print one JSON object with `results`");
  return {app, [args]() { return RunCompare(*args); }};
}

}  // namespace hx::cli
