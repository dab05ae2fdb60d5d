// `hexplan share`: GPU sharing with MIG + MPS (ParvaGPU, its baselines, and hexplan's planner).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

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

#ifndef HX_SOURCE_SHARED_DATA_DIR
#define HX_SOURCE_SHARED_DATA_DIR "../shared/data"
#endif

// The ParvaGPU data set the defaults point at: next to the binary (`<bin>/data/sharing/parvagpu`
// or `<bin>/../share/hexplan/sharing/parvagpu`), else the source tree's shared data (the path
// compiled in), else `../shared/data/sharing/parvagpu` from the working directory.
std::string DefaultParvaDir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> candidates;
  if (!ec) {
    candidates.push_back(exe.parent_path() / "data/sharing/parvagpu");
    candidates.push_back(exe.parent_path() / "../share/hexplan/sharing/parvagpu");
  }
  candidates.push_back(fs::path(HX_SOURCE_SHARED_DATA_DIR) / "sharing/parvagpu");
  for (const auto& dir : candidates) {
    if (fs::is_directory(dir / "prof_data", ec)) return dir.lexically_normal().string();
  }
  return "../shared/data/sharing/parvagpu";
}

struct ShareArgs {
  std::string profiles = DefaultParvaDir() + "/prof_data";
  std::string slo_rates = DefaultParvaDir() + "/SLO/SLO_req_rate.csv";
  std::string slo_latency = DefaultParvaDir() + "/SLO/SLO_latency.csv";
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
  share::AssignServiceIds(&scaled);  // bert, bert#2, ...
  HX_ASSIGN_OR_RETURN(share::ShareProblem problem, share::MakeProblem(gpu, scaled, profiles));
  HX_RETURN_IF_ERROR(share::CheckProblemCaps(problem, a.options));
  if (a.simulate) HX_RETURN_IF_ERROR(share::CheckSimulationCaps(problem, a.sim));
  if (!a.change.empty()) HX_RETURN_IF_ERROR(share::ParseServiceChange(a.change).status());
  return problem;
}

// The SLO verdict, with a WARNING line per service that misses (stderr too).
void PrintSloCheck(const share::ShareProblem& problem, const share::SharePlan& plan) {
  const share::SloCheck& c = plan.slo;
  if (!c.checked) {
    std::printf("slo check      not run (--simulate runs the serving simulation)\n");
    return;
  }
  std::printf(
      "slo check      %s: %s, compliance %.4f (%s)\n",
      c.verified ? "every service meets its SLO" : "MISSED", c.how.c_str(), c.slo_compliance,
      c.repair_rounds > 0
          ? ("after " + std::to_string(c.repair_rounds) + " rounds of added capacity").c_str()
          : "as planned");
  for (size_t i = 0; i < problem.services.size() && i < c.meets_slo.size(); ++i) {
    if (c.meets_slo[i]) continue;
    char line[320];
    const bool late = c.p99_ms[i] > problem.services[i].slo_ms;
    std::snprintf(line, sizeof line,
                  "WARNING        %s misses its SLO: p99 %s ms %s %s ms%s (compliance %.3f)",
                  problem.services[i].name.c_str(), FormatNumber(c.p99_ms[i], 1).c_str(),
                  late ? ">" : "<=", FormatNumber(problem.services[i].slo_ms, 1).c_str(),
                  late ? "" : ", but too close to it or to a segment's capacity for the check",
                  c.compliance[i]);
    std::printf("%s\n", line);
    std::fprintf(stderr, "%s\n", line);
  }
}

