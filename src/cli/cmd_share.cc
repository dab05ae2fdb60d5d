// `hexplan share`: GPU sharing with MIG + MPS (ParvaGPU, its baselines, and hexplan's planner).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "hexplan/core/file_util.h"
#include "hexplan/core/format_number.h"
#include "hexplan/core/json_text.h"
#include "hexplan/core/output_files.h"
#include "hexplan/share/algorithms.h"
#include "hexplan/share/caps.h"
#include "hexplan/share/deploy.h"
#include "hexplan/share/planner.h"
#include "hexplan/share/reconfigure.h"
#include "hexplan/share/serving_sim.h"

namespace hx::cli {
namespace {

struct ShareArgs {
  std::string profiles = "../shared/data/sharing/parvagpu/prof_data";
  std::string slo_rates = "../shared/data/sharing/parvagpu/SLO/SLO_req_rate.csv";
  std::string slo_latency = "../shared/data/sharing/parvagpu/SLO/SLO_latency.csv";
  std::string scenario = "S3";
  std::string gpu = "a100-80gb";
  int scale = 1;
  bool json = false;
  bool compare = false;
  std::string mig_parted;
  std::string svg;
  std::string deploy;
  std::string change;
  bool simulate = false;
  share::ShareOptions options;
  share::ServingSimOptions sim;
};

// Reads the profiles and the scenario, repeats it --scale times, and checks the caps
// (docs/formats.md "Caps") before any planning or simulation.
StatusOr<share::ShareProblem> LoadProblem(const ShareArgs& a) {
  if (a.scale < 1 || a.scale > share::kMaxShareScale) {
    return InvalidArgument("--scale: expected 1.." + std::to_string(share::kMaxShareScale) +
                           ", got " + std::to_string(a.scale));
  }
  HX_ASSIGN_OR_RETURN(share::GpuModel gpu, share::GetGpuModel(a.gpu));
  HX_ASSIGN_OR_RETURN(auto profiles, share::ReadProfileDir(a.profiles));
  std::vector<std::string> models;
  for (const auto& p : profiles) models.push_back(p.model);
  HX_ASSIGN_OR_RETURN(auto services,
                      share::ReadSloScenario(a.slo_rates, a.slo_latency, a.scenario, models));
  std::vector<share::Service> scaled;
  for (int k = 0; k < a.scale; ++k) {
    for (const auto& s : services) scaled.push_back(s);  // same model, a separate service
  }
  HX_ASSIGN_OR_RETURN(share::ShareProblem problem, share::MakeProblem(gpu, scaled, profiles));
  HX_RETURN_IF_ERROR(share::CheckProblemCaps(problem, a.options));
  if (a.simulate) HX_RETURN_IF_ERROR(share::CheckSimulationCaps(problem, a.sim));
  if (!a.change.empty()) HX_RETURN_IF_ERROR(share::ParseServiceChange(a.change).status());
  return problem;
}

void PrintPlanText(const share::ShareProblem& problem, const share::ShareOptions& options,
                   const share::SharePlan& plan) {
  const auto& m = plan.metrics;
  std::printf("algorithm      %s (%s)\n", plan.algo.c_str(), plan.mig ? "MIG + MPS" : "MPS only");
  std::printf("gpu            %s, slo-factor %.2f\n", problem.gpu.name.c_str(), options.slo_factor);
  std::printf("gpus           %d%s\n", m.gpus, plan.proven_optimal ? " (proven minimal)" : "");
  std::printf("gpcs           %d of %d\n", m.gpcs, m.gpus * 7);
  std::printf("external frag  %.3f\ninternal slack %.3f\nscheduling     %s ms\n",
              m.external_fragmentation, m.internal_slack,
              FormatNumber(m.scheduling_time_ms).c_str());
  for (const auto& u : plan.unsupported) {
    std::printf("unsupported    %s: %s\n", u.service.c_str(), u.reason.c_str());
  }
  for (const auto& v : share::PlanViolations(problem, options, plan)) {
    std::printf("VIOLATION      %s\n", v.c_str());
  }
  for (size_t g = 0; g < plan.gpus.size(); ++g) {
    std::printf("GPU %-3zu %s:", g,
                plan.mig ? share::LayoutString(plan.gpus[g].ToLayout()).c_str() : "mps");
    for (const auto& s : plan.gpus[g].segments) {
      std::printf("  [%d] %s %dg b%d x%d", s.start, problem.services[s.service].name.c_str(),
                  s.share_gpcs, s.triplet.batch, s.triplet.processes);
    }
    std::printf("\n");
  }
}

int RunCompare(const ShareArgs& a, const share::ShareProblem& problem) {
  nlohmann::json rows = nlohmann::json::array();
  if (!a.json) {
    std::printf("%-22s %5s %5s %8s %8s %10s %s\n", "ALGORITHM", "GPUS", "GPCS", "EXTFRAG", "SLACK",
                "TIME_MS", "NOTES");
  }
  for (const auto& name : share::AlgoNames()) {
    share::ShareOptions o = a.options;
    o.algo = name;
    auto plan = share::PlanShare(problem, o);
    if (!plan.ok()) return ReportError(plan.status());
    const auto viol = share::PlanViolations(problem, o, *plan);
    std::string notes;
    if (!plan->unsupported.empty())
      notes += std::to_string(plan->unsupported.size()) + " unsupported ";
    if (!viol.empty()) notes += std::to_string(viol.size()) + " violations ";
    if (name == "exact" || name == "hexplan") {
      notes +=
          plan->proven_optimal ? "optimal" : "lower bound " + std::to_string(plan->lower_bound);
    }
    if (a.json) {
      rows.push_back({{"algo", name},
                      {"gpus", plan->metrics.gpus},
                      {"gpcs", plan->metrics.gpcs},
                      {"external_fragmentation", plan->metrics.external_fragmentation},
                      {"internal_slack", plan->metrics.internal_slack},
                      {"scheduling_time_ms", plan->metrics.scheduling_time_ms},
                      {"unsupported", plan->unsupported.size()},
                      {"slo_violations", viol.size()},
                      {"proven_optimal", plan->proven_optimal},
                      {"lower_bound", plan->lower_bound}});
    } else {
      std::printf("%-22s %5d %5d %8.3f %8.3f %10.3f %s\n", name.c_str(), plan->metrics.gpus,
                  plan->metrics.gpcs, plan->metrics.external_fragmentation,
                  plan->metrics.internal_slack, plan->metrics.scheduling_time_ms, notes.c_str());
    }
  }
  if (a.json) std::printf("%s\n", DumpJson(rows, 2).c_str());
  return 0;
}

int RunShare(const ShareArgs& a) {
  Status st = a.options.Validate();
  OutputFiles outputs;
  for (Status s : {st, outputs.Expect("--mig-parted", a.mig_parted),
                   outputs.Expect("--deploy", a.deploy), outputs.Expect("--svg", a.svg)})
    if (!s.ok()) return ReportError(s);
  auto problem = LoadProblem(a);
  if (!problem.ok()) return ReportError(problem.status());
  if (a.compare) return RunCompare(a, *problem);
  auto plan = share::PlanShare(*problem, a.options);
  if (!plan.ok()) return ReportError(plan.status());

  // Validate and render every requested deployment output before writing any of them.
  std::vector<std::pair<std::string, std::string>> files;
  if (!a.mig_parted.empty()) {
    auto yaml = share::MigPartedYaml(*problem, *plan, "hexplan-" + a.scenario);
    if (!yaml.ok()) return ReportError(yaml.status().WithContext("--mig-parted"));
    files.push_back({a.mig_parted, *yaml});
  }
  if (!a.deploy.empty()) {
    auto script = share::DeploymentScript(*problem, *plan);
    if (!script.ok()) return ReportError(script.status().WithContext("--deploy"));
    files.push_back({a.deploy, *script});
  }
  if (!a.svg.empty()) {
    if (plan->mig) {
      Status v = share::ValidateForDeployment(*problem, *plan);
      if (!v.ok()) return ReportError(v.WithContext("--svg"));
    }
    files.push_back(
        {a.svg, share::PlanSvg(*problem, *plan,
                               a.scenario + " on " + problem->gpu.name + ": " + plan->algo + ", " +
                                   std::to_string(plan->metrics.gpus) + " GPUs")});
  }
  for (const auto& [path, text] : files) {
    Status w = outputs.Stage(path, text);
    if (!w.ok()) return ReportError(w);
  }
  if (Status c = CommitOutputs(outputs); !c.ok()) return ReportError(c);

  nlohmann::json out = nlohmann::json::parse(share::PlanJson(*problem, a.options, *plan));
  if (plan->mig) {
    auto rows = share::Placements(*problem, *plan);
    if (!rows.ok()) return ReportError(rows.status());
    out["placements"] = nlohmann::json::array();
    for (const auto& r : *rows) {
      out["placements"].push_back({{"gpu", r.gpu},
                                   {"start", r.start},
                                   {"profile", r.profile},
                                   {"gi_profile_id", r.gi_profile_id},
                                   {"service", r.service},
                                   {"batch", r.batch},
                                   {"mps_processes", r.processes}});
    }
  }
  if (a.simulate) {
    auto sim = share::SimulateServing(*problem, *plan, a.sim);
    if (!sim.ok()) return ReportError(sim.status());
    nlohmann::json sj;
    sj["arrivals"] = a.sim.arrivals;
    sj["seconds"] = a.sim.duration_s;
    sj["slo_compliance"] = sim->slo_compliance;
    sj["services"] = nlohmann::json::array();
    for (const auto& s : sim->services) {
      sj["services"].push_back({{"service", s.service},
                                {"requests", s.requests},
                                {"slo_ms", s.slo_ms},
                                {"slo_compliance", s.slo_compliance},
                                {"p50_ms", s.p50_ms},
                                {"p95_ms", s.p95_ms},
                                {"p99_ms", s.p99_ms},
                                {"max_ms", s.max_ms}});
    }
    out["simulation"] = sj;
  }
  if (!a.change.empty()) {
    auto change = share::ParseServiceChange(a.change);
    if (!change.ok()) return ReportError(change.status());
    auto r = share::Reconfigure(*problem, *plan, a.options, *change);
    if (!r.ok()) return ReportError(r.status());
    out["reconfiguration"] = {
        {"change", a.change},
        {"touched_gpus", r->touched},
        {"released_gpus", r->released},
        {"added_gpus", r->added},
        {"plan", nlohmann::json::parse(share::PlanJson(r->problem, a.options, r->plan))}};
  }

  if (a.json) {
    std::printf("%s\n", DumpJson(out, 2).c_str());
    return 0;
  }
  PrintPlanText(*problem, a.options, *plan);
  if (out.contains("simulation")) {
    const auto& sj = out["simulation"];
    std::printf("simulation     %s arrivals, %.1f s: SLO compliance %.4f\n", a.sim.arrivals.c_str(),
                a.sim.duration_s, sj["slo_compliance"].get<double>());
    for (const auto& s : sj["services"]) {
      std::printf("  %-12s %7lld req  compliance %.4f  p50 %7s  p99 %7s  SLO %7s ms\n",
                  s["service"].get<std::string>().c_str(),
                  static_cast<long long>(s["requests"].get<int64_t>()),
                  s["slo_compliance"].get<double>(),
                  FormatNumber(s["p50_ms"].get<double>(), 1).c_str(),
                  FormatNumber(s["p99_ms"].get<double>(), 1).c_str(),
                  FormatNumber(s["slo_ms"].get<double>(), 1).c_str());
    }
  }
  if (out.contains("reconfiguration")) {
    const auto& rj = out["reconfiguration"];
    std::printf("reconfigured   %s: touched GPUs %s, released %s, added %s, now %d GPUs\n",
                a.change.c_str(), DumpJson(rj["touched_gpus"]).c_str(),
                DumpJson(rj["released_gpus"]).c_str(), DumpJson(rj["added_gpus"]).c_str(),
                rj["plan"]["gpus"].get<int>());
  }
  return 0;
}

// The --help footer: every algorithm with its one-line description, in the comparison's order.
std::string AlgorithmsFooter() {
  std::string text = "Algorithms (--algo):";
  for (const auto& algo : share::ShareAlgorithms()) {
    char line[200];
    std::snprintf(line, sizeof(line), "\n  %-22s %s", algo.name.c_str(), algo.description.c_str());
    text += line;
  }
  return text;
}

}  // namespace

Command AddShareCommand(CLI::App& root) {
  auto a = std::make_shared<ShareArgs>();
  a->options.algo = "hexplan";
  auto* app = root.add_subcommand(
      "share",
      "plan spatial GPU sharing (MIG + MPS) for DNN services: ParvaGPU, baselines, hexplan");
  app->add_option("--profiles", a->profiles, "profile directory (ParvaGPU *.csv or hexplan *.json)")
      ->capture_default_str();
  app->add_option("--slo-rates", a->slo_rates, "SLO request-rate file (one row per scenario)")
      ->capture_default_str();
  app->add_option("--slo-latency", a->slo_latency, "SLO latency file in ms")->capture_default_str();
  app->add_option("--scenario", a->scenario, "scenario: S1..S6 (row of the SLO files)")
      ->capture_default_str();
  app->add_option("--gpu", a->gpu, "a100-40gb, a100-80gb, h100-80gb or h200-141gb")
      ->capture_default_str();
  app->add_option("--algo", a->options.algo,
                  "the algorithm: " + share::ShareAlgorithmRegistry().NameList())
      ->capture_default_str();
  app->add_option("--slo-factor", a->options.slo_factor,
                  "share of the SLO a segment's batch latency may take")
      ->capture_default_str();
  app->add_option("--scale", a->scale, "repeat the scenario's services N times (Figs. 10-11)")
      ->capture_default_str();
  app->add_option("--node-limit", a->options.node_limit, "hexplan's search budget (states)")
      ->capture_default_str();
  app->add_flag("--json", a->json, "print JSON");
  app->add_flag("--compare", a->compare, "run every algorithm and print the comparison table");
  app->add_option("--mig-parted", a->mig_parted, "write an NVIDIA mig-parted config (YAML)");
  app->add_option("--deploy", a->deploy, "write the nvidia-smi + MPS deployment script");
  app->add_option("--svg", a->svg, "write the SVG map of the GPUs");
  app->add_flag("--simulate", a->simulate, "run the serving simulation on the plan");
  app->add_option("--arrivals", a->sim.arrivals, "simulation arrivals: poisson or bursty")
      ->capture_default_str();
  app->add_option("--sim-seconds", a->sim.duration_s, "simulated seconds")->capture_default_str();
  app->add_option("--seed", a->sim.seed, "simulation seed")->capture_default_str();
  app->add_option("--change", a->change,
                  "reconfigure after changing one service: NAME:rate=R,slo=S (§III-F)");
  app->footer(AlgorithmsFooter());
  return {app, [a]() { return RunShare(*a); }};
}

}  // namespace hx::cli
