// The exact planners on MOIRAI's published inputs (../shared/data/placement/moirai):
//   - MoiraiExampleOne: time to the proven optimum 30 of example-1 (target: under 30 s);
//   - Exact/<workload>/<planner>: GoogLeNet, Inception-v4, YOLOv5x and Transformer with a 60 s
//     limit: objective against the warm start, the solver's bound and gap (counters, in ms).
// One iteration each (a solve is long); run one at a time: scripts/run-bench.sh DIR
// --benchmark_filter=Exact.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "hexplan/cost/cost_model.h"
#include "hexplan/cost/workload.h"
#include "hexplan/place/exact/getf.h"
#include "hexplan/place/exact/moirai_milp.h"
#include "hexplan/place/problem_builder.h"
#include "hexplan/place/warm_start.h"

namespace {

using namespace hx;

std::string DataDir() {
  if (const char* env = std::getenv("HX_SHARED_DATA_DIR")) return env;
  std::string file = __FILE__;  // <repo>/bench/exact_planners_bench.cc
  std::string repo = file.substr(0, file.rfind("/bench/"));
  return repo + "/../shared/data";
}

struct Loaded {
  cost::Workload workload;
  std::unique_ptr<cost::CostModel> cost;
  place::GraphProblem problem;
};

bool Load(const std::string& name, Loaded& out, benchmark::State& state) {
  auto w = cost::ReadMoiraiCsv(DataDir() + "/placement/moirai/sample-data-csv/" + name + ".csv");
  if (!w.ok() || !w->cluster) {
    state.SkipWithError(("cannot read " + name + ": " + w.status().message()).c_str());
    return false;
  }
  out.workload = std::move(*w);
  out.cost = std::make_unique<cost::CostModel>(out.workload.graph, *out.workload.cluster,
                                               cost::CostModelOptions{}, &out.workload.profile);
  place::ProblemBuildOptions build;
  build.cold_start_loads = false;
  build.activation_reserve_fraction = 0.0;
  auto p = place::BuildGraphProblem(*out.cost, build);
  if (!p.ok()) {
    state.SkipWithError(p.status().message().c_str());
    return false;
  }
  out.problem = std::move(*p);
  return true;
}

void BM_MoiraiExampleOne(benchmark::State& state) {
  Loaded in;
  if (!Load("example-1", in, state)) return;
  for (auto _ : state) {
    place::MoiraiOptions options;
    options.time_limit_s = 120;
    auto r = place::ScheduleMoirai(in.problem.problem, nullptr, options);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    state.counters["objective_ms"] = r->model_objective * 1e3;
    state.counters["optimal"] = r->status == place::PlanStatus::kOptimal;
  }
}
BENCHMARK(BM_MoiraiExampleOne)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

void BM_Exact(benchmark::State& state, const std::string& workload, const std::string& planner) {
  Loaded in;
  if (!Load(workload, in, state)) return;
  const place::SchedulingProblem& p = in.problem.problem;
  auto warm = place::BestFastSchedule(p);
  for (auto _ : state) {
    const place::Schedule* start = warm.ok() ? &warm->schedule : nullptr;
    double objective = 0, bound = 0, gap = 0, makespan = 0;
    if (planner == "moirai") {
      place::MoiraiOptions options;
      options.time_limit_s = 60;
      auto r = place::ScheduleMoirai(p, start, options);
      if (!r.ok()) {
        state.SkipWithError(r.status().message().c_str());
        return;
      }
      objective = r->model_objective, bound = r->bound, gap = r->gap;
      makespan = r->schedule.makespan;
      state.SetLabel(place::PlanStatusName(r->status));
    } else {
      place::GetfOptions options;
      options.time_limit_s = 60;
      auto r = place::ScheduleGetf(p, start, options);
      if (!r.ok()) {
        state.SkipWithError(r.status().message().c_str());
        return;
      }
      objective = r->schedule.makespan, bound = r->bound, gap = r->gap;
      makespan = r->schedule.makespan;
      state.SetLabel(place::PlanStatusName(r->status));
    }
    state.counters["warm_ms"] = warm.ok() ? warm->schedule.makespan * 1e3 : 0.0;
    state.counters["objective_ms"] = objective * 1e3;
    state.counters["makespan_ms"] = makespan * 1e3;
    state.counters["bound_ms"] = bound * 1e3;
    state.counters["gap"] = gap;
  }
}

const bool kRegistered = [] {
  for (const char* w : {"GoogLeNet", "inceptionv4", "yolov5x", "transformer"})
    for (const char* planner : {"getf", "moirai"})
      benchmark::RegisterBenchmark((std::string("Exact/") + w + "/" + planner).c_str(),
                                   [w = std::string(w), planner = std::string(planner)](
                                       benchmark::State& s) { BM_Exact(s, w, planner); })
          ->Iterations(1)
          ->Unit(benchmark::kSecond)
          ->UseRealTime();
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
