// The executor against single-device runs and the naive reference: zoo models, DHA, relay (PT),
// round-robin copy queues, kernel errors, missing kernels and memory limits.
#include "hexplan/exec/executor.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "exec/exec_test_util.h"
#include "graph/zoo_builder.h"
#include "hexplan/graph/onnx_io.h"
#include "hexplan/graph/zoo.h"
#include "testing/graph_builders.h"

namespace hx::exec {
namespace {

using testing::CpuCluster;
using testing::MakePlan;
using testing::PlanSpec;
using testing::RunPlan;

bool BitEqual(const HostTensor& a, const HostTensor& b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.bytes == b.bytes;
}

struct Case {
  graph::Graph graph;
  std::vector<HostTensor> weights;
  std::map<std::string, HostTensor> inputs;
};

Case MakeCase(graph::Graph g, uint64_t seed = 7) {
  Case c{std::move(g), {}, {}};
  auto w = MaterializeWeights(c.graph, seed);
  HX_CHECK(w.ok());
  c.weights = std::move(w).value();
  c.inputs = RandomInputs(c.graph, seed + 1);
  return c;
}

// Runs `c` on `devices` devices (ops dealt out in blocks of `block`) and checks that the outputs
// equal bit for bit those of the same kernels run one after another on one device (a one-device
// plan when `single_plan`, always the sequential interpreter), and are within 1e-4 of the naive
// reference.
void ExpectMultiDeviceMatches(const Case& c, int devices, size_t block,
                              const ExecOptions& opts = {}, PlanSpec multi = {},
                              bool single_plan = true) {
  hw::Cluster cluster = CpuCluster(devices);
  if (!multi.device_of || multi.device_of(0) == 0) {
    multi.device_of = [devices, block](size_t k) {
      return static_cast<int>((k / block) % devices);
    };
  }
  plan::Plan spread = MakePlan(c.graph, cluster, multi);
  auto many = RunPlan(spread, c.graph, cluster, c.weights, c.inputs, opts);
  ASSERT_TRUE(many.ok()) << many.status().ToString();
  EXPECT_GT(many->transfers_run, 0u);
  std::vector<HostTensor> one;
  if (single_plan) {
    auto r = RunPlan(MakePlan(c.graph, cluster, PlanSpec{}), c.graph, cluster, c.weights, c.inputs,
                     opts);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    one = std::move(r->outputs);
  }
  auto sequential = RunReference(c.graph, c.weights, c.inputs, KernelOptions{.naive = false});
  ASSERT_TRUE(sequential.ok()) << sequential.status().ToString();
  auto ref = RunReference(c.graph, c.weights, c.inputs);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  ASSERT_EQ(many->outputs.size(), ref->size());
  for (size_t i = 0; i < ref->size(); ++i) {
    const std::string& name = many->output_names[i];
    if (single_plan) {
      EXPECT_TRUE(BitEqual(one[i], many->outputs[i])) << name;
    }
    EXPECT_TRUE(BitEqual((*sequential)[i], many->outputs[i])) << name;
    EXPECT_LT(MaxRelativeError(many->outputs[i], (*ref)[i]), 1e-4) << name;
    // The check must be able to fail: outputs are not all zero.
    double sum = 0.0;
    if (ref->at(i).dtype == graph::DType::kF32)
      for (int64_t k = 0; k < ref->at(i).NumElements(); ++k)
        sum += std::abs(ref->at(i).data<float>()[k]);
    EXPECT_GT(sum, 0.0) << name;
  }
}

TEST(ExecutorTest, ChainOnTwoDevicesEqualsOneDeviceAndReference) {
  ExpectMultiDeviceMatches(MakeCase(hx::testing::MakeChain(9, 32, 4)), 2, 2);
}

TEST(ExecutorTest, ForkJoinOnThreeDevices) {
  ExpectMultiDeviceMatches(MakeCase(hx::testing::MakeForkJoin(3, 3, 16)), 3, 1);
}

TEST(ExecutorTest, RandomDagOnTwoDevices) {
  ExpectMultiDeviceMatches(MakeCase(hx::testing::MakeRandomDag(40, 3, 16)), 2, 3);
}

graph::Graph Zoo(const std::string& name, graph::ZooOptions o) {
  auto g = graph::BuildZooModel(name, o);
  HX_CHECK_MSG(g.ok(), g.status().ToString());
  return std::move(g).value();
}

TEST(ExecutorTest, ZooLstmSmall) {
  graph::ZooOptions o;
  o.seq = 4;
  o.lstm_layers = 2;
  o.lstm_io = 16;
  ExpectMultiDeviceMatches(MakeCase(Zoo("lstm", o)), 2, 7);
}

TEST(ExecutorTest, ZooResnet50SmallImage) {
  graph::ZooOptions o;
  o.image_size = 32;
  ExpectMultiDeviceMatches(MakeCase(Zoo("resnet50", o)), 2, 5, {}, {}, /*single_plan=*/false);
}

TEST(ExecutorTest, ZooMobilenetV2SmallImage) {
  graph::ZooOptions o;
  o.image_size = 32;
  ExpectMultiDeviceMatches(MakeCase(Zoo("mobilenet_v2", o)), 2, 9);
}

// The zoo's own transformer generators (the ones behind gpt2, bert-large and openllama-*) at a
// size a CI run can afford: the same operator patterns as GPT-2 small, BERT and LLaMA.
graph::ZooOptions Seq(int64_t seq) {
  graph::ZooOptions o;
  o.seq = seq;
  return o;
}

TEST(ExecutorTest, TinyGpt2FromTheZooGenerator) {
  graph::zoo_internal::GptSpec spec{2, 64, 4, 16, 256, 97, 16};
  ExpectMultiDeviceMatches(MakeCase(graph::zoo_internal::BuildGpt("gpt2-tiny", spec, Seq(6))), 2,
                           11);
}

TEST(ExecutorTest, TinyBertFromTheZooGenerator) {
  graph::zoo_internal::BertSpec spec{2, 64, 4, 256, 97, 16, 2};
  ExpectMultiDeviceMatches(MakeCase(graph::zoo_internal::BuildBert("bert-tiny", spec, Seq(5))), 3,
                           8);
}

TEST(ExecutorTest, TinyLlamaFromTheZooGenerator) {
  graph::zoo_internal::LlamaSpec spec{2, 64, 4, 160, 97, 16};
  ExpectMultiDeviceMatches(MakeCase(graph::zoo_internal::BuildLlama("llama-tiny", spec, Seq(5))), 2,
                           13);
}

TEST(ExecutorTest, DhaWeightsAreReadFromHostMemory) {
  Case c = MakeCase(hx::testing::MakeChain(6, 32, 4));
  PlanSpec spec;
  spec.device_of = [](size_t k) { return static_cast<int>(k % 2); };
  spec.weight_mode = [](NodeId w, int d) {
    return d == 1 ? plan::WeightMode::kDha : plan::WeightMode::kLoad;
  };
  ExpectMultiDeviceMatches(c, 2, 1, {}, spec);
  hw::Cluster cluster = CpuCluster(2);
  plan::Plan p = MakePlan(c.graph, cluster, spec);
  auto r = RunPlan(p, c.graph, cluster, c.weights, c.inputs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  int dha_ops = 0, loads = 0;
  for (const sim::SimEvent& e : r->events) {
    if (e.kind == sim::SimEvent::Kind::kOpStart && e.dha) {
      ++dha_ops;
      EXPECT_EQ(e.device.value(), 1u);
    }
    if (e.kind == sim::SimEvent::Kind::kTransferStart &&
        p.transfers[e.transfer].kind == plan::TransferKind::kWeightLoad)
      ++loads;
  }
  EXPECT_EQ(dha_ops, 3);  // ops 1, 3, 5
  EXPECT_EQ(loads, 3);    // only device 0's weights are loaded
}

// One executor runs many times: its run state (slots, reference counts, marks, events) is reset
// between runs, so a run's outputs and events depend only on its own inputs.
// Adds op `type` named `name` with one fp32 output `name.out` of `shape`; returns the output.
TensorId F32Op(graph::Graph& g, const std::string& type, const std::string& name,
               std::vector<TensorId> inputs, graph::Shape shape, graph::Attributes attrs = {}) {
  return g
      .node(g.AddOpWithOutputs(type, name, std::move(inputs),
                               {{name + ".out", graph::DType::kF32, std::move(shape)}},
                               std::move(attrs)))
      .outputs[0];
}

TEST(ExecutorTest, RepeatedRunsOfOneExecutorAreIndependent) {
  Case c = MakeCase(hx::testing::MakeChain(6, 32, 4));
  std::map<std::string, HostTensor> other = RandomInputs(c.graph, 99);
  ASSERT_NE(other.begin()->second.bytes, c.inputs.begin()->second.bytes);
  PlanSpec spec;
  spec.device_of = [](size_t k) { return static_cast<int>(k % 2); };
  spec.weight_mode = [](NodeId, int d) {
    return d == 1 ? plan::WeightMode::kDha : plan::WeightMode::kLoad;
  };
  hw::Cluster cluster = CpuCluster(2);
  plan::Plan p = MakePlan(c.graph, cluster, spec);
  auto backend = CpuBackend::Create(cluster);
  ASSERT_TRUE(backend.ok());
  auto executor = Executor::Create(p, c.graph, cluster, backend->get(), &c.weights);
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  auto first = (*executor)->Run(c.inputs);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = (*executor)->Run(other);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  auto third = (*executor)->Run(c.inputs);
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  // The second run equals a fresh executor's run of the same inputs, and differs from the first.
  auto fresh = RunPlan(p, c.graph, cluster, c.weights, other);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  ASSERT_EQ(first->outputs.size(), 1u);
  EXPECT_TRUE(BitEqual(second->outputs[0], fresh->outputs[0]));
  EXPECT_FALSE(BitEqual(second->outputs[0], first->outputs[0]));
  EXPECT_TRUE(BitEqual(third->outputs[0], first->outputs[0]));
  for (const auto* r : {&*first, &*second, &*third}) {
    EXPECT_EQ(r->events.size(), first->events.size());
    EXPECT_EQ(r->ops_run, c.graph.Ops().size());
    EXPECT_EQ(r->transfers_run, first->transfers_run);
  }
  EXPECT_GT(first->transfers_run, 0u);
  // Each device's finish: within the run, and the last of them is the run's latency.
  for (const auto* r : {&*first, &*second, &*third}) {
    ASSERT_EQ(r->device_finish_s.size(), 2u);
    for (double f : r->device_finish_s) {
      EXPECT_GT(f, 0.0);
      EXPECT_LE(f, r->latency_s);
    }
    EXPECT_DOUBLE_EQ(std::max(r->device_finish_s[0], r->device_finish_s[1]), r->latency_s);
  }
  // Every buffer of a run is freed by its end.
  for (int d = 0; d < 2; ++d) EXPECT_EQ((*backend)->MemoryInUse(d), 0) << d;
}

// An op that reads one tensor twice (Mul(x, x)) releases it once: the run neither frees it early
// for a later reader nor leaks it.
TEST(ExecutorTest, AnInputReadTwiceIsReleasedOnce) {
  graph::Graph g("square");
  TensorId x = g.node(g.AddInput("x", graph::DType::kF32, {16})).outputs[0];
  TensorId sq = F32Op(g, "Mul", "sq", {x, x}, {16});
  TensorId again = F32Op(g, "Mul", "again", {sq, sq}, {16});
  TensorId sum = F32Op(g, "Add", "sum", {again, sq}, {16});
  g.AddOutput(sum);
  Case c = MakeCase(std::move(g));
  hw::Cluster cluster = CpuCluster(1);
  auto backend = CpuBackend::Create(cluster);
  ASSERT_TRUE(backend.ok());
  const plan::Plan p = MakePlan(c.graph, cluster, PlanSpec{});
  auto executor = Executor::Create(p, c.graph, cluster, backend->get(), &c.weights);
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  auto r = (*executor)->Run(c.inputs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto ref = RunReference(c.graph, c.weights, c.inputs);
  ASSERT_TRUE(ref.ok());
  EXPECT_LT(MaxRelativeError(r->outputs[0], (*ref)[0]), 1e-6);
  EXPECT_EQ((*backend)->MemoryInUse(0), 0);
}

// A Constant's value is made by the first run and kept (Executor::RunKeptConstant): later runs
// read the same buffer, no view takes it over and no free hands it to another tensor (an Identity
// of it, its last reader, would otherwise take the buffer and free it with its own; the next run's
// Add output of the same size would then write over the constant). Its bytes stay in use between
// runs and are freed with the executor.
TEST(ExecutorTest, ConstantsAreMadeOnceAndKeptAcrossRuns) {
  graph::Graph g("kept");
  TensorId x = g.node(g.AddInput("x", graph::DType::kF32, {16})).outputs[0];
  graph::Attributes value;
  value.Set("value_floats", std::vector<double>(16, 0.25));
  TensorId c = F32Op(g, "Constant", "c", {}, {16}, value);
  TensorId view = F32Op(g, "Identity", "view", {c}, {16});
  g.AddOutput(F32Op(g, "Add", "sum", {view, x}, {16}));
  Case c0 = MakeCase(std::move(g));
  hw::Cluster cluster = CpuCluster(1);
  auto backend = CpuBackend::Create(cluster);
  ASSERT_TRUE(backend.ok());
  const plan::Plan p = MakePlan(c0.graph, cluster, PlanSpec{});
  {
    auto executor = Executor::Create(p, c0.graph, cluster, backend->get(), &c0.weights);
    ASSERT_TRUE(executor.ok()) << executor.status().ToString();
    for (uint64_t seed : {1, 2, 3, 4}) {
      const auto inputs = RandomInputs(c0.graph, seed);
      auto r = (*executor)->Run(inputs);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      auto ref = RunReference(c0.graph, c0.weights, inputs);
      ASSERT_TRUE(ref.ok());
      EXPECT_LT(MaxRelativeError(r->outputs[0], (*ref)[0]), 1e-6) << "run " << seed;
      EXPECT_EQ(r->ops_run, 3u);
      EXPECT_EQ((*backend)->MemoryInUse(0), 16 * 4) << "the constant, kept";
    }
  }
  EXPECT_EQ((*backend)->MemoryInUse(0), 0);
}

// On the CPU backend a copy is work for a core, so the thread that produced an activation copies
// it and a weight is loaded by the thread that needs it: copy queues within the process get no
// thread of their own. Outputs, transfers and events are the same whichever thread copies and
// however long threads poll before they sleep.
TEST(ExecutorTest, CopiesRunOnTheThreadsThatNeedThemOnCpu) {
  Case c = MakeCase(hx::testing::MakeRandomDag(40, 3, 16));
  hw::Cluster cluster = CpuCluster(2);
  PlanSpec spec;
  spec.device_of = [](size_t k) { return static_cast<int>(k % 2); };
  spec.ops_per_subgraph = 1;
  spec.weight_mode = [](NodeId, int) { return plan::WeightMode::kDha; };
  plan::Plan p = MakePlan(c.graph, cluster, spec);
  ASSERT_FALSE(p.queues.empty());
  for (const plan::Transfer& tr : p.transfers) ASSERT_EQ(tr.kind, plan::TransferKind::kActivation);
  auto backend = CpuBackend::Create(cluster);
  ASSERT_TRUE(backend.ok());
  struct Variant {
    bool inline_copies;
    double spin_us;
  };
  std::vector<ExecResult> results;
  for (Variant v : {Variant{true, 50.0}, Variant{false, 0.0}, Variant{true, 0.0}}) {
    ExecOptions opts;
    opts.inline_copies = v.inline_copies;
    opts.spin_us = v.spin_us;
    auto executor = Executor::Create(p, c.graph, cluster, backend->get(), &c.weights, opts);
    ASSERT_TRUE(executor.ok()) << executor.status().ToString();
    size_t copy_queues = 0;
    for (const plan::CopyQueue& q : p.queues) copy_queues += q.transfers.empty() ? 0 : 1;
    EXPECT_EQ((*executor)->num_threads(), v.inline_copies ? 2u : 2u + copy_queues);
    auto r = (*executor)->Run(c.inputs);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->transfers_run, p.transfers.size());
    for (int d = 0; d < 2; ++d) EXPECT_EQ((*backend)->MemoryInUse(d), 0) << d;
    results.push_back(std::move(r).value());
  }
  for (const ExecResult& r : results) {
    ASSERT_EQ(r.outputs.size(), results[0].outputs.size());
    for (size_t i = 0; i < r.outputs.size(); ++i)
      EXPECT_TRUE(BitEqual(r.outputs[i], results[0].outputs[i])) << r.output_names[i];
    EXPECT_EQ(r.events.size(), results[0].events.size());
  }
  // Weight loads from the host are copies on the calling thread too: the run's own thread or the
  // device thread that needs a weight loads it (no thread of their own), with the same outputs as
  // copy threads and as the weights read in place.
  spec.weight_mode = [](NodeId, int) { return plan::WeightMode::kLoad; };
  plan::Plan loads = MakePlan(c.graph, cluster, spec);
  size_t load_count = 0;
  for (const plan::Transfer& tr : loads.transfers)
    load_count += tr.kind == plan::TransferKind::kWeightLoad ? 1 : 0;
  ASSERT_GT(load_count, 0u);
  for (bool inline_copies : {true, false}) {
    ExecOptions opts;
    opts.inline_copies = inline_copies;
    auto executor = Executor::Create(loads, c.graph, cluster, backend->get(), &c.weights, opts);
    ASSERT_TRUE(executor.ok()) << executor.status().ToString();
    EXPECT_EQ((*executor)->num_threads() == 2u, inline_copies);
    for (int run = 0; run < 3; ++run) {
      auto r = (*executor)->Run(c.inputs);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r->transfers_run, loads.transfers.size());
      EXPECT_EQ(r->inline_copies > 0, inline_copies);
      for (size_t i = 0; i < r->outputs.size(); ++i)
        EXPECT_TRUE(BitEqual(r->outputs[i], results[0].outputs[i])) << r->output_names[i];
    }
    for (int d = 0; d < 2; ++d) EXPECT_EQ((*backend)->MemoryInUse(d), 0) << d;
  }
  ExecOptions negative;
  negative.spin_us = -1.0;
  EXPECT_FALSE(negative.Validate().ok());
}

// Marks are set without a lock and threads sleep only after polling: many runs of a plan that
// crosses devices at every op, sleeping at once (spin 0) or after a short poll, all finish (a lost
// wake-up would end in the watchdog's error) with the same outputs.
TEST(ExecutorTest, ManyRunsNeverLoseAWakeUp) {
  Case c = MakeCase(hx::testing::MakeRandomDag(60, 3, 8));
  hw::Cluster cluster = CpuCluster(3);
  PlanSpec spec;
  spec.device_of = [](size_t k) { return static_cast<int>((k * 7 + k / 3) % 3); };
  spec.ops_per_subgraph = 1;
  plan::Plan p = MakePlan(c.graph, cluster, spec);
  auto backend = CpuBackend::Create(cluster);
  ASSERT_TRUE(backend.ok());
  std::vector<HostTensor> first;
  for (double spin_us : {0.0, 2.0}) {
    ExecOptions opts;
    opts.spin_us = spin_us;
    opts.watchdog_s = 20;
    opts.record_events = false;
    auto executor = Executor::Create(p, c.graph, cluster, backend->get(), &c.weights, opts);
    ASSERT_TRUE(executor.ok()) << executor.status().ToString();
    for (int run = 0; run < 100; ++run) {
      auto r = (*executor)->Run(c.inputs);
      ASSERT_TRUE(r.ok()) << "spin " << spin_us << " run " << run << ": " << r.status().ToString();
      ASSERT_EQ(r->ops_run, c.graph.Ops().size());
      ASSERT_EQ(r->transfers_run, p.transfers.size());
      if (first.empty()) first = r->outputs;
      for (size_t i = 0; i < first.size(); ++i) ASSERT_TRUE(BitEqual(r->outputs[i], first[i]));
    }
  }
}

// An activation copy the producer's thread runs can fail (the destination is full): the run stops
// with an error naming the transfer and the device, and frees everything.
TEST(ExecutorTest, AFailedInlineCopyStopsTheRun) {
  graph::Graph g("wide");
  TensorId x = g.node(g.AddInput("x", graph::DType::kF32, {1, 16})).outputs[0];
  TensorId w = g.node(g.AddWeight("w", graph::DType::kF32, {16, 1024})).outputs[0];
  TensorId a =
      g.node(g.AddOpWithOutputs("MatMul", "a", {x, w}, {{"a.out", graph::DType::kF32, {1, 1024}}}))
          .outputs[0];
  TensorId b =
      g.node(g.AddOpWithOutputs("Relu", "b", {a}, {{"b.out", graph::DType::kF32, {1, 1024}}}))
          .outputs[0];
  g.AddOutput(b);
  Case c = MakeCase(std::move(g));
  // cpu:1 holds 2 KiB: less than the 4 KiB activation copied into it.
  hw::Cluster cluster("uneven");
  PlaceId host = cluster.AddHostMemory("local");
  for (int k = 0; k < 2; ++k) {
    hw::DeviceSpec spec = hw::CpuCoreGroupSpec(*hw::FindDeviceSpec("cpu-core"), 1);
    spec.memory_bytes = k == 0 ? int64_t{1} << 30 : 2048;
    const std::string name = "cpu:" + std::to_string(k);
    DeviceId d = cluster.AddDevice(name, hw::DeviceKind::kCpu, "local", spec);
    cluster.AddLink("membus:" + name, hw::LinkKind::kMemoryBus, host, cluster.PlaceOf(d),
                    spec.memory_bandwidth_bytes_per_s, 1e-7);
  }
  ASSERT_TRUE(cluster.Finalize().ok());
  PlanSpec spec;
  spec.device_of = [](size_t k) { return static_cast<int>(k % 2); };
  spec.weight_mode = [](NodeId, int) { return plan::WeightMode::kDha; };
  plan::Plan p = MakePlan(c.graph, cluster, spec);
  auto backend = CpuBackend::Create(cluster);
  ASSERT_TRUE(backend.ok());
  ExecOptions opts;
  opts.watchdog_s = 30;
  auto executor = Executor::Create(p, c.graph, cluster, backend->get(), &c.weights, opts);
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  EXPECT_EQ((*executor)->num_threads(), 2u);
  auto r = (*executor)->Run(c.inputs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("transfer"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("'a.out'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("cpu:1"), std::string::npos) << r.status().message();
  for (int d = 0; d < 2; ++d) EXPECT_EQ((*backend)->MemoryInUse(d), 0) << d;
}

TEST(ExecutorTest, RelayedWeightsAreForwardedDeviceToDevice) {
  Case c = MakeCase(hx::testing::MakeChain(6, 32, 4));
  PlanSpec spec;
  spec.device_of = [](size_t k) { return static_cast<int>(k % 2); };
  spec.weight_mode = [](NodeId, int d) {
    return d == 0 ? plan::WeightMode::kRelay : plan::WeightMode::kLoad;
  };
  spec.relay_of = [](NodeId, int) { return 2; };
  ExpectMultiDeviceMatches(c, 3, 1, {}, spec);
  hw::Cluster cluster = CpuCluster(3);
  plan::Plan p = MakePlan(c.graph, cluster, spec);
  auto r = RunPlan(p, c.graph, cluster, c.weights, c.inputs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::multiset<std::string> kinds;
  for (const sim::SimEvent& e : r->events)
    if (e.kind == sim::SimEvent::Kind::kTransferFinish)
      kinds.insert(plan::TransferKindName(p.transfers[e.transfer].kind));
  EXPECT_EQ(kinds.count("weight_forward"), 3u);
  EXPECT_EQ(kinds.count("weight_load"), 6u);  // 3 into the relay, 3 into device 1
  EXPECT_EQ(r->peak_memory_bytes.size(), 3u);
  EXPECT_GT(r->peak_memory_bytes[2], 0);  // the relay held weights
}

// All weight loads on one shared queue (one bus), so that round-robin has several destinations.
plan::Plan OneLoadQueue(plan::Plan p) {
  std::vector<size_t> loads;
  for (plan::CopyQueue& q : p.queues) {
    std::vector<size_t> rest;
    for (size_t t : q.transfers)
      (p.transfers[t].kind == plan::TransferKind::kWeightLoad ? loads : rest).push_back(t);
    q.transfers = rest;
  }
  std::stable_sort(loads.begin(), loads.end());
  p.queues.push_back(plan::CopyQueue{"bus0", loads});
  std::erase_if(p.queues, [](const plan::CopyQueue& q) { return q.transfers.empty(); });
  return p;
}

TEST(ExecutorTest, RoundRobinCopyQueueInterleavesDestinations) {
  Case c = MakeCase(hx::testing::MakeForkJoin(2, 3, 64));
  hw::Cluster cluster = CpuCluster(2);
  PlanSpec spec;
  spec.device_of = [](size_t k) { return static_cast<int>(k % 2); };
  plan::Plan p = OneLoadQueue(MakePlan(c.graph, cluster, spec));
  ExecOptions rr;
  rr.copy_order = CopyOrder::kRoundRobin;
  rr.chunk_bytes = 4096;  // a 64x64 fp32 weight is 4 chunks
  auto plain = RunPlan(p, c.graph, cluster, c.weights, c.inputs);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  auto r = RunPlan(p, c.graph, cluster, c.weights, c.inputs, rr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (size_t i = 0; i < r->outputs.size(); ++i)
    EXPECT_TRUE(BitEqual(r->outputs[i], plain->outputs[i]));
  // With round-robin, a load into the second device starts before the first load into the first
  // device has finished; in plan order loads never overlap on the queue.
  auto overlapped = [&](const ExecResult& res) {
    std::map<uint32_t, double> start, finish;
    for (const sim::SimEvent& e : res.events) {
      if (e.track != "bus0") continue;
      (e.kind == sim::SimEvent::Kind::kTransferStart ? start : finish)[e.transfer] = e.time;
    }
    for (auto& [a, sa] : start)
      for (auto& [b, sb] : start)
        if (a != b && sa <= sb && sb < finish[a]) return true;
    return false;
  };
  EXPECT_TRUE(overlapped(*r));
  EXPECT_FALSE(overlapped(*plain));
}

TEST(ExecutorTest, MissingKernelIsACleanErrorNamingTheOp) {
  graph::Graph g("odd");
  TensorId x = g.node(g.AddInput("x", graph::DType::kF32, {4})).outputs[0];
  NodeId op = g.AddOpWithOutputs("FrobnicateX", "frob", {x}, {{"y", graph::DType::kF32, {4}}});
  g.AddOutput(g.node(op).outputs[0]);
  Case c = MakeCase(std::move(g));
  hw::Cluster cluster = CpuCluster(1);
  plan::Plan p = MakePlan(c.graph, cluster, PlanSpec{});
  auto r = RunPlan(p, c.graph, cluster, c.weights, c.inputs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("'frob'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("FrobnicateX"), std::string::npos);
}

TEST(ExecutorTest, KernelErrorStopsEveryThread) {
  // A Gather whose index is out of range, in the middle of a two-device plan with later work
  // waiting on it: Run returns the kernel's error (naming the op) and every thread exits.
  graph::Graph g("bad-index");
  TensorId x = g.node(g.AddInput("x", graph::DType::kF32, {4, 8})).outputs[0];
  TensorId idx = g.node(g.AddInput("idx", graph::DType::kI64, {2})).outputs[0];
  TensorId w = g.node(g.AddWeight("w", graph::DType::kF32, {8, 8})).outputs[0];
  NodeId a = g.AddOpWithOutputs("MatMul", "a", {x, w}, {{"a.out", graph::DType::kF32, {4, 8}}});
  NodeId gather = g.AddOpWithOutputs("Gather", "pick", {g.node(a).outputs[0], idx},
                                     {{"pick.out", graph::DType::kF32, {2, 8}}});
  NodeId b = g.AddOpWithOutputs("Relu", "b", {g.node(gather).outputs[0]},
                                {{"b.out", graph::DType::kF32, {2, 8}}});
  g.AddOutput(g.node(b).outputs[0]);
  Case c = MakeCase(std::move(g));
  c.inputs["idx"].data<int64_t>()[1] = 9;
  hw::Cluster cluster = CpuCluster(2);
  PlanSpec spec;
  spec.device_of = [](size_t k) { return static_cast<int>(k % 2); };
  spec.ops_per_subgraph = 1;
  plan::Plan p = MakePlan(c.graph, cluster, spec);
  ExecOptions opts;
  opts.watchdog_s = 30;
  auto r = RunPlan(p, c.graph, cluster, c.weights, c.inputs, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'pick'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("index 9"), std::string::npos) << r.status().message();
}

TEST(ExecutorTest, DeviceMemoryLimitIsEnforced) {
  Case c = MakeCase(hx::testing::MakeChain(4, 64, 4));  // 16 KiB per weight
  hw::Cluster cluster = CpuCluster(1, 16000);  // less than one weight: fails whatever the timing
  plan::Plan p = MakePlan(c.graph, cluster, PlanSpec{});
  auto r = RunPlan(p, c.graph, cluster, c.weights, c.inputs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("cpu:0"), std::string::npos) << r.status().message();
  // With enough memory the same plan runs and its peak stays within the capacity.
  hw::Cluster roomy = CpuCluster(1, 200000);
  auto ok = RunPlan(p, c.graph, roomy, c.weights, c.inputs);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_LE(ok->peak_memory_bytes[0], 200000);
  EXPECT_GE(ok->peak_memory_bytes[0], 16384);
}

TEST(ExecutorTest, WrongInputShapeNamesTheInput) {
  Case c = MakeCase(hx::testing::MakeChain(2, 8, 2));
  c.inputs["x"] = HostTensor(graph::DType::kF32, {3, 8});
  hw::Cluster cluster = CpuCluster(1);
  auto r = RunPlan(MakePlan(c.graph, cluster, PlanSpec{}), c.graph, cluster, c.weights, c.inputs);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'x'"), std::string::npos);
  EXPECT_NE(r.status().message().find("[2,8]"), std::string::npos) << r.status().message();
}

TEST(ExecutorTest, OnnxFileWithWeightsRunsLikeTheInMemoryGraph) {
  // Our own writer stores the (random) weights as initializers; the reader keeps them and the
  // executor must produce the same outputs from the file as from the in-memory graph.
  graph::ZooOptions o;
  o.seq = 3;
  o.lstm_layers = 2;
  o.lstm_io = 8;
  Case c = MakeCase(Zoo("lstm", o));
  graph::Graph with_data = c.graph;
  for (NodeId w : with_data.Weights()) {
    const HostTensor& v = c.weights[w.value()];
    with_data.mutable_node(w).data = std::make_shared<const std::string>(
        reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size());
  }
  auto bytes = graph::WriteOnnxBytes(with_data);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto read = graph::ReadOnnxBytes(*bytes, "lstm.onnx");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  auto weights = MaterializeWeights(*read, 999);  // the seed must not matter: payloads win
  ASSERT_TRUE(weights.ok());
  Case from_file{std::move(read).value(), std::move(weights).value(), c.inputs};
  ExpectMultiDeviceMatches(from_file, 2, 5);
  hw::Cluster cluster = CpuCluster(1);
  auto a = RunPlan(MakePlan(c.graph, cluster, PlanSpec{}), c.graph, cluster, c.weights, c.inputs);
  auto b = RunPlan(MakePlan(from_file.graph, cluster, PlanSpec{}), from_file.graph, cluster,
                   from_file.weights, from_file.inputs);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->outputs.size(), b->outputs.size());
  for (size_t i = 0; i < a->outputs.size(); ++i)
    EXPECT_TRUE(BitEqual(a->outputs[i], b->outputs[i]));
}

}  // namespace
}  // namespace hx::exec
