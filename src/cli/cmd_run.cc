// hexplan run MODEL --plan PLAN: executes a plan for real on this machine's CPU core groups (the
// ready-queue executor) and reports the measured latency; writes outputs as .npy and a trace.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/plan_file.h"
#include "cli/planning_inputs.h"
#include "cli/run_ranks.h"
#include "cli/run_statistics.h"
#include "cli/run_tp.h"
#include "hexplan/core/file_util.h"
#include "hexplan/core/format_number.h"
#include "hexplan/core/json_text.h"
#include "hexplan/core/output_files.h"
#include "hexplan/cost/profile.h"
#include "hexplan/exec/cpu_backend.h"
#include "hexplan/exec/executor.h"
#include "hexplan/exec/memory_check.h"
#include "hexplan/exec/tensor.h"
#include "hexplan/exec/values.h"
#include "hexplan/plan/plan_json.h"
#include "hexplan/plan/plan_match.h"
#include "hexplan/sim/gathered_makespan.h"
#include "hexplan/sim/simulator.h"
#include "hexplan/sim/timeline.h"

namespace hx::cli {
namespace {

// --repeat and --warmup: runs of the whole plan, each timed and kept.
constexpr int kMaxRuns = 100000;

struct RunArgs {
  ModelArgs model;
  std::string plan_path;
  std::string cluster;
  std::vector<std::string> inputs;  // NAME=FILE.npy
  bool random_input = false;
  uint64_t seed = 1;
  std::string output_path;
  std::string trace_path;
  std::string profile_path;
  int repeat = 1;
  int warmup = 1;
  std::string copy_order = "plan";
  int64_t chunk_bytes = int64_t{1} << 20;
  double watchdog_s = 60.0;
  double spin_us = exec::ExecOptions{}.spin_us;
  bool copy_threads = false;
  bool json = false;
  std::string tp_plan_path;  // --tp-plan: run a `hexplan tp --json` plan instead (run_tp.h)
  int64_t tp_layers = 0;
};

std::string SafeName(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '_';
  while (!out.empty() && out.front() == '_') out.erase(out.begin());
  return out.empty() ? "output" : out;
}

int RunRunOnRanks(const RunArgs& args, RunRanks& ranks);

Status CheckRunCounts(int repeat, int warmup) {
  if (repeat < 1 || repeat > kMaxRuns)
    return InvalidArgument("--repeat: expected 1.." + std::to_string(kMaxRuns) + ", got " +
                           std::to_string(repeat));
  if (warmup < 0 || warmup > kMaxRuns)
    return InvalidArgument("--warmup: expected 0.." + std::to_string(kMaxRuns) + ", got " +
                           std::to_string(warmup));
  return Status::Ok();
}

int RunRun(const RunArgs& args) {
  // Under mpirun: one rank of a run across processes (docs/runtime.md, "Across machines").
  auto ranks = ConnectRanks();
  if (!ranks.ok()) return ReportError(ranks.status());
  return RunRunOnRanks(args, *ranks);
}

int RunRunOnRanks(const RunArgs& args, RunRanks& ranks) {
  const auto ReportError = [&ranks](const Status& status) { return ranks.Fail(status); };
  Status counts = CheckRunCounts(args.repeat, args.warmup);
  if (!counts.ok()) return ReportError(counts);
  exec::ExecOptions options;
  if (args.copy_order == "round-robin")
    options.copy_order = exec::CopyOrder::kRoundRobin;
  else if (args.copy_order != "plan")
    return ReportError(InvalidArgument("--copy-order: expected plan or round-robin, got '" +
                                       args.copy_order + "'"));
  options.chunk_bytes = args.chunk_bytes;
  options.watchdog_s = args.watchdog_s;
  options.spin_us = args.spin_us;
  options.inline_copies = !args.copy_threads;
  // Events cost two clock reads and two stores per op: keep them only for a trace, so the
  // measured latency is the plan's own (the profiler and benchmarks run without them too).
  options.record_events = !args.trace_path.empty();
  OutputFiles outputs;
  for (Status s : {options.Validate(), outputs.Expect("--output", args.output_path),
                   outputs.Expect("--trace", args.trace_path)})
    if (!s.ok()) return ReportError(s);

  auto loaded = LoadPlanForModel(args.plan_path, args.model, args.cluster);
  if (!loaded.ok()) return ReportError(loaded.status());
  const PlanningInputs* inputs = &loaded->inputs;
  const graph::Graph& graph = *inputs->graph;
  const hw::Cluster& cluster = *inputs->cluster;
  const plan::Plan p = std::move(loaded->plan);
  if (Status s = AssignRanks(cluster, &ranks); !s.ok()) return ReportError(s);
  options.communicator = ranks.comm.get();
  options.device_rank = ranks.device_rank;
  // Before any allocation: the plan's weights and activations must fit the cluster's stated device
  // memories and this machine's available memory.
  if (Status fits = exec::CheckRunMemory(p, *inputs->cost, exec::AvailableHostMemoryBytes());
      !fits.ok()) {
    return ReportError(fits.WithContext(args.plan_path));
  }

  // Values: the model's weights (ONNX initializers, or seeded random), the inputs.
  // Across ranks, each loads only the weights its devices read.
  auto weights = ranks.active()
                     ? exec::MaterializeWeights(
                           graph, args.seed,
                           exec::WeightsReadOnRank(p, graph, ranks.device_rank, ranks.rank()))
                     : exec::MaterializeWeights(graph, args.seed);
  if (!weights.ok()) return ReportError(weights.status());
  std::map<std::string, exec::HostTensor> values;
  for (const std::string& item : args.inputs) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      return ReportError(InvalidArgument("--input: expected NAME=FILE.npy, got '" + item + "'"));
    const std::string name = item.substr(0, eq);
    if (values.count(name))
      return ReportError(
          InvalidArgument("--input '" + name + "' given twice; give each input once"));
    auto t = exec::ReadNpyFile(item.substr(eq + 1));
    if (!t.ok()) return ReportError(t.status());
    values[name] = std::move(t).value();
  }
  if (args.random_input) {
    for (auto& [name, t] : exec::RandomInputs(graph, args.seed + 1))
      values.emplace(name, std::move(t));
  }
  if (const exec::InputCheck check = exec::DiagnoseInputs(graph, values); !check.status.ok()) {
    return ReportError(check.problem == exec::InputProblem::kMissing
                           ? InvalidArgument(check.status.message() +
                                             ": give --input NAME=FILE.npy or --random-input")
                           : check.status);
  }

