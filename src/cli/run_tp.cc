#include "cli/run_tp.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/run_statistics.h"
#include "cli/tp_plan_file.h"
#include "hexplan/core/json_text.h"
#include "hexplan/core/output_files.h"
#include "hexplan/exec/process_world.h"
#include "hexplan/exec/tensor.h"
#include "hexplan/exec/thread_communicator.h"
#include "hexplan/exec/tp_runner.h"

namespace hx::cli {
namespace {

constexpr double kTpRunTolerance = 1e-5;
// Caps (docs/formats.md): the run holds the fp32 weights of every layer it runs and every rank's
// activations in this process, and runs one thread per plan node.
constexpr double kTpRunMaxWeightBytes = 4.0 * (int64_t{1} << 30);
constexpr double kTpRunMaxActivationBytes = 1.0 * (int64_t{1} << 30);
constexpr size_t kTpRunMaxRanks = 1024;

Status CheckTpRunCaps(const TpPlanFile& plan, const graph::TransformerConfig& c,
                      const std::string& path) {
  const double d = static_cast<double>(c.hidden);
  const double ffn = static_cast<double>(c.ffn_hidden > 0 ? c.ffn_hidden : 4 * c.hidden);
  const double weights = static_cast<double>(c.layers) * (4 * d * d + 2 * d * ffn) * 4;
  if (weights > kTpRunMaxWeightBytes)
    return InvalidArgument(path + ": " + std::to_string(c.layers) + " decoder layers of " +
                           plan.model + " hold " +
                           std::to_string(weights / (1 << 30)).substr(0, 5) +
                           " GiB of fp32 weights, over the run's 4 GiB cap (run fewer with "
                           "--tp-layers)");
  const double activations =
      static_cast<double>(plan.batch) * static_cast<double>(plan.input_len) * ffn * 4;
  if (plan.batch < 1 || plan.input_len < 1 || activations > kTpRunMaxActivationBytes)
    return InvalidArgument(path + ": batch " + std::to_string(plan.batch) + " x input_len " +
                           std::to_string(plan.input_len) +
                           " must be >= 1 and its FFN activations within the run's 1 GiB cap");
  if (plan.result.plan.nodes.size() > kTpRunMaxRanks)
    return InvalidArgument(path + ": " + std::to_string(plan.result.plan.nodes.size()) +
                           " nodes, over the run's cap of 1024 ranks");
  return Status::Ok();
}

struct TpRunSetup {
  TpPlanFile plan;
  exec::TpGptModel model;
  std::vector<float> input;
  int64_t full_layers = 0;
};

StatusOr<TpRunSetup> LoadTpRun(const TpRunArgs& args) {
  TpRunSetup s;
  HX_ASSIGN_OR_RETURN(s.plan, ReadTpPlanFile(args.plan_path));
  if (!args.model.empty() && args.model != s.plan.model)
    return InvalidArgument("MODEL '" + args.model + "', but " + args.plan_path +
                           " was planned for '" + s.plan.model + "'");
  auto config = graph::ZooTransformerConfig(s.plan.model);
  if (!config)
    return NotFound(args.plan_path + ": model '" + s.plan.model +
                    "' is not a transformer of the zoo");
  s.full_layers = config->layers;
  if (args.layers < 0 || args.layers > config->layers)
    return InvalidArgument("--tp-layers: expected 0.." + std::to_string(config->layers) +
                           " (the model's decoder layers), got " + std::to_string(args.layers));
  if (args.layers > 0) config->layers = args.layers;
  HX_RETURN_IF_ERROR(CheckTpRunCaps(s.plan, *config, args.plan_path));
  // The plan against the model's shape and the world first, before any weight is made.
  exec::TpGptModel shape_only;
  shape_only.config = *config;
  s.input.assign(static_cast<size_t>(s.plan.batch * s.plan.input_len * config->hidden), 0.0f);
  exec::TpRunRequest check{&shape_only, &s.plan.result, &s.input, s.plan.batch, s.plan.input_len};
  const int launched = exec::LauncherWorldSize();
  HX_RETURN_IF_ERROR(
      exec::ValidateTpRun(
          check, launched > 1 ? launched : static_cast<int>(s.plan.result.plan.nodes.size()))
          .WithContext(args.plan_path));
  HX_ASSIGN_OR_RETURN(s.model, exec::MakeSeededGpt(*config, args.seed));
  s.model.name = s.plan.model;
  s.input = exec::SeededHiddenStates(s.plan.batch, s.plan.input_len, config->hidden, args.seed + 1);
  return s;
}

struct TpRunOutcome {
  std::vector<std::vector<float>> outputs;  // per rank run here (all in threads, one under MPI)
  int ranks = 0;
  int rank = 0;  // this process's rank (0 with threads)
  std::string transport;
  double forward_ms = 0.0;           // the median of the measured forwards
  std::vector<double> forward_runs;  // each measured forward, ms
};

// `runs` forwards of the plan; each after a barrier of all ranks, timed on this rank.
StatusOr<TpRunOutcome> RunTpWorld(const exec::TpRunRequest& request, int runs) {
  TpRunOutcome out;
  std::vector<double> times;
  using Clock = std::chrono::steady_clock;
  const int launched = exec::LauncherWorldSize();
  if (launched > 1) {
    if (!exec::HasProcessCommunicatorFactory())
      return Unimplemented("started by a launcher with " + std::to_string(launched) +
                           " ranks, but this hexplan has no multi-process transport (MPI)");
    HX_ASSIGN_OR_RETURN(auto comm, exec::MakeProcessCommunicator());
    out.ranks = comm->size();
    out.rank = comm->rank();
    out.transport = comm->name();
    // The ranks on this machine: Open MPI's local size, else all of them.
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    exec::ShareBlasThreadsAmongRanks(local != nullptr ? std::atoi(local) : out.ranks);
    out.outputs.resize(1);
    for (int r = 0; r < runs; ++r) {
      Status ready = comm->Barrier();
      const auto start = Clock::now();
      auto mine = ready.ok() ? exec::RunTensorParallel(request, *comm)
                             : StatusOr<std::vector<float>>(ready);
      // Peers may wait in a collective this rank will not join: end them all.
      if (!mine.ok())
        comm->Abort("rank " + std::to_string(out.rank) + ": " + mine.status().message(),
                    mine.status().ExitCode());
      times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
      out.outputs[0] = std::move(*mine);
    }
  } else {
    out.ranks = static_cast<int>(request.plan->plan.nodes.size());
    out.outputs.resize(static_cast<size_t>(out.ranks));
    exec::ShareBlasThreadsAmongRanks(out.ranks);
    for (int r = 0; r < runs; ++r) {
      exec::ThreadWorld world(out.ranks);  // runs once
      const auto start = Clock::now();
      HX_RETURN_IF_ERROR(world.Run([&](exec::Communicator& comm) -> Status {
        HX_ASSIGN_OR_RETURN(out.outputs[static_cast<size_t>(comm.rank())],
                            exec::RunTensorParallel(request, comm));
        return Status::Ok();
      }));
      times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    out.transport = "threads";
  }
  out.forward_runs = times;
  return out;
}

Status StageTpOutput(const std::string& path, const std::vector<float>& values, const TpRunSetup& s,
                     OutputFiles* outputs) {
  exec::HostTensor t(graph::DType::kF32, {s.plan.batch, s.plan.input_len, s.model.config.hidden});
  std::memcpy(t.data<float>(), values.data(), values.size() * sizeof(float));
  return outputs->Stage(path, exec::NpyBytes(t));
}

void PrintTpRun(const TpRunArgs& args, const TpRunSetup& s, const TpRunOutcome& o, double error) {
  const tp::TpResult& r = s.plan.result;
  if (args.json) {
    nlohmann::json j = {{"tp_plan", args.plan_path},
                        {"method", tp::TpMethodName(r.method)},
                        {"layout", tp::TpMethodName(r.layout)},
                        {"ranks", o.ranks},
                        {"transport", o.transport},
                        {"model", s.plan.model},
                        {"layers", s.model.config.layers},
                        {"batch", s.plan.batch},
                        {"seq", s.plan.input_len},
                        {"seed", args.seed},
                        {"max_relative_error", error},
                        {"tolerance", kTpRunTolerance},
                        {"forward_ms", o.forward_ms},
                        {"forward_ms_runs", o.forward_runs},
                        {"warmup", args.warmup},
                        {"repeat", args.repeat}};
    if (!args.output_path.empty()) j["output"] = args.output_path;
    std::printf("%s\n", DumpJson(j, 2).c_str());
    return;
  }
  std::printf("tp plan     %s: %s layout (method %s), %d ranks as %s\n", args.plan_path.c_str(),
              tp::TpMethodName(r.layout), tp::TpMethodName(r.method), o.ranks, o.transport.c_str());
  std::printf(
      "model       %s, %lld of %lld decoder layers, seeded weights (seed %llu); batch "
      "%lld x seq %lld\n",
      s.plan.model.c_str(), static_cast<long long>(s.model.config.layers),
      static_cast<long long>(s.full_layers), static_cast<unsigned long long>(args.seed),
      static_cast<long long>(s.plan.batch), static_cast<long long>(s.plan.input_len));
  std::printf("output      [%lld, %lld, %lld] after ln_f%s%s\n",
              static_cast<long long>(s.plan.batch), static_cast<long long>(s.plan.input_len),
              static_cast<long long>(s.model.config.hidden), args.output_path.empty() ? "" : " -> ",
              args.output_path.c_str());
  std::printf(
      "reference   max relative difference from the one-process forward %.2e (limit %.0e)\n", error,
      kTpRunTolerance);
  std::printf(
      "time        %.1f ms for the tensor-parallel forward (median of %d, after %d unmeasured)\n",
      o.forward_ms, args.repeat, args.warmup);
}

}  // namespace

int RunTpPlan(const TpRunArgs& args) {
  OutputFiles outputs;
  Status checked = outputs.Expect("--output", args.output_path);
  if (!checked.ok()) return ReportError(checked);
  auto setup = LoadTpRun(args);
  if (!setup.ok()) return ReportError(setup.status());
  const TpRunSetup& s = *setup;
  exec::TpRunRequest request{&s.model, &s.plan.result, &s.input, s.plan.batch, s.plan.input_len};
  auto outcome = RunTpWorld(request, args.warmup + args.repeat);
  if (!outcome.ok()) return ReportError(outcome.status());
  outcome->forward_runs.erase(outcome->forward_runs.begin(),
                              outcome->forward_runs.begin() + args.warmup);
  outcome->forward_ms = Median(outcome->forward_runs);
  if (outcome->rank != 0) return 0;  // rank 0 checks, writes and prints
  auto reference = exec::ReferenceGptForward(s.model, s.input, s.plan.batch, s.plan.input_len);
  if (!reference.ok()) return ReportError(reference.status());
  double error = 0.0;
  for (const auto& o : outcome->outputs)
    error = std::max(error, exec::TpRelativeError(o, *reference));
  if (!(error <= kTpRunTolerance))
    return ReportError(
        Internal("the tensor-parallel output differs from the one-process forward "
                 "by " +
                 std::to_string(error) + " (relative)"));
  if (!args.output_path.empty()) {
    Status w = StageTpOutput(args.output_path, outcome->outputs[0], s, &outputs);
    if (w.ok()) w = outputs.Commit();
    if (!w.ok()) return ReportError(w);
  }
  PrintTpRun(args, s, *outcome, error);
  return 0;
}

}  // namespace hx::cli
