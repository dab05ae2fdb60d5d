// Planning time of tensor parallelism on 64 nodes (target: AsymGroup under 100 ms), beside
// Megatron's planning in the same run. Run: build/<dir>/tp_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <vector>

#include "hexplan/tp/grouping.h"
#include "hexplan/tp/llm_tp.h"
#include "hexplan/tp/pipeline.h"
#include "hexplan/tp/tp_system.h"

namespace {

using namespace hx::tp;

LlmShape Gpt3() {
  LlmShape s;
  s.name = "gpt3-175b";
  s.layers = 96;
  s.hidden = 12288;
  s.heads = 96;
  s.ffn_hidden = 4 * 12288;
  s.vocab = 50257;
  return s;
}

// 64 nodes, every third with two GPUs (an asymmetric system).
TpSystem System64() {
  std::vector<int> gpus(64, 1);
  for (size_t i = 0; i < gpus.size(); i += 3) gpus[i] = 2;
  return MakeUniformSystem(gpus, A100Sxm80Spec(), "fp16");
}

void Plan(benchmark::State& state, TpMethod method) {
  TpSystem sys = System64();
  LlmShape shape = Gpt3();
  LlmWorkload wl;
  TpOptions o;
  o.method = method;
  o.check_memory = false;
  for (auto _ : state) {
    auto r = PlanTensorParallel(sys, shape, wl, o);
    benchmark::DoNotOptimize(r);
  }
}

void BM_PlanAsymGroup64(benchmark::State& state) { Plan(state, TpMethod::kAsymGroup); }
void BM_PlanMegatron64(benchmark::State& state) { Plan(state, TpMethod::kMegatron); }
void BM_PlanAutoDdl64(benchmark::State& state) { Plan(state, TpMethod::kAutoDdl); }

// `hexplan tp --pp auto` on 64 nodes (issue 24: under 1 s): every stage count 1..16, each stage
// planned with asymgroup's search over layouts.
void BM_PlanPipelineAuto64(benchmark::State& state) {
  TpSystem sys = System64();
  LlmShape shape = Gpt3();
  LlmWorkload wl;
  wl.batch = 64;
  TpOptions o;
  for (auto _ : state) {
    auto r = PlanPipeline(sys, shape, wl, o, {});
    benchmark::DoNotOptimize(r);
  }
}

void BM_GroupsAutoK(benchmark::State& state) {
  std::vector<double> caps;
  for (int i = 0; i < state.range(0); ++i) caps.push_back(i % 3 == 0 ? 2.0 : 1.0);
  GroupingOptions o;
  o.algo = state.range(1) ? GroupAlgo::kOptimized : GroupAlgo::kGreedy;
  for (auto _ : state) {
    auto r = FormGroupsAutoK(caps, o);
    benchmark::DoNotOptimize(r);
  }
}

BENCHMARK(BM_PlanAsymGroup64)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanMegatron64)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanAutoDdl64)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanPipelineAuto64)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GroupsAutoK)
    ->Args({16, 0})
    ->Args({16, 1})
    ->Args({64, 0})
    ->Args({64, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
