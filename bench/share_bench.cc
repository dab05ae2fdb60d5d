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
  auto problem = MakeProblem(*GetGpuModel("a100-80gb"), all, *profiles);
  HX_CHECK(problem.ok());
  return *problem;
}

void BM_Share(benchmark::State& state, const std::string& algo, int scenario, int scale) {
  const ShareProblem problem = Load(scenario, scale);
  ShareOptions ours, parva;
  ours.algo = algo;
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

void Register() {
  for (const char* algo : {"parvagpu", "parvagpu-single", "mig-serving", "gpulet", "hexplan"}) {
    for (int s = 1; s <= 6; ++s) {
      benchmark::RegisterBenchmark(
          ("share/" + std::string(algo) + "/S" + std::to_string(s)).c_str(), BM_Share, algo, s, 1)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark(("share/" + std::string(algo) + "/S5x10").c_str(), BM_Share, algo,
                                 5, 10)
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