  auto cpu = exec::CpuBackend::Create(cluster);
  if (!cpu.ok()) return ReportError(cpu.status());
  std::unique_ptr<exec::DeviceBackend> backend = WithTestFaults(std::move(cpu).value());
  auto executor = exec::Executor::Create(p, graph, cluster, backend.get(), &*weights, options);
  if (!executor.ok()) return ReportError(executor.status().WithContext(args.plan_path));

  std::vector<double> latencies;
  exec::ExecResult last;
  for (int r = 0; r < args.warmup + args.repeat; ++r) {
    auto result = (*executor)->Run(values);
    if (!result.ok()) return ReportError(result.status());
    if (r >= args.warmup) latencies.push_back(result->latency_s * 1e3);
    last = std::move(result).value();
  }
  // Across ranks rank 0 writes and prints; the others are done.
  if (ranks.rank() != 0) return 0;

  // Outputs: one file, or one per output next to it.
  std::vector<std::string> files(last.outputs.size());
  if (!args.output_path.empty()) {
    for (size_t i = 0; i < last.outputs.size(); ++i) {
      std::string path = args.output_path;
      if (last.outputs.size() > 1) {
        std::string stem = path.size() > 4 && path.substr(path.size() - 4) == ".npy"
                               ? path.substr(0, path.size() - 4)
                               : path;
        path = stem + "." + SafeName(last.output_names[i]) + ".npy";
      }
      if (Status s = outputs.Stage(path, exec::NpyBytes(last.outputs[i])); !s.ok())
        return ReportError(s);
      files[i] = path;
    }
  }
  if (!args.trace_path.empty()) {
    sim::TimelineRecorder recorder(p, graph, cluster);
    for (const sim::SimEvent& e : last.events) recorder.OnEvent(e);
    if (Status s = outputs.Stage(args.trace_path, recorder.ChromeTraceJson()); !s.ok())
      return ReportError(s);
  }
  std::optional<double> simulated_ms;
  std::unique_ptr<cost::Profile> profile;
  if (!args.profile_path.empty()) {
    auto pr = cost::Profile::ReadFile(args.profile_path);
    if (!pr.ok()) return ReportError(pr.status());
    profile = std::make_unique<cost::Profile>(std::move(pr).value());
    cost::CostModel model(graph, cluster, {}, profile.get());
    auto sim = sim::Simulate(p, model);
    if (!sim.ok()) return ReportError(sim.status());
    // Across ranks the run ends when rank 0 has every output (Executor::GatherOutputs).
    simulated_ms = (ranks.active() ? sim::GatheredMakespan(*sim, model, ranks.device_rank, 0)
                                   : sim->makespan_s) *
                   1e3;
  }
  if (Status s = CommitOutputs(outputs); !s.ok()) return ReportError(s);

