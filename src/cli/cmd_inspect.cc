#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "hexplan/core/json_text.h"
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

int RunInspect(const ModelArgs& args, bool json) {
  auto loaded = args.Load();
  if (!loaded.ok()) return ReportError(loaded.status());
  const graph::Graph& g = *loaded;

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
    std::printf(" (costed from bytes moved)\n");
  }
  return 0;
}

}  // namespace

Command AddInspectCommand(CLI::App& root) {
  auto* app = root.add_subcommand("inspect", "summarise a model: operators, parameters, FLOPs");
  auto args = std::make_shared<ModelArgs>();
  auto json = std::make_shared<bool>(false);
  args->AddTo(app);
  app->add_flag("--json", *json, "print one JSON object");
  return {app, [args, json]() { return RunInspect(*args, *json); }};
}

}  // namespace hx::cli
