// hexplan place MODEL --cluster C --algo NAME: runs a planner, simulates its plan and reports the
// latency against the lower bound; -o writes the plan for `hexplan simulate`.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/hw/presets.h"
#include "hexplan/place/planner.h"
#include "hexplan/plan/plan_json.h"

namespace hx::cli {
namespace {

struct PlaceArgs {
  ModelArgs model;
  std::string cluster;
  std::string algo = "single";
  std::string output;
  double time_limit_s = 60.0;
  uint64_t seed = 1;
  bool json = false;
};

double Ms(double s) { return s * 1e3; }

int RunPlace(const PlaceArgs& args) {
  auto options = args.model.ToZooOptions();
  if (!options.ok()) return ReportError(options.status());
  auto graph = args.model.Load();
  if (!graph.ok()) return ReportError(graph.status());
  auto cluster = hw::LoadCluster(args.cluster);
  if (!cluster.ok()) return ReportError(cluster.status().WithContext("--cluster"));
  cost::CostModel cost(*graph, *cluster);

  place::PlanRequest request;
  request.cost = &cost;
  request.options.time_limit_s = args.time_limit_s;
  request.options.seed = args.seed;
  request.logger = &CliLogger();
  request.model_spec = args.model.model;
  request.model_options = *options;
  request.cluster_spec = args.cluster;
  auto outcome = place::RunPlanner(args.algo, request);
  if (!outcome.ok()) return ReportError(outcome.status());
  const plan::Plan& p = outcome->result.plan;
  if (!args.output.empty()) {
    Status s = plan::WritePlanFile(args.output, p, *graph, *cluster);
    if (!s.ok()) return ReportError(s);
  }
  const double latency = outcome->sim.makespan_s;
  const double bound = outcome->lower_bound.value_s();
  if (args.json) {
    nlohmann::json out;
    out["algo"] = p.algo;
    out["model"] = graph->name();
    out["cluster"] = cluster->name();
    out["status"] = outcome->result.status;
    out["latency_ms"] = Ms(latency);
    out["lower_bound_ms"] = Ms(bound);
    out["gap"] = bound > 0 ? latency / bound : 0.0;
    out["planning_time_s"] = outcome->result.planning_time_s;
    if (p.estimate_ms) out["estimate_ms"] = *p.estimate_ms;
    nlohmann::json devices = nlohmann::json::array();
    for (const sim::DeviceStats& d : outcome->sim.devices)
      devices.push_back({{"name", d.name},
                         {"compute_ms", Ms(d.compute_s)},
                         {"peak_memory_bytes", d.peak_memory_bytes}});
    out["devices"] = std::move(devices);
    out["transfer_bytes"] = outcome->sim.transfer_bytes;
    if (!args.output.empty()) out["plan"] = args.output;
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("algo           %s (%s)\n", p.algo.c_str(), outcome->result.status.c_str());
  std::printf("model          %s on %s\n", graph->name().c_str(), cluster->name().c_str());
  std::printf("latency        %.3f ms (simulated)\n", Ms(latency));
  std::printf("lower bound    %.3f ms (%.2fx)\n", Ms(bound), bound > 0 ? latency / bound : 0.0);
  std::printf("planning time  %.3f s\n", outcome->result.planning_time_s);
  for (const sim::DeviceStats& d : outcome->sim.devices)
    if (d.compute_s > 0)
      std::printf("  %-12s compute %9.3f ms  peak memory %.3f GB\n", d.name.c_str(),
                  Ms(d.compute_s), d.peak_memory_bytes / 1e9);
  if (!args.output.empty()) std::printf("plan           %s\n", args.output.c_str());
  return 0;
}

}  // namespace

Command AddPlaceCommand(CLI::App& root) {
  auto* app = root.add_subcommand("place", "plan a model on a cluster and simulate the plan");
  auto args = std::make_shared<PlaceArgs>();
  args->model.AddTo(app);
  app->add_option("--cluster", args->cluster, "a cluster preset or file")->required();
  std::string algos;
  for (const auto& n : place::PlannerNames()) algos += (algos.empty() ? "" : ", ") + n;
  app->add_option("--algo", args->algo, "the planner: " + algos)->default_val("single");
  app->add_option("-o,--output", args->output, "write the plan (JSON)");
  app->add_option("--time-limit", args->time_limit_s, "planning time limit in seconds")
      ->default_val(60.0);
  app->add_option("--seed", args->seed, "seed for planners that make random choices")
      ->default_val(1);
  app->add_flag("--json", args->json, "print one JSON object");
  return {app, [args]() { return RunPlace(*args); }};
}

}  // namespace hx::cli