  const double median = Median(latencies), p95 = Percentile(latencies, 0.95);
  if (args.json) {
    nlohmann::json out;
    out["model"] = graph.name();
    out["plan"] = args.plan_path;
    out["cluster"] = cluster.name();
    out["algo"] = p.algo;
    out["backend"] = backend->name();
    if (ranks.active()) out["ranks"] = ranks.nodes;
    out["copy_order"] = exec::CopyOrderName(options.copy_order);
    out["repeat"] = args.repeat;
    out["warmup"] = args.warmup;
    out["latency_ms_median"] = median;
    out["latency_ms_p95"] = p95;
    out["latency_ms"] = latencies;
    if (simulated_ms) {
      out["simulated_ms"] = *simulated_ms;
      out["simulated_error"] = median > 0 ? (*simulated_ms - median) / median : 0.0;
    }
    out["ops"] = last.ops_run;
    out["transfers"] = last.transfers_run;
    nlohmann::json peaks = nlohmann::json::object();
    for (size_t d = 0; d < last.peak_memory_bytes.size(); ++d)
      peaks[cluster.device(DeviceId(d)).name] = last.peak_memory_bytes[d];
    out["peak_memory_bytes"] = peaks;
    nlohmann::json outs = nlohmann::json::array();
    for (size_t i = 0; i < last.outputs.size(); ++i) {
      nlohmann::json o = {{"name", last.output_names[i]},
                          {"dtype", graph::DTypeName(last.outputs[i].dtype)},
                          {"shape", last.outputs[i].shape}};
      if (!files[i].empty()) o["file"] = files[i];
      outs.push_back(std::move(o));
    }
    out["outputs"] = std::move(outs);
    std::printf("%s\n", DumpJson(out, 2).c_str());
    return 0;
  }
  std::printf("plan        %s (%s) on %s, %s backend\n", args.plan_path.c_str(), p.algo.c_str(),
              cluster.name().c_str(), backend->name().c_str());
  if (ranks.active()) {
    std::string line;
    for (size_t r = 0; r < ranks.nodes.size(); ++r)
      line += (r ? ", " : "") + ranks.nodes[r] + " -> rank " + std::to_string(r);
    std::printf("ranks       %s (%s; latency on rank 0, until every output is there)\n",
                line.c_str(), ranks.comm->name().c_str());
  }
  std::printf("latency     median %.3f ms, p95 %.3f ms over %d runs\n", median, p95, args.repeat);
  if (simulated_ms)
    std::printf("simulated   %s ms (%+.1f%%)\n", FormatNumber(*simulated_ms).c_str(),
                median > 0 ? 100.0 * (*simulated_ms - median) / median : 0.0);
  std::printf("work        %llu ops, %llu transfers\n",
              static_cast<unsigned long long>(last.ops_run),
              static_cast<unsigned long long>(last.transfers_run));
  for (size_t i = 0; i < last.outputs.size(); ++i)
    std::printf("output      %s %s %s%s%s\n", last.output_names[i].c_str(),
                graph::DTypeName(last.outputs[i].dtype),
                graph::ShapeToString(last.outputs[i].shape).c_str(), files[i].empty() ? "" : " -> ",
                files[i].c_str());
  if (!args.trace_path.empty()) std::printf("trace       %s\n", args.trace_path.c_str());
  return 0;
}

}  // namespace

