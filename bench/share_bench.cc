// Scheduling time of `hexplan share` on ParvaGPU's scenarios S1-S6 and on 10x S5 (Figs. 9-11).
// Each benchmark plans with one algorithm; the iteration time is that algorithm's, and in the same
// iteration ParvaGPU plans the same problem, so `ratio_vs_parvagpu` (time) and `gpus` /
// `parvagpu_gpus` compare them in the same run.
//   build/<dir>/share_bench --benchmark_filter=hexplan
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "hexplan/core/stopwatch.h"
#include "hexplan/share/planner.h"

namespace {

using namespace hx::share;

const std::string kData = std::string(HX_SHARED_DATA_DIR) + "/sharing/parvagpu";

ShareProblem Load(int scenario, int scale) {
  auto profiles = ReadProfileDir(kData + "/prof_data");
  HX_CHECK(profiles.ok());
  std::vector<std::string> models;
  for (const auto& p : *profiles) models.push_back(p.model);
  auto services = ReadSloScenario(kData + "/SLO/SLO_req_rate.csv", kData + "/SLO/SLO_latency.csv",
                                  "S" + std::to_string(scenario), models);
  HX_CHECK(services.ok());
  std::vector<Service> all;
  for (int k = 0; k < scale; ++k) all.insert(all.end(), services->begin(), services->end());
  AssignServiceIds(&all);
  auto problem = MakeProblem(*GetGpuModel("a100-80gb"), all, *profiles);
  HX_CHECK(problem.ok());
  return *problem;
}

// `verify_seeds` < 0: the default SLO check (hexplan: Poisson, 60 s x seeds 1-5, and repair);
// 0: the planner alone.
void BM_Share(benchmark::State& state, const std::string& algo, int scenario, int scale,
              int verify_seeds) {
  const ShareProblem problem = Load(scenario, scale);
  ShareOptions ours, parva;
  ours.algo = algo;
  if (verify_seeds >= 0) ours.verify_seeds = verify_seeds;
  parva.algo = "parvagpu";
  double t_ours = 0, t_parva = 0;
  int gpus = 0, parva_gpus = 0;
  for (auto _ : state) {
    hx::Stopwatch w;
    auto p = PlanShare(problem, ours);
    const double t = w.ElapsedSeconds();
    benchmark::DoNotOptimize(p);
    w.Reset();
    auto q = PlanShare(problem, parva);
    t_parva += w.ElapsedSeconds();
    t_ours += t;
    gpus = p->metrics.gpus;
    parva_gpus = q->metrics.gpus;
    state.SetIterationTime(t);
  }
  state.counters["gpus"] = gpus;
  state.counters["parvagpu_gpus"] = parva_gpus;
  state.counters["ratio_vs_parvagpu"] = t_parva > 0 ? t_ours / t_parva : 0;
}

// Targets (issue 23): hexplan's planner alone (`hexplan-unverified`, --verify-seeds 0) under 2 ms
// per scenario and 100 ms at 10x S5; with its SLO check and repair (`hexplan`) under 1 s per
// scenario.
void Register() {
  struct Entry {
    const char* label;
    const char* algo;
    int verify_seeds;
  };
  for (const Entry& e :
       {Entry{"parvagpu", "parvagpu", -1}, Entry{"parvagpu-single", "parvagpu-single", -1},
        Entry{"mig-serving", "mig-serving", -1}, Entry{"gpulet", "gpulet", -1},
        Entry{"hexplan-unverified", "hexplan", 0}, Entry{"hexplan", "hexplan", -1}}) {
    const std::string name = std::string("share/") + e.label;
    for (int s = 1; s <= 6; ++s) {
      benchmark::RegisterBenchmark((name + "/S" + std::to_string(s)).c_str(), BM_Share, e.algo, s,
                                   1, e.verify_seeds)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark((name + "/S5x10").c_str(), BM_Share, e.algo, 5, 10, e.verify_seeds)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(3);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Register();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
