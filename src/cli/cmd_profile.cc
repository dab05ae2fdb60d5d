// hexplan profile MODEL --cluster local-cpu -o profile.json: measures every op of the model on
// each device model of a CPU cluster and writes a profile the cost model uses (docs/runtime.md).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/command.h"
#include "cli/planning_inputs.h"
#include "cli/profile_network.h"
#include "cli/run_ranks.h"
#include "hexplan/core/json_text.h"
#include "hexplan/core/output_files.h"
#include "hexplan/exec/cpu_backend.h"
#include "hexplan/exec/profiler.h"
#include "hexplan/exec/values.h"

namespace hx::cli {
namespace {

struct ProfileArgs {
  ModelArgs model;
  std::string cluster = "local-cpu";
  std::string output_path;
  int repeats = 5;
  int warmup = 1;
  double budget_s = 0.0;
  bool contention = false;
  uint64_t seed = 1;
  bool json = false;
  std::string network_path;  // under mpirun: the network fit between the ranks
  int64_t network_max_bytes = NetworkProfileOptions{}.max_bytes;
  int network_step = NetworkProfileOptions{}.step;
  int network_gap_us = 0;
  std::string network_check_path;  // an earlier run's --network file, checked on this run
};

// --network-check: rank 0 reads the earlier fits (the same rank count).
StatusOr<NetworkFits> ReadPriorNetworkFits(const ProfileArgs& args, int ranks) {
  HX_ASSIGN_OR_RETURN(NetworkFits prior, ReadNetworkFits(args.network_check_path));
  if (prior.ranks != ranks)
    return InvalidArgument("--network-check " + args.network_check_path + ": fitted on " +
                           std::to_string(prior.ranks) + " ranks, this run has " +
                           std::to_string(ranks));
  return prior;
}

void PrintNetworkSummary(const nlohmann::json& out, const NetworkProfileOptions& options,
                         const std::string& path) {
  std::printf("network     %d ranks, 4 KiB..%lld bytes by %dx -> %s\n", out["ranks"].get<int>(),
              static_cast<long long>(options.max_bytes), options.step, path.c_str());
  auto errors = [](const nlohmann::json& fit) {
    std::string e;
    for (const char* key : {"geomean_rel_error", "held_out_error", "prior_run_error"}) {
      if (!fit.contains(key)) continue;
      char text[64];
      std::snprintf(text, sizeof text, "%s%s %.1f%%", e.empty() ? "" : ", ",
                    key[0] == 'g'   ? "fit"
                    : key[0] == 'h' ? "held out"
                                    : "earlier run's fit",
                    fit[key].get<double>() * 100);
      e += text;
    }
    return e;
  };
  for (const nlohmann::json& p : out["p2p"])
    std::printf("  p2p 0-%d   %zu regime(s), %s (geometric mean)\n", p["ranks"][1].get<int>(),
                p["regimes"].size(), errors(p).c_str());
  const nlohmann::json& ar = out["all_reduce"];
  std::printf("  all-reduce %zu regime(s), %s (geometric mean)\n", ar["regimes"].size(),
              errors(ar).c_str());
}

// Under mpirun: every rank measures the network with the others; rank 0 writes --network.
int ProfileNetwork(const ProfileArgs& args, const RunRanks& ranks) {
  if (!ranks.active())
    return ReportError(InvalidArgument(
        "--network: measures between MPI ranks; start it with mpirun -np N (N >= 2)"));
  if (args.network_path.empty())
    return ranks.Fail(InvalidArgument(
        "under mpirun, profile measures the network between the ranks: give --network FILE"));
  NetworkProfileOptions options;
  options.max_bytes = args.network_max_bytes;
  options.step = args.network_step;
  options.gap_us = args.network_gap_us;
  options.repeats = args.repeats;
  OutputFiles outputs;
  if (Status s = outputs.Expect("--network", args.network_path); !s.ok()) return ranks.Fail(s);
  std::optional<NetworkFits> prior;
  if (!args.network_check_path.empty() && ranks.rank() == 0) {
    auto read = ReadPriorNetworkFits(args, ranks.comm->size());
    if (!read.ok()) return ranks.Fail(read.status());
    prior = std::move(*read);
  }
  auto net = MeasureNetwork(*ranks.comm, options);
  if (!net.ok()) return ranks.Fail(net.status());
  if (ranks.rank() != 0) return 0;
  const nlohmann::json out = net->ToJson(prior ? &*prior : nullptr);
  Status written = outputs.Stage(args.network_path, DumpJson(out, 2) + "\n");
  if (written.ok()) written = CommitOutputs(outputs);
  if (!written.ok()) return ranks.Fail(written);
  if (!args.json) PrintNetworkSummary(out, options, args.network_path);
  return 0;
}

int RunProfile(const ProfileArgs& args) {
  auto ranks = ConnectRanks();
  if (!ranks.ok()) return ReportError(ranks.status());
  if (ranks->active() || !args.network_path.empty()) {
    // Then rank 0 alone goes on to profile the ops.
    const int code = ProfileNetwork(args, *ranks);
    if (code != 0 || ranks->rank() != 0) return code;
  }
  exec::ProfileOptions options;
  options.repeats = args.repeats;
  options.warmup = args.warmup;
  options.budget_s = args.budget_s;
  options.contention = args.contention;
  OutputFiles outputs;
  for (Status s : {options.Validate(), outputs.Expect("--output", args.output_path)})
    if (!s.ok()) return ReportError(s);
  auto inputs = LoadPlanningInputs(args.model, args.cluster);
  if (!inputs.ok()) return ReportError(inputs.status());
  const graph::Graph& graph = *inputs->graph;
  const hw::Cluster& cluster = *inputs->cluster;
  auto backend = exec::CpuBackend::Create(cluster);
  if (!backend.ok()) return ReportError(backend.status());
  auto weights = exec::MaterializeWeights(graph, args.seed);
  if (!weights.ok()) return ReportError(weights.status());
  const auto values = exec::RandomInputs(graph, args.seed + 1);
  exec::ProfileCalibration cal;
  auto profile = exec::ProfileGraph(graph, cluster, *weights, values, **backend, options, &cal);
  if (!profile.ok()) return ReportError(profile.status());
  Status written = outputs.StageWith(
      args.output_path, [&](const std::string& path) { return profile->WriteFile(path); });
  if (written.ok()) written = CommitOutputs(outputs);
  if (!written.ok()) return ReportError(written);

  double total = 0.0;
  std::map<std::string, double> per_device;
  for (const auto& [node, devices] : profile->node_times())
    for (const auto& [device, seconds] : devices) per_device[device] += seconds;
  for (const auto& [device, seconds] : per_device) total = std::max(total, seconds);
  if (args.json) {
    nlohmann::json out;
    out["model"] = graph.name();
    out["cluster"] = cluster.name();
    out["output"] = args.output_path;
    out["ops"] = graph.Ops().size();
    out["repeats"] = args.repeats;
    out["budget_s"] = args.budget_s;
    out["dispatch_us_per_op"] = cal.dispatch_s_per_op * 1e6;
    out["subgraph_us"] = cal.subgraph_s * 1e6;
    out["kernel_scale"] = cal.kernel_scale;
    out["one_device_run_ms"] = cal.one_device_run_s * 1e3;
    if (cluster.num_devices() >= 2) {
      out["handoff_us"] = cal.handoff_s * 1e6;
      out["send_us"] = cal.send_s * 1e6;
      out["recv_us"] = cal.recv_s * 1e6;
      if (options.contention) {
        out["kernel_sum_ms"] = cal.kernel_sum_s * 1e3;
        out["concurrent_kernel_sum_ms"] = cal.concurrent_kernel_sum_s * 1e3;
      } else {
        out["alone_run_ms"] = cal.alone_run_s * 1e3;
        out["together_run_ms"] = cal.together_run_s * 1e3;
      }
      out["contention_gamma"] = cal.contention_gamma;
    }
    nlohmann::json devices = nlohmann::json::object();
    for (const auto& [device, seconds] : per_device) devices[device] = {{"sum_ms", seconds * 1e3}};
    out["devices"] = devices;
    std::printf("%s\n", DumpJson(out, 2).c_str());
    return 0;
  }
  std::printf("profiled    %zu ops of %s on %s (median of %d runs each)\n", graph.Ops().size(),
              graph.name().c_str(), cluster.name().c_str(), args.repeats);
  for (const auto& [device, seconds] : per_device)
    std::printf("device      %s: ops sum to %.3f ms\n", device.c_str(), seconds * 1e3);
  if (cluster.num_devices() >= 2 && options.contention)
    std::printf(
        "contention  kernels %.3f ms alone, %.3f ms with every core group busy: gamma %.3f\n",
        cal.kernel_sum_s * 1e3, cal.concurrent_kernel_sum_s * 1e3, cal.contention_gamma);
  else if (cal.together_run_s > 0.0)
    std::printf(
        "contention  one-group run %.3f ms alone, %.3f ms on every core group at once: "
        "gamma %.3f\n",
        cal.alone_run_s * 1e3, cal.together_run_s * 1e3, cal.contention_gamma);
  std::printf("profile     %s\n", args.output_path.c_str());
  return 0;
}

}  // namespace

Command AddProfileCommand(CLI::App& root) {
  auto* app = root.add_subcommand(
      "profile", "measure every op on this machine's CPU core groups and write a profile");
  auto args = std::make_shared<ProfileArgs>();
  args->model.AddTo(app);
  app->add_option("--cluster", args->cluster, "a CPU cluster (local-cpu, local-cpu:groups=2, ...)")
      ->default_val("local-cpu");
  app->add_option("-o,--output", args->output_path, "the profile to write (.json or .csv)")
      ->required();
  app->add_option("--repeat", args->repeats, "timed runs per op (the median is kept)")
      ->default_val(5);
  app->add_option("--warmup", args->warmup, "untimed runs per op first")->default_val(1);
  app->add_option("--budget", args->budget_s,
                  "time budget in seconds (0: none): fewer timed runs per op and one calibration "
                  "run each, so the profile takes about this long")
      ->default_val(0.0);
  app->add_flag("--contention", args->contention,
                "also time every op on all core groups at once and write the measured "
                "core-group contention term for the simulator (docs/runtime.md)");
  app->add_option("--seed", args->seed, "seed for random weights and inputs")->default_val(1);
  app->add_flag("--json", args->json, "print one JSON object");
  app->add_option("--network", args->network_path,
                  "under mpirun -np N: measure point-to-point and all-reduce times between the "
                  "ranks and write their alpha-beta fit here (JSON)");
  app->add_option("--network-max-bytes", args->network_max_bytes,
                  "--network: the largest message (sizes from 4 KiB, by --network-step)")
      ->default_val(NetworkProfileOptions{}.max_bytes);
  app->add_option("--network-step", args->network_step,
                  "--network: sizes go up by this factor (2..16; 2 gives held-out sizes between "
                  "the fitted ones of 4)")
      ->default_val(NetworkProfileOptions{}.step);
  app->add_option("--network-gap-us", args->network_gap_us,
                  "--network: idle microseconds before each timed message or collective (a "
                  "shaped link's token bucket refills: every message sees an idle link)")
      ->default_val(0);
  app->add_option("--network-check", args->network_check_path,
                  "--network: an earlier run's network file; its fits' errors on this run's "
                  "samples are written as prior_run_error");
  return {app, [args]() { return RunProfile(*args); }};
}

}  // namespace hx::cli