Command AddRunCommand(CLI::App& root) {
  auto* app = root.add_subcommand("run", "execute a plan for real on this machine's CPU cores");
  auto args = std::make_shared<RunArgs>();
  args->model.AddTo(app);
  app->add_option("--plan", args->plan_path, "a plan file (hexplan place -o)");
  app->add_option("--tp-plan", args->tp_plan_path,
                  "instead of --plan: a tensor-parallel plan (hexplan tp MODEL ... --json), run "
                  "with seeded weights, one rank per node (threads, or mpirun's processes)");
  app->add_option("--tp-layers", args->tp_layers,
                  "with --tp-plan: run the first N decoder layers (0 = all)");
  app->add_option("--cluster", args->cluster,
                  "the CPU cluster to run on (default: the plan's, e.g. local-cpu:groups=2)");
  app->add_option("--input", args->inputs, "a graph input as NAME=FILE.npy (repeatable)");
  app->add_flag("--random-input", args->random_input, "random values for inputs not given");
  app->add_option("--seed", args->seed, "seed for random weights and inputs")->default_val(1);
  app->add_option("--output", args->output_path,
                  "write the output as .npy (several outputs: <stem>.<name>.npy)");
  app->add_option("--trace", args->trace_path, "write a Chrome/Perfetto trace of the last run");
  app->add_option("--profile", args->profile_path,
                  "also simulate the plan with this measured profile (hexplan profile)");
  app->add_option("--repeat", args->repeat, "measured runs")->default_val(1);
  app->add_option("--warmup", args->warmup, "unmeasured runs first")->default_val(1);
  app->add_option("--copy-order", args->copy_order,
                  "plan (queues in plan order) or round-robin (chunks between destinations)")
      ->default_val("plan");
  app->add_option("--chunk-bytes", args->chunk_bytes, "round-robin chunk size")
      ->default_val(int64_t{1} << 20);
  app->add_option("--watchdog", args->watchdog_s, "fail when nothing finishes for this long (s)")
      ->default_val(60.0);
  app->add_option("--spin-us", args->spin_us,
                  "how long a device thread polls for its next subgraph's inputs before it sleeps")
      ->default_val(exec::ExecOptions{}.spin_us);
  app->add_flag("--copy-threads", args->copy_threads,
                "give copies between core groups and weight loads their own copy threads (by "
                "default the thread that produced an activation copies it, and the device thread "
                "that needs a weight, or the run's own thread, loads it)");
  app->add_flag("--json", args->json, "print one JSON object");
  return {app, [args]() {
            if (args->tp_plan_path.empty() == args->plan_path.empty())
              return ReportError(InvalidArgument("give one of --plan and --tp-plan"));
            if (args->tp_plan_path.empty()) return RunRun(*args);
            Status counts = CheckRunCounts(args->repeat, args->warmup);
            if (!counts.ok()) return ReportError(counts);
            return RunTpPlan({args->model.model, args->tp_plan_path, args->tp_layers, args->seed,
                              args->output_path, args->json, args->warmup, args->repeat});
          }};
}

}  // namespace hx::cli
