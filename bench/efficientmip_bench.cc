// EfficientMIP's latency inputs (../shared/data/placement/dnn-partitioning/latency-inputs, q = 1),
// scored by the paper's latency model: its greedy (Appendix F) against our efficientmip solve
// (greedy, DP over topological orders, local search, then the latency IP on CBC behind its size
// guard), with the proven bound and gap. Counters in ms; `improvement` = 1 - ours / greedy. The
// limit per input is HX_EFFICIENTMIP_LIMIT_S seconds (default 60). After the runs it prints the
// table of docs/placement.md (markdown) on stdout.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hexplan/core/stopwatch.h"
#include "hexplan/place/efficientmip/efficientmip.h"

namespace {

using namespace hx;

std::string DataDir() {
  if (const char* env = std::getenv("HX_SHARED_DATA_DIR")) return env;
  std::string file = __FILE__;  // <repo>/bench/efficientmip_bench.cc
  std::string repo = file.substr(0, file.rfind("/bench/"));
  return repo + "/../shared/data";
}

double LimitSeconds() {
  if (const char* env = std::getenv("HX_EFFICIENTMIP_LIMIT_S")) return std::atof(env);
  return 60.0;
}

struct Row {
  std::string input;
  int nodes = 0;
  place::EfficientMipSolveResult result;
  double seconds = 0.0;
};
std::vector<Row>& Rows() {
  static std::vector<Row> rows;
  return rows;
}

void BM_EfficientMip(benchmark::State& state, const std::string& input) {
  const std::string path =
      DataDir() + "/placement/dnn-partitioning/latency-inputs/" + input + ".json";
  auto inst = place::ReadEfficientMipInstance(path);
  if (!inst.ok()) {
    state.SkipWithError(inst.status().ToString().c_str());
    return;
  }
  place::EfficientMipSolveOptions options;
  options.time_limit_s = LimitSeconds();
  options.subgraphs_per_device = 1;
  place::EfficientMipSolveResult result;
  double seconds = 0.0;
  for (auto _ : state) {
    Stopwatch watch;
    auto r = place::SolveEfficientMip(*inst, options);
    seconds = watch.ElapsedSeconds();
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    result = *r;
  }
  state.counters["nodes"] = inst->num_nodes();
  state.counters["greedy_ms"] = result.greedy_latency_s * 1e3;
  state.counters["heuristics_ms"] = result.heuristic_latency_s * 1e3;
  state.counters["ours_ms"] = result.latency_s * 1e3;
  state.counters["bound_ms"] = result.bound_s * 1e3;
  state.counters["gap"] = result.gap;
  state.counters["improvement"] = 1.0 - result.latency_s / result.greedy_latency_s;
  state.counters["optimal"] = result.status == place::PlanStatus::kOptimal;
  state.counters["milp_binaries"] = static_cast<double>(result.milp_binaries);
  state.SetLabel(std::string(place::PlanStatusName(result.status)) + " via " + result.source);
  Rows().push_back({input, inst->num_nodes(), result, seconds});
}

const bool kRegistered = [] {
  for (const char* input :
       {"LayerGraphs/bert24_inference", "LayerGraphs/gnmt_inference",
        "LayerGraphs/inceptionv3_inference", "LayerGraphs/resnet50_inference",
        "OperatorGraphs/bert_l-3_inference", "OperatorGraphs/bert_l-6_inference",
        "OperatorGraphs/bert_l-12_inference", "OperatorGraphs/resnet50_inference"})
    benchmark::RegisterBenchmark(
        (std::string("EfficientMip/") + input).c_str(),
        [input = std::string(input)](benchmark::State& s) { BM_EfficientMip(s, input); })
        ->Iterations(1)
        ->Unit(benchmark::kSecond)
        ->UseRealTime();
  return true;
}();

void PrintTable() {
  std::printf(
      "\n| input | nodes | greedy | ours | improvement | bound | gap | time (s) | status, "
      "source | MILP |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& row : Rows()) {
    const auto& r = row.result;
    std::printf("| %s | %d | %.3f | %.3f | %.1f%% | %.3f | %.3f | %.1f | %s, %s | %s |\n",
                row.input.c_str(), row.nodes, r.greedy_latency_s * 1e3, r.latency_s * 1e3,
                100.0 * (1.0 - r.latency_s / r.greedy_latency_s), r.bound_s * 1e3, r.gap,
                row.seconds, place::PlanStatusName(r.status), r.source.c_str(),
                r.milp_note.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  PrintTable();
  return 0;
}
