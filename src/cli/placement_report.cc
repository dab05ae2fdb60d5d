#include "cli/placement_report.h"

namespace hx::cli {
namespace {
double Ms(double s) { return s * 1e3; }
}  // namespace

void AddPlannerOptions(CLI::App* app, place::PlannerOptions& o) {
  app->add_option("--time-limit", o.time_limit_s, "planning time limit in seconds")
      ->default_val(60.0);
  app->add_option("--seed", o.seed, "seed for planners that make random choices")->default_val(1);
  app->add_option("--coarsen", o.coarsen, "coarsen the graph first: none or fusion (GCOF)");
  app->add_option("--fusion-rules", o.fusion_rules_path,
                  "fusion rules file for --coarsen fusion (default: the built-in rules)");
  app->add_flag("--cpu-weights-in-place", o.cpu_weights_in_place,
                "CPU devices read weights from host memory (DHA) instead of loading a copy: for "
                "plans run on CPU core groups (docs/runtime.md)");
  app->add_option("--alpha", o.alpha, "chrion: weight of GPU memory in EFT + alpha*memory")
      ->default_val(0.0);
  app->add_option("--gap", o.relative_gap, "exact planners: relative optimality gap to stop at")
      ->default_val(1e-4);
  app->add_option("--threads", o.threads, "exact planners: solver threads")->default_val(1);
  app->add_option("--export-lp", o.export_lp_path, "exact planners: write the MILP (LP format)");
  app->add_option("--export-mps", o.export_mps_path, "exact planners: write the MILP (free MPS)");
  app->add_option("--solution", o.solution_path,
                  "exact planners: load a Gurobi/HiGHS/SCIP/CBC solution file instead of solving");
  app->add_option("--q", o.subgraphs_per_gpu, "sortinghat: subgraph slots per GPU")->default_val(6);
  app->add_option("--ndom", o.dominators_per_submodel, "sortinghat: dominators per submodel")
      ->default_val(1);
  app->add_option("--submodel-time-limit", o.submodel_time_limit_s,
                  "sortinghat: MILP limit per submodel in seconds (0: split --time-limit)")
      ->default_val(0.0);
  app->add_option("--ablation", o.ablation,
                  "sortinghat: no-contention, no-topology or independent");
}

nlohmann::json PlacementJson(const place::PlacementOutcome& outcome, const PlanningInputs& in) {
  const plan::Plan& p = outcome.result.plan;
  const double latency = outcome.sim.makespan_s;
  const double bound = outcome.lower_bound.value_s();
  nlohmann::json out;
  out["algo"] = p.algo;
  out["model"] = in.graph->name();
  out["cluster"] = in.cluster->name();
  out["status"] = outcome.result.status;
  out["latency_ms"] = Ms(latency);
  out["lower_bound_ms"] = Ms(bound);
  out["lower_bound_ratio"] = bound > 0 ? latency / bound : 0.0;
  out["planning_time_s"] = outcome.result.planning_time_s;
  if (p.estimate_ms) out["estimate_ms"] = *p.estimate_ms;
  const place::PlanResult& r = outcome.result;
  if (r.model_objective_s) out["model_objective_ms"] = Ms(*r.model_objective_s);
  if (r.solver_bound_s) out["bound_ms"] = Ms(*r.solver_bound_s);
  if (r.solver_gap) out["gap"] = *r.solver_gap;
  if (!r.detail.empty()) out["detail"] = r.detail;
  nlohmann::json devices = nlohmann::json::array();
  for (const sim::DeviceStats& d : outcome.sim.devices) {
    nlohmann::json dj = {{"name", d.name},
                         {"compute_ms", Ms(d.compute_s)},
                         {"peak_memory_bytes", d.peak_memory_bytes}};
    if (auto id = in.cluster->FindDevice(d.name))
      dj["memory_capacity_bytes"] = in.cluster->device(*id).memory_bytes();
    devices.push_back(std::move(dj));
  }
  out["devices"] = std::move(devices);
  out["transfer_bytes"] = outcome.sim.transfer_bytes;
  return out;
}

}  // namespace hx::cli
