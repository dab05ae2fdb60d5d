// Simulator speed: a 10,000-operator plan on 8 GPUs with contention (two GPUs per PCIe bus, an
// NVLink ring, activations crossing devices, some DHA weights). Reports events per second; the aim
// is at least 1 M events/s and under 100 ms for the whole plan.
#include <benchmark/benchmark.h>

#include <random>

#include "hexplan/cost/cost_model.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/sim/simulator.h"

namespace {

using namespace hx;

graph::Graph MakeBenchGraph(int num_ops, uint64_t seed) {
  graph::Graph g("bench" + std::to_string(num_ops));
  std::mt19937_64 rng(seed);
  const int64_t rows = 16, width = 256;
  std::vector<TensorId> outs;
  outs.push_back(g.node(g.AddInput("x", graph::DType::kF32, {rows, width})).outputs[0]);
  for (int i = 0; i < num_ops; ++i) {
    const std::string name = "n" + std::to_string(i);
    const TensorId a = outs[outs.size() - 1 - rng() % std::min<size_t>(outs.size(), 4)];
    if (i % 3 == 2 && outs.size() > 1) {
      const TensorId b = outs[outs.size() - 1 - rng() % std::min<size_t>(outs.size(), 64)];
      NodeId op = g.AddOpWithOutputs("Add", name, {a, b},
                                     {{name + ".out", graph::DType::kF32, {rows, width}}});
      outs.push_back(g.node(op).outputs[0]);
      continue;
    }
    NodeId w = g.AddWeight(name + ".weight", graph::DType::kF32, {width, width});
    NodeId op = g.AddOpWithOutputs("MatMul", name, {a, g.node(w).outputs[0]},
                                   {{name + ".out", graph::DType::kF32, {rows, width}}});
    outs.push_back(g.node(op).outputs[0]);
  }
  g.AddOutput(outs.back());
  return g;
}

hw::Cluster MakeBenchCluster() {
  hw::Cluster c("bench-8gpu");
  PlaceId host = c.AddHostMemory("node0");
  hw::DeviceSpec spec;
  spec.model = "BenchGPU";
  spec.peak_flops_fp32 = 15e12;
  spec.memory_bandwidth_bytes_per_s = 900e9;
  spec.memory_bytes = int64_t{32} << 30;
  spec.launch_overhead_s = 5e-6;
  std::vector<DeviceId> gpus;
  for (int i = 0; i < 8; ++i)
    gpus.push_back(c.AddDevice("gpu" + std::to_string(i), hw::DeviceKind::kGpu, "node0", spec));
  for (int b = 0; b < 4; ++b) {
    PlaceId sw = c.AddSwitch("sw" + std::to_string(b), "node0");
    c.AddLink("pcie-bus" + std::to_string(b), hw::LinkKind::kPcie, host, sw, 12e9, 1e-6);
    for (int k = 0; k < 2; ++k) {
      DeviceId g = gpus[2 * b + k];
      c.AddLink("pcie:" + c.device(g).name, hw::LinkKind::kPcie, sw, c.PlaceOf(g), 16e9, 1e-6);
    }
  }
  for (int i = 0; i < 8; ++i)
    c.AddLink("nvlink" + std::to_string(i), hw::LinkKind::kNvlink, c.PlaceOf(gpus[i]),
              c.PlaceOf(gpus[(i + 1) % 8]), 25e9, 1e-6);
  Status s = c.Finalize();
  if (!s.ok()) std::abort();
  return c;
}

void BM_Simulate10kOps8Gpus(benchmark::State& state) {
  const int num_ops = static_cast<int>(state.range(0));
  graph::Graph g = MakeBenchGraph(num_ops, 42);
  hw::Cluster c = MakeBenchCluster();
  cost::CostModel cost(g, c);
  plan::Plan p;
  for (int d = 0; d < 8; ++d) p.devices.push_back({DeviceId(d), {}});
  // Blocks of 40 consecutive ops per device, round-robin: cross-device activations and concurrent
  // loads on shared buses.
  const std::vector<NodeId> ops = g.Ops();
  std::vector<int> dev_of(g.num_nodes(), 0);
  for (size_t i = 0; i < ops.size(); ++i) {
    const int d = static_cast<int>((i / 40) % 8);
    dev_of[ops[i].index()] = d;
    p.devices[d].subgraphs.push_back(plan::Subgraph{{ops[i]}});
  }
  int k = 0;
  for (NodeId w : g.Weights())
    if (++k % 10 == 0)
      for (NodeId r : g.successors(w))
        p.weights.push_back({w, DeviceId(dev_of[r.index()]), plan::WeightMode::kDha, DeviceId()});
  if (!plan::CompleteTransfers(p, g, c).ok()) std::abort();
  uint64_t events = 0;
  double makespan = 0.0;
  for (auto _ : state) {
    auto r = sim::Simulate(p, cost);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    events = r->num_events;
    makespan = r->makespan_s;
    benchmark::DoNotOptimize(makespan);
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.counters["transfers"] = static_cast<double>(p.transfers.size());
  state.counters["sim_latency_ms"] = makespan * 1e3;
}
BENCHMARK(BM_Simulate10kOps8Gpus)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
