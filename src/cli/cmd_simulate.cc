// hexplan simulate PLAN: replays a plan in the discrete-event simulator and reports its latency,
// the lower bound, per-device compute and memory, and writes a Chrome trace and an SVG timeline.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/cli_progress.h"
#include "cli/command.h"
#include "cli/plan_file.h"
#include "hexplan/core/file_util.h"
#include "hexplan/core/format_number.h"
#include "hexplan/core/json_text.h"
#include "hexplan/core/output_files.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/graph/model_loader.h"
#include "hexplan/hw/presets.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/sim/lower_bound.h"
#include "hexplan/sim/simulator.h"
#include "hexplan/sim/timeline.h"

namespace hx::cli {
namespace {

struct SimulateArgs {
  std::string plan_path;
  std::string trace_path;
  std::string svg_path;
  std::string model;
  std::string cluster;
  std::string profile;
  CostModelArgs cost;  // --cost-model, --calibration
  double warm = 0.0;
  std::string copy_mode = "plan";
  bool json = false;
};

double SimulateMs(double s) { return s * 1e3; }

int RunSimulate(const SimulateArgs& args) {
  OutputFiles outputs;
  for (Status s :
       {outputs.Expect("--trace", args.trace_path), outputs.Expect("--svg", args.svg_path)})
    if (!s.ok()) return ReportError(s);
  auto loaded = LoadPlanFile({.path = args.plan_path,
                              .model = args.model,
                              .cluster = args.cluster,
                              .profile = args.profile,
                              .cost = args.cost});
  if (!loaded.ok()) return ReportError(loaded.status());
  const graph::Graph* graph = loaded->inputs.graph.get();
  const hw::Cluster* cluster = loaded->inputs.cluster.get();
  const cost::CostModel& cost = *loaded->inputs.cost;
  plan::Plan& p = loaded->plan;
  if (args.warm != 0.0) {  // a negative or NaN fraction is refused there, as place refuses it
    Status ws = plan::ApplyWarmStart(p, *graph, *cluster, args.warm);
    if (!ws.ok()) return ReportError(ws);
  }
  sim::SimOptions options;
  if (args.copy_mode == "exclusive-bus")
    options.copy_mode = sim::CopyMode::kExclusiveBus;
  else if (args.copy_mode != "plan")
    return ReportError(InvalidArgument("--copy-mode: expected plan or exclusive-bus, got '" +
                                       args.copy_mode + "'"));

  sim::TimelineRecorder recorder(p, *graph, *cluster);
  const bool record = !args.trace_path.empty() || !args.svg_path.empty();
  CliProgress progress;  // a line on stderr when a big plan simulates past 2 s
  progress.reporter().Start("simulate");
  auto result = sim::Simulate(p, cost, options, record ? &recorder : nullptr);
  progress.reporter().Finish();
  if (!result.ok()) return ReportError(result.status());
  // A plan made for warm runs (`place --warm`) already marks its resident weights.
  const double warm = std::max(args.warm, p.warm.value_or(0.0));
  auto lb = sim::ComputeLowerBound(cost, warm);
  if (!lb.ok()) return ReportError(lb.status());

  if (!args.trace_path.empty()) {
    Status s = outputs.Stage(args.trace_path, recorder.ChromeTraceJson());
    if (!s.ok()) return ReportError(s);
  }
  if (!args.svg_path.empty()) {
    const std::string title = graph->name() + " on " + cluster->name() + " (" + p.algo + ")";
    Status s = outputs.Stage(args.svg_path, recorder.SvgGantt(title));
    if (!s.ok()) return ReportError(s);
  }
  if (Status s = CommitOutputs(outputs); !s.ok()) return ReportError(s);

  const sim::SimResult& r = *result;
  double cp_compute = 0.0, cp_transfer = 0.0;
  for (const sim::CriticalStep& s : r.critical_path)
    (s.is_op ? cp_compute : cp_transfer) += s.finish - s.start;
  if (args.json) {
    nlohmann::json out;
    out["plan"] = args.plan_path;
    out["model"] = graph->name();
    out["cluster"] = cluster->name();
    out["algo"] = p.algo;
    out["copy_mode"] = sim::CopyModeName(options.copy_mode);
    out["warm"] = warm;
    out["latency_ms"] = SimulateMs(r.makespan_s);
    out["lower_bound_ms"] = SimulateMs(lb->value_s());
    out["lower_bound"] = {{"critical_path_ms", SimulateMs(lb->critical_path_s)},
                          {"compute_ms", SimulateMs(lb->compute_s)},
                          {"weight_load_ms", SimulateMs(lb->weight_load_s)}};
    if (p.estimate_ms) out["estimate_ms"] = *p.estimate_ms;
    out["transfer_bytes"] = r.transfer_bytes;
    out["weight_load_bytes"] = r.weight_load_bytes;
    out["activation_bytes"] = r.activation_bytes;
    out["dha_bytes"] = r.dha_bytes;
    out["events"] = r.num_events;
    nlohmann::json devices = nlohmann::json::array();
    for (const sim::DeviceStats& d : r.devices)
      devices.push_back({{"name", d.name},
                         {"compute_ms", SimulateMs(d.compute_s)},
                         {"utilisation", d.utilisation},
                         {"peak_memory_bytes", d.peak_memory_bytes},
                         {"capacity_bytes", d.capacity_bytes}});
    out["devices"] = std::move(devices);
    nlohmann::json queues = nlohmann::json::array();
    for (const sim::StreamStats& s : r.streams)
      if (!s.compute)
        queues.push_back(
            {{"name", s.name}, {"busy_ms", SimulateMs(s.busy_s)}, {"utilisation", s.utilisation}});
    out["queues"] = std::move(queues);
    nlohmann::json links = nlohmann::json::array();
    for (const sim::LinkStats& l : r.links)
      links.push_back({{"name", l.name},
                       {"bytes", l.bytes},
                       {"busy_ms", SimulateMs(l.busy_s)},
                       {"utilisation", l.utilisation}});
    out["links"] = std::move(links);
    out["critical_path"] = {{"steps", r.critical_path.size()},
                            {"compute_ms", SimulateMs(cp_compute)},
                            {"transfer_ms", SimulateMs(cp_transfer)}};
    out["memory_overflows"] = r.memory_overflows;
    std::printf("%s\n", DumpJson(out, 2).c_str());
    return 0;
  }
  std::printf("plan           %s (%s, %s on %s)\n", args.plan_path.c_str(), p.algo.c_str(),
              graph->name().c_str(), cluster->name().c_str());
  std::printf("latency        %s ms (simulated, copy mode %s%s)\n",
              FormatNumber(SimulateMs(r.makespan_s)).c_str(), sim::CopyModeName(options.copy_mode),
              warm > 0 ? (", " + FormatNumber(warm, 2) + " warm").c_str() : "");
  std::printf("lower bound    %s ms (critical path %s, compute %s, weight loads %s)\n",
              FormatNumber(SimulateMs(lb->value_s())).c_str(),
              FormatNumber(SimulateMs(lb->critical_path_s)).c_str(),
              FormatNumber(SimulateMs(lb->compute_s)).c_str(),
              FormatNumber(SimulateMs(lb->weight_load_s)).c_str());
  std::printf("transfers      %.3f GB (weights %.3f GB, activations %.3f GB), DHA reads %.3f GB\n",
              r.transfer_bytes / 1e9, r.weight_load_bytes / 1e9, r.activation_bytes / 1e9,
              r.dha_bytes / 1e9);
  std::printf("critical path  %zu steps: %s ms compute, %s ms transfers\n", r.critical_path.size(),
              FormatNumber(SimulateMs(cp_compute)).c_str(),
              FormatNumber(SimulateMs(cp_transfer)).c_str());
  for (const sim::DeviceStats& d : r.devices) {
    if (d.compute_s == 0.0 && d.peak_memory_bytes == 0) continue;
    std::printf("  %-12s compute %9s ms (%5.1f%%)  peak memory %8s GB of %s GB\n", d.name.c_str(),
                FormatNumber(SimulateMs(d.compute_s)).c_str(), 100 * d.utilisation,
                FormatNumber(d.peak_memory_bytes / 1e9).c_str(),
                FormatNumber(d.capacity_bytes / 1e9, 1).c_str());
  }
  for (const auto& o : r.memory_overflows) std::printf("warning: memory overflow: %s\n", o.c_str());
  if (!args.trace_path.empty()) std::printf("trace          %s\n", args.trace_path.c_str());
  if (!args.svg_path.empty()) std::printf("timeline       %s\n", args.svg_path.c_str());
  return 0;
}

}  // namespace

Command AddSimulateCommand(CLI::App& root) {
  auto* app = root.add_subcommand("simulate", "simulate a plan: latency, lower bound, timelines");
  auto args = std::make_shared<SimulateArgs>();
  app->add_option("PLAN", args->plan_path, "a plan file (hexplan place -o)")->required();
  app->add_option("--trace", args->trace_path, "write a Chrome/Perfetto trace (JSON)");
  app->add_option("--svg", args->svg_path, "write an SVG Gantt chart");
  app->add_option("--model", args->model, "rebuild the graph from this model instead");
  app->add_option("--cluster", args->cluster, "use this cluster instead of the plan's");
  app->add_option("--profile", args->profile,
                  "measured op times (hexplan profile, or a profile JSON/CSV) before the roofline");
  args->cost.AddTo(app);
  app->add_option("--warm", args->warm, "fraction of the parameters already resident (0..1)")
      ->default_val(0.0);
  app->add_option("--copy-mode", args->copy_mode,
                  "plan (the plan's copy queues) or exclusive-bus (SortingHat's per-bus queues)")
      ->default_val("plan");
  app->add_flag("--json", args->json, "print one JSON object");
  return {app, [args]() { return RunSimulate(*args); }};
}

}  // namespace hx::cli