void PrintPlanText(const share::ShareProblem& problem, const share::ShareOptions& options,
                   const share::SharePlan& plan) {
  const auto& m = plan.metrics;
  std::printf("algorithm      %s (%s)\n", plan.algo.c_str(), plan.mig ? "MIG + MPS" : "MPS only");
  std::printf("gpu            %s, slo-factor %.2f\n", problem.gpu.name.c_str(), options.slo_factor);
  if (m.gpus == 0 && !plan.unsupported.empty()) {
    std::printf("gpus           cannot serve this scenario (%zu of %zu services unsupported)\n",
                plan.unsupported.size(), problem.services.size());
  } else {
    std::printf(
        "gpus           %d%s\n", m.gpus,
        plan.proven_optimal ? (" (proven minimal under " + plan.minimal_under + ")").c_str() : "");
  }
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
  PrintSloCheck(problem, plan);
  if (!plan.gpus.empty()) {
    std::printf(
        "legend         GPU g LAYOUT: [slot] service SIZEg bBATCH xPROCS = a MIG instance of\n"
        "               SIZE GPCs at start memory slice `slot` running PROCS MPS processes\n"
        "               of the service, each taking batches of up to BATCH requests\n");
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
    const bool serves_none = plan->metrics.gpus == 0 && !plan->unsupported.empty();
    if (serves_none) {
      notes += "cannot serve the scenario (" + std::to_string(plan->unsupported.size()) +
               " unsupported) ";
    } else if (!plan->unsupported.empty()) {
      notes += std::to_string(plan->unsupported.size()) + " unsupported ";
    }
    if (plan->slo.checked) notes += plan->slo.verified ? "SLOs verified " : "SLOs MISSED ";
    if (!viol.empty()) notes += std::to_string(viol.size()) + " violations ";
    if (name == "exact" || name == "hexplan") {
      notes +=
          plan->proven_optimal ? "optimal" : "lower bound " + std::to_string(plan->lower_bound);
    }
    if (a.json) {
      rows.push_back(
          {{"algo", name},
           {"gpus", plan->metrics.gpus},
           {"gpcs", plan->metrics.gpcs},
           {"external_fragmentation", plan->metrics.external_fragmentation},
           {"internal_slack", plan->metrics.internal_slack},
           {"scheduling_time_ms", plan->metrics.scheduling_time_ms},
           {"unsupported", plan->unsupported.size()},
           {"slo_violations", viol.size()},
           {"proven_optimal", plan->proven_optimal},
           {"lower_bound", plan->lower_bound},
           {"verified", plan->slo.checked && plan->slo.verified},
           {"slo_compliance",
            plan->slo.checked ? nlohmann::json(plan->slo.slo_compliance) : nlohmann::json()}});
    } else {
      const std::string gpus = serves_none ? "-" : std::to_string(plan->metrics.gpus);
      std::printf("%-22s %5s %5d %8.3f %8.3f %10.3f %s\n", name.c_str(), gpus.c_str(),
                  plan->metrics.gpcs, plan->metrics.external_fragmentation,
                  plan->metrics.internal_slack, plan->metrics.scheduling_time_ms, notes.c_str());
    }
  }
  if (a.json) std::printf("%s\n", DumpJson(rows, 2).c_str());
  return 0;
}

// Validates and renders every requested deployment output of `plan` (only the GPUs of `scope`)
// before writing any of them.
Status WriteOutputs(const ShareArgs& a, const share::ShareProblem& problem,
                    const share::SharePlan& plan, const share::DeployScope& scope,
                    OutputFiles* outputs) {
  std::vector<std::pair<std::string, std::string>> files;
  if (!a.mig_parted.empty()) {
    auto yaml = share::MigPartedYaml(problem, plan, "hexplan-" + a.scenario, scope);
    if (!yaml.ok()) return yaml.status().WithContext("--mig-parted");
    files.push_back({a.mig_parted, *yaml});
  }
  if (!a.deploy.empty()) {
    auto script = share::DeploymentScript(problem, plan, scope);
    if (!script.ok()) return script.status().WithContext("--deploy");
    files.push_back({a.deploy, *script});
  }
  if (!a.svg.empty()) {
    if (plan.mig)
      HX_RETURN_IF_ERROR(share::ValidateForDeployment(problem, plan).WithContext("--svg"));
    files.push_back(
        {a.svg, share::PlanSvg(problem, plan,
                               a.scenario + " on " + problem.gpu.name + ": " + plan.algo + ", " +
                                   std::to_string(plan.metrics.gpus) + " GPUs")});
  }
  for (const auto& [path, text] : files) HX_RETURN_IF_ERROR(outputs->Stage(path, text));
  return CommitOutputs(*outputs);
}

// Runs the serving simulation (the judge) on `plan`, records its verdict in plan->slo and returns
// the JSON of its per-service statistics.
StatusOr<nlohmann::json> SimulateJson(const ShareArgs& a, const share::ShareProblem& problem,
                                      share::SharePlan* plan) {
  HX_ASSIGN_OR_RETURN(auto sim, share::SimulateServing(problem, *plan, a.sim));
  share::RecordSimulation(sim, a.sim, &plan->slo);
  nlohmann::json sj;
  sj["arrivals"] = a.sim.arrivals;
  sj["seconds"] = a.sim.duration_s;
  sj["seeds"] = a.sim.seeds;
  sj["slo_compliance"] = sim.slo_compliance;
  sj["verified"] = sim.verified;
  sj["services"] = nlohmann::json::array();
  for (const auto& s : sim.services) {
    sj["services"].push_back({{"service", s.service},
                              {"requests", s.requests},
                              {"slo_ms", s.slo_ms},
                              {"slo_compliance", s.slo_compliance},
                              {"p50_ms", s.p50_ms},
                              {"p95_ms", s.p95_ms},
                              {"p99_ms", s.p99_ms},
                              {"max_ms", s.max_ms},
                              {"meets_slo", s.meets_slo}});
  }
  return sj;
}

StatusOr<nlohmann::json> PlacementsJson(const share::ShareProblem& problem,
                                        const share::SharePlan& plan) {
  HX_ASSIGN_OR_RETURN(auto rows, share::Placements(problem, plan));
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    out.push_back({{"gpu", r.gpu},
                   {"start", r.start},
                   {"profile", r.profile},
                   {"gi_profile_id", r.gi_profile_id},
                   {"service", r.service},
                   {"batch", r.batch},
                   {"mps_processes", r.processes}});
  }
  return out;
}

