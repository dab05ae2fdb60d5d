#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/command.h"
#include "hexplan/core/json_text.h"
#include "hexplan/cost/workload.h"
#include "hexplan/graph/analysis.h"
#include "hexplan/graph/op_cost.h"

namespace hx::cli {
namespace {

std::string HumanCount(double v) {
  char buf[64];
  if (v >= 1e12)
    std::snprintf(buf, sizeof buf, "%.3f T", v / 1e12);
  else if (v >= 1e9)
    std::snprintf(buf, sizeof buf, "%.3f G", v / 1e9);
  else if (v >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3f M", v / 1e6);
  else if (v >= 1e3)
    std::snprintf(buf, sizeof buf, "%.3f k", v / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f ", v);
  return buf;
}

// What inspect reads: a model, or a workload file that `place` takes (MOIRAI CSV, EfficientMIP
// JSON, PipeDream graph) with the times measured on its devices.
struct Inspected {
  graph::Graph graph;
  std::string format;  // the workload's; empty for a model
  cost::Profile profile;
};

StatusOr<Inspected> LoadInspected(const ModelArgs& args) {
  if (!cost::IsWorkloadFile(args.model)) {
    HX_ASSIGN_OR_RETURN(graph::Graph g, args.Load());
    return Inspected{std::move(g), "", {}};
  }
  HX_ASSIGN_OR_RETURN(cost::Workload w, cost::ReadWorkloadFile(args.model));
  return Inspected{std::move(w.graph), w.format, std::move(w.profile)};
}

// The measured times of one device (a device name, model or kind, as the workload keys them).
struct DeviceTimes {
  std::string device;
  int64_t ops = 0;          // ops with a finite time
  int64_t unsupported = 0;  // ops marked unsupported there
  double total_s = 0.0;     // their sum: the device running every op alone
};

std::vector<DeviceTimes> MeasuredTimes(const Inspected& in) {
  std::set<std::string> keys;
  for (const auto* table : {&in.profile.node_times(), &in.profile.signature_times()})
    for (const auto& [node, by_device] : *table)
      for (const auto& [device, seconds] : by_device) keys.insert(device);
  std::vector<DeviceTimes> out;
  for (const std::string& key : keys) {
    DeviceTimes t{key};
    for (NodeId op : in.graph.Ops()) {
      auto found = in.profile.FindOpTime(in.graph, op, key, key, key);
      if (!found) continue;
      if (std::isinf(found->seconds)) {
        ++t.unsupported;
      } else {
        ++t.ops;
        t.total_s += found->seconds;
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

void PrintMeasured(const Inspected& in, const std::vector<DeviceTimes>& times) {
  std::printf("workload       %s file: measured op times on %zu device%s\n", in.format.c_str(),
              times.size(), times.size() == 1 ? "" : "s");
  for (const DeviceTimes& t : times)
    std::printf(
        "  %-24s %6lld ops  %12.4f ms in all%s\n", t.device.c_str(), static_cast<long long>(t.ops),
        t.total_s * 1e3,
        t.unsupported ? (", " + std::to_string(t.unsupported) + " unsupported").c_str() : "");
}

nlohmann::json MeasuredJson(const std::vector<DeviceTimes>& times) {
  nlohmann::json out = nlohmann::json::array();
  for (const DeviceTimes& t : times)
    out.push_back({{"device", t.device},
                   {"ops", t.ops},
                   {"unsupported", t.unsupported},
                   {"total_ms", t.total_s * 1e3}});
  return out;
}

int RunInspect(const ModelArgs& args, bool json) {
  auto loaded = LoadInspected(args);
  if (!loaded.ok()) return ReportError(loaded.status());
  const graph::Graph& g = loaded->graph;
  const std::vector<DeviceTimes> measured =
      loaded->format.empty() ? std::vector<DeviceTimes>{} : MeasuredTimes(*loaded);

  std::map<std::string, int64_t> op_types;
  double flops = 0.0;
  int64_t activation_bytes = 0;
  std::vector<double> node_flops(g.num_nodes(), 0.0);
  for (NodeId id : g.Ops()) {
    op_types[g.node(id).op_type]++;
    graph::OpCost c = graph::ComputeOpCost(g, id);
    node_flops[id.index()] = c.flops;
    flops += c.flops;
    activation_bytes += c.output_bytes;
  }
  auto cp = graph::CriticalPath(g, [&](NodeId id) { return node_flops[id.index()]; });
  if (!cp.ok()) return ReportError(cp.status());
  const auto unknown = graph::OpTypesWithoutFlopRule(g);

  if (json) {
    nlohmann::json out;
    out["name"] = g.name();
    out["num_ops"] = g.Ops().size();
    out["num_weights"] = g.Weights().size();
    out["num_inputs"] = g.Inputs().size();
    out["num_outputs"] = g.Outputs().size();
    out["num_edges"] = g.num_edges();
    out["params"] = g.NumParameters();
    out["param_bytes"] = g.ParameterBytes();
    out["flops"] = flops;
    out["critical_path_flops"] = cp->length;
    out["activation_bytes"] = activation_bytes;
    out["op_types"] = op_types;
    out["op_types_without_flop_rule"] = unknown;
    if (!loaded->format.empty()) {
      out["workload_format"] = loaded->format;
      out["measured"] = MeasuredJson(measured);
    }
    std::printf("%s\n", DumpJson(out, 2).c_str());
    return 0;
  }
  std::printf("model          %s\n", g.name().c_str());
  std::printf("operators      %zu (%zu weights, %zu inputs, %zu outputs, %zu edges)\n",
              g.Ops().size(), g.Weights().size(), g.Inputs().size(), g.Outputs().size(),
              g.num_edges());
  std::printf("parameters     %sparams (%sB)\n", HumanCount(double(g.NumParameters())).c_str(),
              HumanCount(double(g.ParameterBytes())).c_str());
  std::printf("compute        %sFLOPs per inference\n", HumanCount(flops).c_str());
  std::printf("critical path  %sFLOPs (%.1f%% of all; the rest can run in parallel)\n",
              HumanCount(cp->length).c_str(), flops > 0 ? 100.0 * cp->length / flops : 0.0);
  std::printf("activations    %sB written in total\n",
              HumanCount(double(activation_bytes)).c_str());
  std::printf("op types      ");
  int col = 0;
  for (const auto& [type, count] : op_types) {
    std::printf(" %s×%lld", type.c_str(), static_cast<long long>(count));
    if (++col % 6 == 0 && col < static_cast<int>(op_types.size())) std::printf("\n              ");
  }
  std::printf("\n");
  if (!unknown.empty()) {
    std::printf("no FLOP rule  ");
    for (const auto& t : unknown) std::printf(" %s", t.c_str());
    std::printf(loaded->format.empty() ? " (costed from bytes moved)\n"
                                       : " (timed by the workload: below)\n");
  }
  if (!loaded->format.empty()) PrintMeasured(*loaded, measured);
  return 0;
}

}  // namespace

Command AddInspectCommand(CLI::App& root) {
  auto* app = root.add_subcommand(
      "inspect",
      "summarise a model or workload file: operators, parameters, FLOPs, measured times");
  auto args = std::make_shared<ModelArgs>();
  auto json = std::make_shared<bool>(false);
  args->AddTo(app);
  app->add_flag("--json", *json, "print one JSON object");
  return {app, [args, json]() { return RunInspect(*args, *json); }};
}

}  // namespace hx::cli
