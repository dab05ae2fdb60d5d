// hexplan place MODEL --cluster C --algo NAME: runs a planner, simulates its plan and reports the
// latency against the lower bound; -o writes the plan for `hexplan simulate`.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/cli_progress.h"
#include "cli/command.h"
#include "cli/placement_report.h"
#include "cli/planning_inputs.h"
#include "hexplan/core/format_number.h"
#include "hexplan/core/interrupt.h"
#include "hexplan/core/json_text.h"
#include "hexplan/core/output_files.h"
#include "hexplan/core/stopwatch.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/place/critical_path_bound.h"
#include "hexplan/place/planner.h"
#include "hexplan/plan/plan_json.h"

namespace hx::cli {
namespace {

struct PlaceArgs {
  ModelArgs model;
  std::string cluster;
  std::string profile;
  CostModelArgs cost;  // --cost-model, --calibration
  std::string algo = "single";
  std::string output;
  PlannerFlags planner;
  bool json = false;
};

double PlaceMs(double s) { return s * 1e3; }

// `--algo critical-path` is SortingHat's bound (model parallelism alone), printed, never a plan.
int RunCriticalPath(const PlaceArgs& args, const PlanningInputs& inputs) {
  if (!args.output.empty())
    return ReportError(InvalidArgument(
        "-o: critical-path is a bound (model parallelism alone), not a plan; nothing to write"));
  auto bound = place::CriticalPathBoundDetail(*inputs.cost);
  if (!bound.ok()) return ReportError(bound.status());
  if (args.json) {
    nlohmann::json out = {{"algo", "critical-path"},
                          {"model", inputs.graph->name()},
                          {"cluster", inputs.cluster->name()},
                          {"status", "bound"},
                          {"latency_ms", PlaceMs(bound->seconds)},
                          {"path_ops", bound->ops.size()}};
    std::printf("%s\n", DumpJson(out, 2).c_str());
    return 0;
  }
  std::printf("algo           critical-path (a bound, not a plan)\n");
  std::printf("model          %s on %s\n", inputs.graph->name().c_str(),
              inputs.cluster->name().c_str());
  std::printf("bound          %s ms over %zu ops (fastest device each, free communication)\n",
              FormatNumber(PlaceMs(bound->seconds)).c_str(), bound->ops.size());
  return 0;
}

int RunPlace(const PlaceArgs& args) {
  OutputFiles outputs;
  if (Status s = ExpectPlannerOutputs(args.planner, &outputs); !s.ok()) return ReportError(s);
  if (Status s = outputs.Expect("--output", args.output); !s.ok()) return ReportError(s);
  auto zoo_options = args.model.ToZooOptions();
  if (!zoo_options.ok()) return ReportError(zoo_options.status());
  auto inputs = LoadPlanningInputs(args.model, args.cluster, args.profile, args.cost);
  if (!inputs.ok()) return ReportError(inputs.status());
  const graph::Graph& graph = *inputs->graph;
  const hw::Cluster& cluster = *inputs->cluster;

  if (args.algo == "critical-path") return RunCriticalPath(args, *inputs);

  place::PlanRequest request;
  request.cost = inputs->cost.get();
  if (Status s = args.planner.Apply(&request); !s.ok()) return ReportError(s);
  request.logger = &CliLogger();
  request.model_spec = args.model.model;
  request.model_options = *zoo_options;
  request.cluster_spec = inputs->cluster_spec;
  // Ctrl-C or SIGTERM while planning: the planner stops and returns its best valid plan, which is
  // written and reported (status interrupted, exit 130); with none yet, nothing is written.
  StopOnSignals stop_on_signals;
  CliProgress progress;  // a line on stderr while the planner runs past 2 s
  progress.StartPlanner(args.algo, &request);
  Stopwatch watch;
  auto outcome = place::RunPlanner(args.algo, request);
  progress.reporter().Finish(PlannerDoneText(args.algo, outcome, watch.ElapsedSeconds()));
  const bool interrupted = StopRequested();
  if (!outcome.ok()) {
    if (!interrupted) return ReportError(outcome.status());
    std::fprintf(stderr, "hexplan: interrupted before a valid plan was found; nothing written\n");
    return kExitInterrupted;
  }
  if (interrupted)
    std::fprintf(stderr, "hexplan: interrupted: %s the best valid plan found so far\n",
                 args.output.empty() ? "reporting" : "wrote");
  const plan::Plan& p = outcome->result.plan;
  if (!args.output.empty()) {
    Status s = outputs.StageWith(args.output, [&](const std::string& path) {
      return plan::WritePlanFile(path, p, graph, cluster);
    });
    if (s.ok()) s = CommitOutputs(outputs);
    if (!s.ok()) return ReportError(s);
  }
  const double latency = outcome->sim.makespan_s;
  const double bound = outcome->lower_bound.value_s();
  if (args.json) {
    nlohmann::json out = PlacementJson(*outcome, *inputs);
    if (!args.output.empty()) out["plan"] = args.output;
    std::printf("%s\n", DumpJson(out, 2).c_str());
    return interrupted ? kExitInterrupted : 0;
  }
  const place::PlanResult& r = outcome->result;
  std::printf("algo           %s (%s)\n", p.algo.c_str(), place::PlanStatusName(r.status));
  std::printf("model          %s on %s\n", graph.name().c_str(), cluster.name().c_str());
  std::printf("latency        %s ms (simulated%s)\n", FormatNumber(PlaceMs(latency)).c_str(),
              outcome->warm > 0 ? (", warm " + FormatNumber(outcome->warm, 2)).c_str() : "");
  std::printf("lower bound    %s ms (%sx)\n", FormatNumber(PlaceMs(bound)).c_str(),
              FormatNumber(bound > 0 ? latency / bound : 0.0, 2).c_str());
  if (r.model_objective_s)
    std::printf("model estimate %s ms (the planner's own model)\n",
                FormatNumber(PlaceMs(*r.model_objective_s)).c_str());
  if (r.solver_bound_s && r.solver_gap)
    std::printf("solver bound   %s ms (gap %.2f%%)\n",
                FormatNumber(PlaceMs(*r.solver_bound_s)).c_str(), 100.0 * *r.solver_gap);
  else if (r.solver_bound_s)  // the kept plan is not the model's: no gap in the model's terms
    std::printf("solver bound   %s ms\n", FormatNumber(PlaceMs(*r.solver_bound_s)).c_str());
  if (!r.detail.empty()) std::printf("detail         %s\n", r.detail.c_str());
  std::printf("planning time  %.3f s\n", r.planning_time_s);
  for (const sim::DeviceStats& d : outcome->sim.devices)
    if (d.compute_s > 0)
      std::printf("  %-12s compute %9s ms  peak memory %s GB\n", d.name.c_str(),
                  FormatNumber(PlaceMs(d.compute_s)).c_str(),
                  FormatNumber(d.peak_memory_bytes / 1e9).c_str());
  if (!args.output.empty()) std::printf("plan           %s\n", args.output.c_str());
  return interrupted ? kExitInterrupted : 0;
}

}  // namespace

Command AddPlaceCommand(CLI::App& root) {
  auto* app = root.add_subcommand("place", "plan a model on a cluster and simulate the plan");
  auto args = std::make_shared<PlaceArgs>();
  args->model.AddTo(app);
  app->add_option("--cluster", args->cluster,
                  "a cluster preset or file (optional for workload files that name devices)");
  app->add_option("--profile", args->profile,
                  "measured op times (hexplan profile, or a profile JSON/CSV) before the roofline");
  args->cost.AddTo(app);
  std::string algos;
  for (const auto& n : place::PlannerNames()) algos += (algos.empty() ? "" : ", ") + n;
  app->add_option("--algo", args->algo, "the planner: " + algos + " (or critical-path: a bound)")
      ->default_val("single");
  app->add_option("-o,--output", args->output, "write the plan (JSON)");
  AddPlannerOptions(app, args->planner);
  app->add_flag("--json", args->json, "print one JSON object");
  return {app, [args]() { return RunPlace(*args); }};
}

}  // namespace hx::cli
