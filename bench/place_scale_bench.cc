// Planner speed on large graphs (issue 28, "Scale"): HEFT and the pipeline planner on seeded random
// DAGs of 10,000 and 50,000 operators on sortinghat-v100, and HEFT on a 300,000-operator chain.
// Each iteration is `RunPlanner` as `hexplan place` runs it (plan, validate, simulate); the
// counter `plan_s` is the planner's own time. The aim: under 5 s at 50k, growing about linearly
// from 10k to 50k. Run: build/release/place_scale_bench (one iteration each, a few minutes).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <string>

#include "hexplan/cost/cost_model.h"
#include "hexplan/hw/presets.h"
#include "hexplan/place/planner.h"

namespace {

using namespace hx;

TensorId ScaleBenchMatMul(graph::Graph& g, TensorId in, const std::string& name, int64_t width) {
  NodeId w = g.AddWeight(name + ".weight", graph::DType::kF32, {width, width});
  NodeId op = g.AddOpWithOutputs("MatMul", name, {in, g.node(w).outputs[0]},
                                 {{name + ".out", graph::DType::kF32, {4, width}}});
  return g.node(op).outputs[0];
}

// The tests' random DAG (tests/testing/graph_builders.cc, MakeRandomDag): each op reads 1-3 of the
// six newest tensors, MatMuls with weights mixed with Sums; unread tensors are outputs.
graph::Graph ScaleBenchDag(int n, uint64_t seed) {
  graph::Graph g("random" + std::to_string(n));
  std::mt19937_64 rng(seed);
  const int64_t width = 64;
  std::vector<TensorId> produced{
      g.node(g.AddInput("x", graph::DType::kF32, {4, width})).outputs[0]};
  std::vector<int> uses(1, 0);
  for (int i = 0; i < n; ++i) {
    const std::string name = "n" + std::to_string(i);
    std::vector<TensorId> ins;
    const int fan_in = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < fan_in; ++k) {
      const size_t lo = produced.size() > 6 ? produced.size() - 6 : 0;
      const size_t pick = lo + rng() % (produced.size() - lo);
      if (std::find(ins.begin(), ins.end(), produced[pick]) != ins.end()) continue;
      ins.push_back(produced[pick]);
      uses[pick]++;
    }
    TensorId out;
    if (ins.size() == 1 || rng() % 2 == 0) {
      out = ScaleBenchMatMul(g, ins[0], name, width);
    } else {
      NodeId sum =
          g.AddOpWithOutputs("Sum", name, ins, {{name + ".out", graph::DType::kF32, {4, width}}});
      out = g.node(sum).outputs[0];
    }
    produced.push_back(out);
    uses.push_back(0);
  }
  for (size_t i = 1; i < produced.size(); ++i)
    if (uses[i] == 0) g.AddOutput(produced[i]);
  return g;
}

graph::Graph ScaleBenchChain(int n) {
  graph::Graph g("chain" + std::to_string(n));
  TensorId t = g.node(g.AddInput("x", graph::DType::kF32, {4, 64})).outputs[0];
  for (int i = 0; i < n; ++i) t = ScaleBenchMatMul(g, t, "op" + std::to_string(i), 64);
  g.AddOutput(t);
  return g;
}

void RunScaleCase(benchmark::State& state, const graph::Graph& g, const std::string& algo) {
  auto cluster = hw::LoadCluster("sortinghat-v100");
  if (!cluster.ok()) {
    state.SkipWithError(cluster.status().message().c_str());
    return;
  }
  cost::CostModel cost(g, *cluster);
  place::PlanRequest request;
  request.cost = &cost;
  request.options.time_limit_s = 600;  // the search's own bounds stop it, not the clock
  double plan_s = 0.0, latency_ms = 0.0;
  for (auto _ : state) {
    auto outcome = place::RunPlanner(algo, request);
    if (!outcome.ok()) {
      state.SkipWithError(outcome.status().message().c_str());
      return;
    }
    plan_s = outcome->result.planning_time_s;
    latency_ms = outcome->sim.makespan_s * 1e3;
  }
  state.counters["ops"] = static_cast<double>(g.Ops().size());
  state.counters["plan_s"] = plan_s;
  state.counters["latency_ms"] = latency_ms;
}

void BM_PlaceRandomDag(benchmark::State& state, const std::string& algo) {
  const graph::Graph g = ScaleBenchDag(static_cast<int>(state.range(0)), 7);
  RunScaleCase(state, g, algo);
}
BENCHMARK_CAPTURE(BM_PlaceRandomDag, heft, std::string("heft"))
    ->Arg(10000)
    ->Arg(50000)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_PlaceRandomDag, pipeline, std::string("pipeline"))
    ->Arg(10000)
    ->Arg(50000)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

void BM_PlaceChain(benchmark::State& state, const std::string& algo) {
  const graph::Graph g = ScaleBenchChain(static_cast<int>(state.range(0)));
  RunScaleCase(state, g, algo);
}
BENCHMARK_CAPTURE(BM_PlaceChain, heft, std::string("heft"))
    ->Arg(50000)
    ->Arg(300000)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
