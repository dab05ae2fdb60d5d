// hexplan show PLAN: where each operator of a plan runs. Per device: its ops collapsed into runs
// named after their layers ("transformer/h.0-5"), subgraphs, compute, weights, transfers, memory.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "cli/command.h"
#include "cli/plan_file.h"
#include "hexplan/core/format_number.h"
#include "hexplan/core/json_text.h"
#include "hexplan/hw/quantity.h"
#include "hexplan/plan/plan_summary.h"

namespace hx::cli {
namespace {

constexpr size_t kDefaultRunsShown = 8;  // per device, without --all

struct ShowArgs {
  PlanFileArgs plan;
  bool all = false;
  bool json = false;
};

double ShowMs(double s) { return s * 1e3; }

std::string TallyText(const plan::Tally& t) {
  return std::to_string(t.count) + " (" + hw::FormatBytes(t.bytes) + ")";
}

// "34 loaded (210.4 MiB), 2 read by DHA (1 MiB)": the modes in use, or "none".
std::string WeightsText(const plan::WeightTallies& w) {
  std::string text;
  for (const auto& [tally, how] :
       {std::pair{&w.load, " loaded"}, std::pair{&w.resident, " resident"},
        std::pair{&w.dha, " read by DHA"}, std::pair{&w.relay, " relayed"}}) {
    if (tally->count == 0) continue;
    if (!text.empty()) text += ", ";
    text += std::to_string(tally->count) + how + " (" + hw::FormatBytes(tally->bytes) + ")";
  }
  return text.empty() ? "none" : text;
}

std::string RunCounts(const plan::OpRun& run) {
  const size_t ops = run.ops.size();
  std::string text = std::to_string(ops) + (ops == 1 ? " op" : " ops");
  if (ops < run.block_ops) text += " of " + std::to_string(run.block_ops);
  if (run.numbered && run.blocks > 1) text += " in " + std::to_string(run.blocks) + " blocks";
  return text;
}

void PrintRuns(const std::vector<plan::OpRun>& runs, bool all) {
  const size_t shown = all ? runs.size() : std::min(runs.size(), kDefaultRunsShown);
  for (size_t i = 0; i < shown; ++i)
    std::printf("    %s (%s)\n", runs[i].label.c_str(), RunCounts(runs[i]).c_str());
  if (shown < runs.size())
    std::printf("    ... %zu more runs (--all shows every run)\n", runs.size() - shown);
}

void PrintDevice(const plan::DeviceSummary& d, const hw::Cluster& cluster, bool all) {
  const hw::Device& device = cluster.device(d.device);
  const plan::DeviceMemoryBound& m = d.memory;
  std::printf("\n%s (%s)\n", device.name.c_str(), device.spec.model.c_str());
  std::printf("  ops        %zu in %zu subgraphs, %zu run%s\n", d.ops, d.subgraphs, d.runs.size(),
              d.runs.size() == 1 ? "" : "s");
  std::printf("  compute    %s ms\n", FormatNumber(ShowMs(d.compute_s)).c_str());
  const std::string stated =
      m.stated_bytes > 0 ? ", stated footprints " + hw::FormatBytes(m.stated_bytes) : "";
  std::printf("  memory     %s of %s (weights %s, activations at peak %s%s)\n",
              hw::FormatBytes(m.total()).c_str(),
              m.capacity_bytes > 0 ? hw::FormatBytes(m.capacity_bytes).c_str() : "unlimited",
              hw::FormatBytes(m.weight_bytes).c_str(),
              hw::FormatBytes(m.peak_activation_bytes).c_str(), stated.c_str());
  std::printf("  weights    %s\n", WeightsText(d.weights).c_str());
  std::printf("  transfers  in %s, out %s\n", TallyText(d.transfers_in).c_str(),
              TallyText(d.transfers_out).c_str());
  std::printf("  runs\n");
  PrintRuns(d.runs, all);
}

void PrintText(const ShowArgs& args, const LoadedPlan& loaded, const plan::PlanSummary& s) {
  const plan::Plan& p = loaded.plan;
  std::printf("plan       %s (%s, %s on %s)\n", args.plan.path.c_str(), p.algo.c_str(),
              loaded.inputs.graph->name().c_str(), loaded.inputs.cluster->name().c_str());
  if (p.estimate_ms)
    std::printf("estimate   %s ms (the planner's)\n", FormatNumber(*p.estimate_ms).c_str());
  std::printf("ops        %zu in %zu subgraphs on %zu devices, compute %s ms in all\n", s.ops,
              s.subgraphs, s.devices.size(), FormatNumber(ShowMs(s.compute_s)).c_str());
  std::printf("weights    %s\n", WeightsText(s.weights).c_str());
  std::printf("transfers  %s\n", TallyText(s.transfers).c_str());
  for (const plan::DeviceSummary& d : s.devices) PrintDevice(d, *loaded.inputs.cluster, args.all);
}

nlohmann::json TallyJson(const plan::Tally& t) { return {{"count", t.count}, {"bytes", t.bytes}}; }

nlohmann::json WeightsJson(const plan::WeightTallies& w) {
  return {{"load", TallyJson(w.load)},
          {"resident", TallyJson(w.resident)},
          {"dha", TallyJson(w.dha)},
          {"relay", TallyJson(w.relay)}};
}

nlohmann::json RunJson(const plan::OpRun& run, const graph::Graph& graph) {
  return {{"label", run.label},
          {"first", graph.node(run.first).name},
          {"last", graph.node(run.last).name},
          {"ops", run.ops.size()},
          {"numbered", run.numbered},
          {"blocks", run.blocks},
          {"block_ops", run.block_ops}};
}

nlohmann::json DeviceJson(const plan::DeviceSummary& d, const LoadedPlan& loaded) {
  const plan::DeviceMemoryBound& m = d.memory;
  nlohmann::json runs = nlohmann::json::array();
  for (const plan::OpRun& run : d.runs) runs.push_back(RunJson(run, *loaded.inputs.graph));
  return {{"name", loaded.inputs.cluster->device(d.device).name},
          {"ops", d.ops},
          {"subgraphs", d.subgraphs},
          {"compute_ms", ShowMs(d.compute_s)},
          {"memory",
           {{"total_bytes", m.total()},
            {"weight_bytes", m.weight_bytes},
            {"peak_activation_bytes", m.peak_activation_bytes},
            {"stated_bytes", m.stated_bytes},
            {"capacity_bytes", m.capacity_bytes}}},
          {"weights", WeightsJson(d.weights)},
          {"transfers_in", TallyJson(d.transfers_in)},
          {"transfers_out", TallyJson(d.transfers_out)},
          {"runs", std::move(runs)}};
}

void PrintJson(const ShowArgs& args, const LoadedPlan& loaded, const plan::PlanSummary& s) {
  nlohmann::json out;
  out["plan"] = args.plan.path;
  out["model"] = loaded.inputs.graph->name();
  out["cluster"] = loaded.inputs.cluster->name();
  out["algo"] = loaded.plan.algo;
  if (loaded.plan.estimate_ms) out["estimate_ms"] = *loaded.plan.estimate_ms;
  out["totals"] = {{"devices", s.devices.size()},       {"ops", s.ops},
                   {"subgraphs", s.subgraphs},          {"compute_ms", ShowMs(s.compute_s)},
                   {"weights", WeightsJson(s.weights)}, {"transfers", TallyJson(s.transfers)}};
  nlohmann::json devices = nlohmann::json::array();
  for (const plan::DeviceSummary& d : s.devices) devices.push_back(DeviceJson(d, loaded));
  out["devices"] = std::move(devices);
  std::printf("%s\n", DumpJson(out, 2).c_str());
}

int RunShow(const ShowArgs& args) {
  auto loaded = LoadPlanFile(args.plan);
  if (!loaded.ok()) return ReportError(loaded.status());
  auto summary = plan::SummarizePlan(loaded->plan, *loaded->inputs.graph, *loaded->inputs.cluster,
                                     *loaded->inputs.cost);
  if (!summary.ok()) return ReportError(summary.status().WithContext(args.plan.path));
  if (args.json)
    PrintJson(args, *loaded, *summary);
  else
    PrintText(args, *loaded, *summary);
  return 0;
}

}  // namespace

Command AddShowCommand(CLI::App& root) {
  auto* app =
      root.add_subcommand("show", "show where each operator of a plan runs, device by device");
  auto args = std::make_shared<ShowArgs>();
  app->add_option("PLAN", args->plan.path, "a plan file (hexplan place -o)")->required();
  app->add_option("--model", args->plan.model, "rebuild the graph from this model instead");
  app->add_option("--cluster", args->plan.cluster, "use this cluster instead of the plan's");
  app->add_option("--profile", args->plan.profile,
                  "measured op times (hexplan profile, or a profile JSON/CSV) before the roofline");
  args->plan.cost.AddTo(app);
  app->add_flag("--all", args->all, "list every run (default: the first 8 per device)");
  app->add_flag("--json", args->json, "print one JSON object (every run)");
  return {app, [args]() { return RunShow(*args); }};
}

}  // namespace hx::cli
