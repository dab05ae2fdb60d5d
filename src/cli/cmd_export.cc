// `hexplan export MODEL -o FILE [--plan PLAN] [--weights random --seed N]`: a model as ONNX
// (shape-only, opens in Netron; with --weights random, a runnable model: every weight without a
// payload gets the seeded random values `hexplan run` gives it) or hexplan graph JSON. With --plan
// the ONNX file carries the plan's placement as metadata_props: each op's device, subgraph and
// position, and the planner, cluster and latency on the model (keys in docs/formats.md, "Placement
// in exported ONNX").

#include <cstdio>

#include "cli/command.h"
#include "cli/plan_file.h"
#include "hexplan/core/file_util.h"
#include "hexplan/core/output_files.h"
#include "hexplan/exec/values.h"
#include "hexplan/graph/json_io.h"
#include "hexplan/graph/onnx_io.h"
#include "hexplan/plan/validator.h"
#include "hexplan/sim/simulator.h"

namespace hx::cli {

namespace {

struct ExportArgs {
  ModelArgs model;
  std::string output;
  std::string plan;
  std::string weights = "none";  // none (shapes only) or random
  uint64_t seed = 1;
};

// Every weight without a payload gets the values `hexplan run --seed` would give it
// (exec::MaterializeWeights: seeded per weight name), as its ONNX initializer's raw data.
Status AddRandomWeights(graph::Graph& graph, uint64_t seed) {
  HX_ASSIGN_OR_RETURN(std::vector<exec::HostTensor> values, exec::MaterializeWeights(graph, seed));
  for (NodeId id : graph.Weights()) {
    graph::Node& node = graph.mutable_node(id);
    if (node.data != nullptr) continue;
    const std::vector<uint8_t>& bytes = values[id.index()].bytes;
    node.data = std::make_shared<const std::string>(bytes.begin(), bytes.end());
  }
  return Status::Ok();
}

std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Each placed op's device, subgraph (its index on the device) and position in the device's order.
void AddOpPlacement(const plan::Plan& p, const graph::Graph& graph, const hw::Cluster& cluster,
                    graph::OnnxMetadata* metadata) {
  for (const plan::DeviceSchedule& ds : p.devices) {
    const hw::Device& device = cluster.device(ds.device);
    size_t order = 0;
    for (size_t s = 0; s < ds.subgraphs.size(); ++s)
      for (NodeId op : ds.subgraphs[s].ops)
        metadata->ops[graph.node(op).name] = {
            {"hexplan.device", device.name},
            {"hexplan.device_model", device.spec.model},
            {"hexplan.subgraph", std::to_string(s)},
            {"hexplan.order", std::to_string(order++)},
        };
  }
  for (const plan::Submodel& sm : p.submodels)
    for (NodeId op : sm.ops)
      metadata->ops[graph.node(op).name].push_back({"hexplan.submodel", sm.name});
}

// The plan's placement as ONNX metadata; the latency is the simulator's (as `simulate` reports).
StatusOr<graph::OnnxMetadata> PlacementMetadata(const LoadedPlan& loaded,
                                                const std::string& plan_path) {
  const plan::Plan& p = loaded.plan;
  const graph::Graph& graph = *loaded.inputs.graph;
  const hw::Cluster& cluster = *loaded.inputs.cluster;
  HX_RETURN_IF_ERROR(plan::CheckPlan(p, *loaded.inputs.cost, plan_path));
  HX_ASSIGN_OR_RETURN(sim::SimResult sim, sim::Simulate(p, *loaded.inputs.cost, {}, nullptr));
  size_t used = 0;
  for (const plan::DeviceSchedule& ds : p.devices)
    for (const plan::Subgraph& sg : ds.subgraphs)
      if (!sg.ops.empty()) {
        ++used;
        break;
      }
  graph::OnnxMetadata metadata;
  metadata.model = {{"hexplan.plan", plan_path},
                    {"hexplan.planner", p.algo},
                    {"hexplan.cluster", cluster.name()},
                    {"hexplan.devices", std::to_string(used)},
                    {"hexplan.latency_ms", Number(sim.makespan_s * 1e3)}};
  if (p.estimate_ms) metadata.model.push_back({"hexplan.estimate_ms", Number(*p.estimate_ms)});
  AddOpPlacement(p, graph, cluster, &metadata);
  return metadata;
}

// The graph to write and, with --plan, the placement to write on it.
StatusOr<graph::Graph> LoadForExport(const ExportArgs& args, graph::OnnxMetadata* metadata) {
  if (args.plan.empty()) return args.model.Load();
  HX_ASSIGN_OR_RETURN(LoadedPlan loaded, LoadPlanForModel(args.plan, args.model, ""));
  HX_ASSIGN_OR_RETURN(*metadata, PlacementMetadata(loaded, args.plan));
  return std::move(*loaded.inputs.graph);
}

int RunExport(const ExportArgs& args) {
  const std::string& out = args.output;
  const std::string ext = FileExtension(out);
  OutputFiles outputs;
  Status st = ext == "onnx" || ext == "json"
                  ? outputs.Expect("--output", out)
                  : InvalidArgument("--output: '" + out + "' must end in .onnx or .json");
  if (st.ok() && ext == "json" && !args.plan.empty())
    st = InvalidArgument("--plan: the placement is written into ONNX metadata only; give -o " +
                         std::string("FILE.onnx (graph JSON has no place for it; the plan file ") +
                         args.plan + " is JSON already)");
  if (!st.ok()) return ReportError(st);
  if (args.weights != "none" && args.weights != "random")
    return ReportError(
        InvalidArgument("--weights: expected none or random, got '" + args.weights + "'"));
  if (args.weights == "random" && ext != "onnx")
    return ReportError(
        InvalidArgument("--weights random: graph JSON holds shapes only; give -o "
                        "FILE.onnx"));
  graph::OnnxMetadata metadata;
  auto loaded = LoadForExport(args, &metadata);
  if (loaded.ok() && args.weights == "random") {
    if (Status w = AddRandomWeights(*loaded, args.seed); !w.ok()) loaded = w;
  }
  if (!loaded.ok()) return ReportError(loaded.status());
  st = outputs.StageWith(out, [&](const std::string& path) {
    return ext == "onnx" ? graph::WriteOnnxFile(*loaded, path, metadata)
                         : graph::WriteGraphJsonFile(*loaded, path);
  });
  if (st.ok()) st = CommitOutputs(outputs);
  if (!st.ok()) return ReportError(st);
  std::printf("wrote %s (%zu ops%s%s)\n", out.c_str(), loaded->Ops().size(),
              args.plan.empty() ? "" : ", each with its device from the plan",
              args.weights == "random" ? ", weights seeded random" : "");
  return 0;
}

}  // namespace

Command AddExportCommand(CLI::App& root) {
  auto* app = root.add_subcommand(
      "export", "write a model as ONNX (shape-only, opens in Netron) or hexplan JSON");
  auto args = std::make_shared<ExportArgs>();
  args->model.AddTo(app);
  app->add_option("-o,--output", args->output, "output file: .onnx or .json")->required();
  app->add_option("--plan", args->plan,
                  "a plan for MODEL (hexplan place -o): write each op's device, subgraph and "
                  "order into the ONNX file's metadata (Netron shows them)");
  app->add_option("--weights", args->weights,
                  "none: weights as shapes only; random: every weight without values gets the "
                  "seeded random values `hexplan run --seed` uses (a runnable ONNX file)")
      ->default_val("none");
  app->add_option("--seed", args->seed, "with --weights random: the seed")->default_val(1);
  return {app, [args]() { return RunExport(*args); }};
}

}  // namespace hx::cli