void PrintSimulationText(const ShareArgs& a, const nlohmann::json& sj) {
  std::printf("simulation     %s arrivals, %.1f s x %d seeds: SLO compliance %.4f\n",
              a.sim.arrivals.c_str(), a.sim.duration_s, a.sim.seeds,
              sj["slo_compliance"].get<double>());
  for (const auto& s : sj["services"]) {
    std::printf("  %-12s %7lld req  compliance %.4f  p50 %7s  p99 %7s  SLO %7s ms%s\n",
                s["service"].get<std::string>().c_str(),
                static_cast<long long>(s["requests"].get<int64_t>()),
                s["slo_compliance"].get<double>(),
                FormatNumber(s["p50_ms"].get<double>(), 1).c_str(),
                FormatNumber(s["p99_ms"].get<double>(), 1).c_str(),
                FormatNumber(s["slo_ms"].get<double>(), 1).c_str(),
                s["meets_slo"].get<bool>() ? "" : "  MISSED");
  }
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
  nlohmann::json sim_json;
  if (a.simulate) {
    auto sj = SimulateJson(a, *problem, &*plan);
    if (!sj.ok()) return ReportError(sj.status());
    sim_json = *sj;
  }
  std::optional<share::ReconfigureResult> re;
  if (!a.change.empty()) {
    auto change = share::ParseServiceChange(a.change);
    if (!change.ok()) return ReportError(change.status());
    auto r = share::Reconfigure(*problem, *plan, a.options, *change);
    if (!r.ok()) return ReportError(r.status());
    re = std::move(*r);
  }
  // After --change, the outputs deploy the change: only the GPUs it touches.
  Status w =
      re ? WriteOutputs(a, re->problem, re->plan, share::DeployScope::Only(re->touched), &outputs)
         : WriteOutputs(a, *problem, *plan, {}, &outputs);
  if (!w.ok()) return ReportError(w);

  nlohmann::json out = nlohmann::json::parse(share::PlanJson(*problem, a.options, *plan));
  if (plan->mig) {
    auto rows = PlacementsJson(*problem, *plan);
    if (!rows.ok()) return ReportError(rows.status());
    out["placements"] = *rows;
  }
  if (a.simulate) out["simulation"] = sim_json;
  if (re) {
    out["reconfiguration"] = {
        {"change", a.change},
        {"touched_gpus", re->touched},
        {"released_gpus", re->released},
        {"added_gpus", re->added},
        {"plan", nlohmann::json::parse(share::PlanJson(re->problem, a.options, re->plan))}};
  }
  if (a.json) {
    std::printf("%s\n", DumpJson(out, 2).c_str());
    return 0;
  }
  PrintPlanText(*problem, a.options, *plan);
  if (a.simulate) PrintSimulationText(a, sim_json);
  if (re) {
    std::printf("reconfigured   %s: touched GPUs %s, released %s, added %s, now %d GPUs\n",
                a.change.c_str(), DumpJson(nlohmann::json(re->touched)).c_str(),
                DumpJson(nlohmann::json(re->released)).c_str(),
                DumpJson(nlohmann::json(re->added)).c_str(), re->plan.metrics.gpus);
    if (re->plan.slo.checked) PrintSloCheck(re->problem, re->plan);
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
  auto* simulate =
      app->add_flag("--simulate", a->simulate, "run the serving simulation on the plan");
  // The simulation's settings mean nothing without it: given alone they are an error, not ignored.
  app->add_option("--arrivals", a->sim.arrivals, "simulation arrivals: poisson or bursty")
      ->capture_default_str()
      ->needs(simulate);
  app->add_option("--sim-seconds", a->sim.duration_s, "simulated seconds")
      ->capture_default_str()
      ->needs(simulate);
  app->add_option("--seed", a->sim.seed, "simulation seed (the first, with --seeds)")
      ->capture_default_str()
      ->needs(simulate);
  app->add_option("--seeds", a->sim.seeds, "simulations, seeds seed..seed+N-1 (at most 10)")
      ->capture_default_str()
      ->needs(simulate);
  app->add_option("--verify-seeds", a->options.verify_seeds,
                  "hexplan's own SLO check: seeds 1..N of Poisson arrivals (0: off, at most 10)")
      ->capture_default_str();
  app->add_option("--verify-margin", a->options.verify_margin,
                  "hexplan's own SLO check: a service passes with p99 <= (1 - margin) x SLO")
      ->capture_default_str();
  app->add_flag("--repair", a->options.repair,
                "check and repair another algorithm's plan as hexplan's (more headroom for the "
                "services that miss, until the judge passes it)");
  app->add_option("--verify-max-load", a->options.verify_max_load,
                  "hexplan's own SLO check: the most load (arrivals x batch latency / (batch x "
                  "processes)) a segment may carry")
      ->capture_default_str();
  app->add_option("--verify-seconds", a->options.verify_seconds,
                  "hexplan's own SLO check: simulated seconds per seed")
      ->capture_default_str();
  app->add_option("--change", a->change,
                  "reconfigure after changing one service: ID:rate=R,slo=S (§III-F; ID as listed, "
                  "e.g. bert#2)");
  app->footer(AlgorithmsFooter());
  return {app, [a]() { return RunShare(*a); }};
}

}  // namespace hx::cli
