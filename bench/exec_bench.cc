// Executor benchmarks (docs/runtime.md):
//  - BM_Dispatch10k: a 10,000-op plan of empty kernels on two CPU devices (one op per subgraph,
//    blocks of 100 ops alternating between the devices): the executor's own overhead; target
//    < 20 ms per inference.
//  - BM_Fidelity/{gpt2,lstm}: profile the model on this machine (two core groups), plan it on
//    that profile (GPT-2 with HEFT, the LSTM with `pipeline`), read the weights in place
//    (plan::ReadCpuWeightsInPlace), simulate the plan, then run it 20 times for real after 10
//    warm-up runs; counters give the simulated and the measured median latency and the error
//    (target within 10%), copied_weights_* the same for the plan as made (weights memcpy'd into
//    the core groups), over 5 runs, and for the LSTM heft_* HEFT's plan's.
// Environment: HX_FIDELITY_GPT2_SEQ (default 128) sets GPT-2 small's sequence length;
// HX_FIDELITY_CLUSTER (default local-cpu:groups=2) the CPU cluster of the fidelity benchmarks;
// HX_FIDELITY_ALGO the planner whose plan they run (default: heft for GPT-2, pipeline for the
// LSTM). kernel_sum_ms and one_device_run_ms show the machine's speed during the profile;
// machine_drift_pct how much slower (or faster) the same one-device run was during the
// measurement: a slow spell of a shared virtual machine between the two shows there.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "hexplan/cost/cost_model.h"
#include "hexplan/cost/profile.h"
#include "hexplan/exec/cpu_backend.h"
#include "hexplan/exec/executor.h"
#include "hexplan/exec/profiler.h"
#include "hexplan/exec/values.h"
#include "hexplan/graph/zoo.h"
#include "hexplan/hw/presets.h"
#include "hexplan/place/planner.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/sim/simulator.h"

