#include "cli/placement_report.h"

#include <algorithm>
#include <cstdio>

namespace hx::cli {
namespace {

double ReportMs(double s) { return s * 1e3; }

// Every planner's own options, by flag name: each distinct spec with the planners that own it.
struct OwnedOption {
  std::string name;
  std::vector<std::pair<OptionSpec, std::vector<std::string>>> specs;
};
std::vector<OwnedOption> PlannerOwnedOptions() {
  std::vector<OwnedOption> all;
  for (const std::string& planner : place::PlannerNames()) {
    if (planner == "auto") continue;  // auto takes its members' options
    auto specs = place::PlannerOptionSpecs(planner);
    if (!specs.ok()) continue;
    for (const OptionSpec& spec : *specs) {
      auto it = std::find_if(all.begin(), all.end(),
                             [&](const OwnedOption& o) { return o.name == spec.name; });
      if (it == all.end()) it = all.insert(all.end(), OwnedOption{spec.name, {}});
      auto same = std::find_if(it->specs.begin(), it->specs.end(), [&](const auto& known) {
        return known.first.description == spec.description &&
               known.first.DefaultText() == spec.DefaultText() &&
               known.first.RangeText() == spec.RangeText();
      });
      if (same == it->specs.end()) {
        it->specs.push_back({spec, {planner}});
      } else {
        same->second.push_back(planner);
      }
    }
  }
  return all;
}

std::string Join(const std::vector<std::string>& names, const std::string& sep) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : sep) + n;
  return out;
}

std::string PlannerOptionsFooter() {
  std::string footer =
      "Planner options (a planner takes only its own; auto and compare pass each "
      "to the planners that own it):\n";
  for (const std::string& name : place::PlannerNames()) {
    auto specs = place::PlannerOptionSpecs(name);
    if (!specs.ok() || specs->empty() || name == "auto") continue;
    std::vector<std::string> flags;
    for (const OptionSpec& s : *specs)
      flags.push_back(s.Flag() + " (" + s.DefaultText() + ", " + s.RangeText() + ")");
    char head[32];
    std::snprintf(head, sizeof head, "  %-13s ", name.c_str());
    footer += head + Join(flags, ", ") + "\n";
  }
  return footer;
}

}  // namespace

Status PlannerFlags::Apply(place::PlanRequest* request) const {
  request->options = options;
  HX_ASSIGN_OR_RETURN(request->options.coarsen, place::ParseCoarsening(coarsen));
  request->options.warm_start = !no_warm_start;
  HX_RETURN_IF_ERROR(place::CheckWarmFraction(warm));
  request->warm = warm;
  for (const auto& [name, option] : own_flags)
    if (option->count() > 0) HX_RETURN_IF_ERROR(request->planner_options.Give(name, own.at(name)));
  return Status::Ok();
}

Status ExpectPlannerOutputs(const PlannerFlags& flags, OutputFiles* outputs) {
  for (const char* name : {"export-lp", "export-mps"}) {
    auto flag = flags.own_flags.find(name);
    if (flag == flags.own_flags.end() || flag->second->count() == 0) continue;
    HX_RETURN_IF_ERROR(outputs->Expect(std::string("--") + name, flags.own.at(name)));
  }
  return Status::Ok();
}

void AddPlannerOptions(CLI::App* app, PlannerFlags& flags) {
  place::PlannerOptions& o = flags.options;
  app->add_option("--time-limit", o.time_limit_s, "planning time limit in seconds")
      ->default_val(60.0);
  app->add_option("--seed", o.seed, "seed for planners that make random choices")->default_val(1);
  app->add_option("--coarsen", flags.coarsen,
                  "coarsen the graph first: none or fusion (GCOF; moirai's default)");
  app->add_option("--fusion-rules", o.fusion_rules_path,
                  "fusion rules file for --coarsen fusion (default: the built-in rules)");
  app->add_flag("--cpu-weights-in-place", o.cpu_weights_in_place,
                "CPU devices read weights from host memory (DHA) instead of loading a copy: for "
                "plans run on CPU core groups (docs/runtime.md)");
  app->add_option("--gap", o.relative_gap, "exact planners: relative optimality gap to stop at")
      ->default_val(1e-4);
  app->add_option("--threads", o.threads, "exact planners: solver threads")->default_val(1);
  app->add_flag("--no-warm-start", flags.no_warm_start,
                "exact planners: do not start from the fast planners' best plan");
  app->add_option("--warm", flags.warm,
                  "plan for warm runs: the fraction (0..1) of the weights that stays on its device "
                  "between requests; 0 plans a cold start (docs/placement.md)")
      ->default_val(0.0);
  for (const OwnedOption& owned : PlannerOwnedOptions()) {
    std::vector<std::string> parts;
    for (const auto& [s, owners] : owned.specs)
      parts.push_back(Join(owners, ", ") + ": " + s.description + " (default " + s.DefaultText() +
                      ", " + s.RangeText() + ")");
    const char* type[] = {"BOOL", "INT", "FLOAT", "TEXT"};
    flags.own_flags[owned.name] =
        app->add_option("--" + owned.name, flags.own[owned.name], Join(parts, "; "))
            ->type_name(type[static_cast<int>(owned.specs.front().first.type())]);
  }
  app->footer(PlannerOptionsFooter());
}

nlohmann::json PlacementJson(const place::PlacementOutcome& outcome, const PlanningInputs& in) {
  const plan::Plan& p = outcome.result.plan;
  const double latency = outcome.sim.makespan_s;
  const double bound = outcome.lower_bound.value_s();
  nlohmann::json out;
  out["algo"] = p.algo;
  out["model"] = in.graph->name();
  out["cluster"] = in.cluster->name();
  out["status"] = place::PlanStatusName(outcome.result.status);
  out["latency_ms"] = ReportMs(latency);
  out["lower_bound_ms"] = ReportMs(bound);
  out["lower_bound_ratio"] = bound > 0 ? latency / bound : 0.0;
  out["planning_time_s"] = outcome.result.planning_time_s;
  if (p.estimate_ms) out["estimate_ms"] = *p.estimate_ms;
  const place::PlanResult& r = outcome.result;
  if (r.model_objective_s) out["model_objective_ms"] = ReportMs(*r.model_objective_s);
  if (r.solver_bound_s) out["bound_ms"] = ReportMs(*r.solver_bound_s);
  if (r.solver_gap) out["gap"] = *r.solver_gap;
  if (!r.detail.empty()) out["detail"] = r.detail;
  nlohmann::json devices = nlohmann::json::array();
  for (const sim::DeviceStats& d : outcome.sim.devices) {
    nlohmann::json dj = {{"name", d.name},
                         {"compute_ms", ReportMs(d.compute_s)},
                         {"peak_memory_bytes", d.peak_memory_bytes}};
    if (auto id = in.cluster->FindDevice(d.name))
      dj["memory_capacity_bytes"] = in.cluster->device(*id).memory_bytes();
    devices.push_back(std::move(dj));
  }
  out["devices"] = std::move(devices);
  out["transfer_bytes"] = outcome.sim.transfer_bytes;
  out["warm"] = outcome.warm;
  if (const auto& w = outcome.warm_planning) {
    nlohmann::json wj = {{"warm_planned_ms", ReportMs(w->warm_planned_s)},
                         {"kept", w->kept_cold_plan ? "cold_plan" : "warm_plan"}};
    if (w->cold_planned_s) wj["cold_planned_ms"] = ReportMs(*w->cold_planned_s);
    out["warm_planning"] = std::move(wj);
  }
  return out;
}

}  // namespace hx::cli
