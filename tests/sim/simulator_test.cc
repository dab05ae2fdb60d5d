#include "hexplan/sim/simulator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "hexplan/graph/analysis.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/plan/validator.h"
#include "hexplan/sim/flow_network.h"
#include "hexplan/sim/lower_bound.h"
#include "plan/plan_fixtures.h"
#include "testing/graph_builders.h"

namespace hx::sim {
namespace {

using plan::DeviceSchedule;
using plan::Plan;
using plan::Subgraph;
using plan::WeightMode;
using testing::CostFixture;
using testing::MakeBusCluster;

constexpr double kMs = 1e-3;
constexpr double kTol = 1e-12;

NodeId Op(const graph::Graph& g, const std::string& name) { return *g.FindNode(name); }

// All ops of `g` on `device` in id order, one subgraph each, default transfers.
Plan OneDevicePlan(const graph::Graph& g, const hw::Cluster& c, DeviceId device) {
  Plan p;
  p.devices.push_back(DeviceSchedule{device, {}});
  for (NodeId op : g.Ops()) p.devices[0].subgraphs.push_back(Subgraph{{op}});
  EXPECT_TRUE(plan::CompleteTransfers(p, g, c).ok());
  return p;
}

SimResult SimRun(const Plan& p, const cost::CostModel& cost, SimOptions options = {}) {
  auto r = Simulate(p, cost, options);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : SimResult{};
}

TEST(FlowNetworkTest, MaxMinFairSharing) {
  // Resources: 0 (cap 10), 1 (cap 2). Flow A on {0}, flow B on {0, 1}: B is held to 2 by resource
  // 1, A gets the remaining 8 of resource 0.
  FlowNetwork net({10.0, 2.0});
  uint32_t a = net.Add(0.0, 100.0, {0});
  EXPECT_DOUBLE_EQ(net.rate(a), 10.0);
  uint32_t b = net.Add(0.0, 100.0, {0, 1});
  EXPECT_DOUBLE_EQ(net.rate(b), 2.0);
  EXPECT_DOUBLE_EQ(net.rate(a), 8.0);
  uint32_t c = net.Add(0.0, 100.0, {0});
  // B still 2 (its bottleneck is resource 1); A and C split the other 8.
  EXPECT_DOUBLE_EQ(net.rate(b), 2.0);
  EXPECT_DOUBLE_EQ(net.rate(a), 4.0);
  EXPECT_DOUBLE_EQ(net.rate(c), 4.0);
  EXPECT_DOUBLE_EQ(net.FinishTime(a), 25.0);
  net.Remove(1.0, b);
  EXPECT_DOUBLE_EQ(net.rate(a), 5.0);
  // A moved 4 bytes in [0, 1): 96 left at 5 per second.
  EXPECT_DOUBLE_EQ(net.FinishTime(a), 1.0 + 96.0 / 5.0);
  EXPECT_DOUBLE_EQ(net.used(0), 10.0);
  EXPECT_DOUBLE_EQ(net.used(1), 0.0);
  // Three equal flows on one resource get a third each.
  FlowNetwork bus({9.0});
  uint32_t x = bus.Add(0.0, 9.0, {0});
  bus.Add(0.0, 9.0, {0});
  bus.Add(0.0, 9.0, {0});
  EXPECT_DOUBLE_EQ(bus.rate(x), 3.0);
  EXPECT_DOUBLE_EQ(bus.FinishTime(x), 3.0);
}

TEST(SimulatorTest, WarmChainIsTheSumOfOpTimes) {
  auto f = CostFixture::Make(testing::MakeChain(5), MakeBusCluster(), 2 * kMs);
  Plan p = OneDevicePlan(f->graph, f->cluster, DeviceId(0));
  ASSERT_TRUE(plan::ApplyWarmStart(p, f->graph, f->cluster, 1.0).ok());
  SimResult r = SimRun(p, *f->cost);
  EXPECT_NEAR(r.makespan_s, 5 * 2 * kMs, kTol);
  EXPECT_EQ(r.transfer_bytes, 0);
}

TEST(SimulatorTest, ColdChainOverlapsLoadsWithCompute) {
  // Ops slower than loads (2 ms vs 1 ms): the first load, then the ops back to back.
  auto slow = CostFixture::Make(testing::MakeChain(3), MakeBusCluster(), 2 * kMs);
  SimResult r = SimRun(OneDevicePlan(slow->graph, slow->cluster, DeviceId(0)), *slow->cost);
  EXPECT_NEAR(r.makespan_s, 1 * kMs + 3 * 2 * kMs, kTol);
  EXPECT_NEAR(r.ops[Op(slow->graph, "op1").index()].start, 3 * kMs, kTol);
  EXPECT_EQ(r.weight_load_bytes, 3 * 16384);
  // Loads slower than ops (1 ms vs 0.25 ms): every load, then the last op.
  auto fast = CostFixture::Make(testing::MakeChain(3), MakeBusCluster(), 0.25 * kMs);
  r = SimRun(OneDevicePlan(fast->graph, fast->cluster, DeviceId(0)), *fast->cost);
  EXPECT_NEAR(r.makespan_s, 3 * 1 * kMs + 0.25 * kMs, kTol);
  EXPECT_NEAR(r.ops[Op(fast->graph, "op2").index()].start, 3 * kMs, kTol);
  // Busy time of the copy queue is the three loads; the link carried all the bytes.
  auto q = std::find_if(r.streams.begin(), r.streams.end(),
                        [](const StreamStats& s) { return s.name == "gpu0/in"; });
  ASSERT_NE(q, r.streams.end());
  EXPECT_NEAR(q->busy_s, 3 * kMs, kTol);
  auto bus = std::find_if(r.links.begin(), r.links.end(),
                          [](const LinkStats& l) { return l.name == "pcie-bus0"; });
  ASSERT_NE(bus, r.links.end());
  EXPECT_NEAR(bus->bytes, 3 * 16384.0, 1e-6);
  EXPECT_NEAR(bus->busy_s, 3 * kMs, kTol);
}

// Two single-op graphs' worth: ops "a" and "b" each reading its own 16 KiB weight.
graph::Graph TwoIndependentOps() {
  graph::Graph g("two");
  TensorId x = g.node(g.AddInput("x", graph::DType::kF32, {8, 64})).outputs[0];
  for (const char* n : {"a", "b"}) {
    NodeId w = g.AddWeight(std::string(n) + ".weight", graph::DType::kF32, {64, 64});
    NodeId op = g.AddOpWithOutputs("MatMul", n, {x, g.node(w).outputs[0]},
                                   {{std::string(n) + ".out", graph::DType::kF32, {8, 64}}});
    g.AddOutput(g.node(op).outputs[0]);
  }
  return g;
}

Plan TwoDevicePlan(const graph::Graph& g, const hw::Cluster& c, DeviceId da, DeviceId db) {
  Plan p;
  p.devices.push_back({da, {Subgraph{{Op(g, "a")}}}});
  p.devices.push_back({db, {Subgraph{{Op(g, "b")}}}});
  EXPECT_TRUE(plan::CompleteTransfers(p, g, c).ok());
  return p;
}

TEST(SimulatorTest, TwoTransfersSharingABusTakeTwiceAsLong) {
  auto f = CostFixture::Make(TwoIndependentOps(), MakeBusCluster(), 0.0);
  // gpu0 and gpu1 share pcie-bus0: both loads run at half rate and end at 2 ms.
  SimResult shared =
      SimRun(TwoDevicePlan(f->graph, f->cluster, DeviceId(0), DeviceId(1)), *f->cost);
  ASSERT_EQ(shared.transfers.size(), 2u);
  for (const TransferRecord& t : shared.transfers) {
    EXPECT_NEAR(t.start, 0.0, kTol);
    EXPECT_NEAR(t.finish, 2 * kMs, kTol);
  }
  // gpu0 and gpu2 are on separate buses: 1 ms each.
  SimResult separate =
      SimRun(TwoDevicePlan(f->graph, f->cluster, DeviceId(0), DeviceId(2)), *f->cost);
  for (const TransferRecord& t : separate.transfers) EXPECT_NEAR(t.finish, 1 * kMs, kTol);
  EXPECT_NEAR(shared.makespan_s, 2 * separate.makespan_s, kTol);
}

TEST(SimulatorTest, ExclusiveBusModeSerialisesLoadsAtFullRate) {
  auto f = CostFixture::Make(TwoIndependentOps(), MakeBusCluster(), 0.0);
  Plan p = TwoDevicePlan(f->graph, f->cluster, DeviceId(0), DeviceId(1));
  SimOptions exclusive;
  exclusive.copy_mode = CopyMode::kExclusiveBus;
  SimResult r = SimRun(p, *f->cost, exclusive);
  std::vector<double> finishes;
  for (const TransferRecord& t : r.transfers) {
    finishes.push_back(t.finish);
    EXPECT_EQ(t.queue, "bus pcie-bus0");
  }
  std::sort(finishes.begin(), finishes.end());
  ASSERT_EQ(finishes.size(), 2u);
  EXPECT_NEAR(finishes[0], 1 * kMs, kTol);  // gpu0's op can start after 1 ms, not 2
  EXPECT_NEAR(finishes[1], 2 * kMs, kTol);
  EXPECT_NEAR(r.ops[Op(f->graph, "a").index()].start, 1 * kMs, kTol);
}

TEST(SimulatorTest, RoundRobinAlternatesDestinationsSubgraphBySubgraph) {
  // Two chains' worth of loads onto gpu0 and gpu1 (both on bus0): the bus queue alternates.
  auto f = CostFixture::Make(testing::MakeChain(4), MakeBusCluster(), 0.0);
  Plan p;
  std::vector<NodeId> ops = f->graph.Ops();
  p.devices.push_back({DeviceId(0), {Subgraph{{ops[0]}}, Subgraph{{ops[1]}}}});
  p.devices.push_back({DeviceId(1), {Subgraph{{ops[2]}}, Subgraph{{ops[3]}}}});
  ASSERT_TRUE(plan::CompleteTransfers(p, f->graph, f->cluster).ok());
  Plan regrouped = RegroupLoadsByBus(p, f->graph, f->cluster);
  const plan::CopyQueue* bus = nullptr;
  for (const auto& q : regrouped.queues)
    if (q.name == "bus pcie-bus0") bus = &q;
  ASSERT_NE(bus, nullptr);
  std::vector<std::string> order;
  for (size_t t : bus->transfers)
    order.push_back(f->graph.tensor(regrouped.transfers[t].tensor).name);
  EXPECT_THAT(order,
              ::testing::ElementsAre("op0.weight", "op2.weight", "op1.weight", "op3.weight"));
}

// Two "cpu-core" devices cpu:0-0 and cpu:1-1 on one node, each with a memory-bus link of
// `bandwidth` bytes/s to host memory.
// A Relu of 16 floats named `name` reading `in`; its output.
TensorId AddRelu(graph::Graph& g, const std::string& name, TensorId in) {
  return g.node(g.AddOpWithOutputs("Relu", name, {in}, {{name + ".out", graph::DType::kF32, {16}}}))
      .outputs[0];
}

hw::Cluster TwoCoreGroups(double bandwidth) {
  hw::Cluster c("two-groups");
  PlaceId host = c.AddHostMemory("n0");
  const auto spec = hw::FindDeviceSpec("cpu-core");
  HX_CHECK(spec.has_value());
  for (const char* name : {"cpu:0-0", "cpu:1-1"}) {
    DeviceId d = c.AddDevice(name, hw::DeviceKind::kCpu, "n0", *spec);
    c.AddLink(std::string("membus:") + name, hw::LinkKind::kMemoryBus, host, c.PlaceOf(d),
              bandwidth, 0.0);
  }
  HX_CHECK(c.Finalize().ok());
  return c;
}

// Two core groups reading their weights in place: with a measured time, a CPU op's DHA is that
// time (its kernel read the same memory when profiled), not a flow over the memory-bus link.
TEST(SimulatorTest, MeasuredCpuDhaOpsTakeTheirMeasuredTime) {
  graph::Graph g = TwoIndependentOps();
  // 16 KB of weight at 1 GB/s would take 16 us: slower than the measured 10 us.
  hw::Cluster c = TwoCoreGroups(1e9);
  auto spec = hw::FindDeviceSpec("cpu-core");
  ASSERT_TRUE(spec.has_value());
  cost::Profile profile;
  for (const char* op : {"a", "b"}) profile.SetNodeTime(op, spec->model, 10e-6);
  cost::CostModel measured(g, c, {}, &profile);
  Plan p;
  p.devices.push_back({DeviceId(0), {Subgraph{{Op(g, "a")}}}});
  p.devices.push_back({DeviceId(1), {Subgraph{{Op(g, "b")}}}});
  p.weights.push_back({Op(g, "a.weight"), DeviceId(0), WeightMode::kDha, DeviceId()});
  p.weights.push_back({Op(g, "b.weight"), DeviceId(1), WeightMode::kDha, DeviceId()});
  ASSERT_TRUE(plan::CompleteTransfers(p, g, c).ok());
  SimResult r = SimRun(p, measured);
  for (const char* op : {"a", "b"}) {
    const OpRecord& rec = r.ops[Op(g, op).index()];
    EXPECT_TRUE(rec.dha) << op;
    EXPECT_NEAR(rec.finish - rec.start, 10e-6, kTol) << op;
  }
  // Unmeasured, the roofline streams the weights over the memory bus.
  cost::CostModel roofline(g, c);
  SimResult streamed = SimRun(p, roofline);
  EXPECT_GE(streamed.ops[Op(g, "a").index()].finish, 16384 / 1e9 - kTol);
}

// A profiled send cost keeps the producer's device busy after the op (its next op waits), while
// the consumer still gets the tensor after the measured transfer time in all.
TEST(SimulatorTest, SendCostKeepsTheProducerBusyNotTheConsumerWaitingLonger) {
  graph::Graph g("send");
  const TensorId x = g.node(g.AddInput("x", graph::DType::kF32, {16})).outputs[0];
  const TensorId a = AddRelu(g, "a", x);
  g.AddOutput(AddRelu(g, "b", a));
  g.AddOutput(AddRelu(g, "c", x));
  hw::Cluster cluster = TwoCoreGroups(10e9);
  auto spec = hw::FindDeviceSpec("cpu-core");
  ASSERT_TRUE(spec.has_value());
  Plan p;
  p.devices.push_back({DeviceId(0), {Subgraph{{Op(g, "a")}}, Subgraph{{Op(g, "c")}}}});
  p.devices.push_back({DeviceId(1), {Subgraph{{Op(g, "b")}}}});
  ASSERT_TRUE(plan::CompleteTransfers(p, g, cluster).ok());
  ASSERT_EQ(p.transfers.size(), 1u);
  cost::Profile profile;
  for (const char* op : {"a", "b", "c"}) profile.SetNodeTime(op, spec->model, 10e-6);
  profile.SetTransferTime("a", spec->model, spec->model, 5e-6);
  cost::CostModel without(g, cluster, {}, &profile);
  SimResult plain = SimRun(p, without);
  profile.SetSendCost(spec->model, spec->model, 2e-6);
  cost::CostModel with(g, cluster, {}, &profile);
  SimResult sending = SimRun(p, with);
  EXPECT_NEAR(plain.ops[Op(g, "c").index()].start, 10e-6, 1e-9);
  EXPECT_NEAR(sending.ops[Op(g, "c").index()].start, 12e-6, 1e-9);
  for (const SimResult* r : {&plain, &sending})
    EXPECT_NEAR(r->ops[Op(g, "b").index()].start, 15e-6, 1e-8);
  // A send cost above the transfer's measured time is capped at it (no negative latency).
  profile.SetSendCost(spec->model, spec->model, 9e-6);
  cost::CostModel capped(g, cluster, {}, &profile);
  SimResult over = SimRun(p, capped);
  EXPECT_NEAR(over.ops[Op(g, "c").index()].start, 15e-6, 1e-9);
  EXPECT_NEAR(over.ops[Op(g, "b").index()].start, 15e-6, 1e-8);
}

// A profiled receive cost lengthens the first op on the destination that reads the tensor (once,
// however many ops there read it), and comes out of the transfer's latency: the consumer still
// finishes the hand-off after the measured transfer time in all.
TEST(SimulatorTest, ReceiveCostLengthensTheFirstReaderOnly) {
  graph::Graph g("recv");
  const TensorId x = g.node(g.AddInput("x", graph::DType::kF32, {16})).outputs[0];
  const TensorId a = AddRelu(g, "a", x);
  g.AddOutput(AddRelu(g, "b", a));
  g.AddOutput(AddRelu(g, "c", a));
  hw::Cluster cluster = TwoCoreGroups(10e9);
  auto spec = hw::FindDeviceSpec("cpu-core");
  ASSERT_TRUE(spec.has_value());
  Plan p;
  p.devices.push_back({DeviceId(0), {Subgraph{{Op(g, "a")}}}});
  p.devices.push_back({DeviceId(1), {Subgraph{{Op(g, "b")}}, Subgraph{{Op(g, "c")}}}});
  ASSERT_TRUE(plan::CompleteTransfers(p, g, cluster).ok());
  ASSERT_EQ(p.transfers.size(), 1u);
  cost::Profile profile;
  for (const char* op : {"a", "b", "c"}) profile.SetNodeTime(op, spec->model, 10e-6);
  profile.SetTransferTime("a", spec->model, spec->model, 5e-6);
  cost::CostModel without(g, cluster, {}, &profile);
  SimResult plain = SimRun(p, without);
  profile.SetRecvCost(spec->model, spec->model, 3e-6);
  cost::CostModel with(g, cluster, {}, &profile);
  SimResult receiving = SimRun(p, with);
  const OpRecord& b_plain = plain.ops[Op(g, "b").index()];
  const OpRecord& b_recv = receiving.ops[Op(g, "b").index()];
  const OpRecord& c_recv = receiving.ops[Op(g, "c").index()];
  EXPECT_NEAR(b_plain.start, 15e-6, 1e-8);
  EXPECT_NEAR(b_plain.finish - b_plain.start, 10e-6, 1e-9);
  // The tensor is there 3 us earlier; b reads it 3 us longer.
  EXPECT_NEAR(b_recv.start, 12e-6, 1e-8);
  EXPECT_NEAR(b_recv.finish - b_recv.start, 13e-6, 1e-9);
  EXPECT_NEAR(c_recv.finish - c_recv.start, 10e-6, 1e-9);
  EXPECT_NEAR(receiving.makespan_s, plain.makespan_s, 1e-8);
}

// A profiled subgraph-start cost is paid once per subgraph, by its first op.
TEST(SimulatorTest, SubgraphStartCostIsPaidOncePerSubgraph) {
  graph::Graph g("chain");
  TensorId t = g.node(g.AddInput("x", graph::DType::kF32, {16})).outputs[0];
  std::vector<NodeId> ops;
  for (int k = 0; k < 6; ++k) {
    t = AddRelu(g, "r" + std::to_string(k), t);
    ops.push_back(g.tensor(t).producer);
  }
  g.AddOutput(t);
  hw::Cluster cluster = TwoCoreGroups(10e9);
  auto spec = hw::FindDeviceSpec("cpu-core");
  ASSERT_TRUE(spec.has_value());
  cost::Profile profile;
  for (NodeId op : ops) profile.SetNodeTime(g.node(op).name, spec->model, 10e-6);
  profile.SetSubgraphCost(spec->model, 1e-6);
  cost::CostModel cost(g, cluster, {}, &profile);
  auto plan_with = [&](size_t per_subgraph) {
    Plan p;
    DeviceSchedule ds{DeviceId(0), {}};
    for (size_t k = 0; k < ops.size(); ++k) {
      if (k % per_subgraph == 0) ds.subgraphs.emplace_back();
      ds.subgraphs.back().ops.push_back(ops[k]);
    }
    p.devices.push_back(std::move(ds));
    EXPECT_TRUE(plan::CompleteTransfers(p, g, cluster).ok());
    return p;
  };
  EXPECT_NEAR(SimRun(plan_with(6), cost).makespan_s, 61e-6, 1e-9);
  EXPECT_NEAR(SimRun(plan_with(2), cost).makespan_s, 63e-6, 1e-9);
  EXPECT_NEAR(SimRun(plan_with(1), cost).makespan_s, 66e-6, 1e-9);
  // Without the cost (another device's profile), the ops alone.
  cost::Profile bare;
  for (NodeId op : ops) bare.SetNodeTime(g.node(op).name, spec->model, 10e-6);
  cost::CostModel bare_cost(g, cluster, {}, &bare);
  EXPECT_NEAR(SimRun(plan_with(1), bare_cost).makespan_s, 60e-6, 1e-9);
}

TEST(SimulatorTest, DhaOpAndTransferOnOneBusSlowEachOther) {
  // "a" on gpu0 reads its weight by DHA (1 ms alone: the read dominates); "b" on gpu1 loads its
  // weight over the same bus (1 ms alone). Together each gets half the bus: both end at 2 ms.
  auto f = CostFixture::Make(TwoIndependentOps(), MakeBusCluster(), 0.0);
  Plan p;
  p.devices.push_back({DeviceId(0), {Subgraph{{Op(f->graph, "a")}}}});
  p.devices.push_back({DeviceId(1), {Subgraph{{Op(f->graph, "b")}}}});
  p.weights.push_back({Op(f->graph, "a.weight"), DeviceId(0), WeightMode::kDha, DeviceId()});
  ASSERT_TRUE(plan::CompleteTransfers(p, f->graph, f->cluster).ok());
  ASSERT_NEAR(f->cost->OpTimeDha(Op(f->graph, "a"), DeviceId(0)), 1 * kMs, kTol);
  SimResult together = SimRun(p, *f->cost);
  const OpRecord& a = together.ops[Op(f->graph, "a").index()];
  EXPECT_TRUE(a.dha);
  EXPECT_NEAR(a.start, 0.0, kTol);
  EXPECT_NEAR(a.finish, 2 * kMs, kTol);
  ASSERT_EQ(together.transfers.size(), 1u);
  EXPECT_NEAR(together.transfers[0].finish, 2 * kMs, kTol);
  EXPECT_EQ(together.dha_bytes, 16384);
  // On separate buses neither slows the other.
  Plan q = p;
  q.devices[1].device = DeviceId(2);
  q.weights.clear();
  q.transfers.clear();
  q.queues.clear();
  q.weights.push_back({Op(f->graph, "a.weight"), DeviceId(0), WeightMode::kDha, DeviceId()});
  ASSERT_TRUE(plan::CompleteTransfers(q, f->graph, f->cluster).ok());
  SimResult apart = SimRun(q, *f->cost);
  EXPECT_NEAR(apart.ops[Op(f->graph, "a").index()].finish, 1 * kMs, kTol);
  EXPECT_NEAR(apart.transfers[0].finish, 1 * kMs, kTol);
}

TEST(SimulatorTest, ParallelTransmissionRelaysThroughAPeer) {
  // gpu0's op reads a weight relayed through gpu2: host -> gpu2 over bus1 (1 ms), then
  // gpu2 -> gpu0 over NVLink (4x faster: 0.25 ms).
  auto f = CostFixture::Make(testing::MakeChain(1), MakeBusCluster(), 1 * kMs);
  Plan p;
  p.devices.push_back({DeviceId(0), {Subgraph{{Op(f->graph, "op0")}}}});
  p.weights.push_back({Op(f->graph, "op0.weight"), DeviceId(0), WeightMode::kRelay, DeviceId(2)});
  ASSERT_TRUE(plan::CompleteTransfers(p, f->graph, f->cluster).ok());
  ASSERT_THAT(plan::ValidatePlan(p, *f->cost), ::testing::IsEmpty());
  SimResult r = SimRun(p, *f->cost);
  EXPECT_NEAR(r.ops[Op(f->graph, "op0").index()].start, 1.25 * kMs, kTol);
  EXPECT_NEAR(r.makespan_s, 2.25 * kMs, kTol);
  // The relay held the weight only until it was forwarded.
  EXPECT_EQ(r.devices[2].peak_memory_bytes, 16384);
  EXPECT_EQ(r.devices[2].memory.back().bytes, 0);
}

// Two core groups on two nodes joined by a network link with `latency`.
hw::Cluster TwoNodes(double latency) {
  hw::Cluster c("two-nodes");
  const auto spec = hw::FindDeviceSpec("cpu-core");
  HX_CHECK(spec.has_value());
  std::vector<PlaceId> hosts;
  for (const char* node : {"n0", "n1"}) {
    hosts.push_back(c.AddHostMemory(node));
    const DeviceId d = c.AddDevice(std::string("cpu:") + node, hw::DeviceKind::kCpu, node, *spec);
    c.AddLink(std::string("membus:") + node, hw::LinkKind::kMemoryBus, hosts.back(), c.PlaceOf(d),
              100e9, 0.0);
  }
  c.AddLink("eth", hw::LinkKind::kEthernet, hosts[0], hosts[1], 1e9, latency);
  HX_CHECK(c.Finalize().ok());
  return c;
}

// A route's latency delays the receiver, not the sender's next message: two hand-offs posted 10 us
// apart on one stream arrive 10 us apart, not one latency apart (what the wire does; before, the
// stream was held for the latency and each message waited out the one before it).
TEST(SimulatorTest, MessagesInFlightOverlapTheirLatency) {
  graph::Graph g("two-hand-offs");
  const TensorId x = g.node(g.AddInput("x", graph::DType::kF32, {16})).outputs[0];
  g.AddOutput(AddRelu(g, "b", AddRelu(g, "a", x)));
  g.AddOutput(AddRelu(g, "d", AddRelu(g, "c", x)));
  constexpr double kLatency = 100e-6, kOp = 10e-6;
  hw::Cluster cluster = TwoNodes(kLatency);
  auto spec = hw::FindDeviceSpec("cpu-core");
  ASSERT_TRUE(spec.has_value());
  cost::Profile profile;
  for (const char* op : {"a", "b", "c", "d"}) profile.SetNodeTime(op, spec->model, kOp);
  cost::CostModel cost(g, cluster, {}, &profile);
  Plan p;
  p.devices.push_back({DeviceId(0), {Subgraph{{Op(g, "a")}}, Subgraph{{Op(g, "c")}}}});
  p.devices.push_back({DeviceId(1), {Subgraph{{Op(g, "b")}}, Subgraph{{Op(g, "d")}}}});
  ASSERT_TRUE(plan::CompleteTransfers(p, g, cluster).ok());
  ASSERT_EQ(p.transfers.size(), 2u);
  ASSERT_EQ(p.queues.size(), 1u);  // one copy queue from n0 to n1: both messages on it
  SimResult r = SimRun(p, cost);
  const double flow = 64.0 / 1e9;  // 16 floats over the 1 GB/s link
  EXPECT_NEAR(r.ops[Op(g, "b").index()].start, kOp + flow + kLatency, 1e-9);
  // c finishes at 20 us; its message leaves then, while a's is still in flight.
  EXPECT_NEAR(r.ops[Op(g, "d").index()].start, 2 * kOp + flow + kLatency, 1e-9);
  EXPECT_NEAR(r.makespan_s, 3 * kOp + flow + kLatency, 1e-9);
  // The stream was busy for the two flows only.
  for (const StreamStats& s : r.streams)
    if (!s.compute) EXPECT_NEAR(s.busy_s, 2 * flow, 1e-12) << s.name;
}

TEST(SimulatorTest, ActivationTransfersAndCriticalPath) {
  // a on gpu0, then b on gpu2 (a.out crosses NVLink: 2 KiB at 64 MB/s = 1/32 ms).
  auto f = CostFixture::Make(testing::MakeChain(2), MakeBusCluster(), 1 * kMs);
  Plan p;
  p.devices.push_back({DeviceId(0), {Subgraph{{Op(f->graph, "op0")}}}});
  p.devices.push_back({DeviceId(2), {Subgraph{{Op(f->graph, "op1")}}}});
  ASSERT_TRUE(plan::CompleteTransfers(p, f->graph, f->cluster).ok());
  SimResult r = SimRun(p, *f->cost);
  const double hop = 2048.0 / testing::kNvlinkBandwidth;
  EXPECT_NEAR(r.ops[Op(f->graph, "op1").index()].start, 2 * kMs + hop, 1e-12);
  EXPECT_EQ(r.activation_bytes, 2048);
  // Critical path: load of op0's weight, op0, the activation, op1.
  ASSERT_EQ(r.critical_path.size(), 4u);
  EXPECT_FALSE(r.critical_path[0].is_op);
  EXPECT_TRUE(r.critical_path[1].is_op);
  EXPECT_FALSE(r.critical_path[2].is_op);
  EXPECT_EQ(r.critical_path[3].op, Op(f->graph, "op1"));
  EXPECT_NEAR(r.critical_path.back().finish, r.makespan_s, kTol);
}

TEST(SimulatorTest, RejectsInvalidPlans) {
  auto f = CostFixture::Make(testing::MakeChain(2), MakeBusCluster(), 1 * kMs);
  Plan p = OneDevicePlan(f->graph, f->cluster, DeviceId(0));
  p.queues.clear();
  auto r = Simulate(p, *f->cost);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("is on no copy queue"));
}

TEST(SimulatorTest, IsDeterministic) {
  auto f = CostFixture::Make(testing::MakeRandomDag(40, 7), MakeBusCluster(), -1);
  Plan p;
  std::vector<NodeId> ops = f->graph.Ops();
  for (int d = 0; d < 3; ++d) p.devices.push_back({DeviceId(d), {}});
  for (size_t i = 0; i < ops.size(); ++i) p.devices[i % 3].subgraphs.push_back(Subgraph{{ops[i]}});
  ASSERT_TRUE(plan::CompleteTransfers(p, f->graph, f->cluster).ok());
  SimResult a = SimRun(p, *f->cost), b = SimRun(p, *f->cost);
  EXPECT_EQ(a.makespan_s, b.makespan_s);
  EXPECT_EQ(a.num_events, b.num_events);
  for (size_t i = 0; i < a.ops.size(); ++i) EXPECT_EQ(a.ops[i].start, b.ops[i].start);
}

// ---- Properties on random DAGs and random valid plans.

struct RandomCase {
  int ops;
  uint64_t seed;
};

class RandomPlanTest : public ::testing::TestWithParam<RandomCase> {};

Plan RandomPlan(const graph::Graph& g, const hw::Cluster& c, std::mt19937_64& rng) {
  auto order = graph::TopologicalOrder(g);
  EXPECT_TRUE(order.ok());
  const int nd = static_cast<int>(c.num_devices());
  Plan p;
  for (int d = 0; d < nd; ++d) p.devices.push_back({DeviceId(d), {}});
  std::vector<int> dev_of(g.num_nodes(), 0);
  for (NodeId v : *order) {
    if (!g.node(v).is_op()) continue;
    const int d = static_cast<int>(rng() % nd);
    dev_of[v.index()] = d;
    auto& sgs = p.devices[d].subgraphs;
    // Grow the current subgraph or start a new one. Only a subgraph's first op may take inputs
    // from other devices (a subgraph waits for all its outside inputs before it starts, so a
    // later op waiting on another device could deadlock).
    bool local_inputs = true;
    for (NodeId pr : g.predecessors(v))
      if (g.node(pr).is_op() && dev_of[pr.index()] != d) local_inputs = false;
    if (sgs.empty() || !local_inputs || rng() % 3 == 0)
      sgs.push_back(Subgraph{{v}});
    else
      sgs.back().ops.push_back(v);
  }
  for (NodeId w : g.Weights()) {
    std::vector<int> readers;
    for (NodeId c2 : g.successors(w))
      if (g.node(c2).is_op()) readers.push_back(dev_of[c2.index()]);
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    for (int d : readers) {
      plan::WeightPlacement wp{w, DeviceId(d), WeightMode::kLoad, DeviceId()};
      const int mode = static_cast<int>(rng() % 4);
      if (mode == 1) wp.mode = WeightMode::kDha;
      if (mode == 2) {
        wp.mode = WeightMode::kRelay;
        wp.relay = DeviceId((d + 1 + rng() % (nd - 1)) % nd);
      }
      p.weights.push_back(wp);
    }
  }
  EXPECT_TRUE(plan::CompleteTransfers(p, g, c).ok());
  return p;
}

TEST_P(RandomPlanTest, PropertiesHold) {
  const RandomCase rc = GetParam();
  auto f = CostFixture::Make(testing::MakeRandomDag(rc.ops, rc.seed), MakeBusCluster(), -1);
  std::mt19937_64 rng(rc.seed * 7919 + 1);
  auto lb = ComputeLowerBound(*f->cost);
  ASSERT_TRUE(lb.ok());
  for (int trial = 0; trial < 4; ++trial) {
    Plan p = RandomPlan(f->graph, f->cluster, rng);
    ASSERT_THAT(plan::ValidatePlan(p, *f->cost), ::testing::IsEmpty());
    for (CopyMode mode : {CopyMode::kPlanQueues, CopyMode::kExclusiveBus}) {
      SimOptions options;
      options.copy_mode = mode;
      SimResult r = SimRun(p, *f->cost, options);
      // Makespan >= lower bound.
      EXPECT_GE(r.makespan_s * (1 + 1e-9), lb->value_s());
      const std::vector<DeviceId> dev = p.OpDevices(f->graph.num_nodes());
      // Arrival time of each (tensor, device) through transfers.
      std::map<std::pair<uint32_t, uint32_t>, double> arrival;
      for (size_t i = 0; i < p.transfers.size(); ++i)
        arrival[{p.transfers[i].tensor.value(),
                 f->cluster.place(p.transfers[i].dst).device.value()}] = r.transfers[i].finish;
      for (NodeId op : f->graph.Ops()) {
        const OpRecord& rec = r.ops[op.index()];
        ASSERT_EQ(rec.device, dev[op.index()]);
        EXPECT_GE(rec.finish, rec.start);
        for (TensorId t : f->graph.node(op).inputs) {
          const NodeId prod = f->graph.tensor(t).producer;
          const graph::NodeKind kind = f->graph.node(prod).kind;
          if (kind == graph::NodeKind::kInput) continue;
          if (kind == graph::NodeKind::kOp) {
            EXPECT_GE(rec.start, r.ops[prod.index()].finish) << f->graph.node(op).name;
            if (dev[prod.index()] != rec.device) {
              EXPECT_GE(rec.start, (arrival.at({t.value(), rec.device.value()})));
            }
            continue;
          }
          // A weight: loaded or forwarded before the op starts, unless read by DHA.
          auto it = arrival.find({t.value(), rec.device.value()});
          if (it != arrival.end()) {
            EXPECT_GE(rec.start, it->second);
          } else {
            EXPECT_TRUE(rec.dha) << f->graph.node(op).name;
          }
        }
      }
      // A stream never runs two ops (or two transfers) at once.
      std::map<uint32_t, std::vector<std::pair<double, double>>> by_device;
      for (NodeId op : f->graph.Ops())
        by_device[r.ops[op.index()].device.value()].push_back(
            {r.ops[op.index()].start, r.ops[op.index()].finish});
      std::map<std::string, std::vector<std::pair<double, double>>> by_queue;
      for (const TransferRecord& t : r.transfers) by_queue[t.queue].push_back({t.start, t.finish});
      auto no_overlap = [](std::vector<std::pair<double, double>> v) {
        std::sort(v.begin(), v.end());
        for (size_t i = 1; i < v.size(); ++i)
          if (v[i].first < v[i - 1].second - 1e-15) return false;
        return true;
      };
      for (const auto& [d, v] : by_device) EXPECT_TRUE(no_overlap(v)) << "device " << d;
      for (const auto& [q, v] : by_queue) EXPECT_TRUE(no_overlap(v)) << "queue " << q;
      // The validator's memory bound holds for the simulated memory.
      const auto bound = plan::PlanMemoryBound(p, *f->cost);
      for (const DeviceStats& ds : r.devices)
        EXPECT_LE(ds.peak_memory_bytes, bound[ds.device.index()].total()) << ds.name;
      // Memory returns to the weights and outputs kept: never negative.
      for (const DeviceStats& ds : r.devices)
        for (const MemoryPoint& m : ds.memory) EXPECT_GE(m.bytes, 0);
      // Utilisation is a fraction.
      for (const StreamStats& s : r.streams) EXPECT_LE(s.utilisation, 1.0 + 1e-9);
      for (const LinkStats& l : r.links) EXPECT_LE(l.utilisation, 1.0 + 1e-9);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(RandomDags, RandomPlanTest,
                         ::testing::Values(RandomCase{8, 1}, RandomCase{20, 2}, RandomCase{30, 3},
                                           RandomCase{40, 4}, RandomCase{60, 5},
                                           RandomCase{25, 6}));

TEST(LowerBoundTest, ChainIsItsCriticalPath) {
  auto f = CostFixture::Make(testing::MakeChain(4), MakeBusCluster(), 2 * kMs);
  auto lb = ComputeLowerBound(*f->cost);
  ASSERT_TRUE(lb.ok());
  EXPECT_NEAR(lb->critical_path_s, 4 * 2 * kMs, kTol);
  EXPECT_NEAR(lb->compute_s, 4 * 2 * kMs / 3, kTol);
  // Two buses leave host0: 4 weights of 16 KiB over 2 x 16 KiB/ms.
  EXPECT_NEAR(lb->weight_load_s, 2 * kMs, kTol);
  EXPECT_NEAR(lb->value_s(), 8 * kMs, kTol);
  auto warm = ComputeLowerBound(*f->cost, 1.0);
  ASSERT_TRUE(warm.ok());
  EXPECT_EQ(warm->weight_load_s, 0.0);
}

TEST(LowerBoundTest, WideGraphIsBoundByComputeOrLoads) {
  // 3 branches x 4 deep of 2 ms ops on 3 devices: the critical path is fork + 4 + join = 6 ops
  // (join is a Sum) and total compute 14 ops / 3 devices.
  auto f = CostFixture::Make(testing::MakeForkJoin(3, 4), MakeBusCluster(), 2 * kMs);
  auto lb = ComputeLowerBound(*f->cost);
  ASSERT_TRUE(lb.ok());
  EXPECT_NEAR(lb->critical_path_s, 6 * 2 * kMs, kTol);
  EXPECT_NEAR(lb->compute_s, 14 * 2 * kMs / 3, kTol);
  EXPECT_NEAR(lb->weight_load_s, 13 * 16384 / (2 * testing::kBusBandwidth), kTol);
}

// ---- The calibrated cost model (issue 21): the simulator copies at the rates the cost model says.

// Op "a" reading its own 16 KiB weight.
graph::Graph OneOp() {
  graph::Graph g("one");
  TensorId x = g.node(g.AddInput("x", graph::DType::kF32, {8, 64})).outputs[0];
  NodeId w = g.AddWeight("a.weight", graph::DType::kF32, {64, 64});
  NodeId op = g.AddOpWithOutputs("MatMul", "a", {x, g.node(w).outputs[0]},
                                 {{"a.out", graph::DType::kF32, {8, 64}}});
  g.AddOutput(g.node(op).outputs[0]);
  return g;
}

cost::CostModelOptions CalibratedTestGpu(double h2d, double fixed_s, double mapped,
                                         double shared = 1.0) {
  cost::DeviceCalibration c;
  c.model = "TestGPU";
  c.kernel_launch_s = 0.0;
  c.copy.h2d_pinned = {h2d, fixed_s, "test"};
  c.copy.dha_mapped = {mapped, fixed_s, "test"};
  c.copy.shared_bus_efficiency = shared;
  cost::CostModelOptions options;
  options.calibrations["TestGPU"] = c;
  return options;
}

TEST(CalibratedSimulatorTest, OneCopyPlanTakesTheCostModelsCopyTime) {
  // One 16 KiB weight over bus1 (1 ms nominal) at half the rate, plus 0.25 ms per copy.
  auto f = testing::CostFixture::Make(OneOp(), MakeBusCluster(), 0.0,
                                      CalibratedTestGpu(0.5, 0.25 * kMs, 1.0));
  Plan p;
  p.devices.push_back({DeviceId(2), {Subgraph{{Op(f->graph, "a")}}}});
  ASSERT_TRUE(plan::CompleteTransfers(p, f->graph, f->cluster).ok());
  const double load = f->cost->WeightLoadTime(Op(f->graph, "a.weight"), DeviceId(2));
  EXPECT_NEAR(load, 0.25 * kMs + 2 * kMs, kTol);
  SimResult r = SimRun(p, *f->cost);
  ASSERT_EQ(r.transfers.size(), 1u);
  EXPECT_NEAR(r.transfers[0].finish, load, kTol);
  EXPECT_NEAR(r.makespan_s, load, kTol);
  EXPECT_EQ(r.weight_load_bytes, 16384);
  // The roofline kind ignores the calibration: 1 ms.
  cost::CostModelOptions roofline = CalibratedTestGpu(0.5, 0.25 * kMs, 1.0);
  roofline.kind = cost::CostModelKind::kRoofline;
  cost::CostModel plain(f->graph, f->cluster, roofline, &f->profile);
  EXPECT_NEAR(SimRun(p, plain).makespan_s, 1 * kMs, kTol);
}

TEST(CalibratedSimulatorTest, TwoCopiesOnOneBusGetTheSharedBusEfficiency) {
  // Alone 1 ms; together each gets 0.8 / 2 of the bus: 2.5 ms.
  auto f = testing::CostFixture::Make(TwoIndependentOps(), MakeBusCluster(), 0.0,
                                      CalibratedTestGpu(1.0, 0.0, 1.0, 0.8));
  SimResult shared =
      SimRun(TwoDevicePlan(f->graph, f->cluster, DeviceId(0), DeviceId(1)), *f->cost);
  ASSERT_EQ(shared.transfers.size(), 2u);
  for (const TransferRecord& t : shared.transfers) EXPECT_NEAR(t.finish, 2.5 * kMs, kTol);
  SimResult separate =
      SimRun(TwoDevicePlan(f->graph, f->cluster, DeviceId(0), DeviceId(2)), *f->cost);
  for (const TransferRecord& t : separate.transfers) EXPECT_NEAR(t.finish, 1 * kMs, kTol);
}

TEST(CalibratedSimulatorTest, DhaReadsAtTheMappedFraction) {
  auto f = testing::CostFixture::Make(OneOp(), MakeBusCluster(), 0.0,
                                      CalibratedTestGpu(1.0, 0.1 * kMs, 0.25));
  Plan p;
  p.devices.push_back({DeviceId(2), {Subgraph{{Op(f->graph, "a")}}}});
  p.weights.push_back({Op(f->graph, "a.weight"), DeviceId(2), WeightMode::kDha, DeviceId()});
  ASSERT_TRUE(plan::CompleteTransfers(p, f->graph, f->cluster).ok());
  const double dha = f->cost->OpTimeDha(Op(f->graph, "a"), DeviceId(2));
  EXPECT_NEAR(dha, 0.1 * kMs + 4 * kMs, kTol);
  SimResult r = SimRun(p, *f->cost);
  EXPECT_NEAR(r.ops[Op(f->graph, "a").index()].finish, dha, kTol);
  EXPECT_EQ(r.dha_bytes, 16384);
}

}  // namespace
}  // namespace hx::sim