namespace {

using namespace hx;

hw::Cluster TwoGroups() {
  const char* spec = std::getenv("HX_FIDELITY_CLUSTER");
  auto c = hw::LoadCluster(spec != nullptr ? spec : "local-cpu:groups=2");
  if (!c.ok()) {
    // A one-core machine: two groups cannot be pinned apart; use a two-core description anyway.
    c = hw::LoadCluster("local-cpu:groups=2,cores=2");
  }
  HX_CHECK_MSG(c.ok(), c.status().ToString());
  return std::move(c).value();
}

void BM_Dispatch10k(benchmark::State& state) {
  const int n = 10000, block = 100;
  graph::Graph g("dispatch");
  TensorId t = g.node(g.AddInput("x", graph::DType::kF32, {4})).outputs[0];
  for (int k = 0; k < n; ++k) {
    const std::string name = "op" + std::to_string(k);
    t = g.node(g.AddOpWithOutputs("Relu", name, {t}, {{name + ".out", graph::DType::kF32, {4}}}))
            .outputs[0];
  }
  g.AddOutput(t);
  hw::Cluster cluster = TwoGroups();
  plan::Plan p;
  p.devices.resize(2);
  p.devices[0].device = DeviceId(0);
  p.devices[1].device = DeviceId(1);
  int k = 0;
  for (NodeId op : g.Ops()) {
    plan::Subgraph sg;
    sg.ops.push_back(op);
    p.devices[static_cast<size_t>((k++ / block) % 2)].subgraphs.push_back(std::move(sg));
  }
  HX_CHECK(plan::CompleteTransfers(p, g, cluster).ok());
  exec::CpuBackendOptions bo;
  bo.empty_kernels = true;
  auto backend = exec::CpuBackend::Create(cluster, bo);
  HX_CHECK(backend.ok());
  std::vector<exec::HostTensor> weights(g.num_nodes());
  exec::ExecOptions eo;
  eo.record_events = false;
  auto executor = exec::Executor::Create(p, g, cluster, backend->get(), &weights, eo);
  HX_CHECK_MSG(executor.ok(), executor.status().ToString());
  std::map<std::string, exec::HostTensor> inputs;
  inputs.emplace("x", exec::HostTensor(graph::DType::kF32, {4}));
  std::vector<double> latencies;
  for (auto _ : state) {
    auto r = (*executor)->Run(inputs);
    HX_CHECK(r.ok());
    latencies.push_back(r->latency_s);
    state.SetIterationTime(r->latency_s);
  }
  std::sort(latencies.begin(), latencies.end());
  state.counters["median_ms"] = latencies[latencies.size() / 2] * 1e3;
  state.counters["ns_per_op"] = latencies[latencies.size() / 2] * 1e9 / n;
  state.counters["tasks"] = static_cast<double>((*executor)->task_graph().tasks.size());
}
BENCHMARK(BM_Dispatch10k)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(20);

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The profile with or without its contention term and its send/receive costs.
cost::Profile ProfilePart(const cost::Profile& profile, bool contention, bool exchange) {
  cost::Profile part;
  for (const auto& [node, devices] : profile.node_times())
    for (const auto& [device, seconds] : devices) part.SetNodeTime(node, device, seconds);
  for (const auto& [node, pairs] : profile.transfer_times())
    for (const auto& [pair, seconds] : pairs)
      part.SetTransferTime(node, pair.first, pair.second, seconds);
  for (const auto& [device, seconds] : profile.subgraph_costs())
    part.SetSubgraphCost(device, seconds);
  if (contention)
    for (const auto& [device, gamma] : profile.cpu_contention())
      part.SetCpuContention(device, gamma);
  if (exchange) {
    for (const auto& [pair, seconds] : profile.send_costs())
      part.SetSendCost(pair.first, pair.second, seconds);
    for (const auto& [pair, seconds] : profile.recv_costs())
      part.SetRecvCost(pair.first, pair.second, seconds);
  }
  return part;
}

// The median latency of `runs` runs of an executor after `warmup` unmeasured ones.
double MeasuredMedian(exec::Executor& executor,
                      const std::map<std::string, exec::HostTensor>& inputs, int warmup, int runs) {
  std::vector<double> latencies;
  for (int r = 0; r < warmup + runs; ++r) {
    auto run = executor.Run(inputs);
    HX_CHECK_MSG(run.ok(), run.status().ToString());
    if (r >= warmup) latencies.push_back(run->latency_s);
  }
  return Median(std::move(latencies));
}

// Runs before any measurement: the first few runs of a plan on this VM are up to twice as slow
// (caches, the allocator's pools, the host's scheduling of the vCPUs).
constexpr int kWarmupRuns = 10;

void Fidelity(benchmark::State& state, const std::string& model, graph::ZooOptions options,
              const std::string& algo) {
  auto g = graph::BuildZooModel(model, options);
  HX_CHECK(g.ok());
  hw::Cluster cluster = TwoGroups();
  auto weights = exec::MaterializeWeights(*g, 1);
  HX_CHECK(weights.ok());
  auto inputs = exec::RandomInputs(*g, 2);
  auto backend = exec::CpuBackend::Create(cluster);
  HX_CHECK(backend.ok());
  exec::ProfileCalibration cal;
  exec::ProfileOptions po;
  auto measured_profile = exec::ProfileGraph(*g, cluster, *weights, inputs, **backend, po, &cal);
  HX_CHECK_MSG(measured_profile.ok(), measured_profile.status().ToString());
  // What `hexplan profile` writes by default (the contention term from the one-device plan run
  // alone and on both groups at once): the planners and the simulator use it.
  const cost::Profile& profile = *measured_profile;
  cost::CostModel cost(*g, cluster, {}, &profile);
  place::PlanRequest request;
  request.cost = &cost;
  request.model_spec = model;
  request.model_options = options;
  request.cluster_spec = cluster.name();
  const char* algo_override = std::getenv("HX_FIDELITY_ALGO");
  const std::string planner = algo_override != nullptr ? algo_override : algo;
  auto outcome = place::RunPlanner(planner, request);
  HX_CHECK_MSG(outcome.ok(), outcome.status().ToString());
  // Core groups read the weights where they are (plan::ReadCpuWeightsInPlace): a planner's loads
  // into a core group would be memcpys within the same DRAM on the cores that compute.
  const plan::Plan& as_planned = outcome->result.plan;
  plan::Plan p = as_planned;
  plan::ReadCpuWeightsInPlace(p, *g, cluster);
  auto sim = sim::Simulate(p, cost);
  HX_CHECK(sim.ok());
  exec::ExecOptions eo;
  eo.record_events = false;
  auto executor = exec::Executor::Create(p, *g, cluster, backend->get(), &*weights, eo);
  HX_CHECK_MSG(executor.ok(), executor.status().ToString());
  // The machine's drift since the profile: the one-device plan the profiler timed (all ops on the
  // first core group, weights loaded) runs again after each of the plan's runs. A shared virtual
  // machine has slow spells of seconds; machine_drift_pct says whether one fell between the
  // profile and the measurement (the simulator cannot know of it).
  auto one = place::RunPlanner("single", request);
  HX_CHECK_MSG(one.ok(), one.status().ToString());
  plan::Plan one_plan = one->result.plan;  // as the profiler runs it: one subgraph
  for (plan::DeviceSchedule& ds : one_plan.devices) {
    plan::Subgraph all;
    for (const plan::Subgraph& sg : ds.subgraphs)
      all.ops.insert(all.ops.end(), sg.ops.begin(), sg.ops.end());
    ds.subgraphs = {std::move(all)};
  }
  HX_CHECK(plan::CompleteTransfers(one_plan, *g, cluster).ok());
  auto reference = exec::Executor::Create(one_plan, *g, cluster, backend->get(), &*weights, eo);
  HX_CHECK_MSG(reference.ok(), reference.status().ToString());
  std::vector<double> latencies, reference_latencies;
  for (int r = 0; r < kWarmupRuns; ++r) {
    HX_CHECK((*executor)->Run(inputs).ok());
    HX_CHECK((*reference)->Run(inputs).ok());
  }
  for (auto _ : state) {
    auto r = (*executor)->Run(inputs);
    HX_CHECK_MSG(r.ok(), r.status().ToString());
    latencies.push_back(r->latency_s);
    state.SetIterationTime(r->latency_s);
    auto ref = (*reference)->Run(inputs);
    HX_CHECK_MSG(ref.ok(), ref.status().ToString());
    reference_latencies.push_back(ref->latency_s);
  }
  const double measured = Median(latencies);
  std::sort(latencies.begin(), latencies.end());
  state.counters["machine_drift_pct"] =
      cal.one_device_run_s > 0.0
          ? 100.0 * (Median(reference_latencies) / cal.one_device_run_s - 1.0)
          : 0.0;
  state.counters["measured_ms"] = measured * 1e3;
  state.counters["measured_min_ms"] = latencies.front() * 1e3;
  state.counters["simulated_ms"] = sim->makespan_s * 1e3;
  state.counters["error_pct"] = 100.0 * (sim->makespan_s - measured) / measured;
  state.counters["one_device_rerun_ms"] = Median(reference_latencies) * 1e3;
  state.counters["ops"] = static_cast<double>(g->Ops().size());
  state.counters["devices_used"] = static_cast<double>(p.devices.size());
  state.counters["transfers"] = static_cast<double>(p.transfers.size());
  state.counters["dispatch_us_per_op"] = cal.dispatch_s_per_op * 1e6;
  state.counters["subgraph_us"] = cal.subgraph_s * 1e6;
  state.counters["kernel_scale"] = cal.kernel_scale;
  state.counters["handoff_us"] = cal.handoff_s * 1e6;
  state.counters["send_us"] = cal.send_s * 1e6;
  state.counters["recv_us"] = cal.recv_s * 1e6;
  state.counters["kernel_sum_ms"] = cal.kernel_sum_s * 1e3;
  state.counters["one_device_run_ms"] = cal.one_device_run_s * 1e3;
  state.counters["contention_gamma"] = cal.contention_gamma;
  state.counters["alone_run_ms"] = cal.alone_run_s * 1e3;
  state.counters["together_run_ms"] = cal.together_run_s * 1e3;
  // The plan as the planner made it (weights copied into the core groups).
  auto copied_sim = sim::Simulate(as_planned, cost);
  HX_CHECK(copied_sim.ok());
  auto copied_exec = exec::Executor::Create(as_planned, *g, cluster, backend->get(), &*weights, eo);
  HX_CHECK_MSG(copied_exec.ok(), copied_exec.status().ToString());
  const double copied_measured = MeasuredMedian(**copied_exec, inputs, 1, 5);
  state.counters["copied_weights_measured_ms"] = copied_measured * 1e3;
  state.counters["copied_weights_error_pct"] =
      100.0 * (copied_sim->makespan_s - copied_measured) / copied_measured;
  // HEFT's plan (weights in place) beside another planner's: the list scheduler's op-by-op
  // choices cross between the core groups thousands of times.
  if (planner != "heft") {
    auto heft = place::RunPlanner("heft", request);
    HX_CHECK_MSG(heft.ok(), heft.status().ToString());
    plan::Plan hp = heft->result.plan;
    plan::ReadCpuWeightsInPlace(hp, *g, cluster);
    auto heft_sim = sim::Simulate(hp, cost);
    HX_CHECK(heft_sim.ok());
    auto heft_exec = exec::Executor::Create(hp, *g, cluster, backend->get(), &*weights, eo);
    HX_CHECK_MSG(heft_exec.ok(), heft_exec.status().ToString());
    const double heft_measured = MeasuredMedian(**heft_exec, inputs, kWarmupRuns, 20);
    state.counters["heft_measured_ms"] = heft_measured * 1e3;
    state.counters["heft_error_pct"] =
        100.0 * (heft_sim->makespan_s - heft_measured) / heft_measured;
  }
  // The same plan simulated without the contention term, and without the send and receive
  // costs, for comparison.
  auto error_with = [&](bool contention, bool exchange) {
    const cost::Profile part = ProfilePart(*measured_profile, contention, exchange);
    cost::CostModel part_cost(*g, cluster, {}, &part);
    auto part_sim = sim::Simulate(p, part_cost);
    HX_CHECK(part_sim.ok());
    return 100.0 * (part_sim->makespan_s - measured) / measured;
  };
  state.counters["no_contention_error_pct"] = error_with(false, true);
  state.counters["no_exchange_cost_error_pct"] = error_with(true, false);
}

void BM_FidelityGpt2(benchmark::State& state) {
  graph::ZooOptions o;
  const char* seq = std::getenv("HX_FIDELITY_GPT2_SEQ");
  o.seq = seq != nullptr ? std::atoi(seq) : 128;
  Fidelity(state, "gpt2", o, "heft");
}
BENCHMARK(BM_FidelityGpt2)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(20);

void BM_FidelityLstm(benchmark::State& state) {
  // Chrion's baseline shape (zoo defaults), cut into two pipeline stages between its layers.
  Fidelity(state, "lstm", graph::ZooOptions{}, "pipeline");
}
BENCHMARK(BM_FidelityLstm)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(20);

}  // namespace

BENCHMARK_MAIN();
