#include "hexplan/plan/plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "hexplan/hw/presets.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/plan/plan_json.h"
#include "hexplan/plan/task_graph.h"
#include "hexplan/plan/validator.h"
#include "plan/plan_fixtures.h"
#include "testing/graph_builders.h"

namespace hx::plan {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using testing::CostFixture;
using ::testing::HasSubstr;
using testing::MakeBusCluster;

NodeId Op(const graph::Graph& g, const std::string& name) { return *g.FindNode(name); }

// Ops in id order, split over devices by `device_of(op_index)`, one subgraph per op.
Plan SplitPlan(const graph::Graph& g, const hw::Cluster& c,
               const std::function<int(size_t)>& device_of) {
  Plan p;
  std::vector<NodeId> ops = g.Ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    DeviceId d(device_of(i));
    auto it = std::find_if(p.devices.begin(), p.devices.end(),
                           [&](const DeviceSchedule& s) { return s.device == d; });
    if (it == p.devices.end()) {
      p.devices.push_back(DeviceSchedule{d, {}});
      it = p.devices.end() - 1;
    }
    it->subgraphs.push_back(Subgraph{{ops[i]}});
  }
  Status s = CompleteTransfers(p, g, c);
  EXPECT_TRUE(s.ok()) << s.message();
  return p;
}

TEST(CompleteTransfersTest, SingleDeviceChainLoadsEveryWeightInOrder) {
  auto f = CostFixture::Make(testing::MakeChain(4), MakeBusCluster(), 1e-3);
  Plan p = SplitPlan(f->graph, f->cluster, [](size_t) { return 0; });
  ASSERT_EQ(p.transfers.size(), 4u);
  ASSERT_EQ(p.queues.size(), 1u);
  EXPECT_EQ(p.queues[0].name, "gpu0/in");
  for (size_t i = 0; i < 4; ++i) {
    const Transfer& t = p.transfers[p.queues[0].transfers[i]];
    EXPECT_EQ(t.kind, TransferKind::kWeightLoad);
    EXPECT_EQ(f->graph.tensor(t.tensor).name, "op" + std::to_string(i) + ".weight");
    EXPECT_EQ(CheckRoute(f->cluster, t.src, t.dst, t.route), "");
  }
  EXPECT_THAT(ValidatePlan(p, *f->cost), ::testing::IsEmpty());
}

TEST(CompleteTransfersTest, CrossDeviceEdgesGetActivationTransfers) {
  auto f = CostFixture::Make(testing::MakeDiamond(), MakeBusCluster(), 1e-3);
  // a, b on gpu0; c on gpu1; d on gpu0: a.out goes to gpu1, c.out comes back.
  Plan p = SplitPlan(f->graph, f->cluster, [&](size_t i) {
    return f->graph.node(f->graph.Ops()[i]).name == "c" ? 1 : 0;
  });
  int activations = 0;
  for (const Transfer& t : p.transfers)
    if (t.kind == TransferKind::kActivation) ++activations;
  EXPECT_EQ(activations, 2);
  EXPECT_THAT(ValidatePlan(p, *f->cost), ::testing::IsEmpty());
}

TEST(PlanJsonTest, RoundTripsAndKeepsEveryField) {
  auto f = CostFixture::Make(testing::MakeForkJoin(2, 2), MakeBusCluster(), 1e-3);
  Plan p;
  std::vector<NodeId> ops = f->graph.Ops();
  p.devices.push_back(DeviceSchedule{DeviceId(0), {}});
  p.devices.push_back(DeviceSchedule{DeviceId(2), {}});
  for (NodeId op : ops) {
    const std::string& n = f->graph.node(op).name;
    auto& ds = n.rfind("b1_", 0) == 0 ? p.devices[1] : p.devices[0];
    ds.subgraphs.push_back(Subgraph{{op}});
  }
  // b1_0's weight relayed via gpu0, b1_1's read by DHA.
  p.weights.push_back({Op(f->graph, "b1_0.weight"), DeviceId(2), WeightMode::kRelay, DeviceId(0)});
  p.weights.push_back({Op(f->graph, "b1_1.weight"), DeviceId(2), WeightMode::kDha, DeviceId()});
  ASSERT_TRUE(CompleteTransfers(p, f->graph, f->cluster).ok());
  p.submodels.push_back(Submodel{"all", ops});
  p.estimate_ms = 1.5;
  p.warm = 0.25;
  StampPlan(p, f->graph, f->cluster, "forkjoin", graph::ZooOptions{}, "test-bus");
  ASSERT_THAT(ValidatePlan(p, *f->cost), ::testing::IsEmpty());

  const std::string json = PlanToJson(p, f->graph, f->cluster);
  auto header = ParsePlanHeader(json, "p.json");
  ASSERT_TRUE(header.ok()) << header.status().message();
  EXPECT_EQ(header->model.hash, GraphFingerprint(f->graph));
  EXPECT_EQ(header->cluster.hash, ClusterFingerprint(f->cluster));
  auto back = ParsePlan(json, "p.json", f->graph, f->cluster);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(PlanToJson(*back, f->graph, f->cluster), json);
  EXPECT_EQ(back->weights.size(), p.weights.size());
  EXPECT_EQ(back->transfers.size(), p.transfers.size());
  ASSERT_TRUE(back->estimate_ms.has_value());
  EXPECT_DOUBLE_EQ(*back->estimate_ms, 1.5);
  ASSERT_TRUE(back->warm.has_value());
  EXPECT_DOUBLE_EQ(*back->warm, 0.25);
}

TEST(PlanJsonTest, WarmMustBeAFraction) {
  auto f = CostFixture::Make(testing::MakeChain(2), MakeBusCluster(), 1e-3);
  Plan p = SplitPlan(f->graph, f->cluster, [](size_t) { return 0; });
  const std::string cold = PlanToJson(p, f->graph, f->cluster);
  EXPECT_EQ(cold.find("\"warm\""), std::string::npos);  // a cold-start plan has no `warm`
  p.warm = 1.0;
  std::string json = PlanToJson(p, f->graph, f->cluster);
  const size_t at = json.find("\"warm\": 1");
  ASSERT_NE(at, std::string::npos) << json;
  json.replace(at, 9, "\"warm\": 2");
  auto r = ParsePlan(json, "plan.json", f->graph, f->cluster);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), AllOf(HasSubstr("plan.json: /warm"), HasSubstr("[0, 1]")));
}

TEST(PlanJsonTest, ErrorsNameTheFileAndTheJsonPath) {
  auto f = CostFixture::Make(testing::MakeChain(2), MakeBusCluster(), 1e-3);
  Plan p = SplitPlan(f->graph, f->cluster, [](size_t) { return 0; });
  std::string json = PlanToJson(p, f->graph, f->cluster);
  const std::string bad_op = std::string(json).replace(json.find("\"op1\""), 5, "\"nope\"");
  auto r = ParsePlan(bad_op, "plan.json", f->graph, f->cluster);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              AllOf(HasSubstr("plan.json"), HasSubstr("/devices/0/subgraphs/1/0"),
                    HasSubstr("unknown node 'nope'")));
  const std::string bad_dev = std::string(json).replace(json.find("\"gpu0\""), 6, "\"gpu9\"");
  r = ParsePlan(bad_dev, "plan.json", f->graph, f->cluster);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("unknown device 'gpu9'"));
  r = ParsePlan("{\"format\": \"other\"}", "x.json", f->graph, f->cluster);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("x.json: /format"));
  r = ParsePlan("{not json", "y.json", f->graph, f->cluster);
  EXPECT_FALSE(r.ok());
  // Syntax errors give the line and column (was "y.json: /: not valid JSON").
  EXPECT_THAT(r.status().message(), HasSubstr("y.json:1:3: invalid JSON: syntax error"));
  std::string broken = json;
  const size_t second_line = broken.find('\n') + 1;
  broken.insert(second_line, "]");
  r = ParsePlan(broken, "z.json", f->graph, f->cluster);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("z.json:2:1: invalid JSON"));
  EXPECT_EQ(ParsePlanHeader(broken, "z.json").status().message(), r.status().message());
  // A name that is not UTF-8 stops at the reader, with its line, column and byte.
  std::string bad_utf8 = json;
  const size_t at = bad_utf8.find("\"op1\"") + 3;
  bad_utf8[at] = '\xFF';
  r = ParsePlan(bad_utf8, "u.json", f->graph, f->cluster);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ExitCode(), 2);
  EXPECT_THAT(
      r.status().message(),
      AllOf(HasSubstr("u.json:"), HasSubstr(": invalid UTF-8 at byte " + std::to_string(at))));
}

TEST(ValidatorTest, ListsEveryViolation) {
  auto f = CostFixture::Make(testing::MakeChain(3), MakeBusCluster(), 1e-3);
  Plan p = SplitPlan(f->graph, f->cluster, [](size_t) { return 0; });
  // op2 also on gpu1 (placed twice), op1 dropped (unplaced), a load removed from its queue.
  p.devices.push_back(DeviceSchedule{DeviceId(1), {Subgraph{{Op(f->graph, "op2")}}}});
  p.devices[0].subgraphs.erase(p.devices[0].subgraphs.begin() + 1);
  p.queues[0].transfers.pop_back();
  std::vector<std::string> v = ValidatePlan(p, *f->cost);
  EXPECT_THAT(v, Contains(HasSubstr("op 'op2' is placed twice")));
  EXPECT_THAT(v, Contains(HasSubstr("op 'op1' is not placed")));
  EXPECT_THAT(v, Contains(HasSubstr("is on no copy queue")));
  EXPECT_THAT(v, Contains(HasSubstr("no op on gpu0 reads 'op1.weight'")));
  Status s = CheckPlan(p, *f->cost, "bad.json");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("bad.json: invalid plan ("));
}

TEST(ValidatorTest, MissingTransfersAndBrokenRoutes) {
  auto f = CostFixture::Make(testing::MakeChain(2), MakeBusCluster(), 1e-3);
  Plan p = SplitPlan(f->graph, f->cluster, [](size_t i) { return static_cast<int>(i); });
  // Drop the activation op0 -> gpu1 and break the route of the first load.
  for (size_t i = 0; i < p.transfers.size(); ++i)
    if (p.transfers[i].kind == TransferKind::kActivation) {
      for (auto& q : p.queues)
        q.transfers.erase(std::remove(q.transfers.begin(), q.transfers.end(), i),
                          q.transfers.end());
      p.transfers[i].kind = TransferKind::kWeightLoad;  // now a bogus "load" of an activation
    }
  p.transfers[0].route.pop_back();
  std::vector<std::string> v = ValidatePlan(p, *f->cost);
  EXPECT_THAT(v, Contains(HasSubstr("no activation transfer brings it")));
  EXPECT_THAT(v, Contains(HasSubstr("the tensor is not a weight")));
  EXPECT_THAT(v, Contains(HasSubstr("no route")));
}

TEST(ValidatorTest, DetectsDeadlockBetweenDeviceOrders) {
  // a -> b and c -> d crossing: gpu0 runs d then a; gpu1 runs b then c, with d needing c and b
  // needing a: each device waits for the other.
  graph::Graph g("cross");
  TensorId x = g.node(g.AddInput("x", graph::DType::kF32, {4})).outputs[0];
  auto op = [&](const std::string& n, TensorId in) {
    return g.node(g.AddOpWithOutputs("Relu", n, {in}, {{n + ".out", graph::DType::kF32, {4}}}))
        .outputs[0];
  };
  TensorId a = op("a", x), b = op("b", a), c = op("c", x), d = op("d", c);
  g.AddOutput(b);
  g.AddOutput(d);
  auto f = CostFixture::Make(std::move(g), MakeBusCluster(), 1e-3);
  Plan p;
  p.devices.push_back(
      {DeviceId(0), {Subgraph{{Op(f->graph, "d")}}, Subgraph{{Op(f->graph, "a")}}}});
  p.devices.push_back(
      {DeviceId(1), {Subgraph{{Op(f->graph, "b")}}, Subgraph{{Op(f->graph, "c")}}}});
  ASSERT_TRUE(CompleteTransfers(p, f->graph, f->cluster).ok());
  std::vector<std::string> v = ValidatePlan(p, *f->cost);
  EXPECT_THAT(v, Contains(HasSubstr("deadlock")));
}

TEST(ValidatorTest, MemoryOverCapacityNamesTheDevice) {
  // Each weight is 16 KiB; 4 of them need 64 KiB on a 40 KiB device.
  auto f = CostFixture::Make(testing::MakeChain(4), MakeBusCluster(40 * 1024), 1e-3);
  Plan p = SplitPlan(f->graph, f->cluster, [](size_t) { return 0; });
  std::vector<std::string> v = ValidatePlan(p, *f->cost);
  EXPECT_THAT(v, Contains(AllOf(HasSubstr("memory: gpu0 needs up to"), HasSubstr("but has"))));
  const auto bound = PlanMemoryBound(p, *f->cost);
  EXPECT_EQ(bound[0].weight_bytes, 4 * 16384);
  // Activations: the input x (8x64 floats) is read by op0 only, each output by the next op only,
  // so the peak holds two of them (2 KiB each) at once.
  EXPECT_EQ(bound[0].peak_activation_bytes, 2 * 2048);
  // Splitting over two devices halves the weights on each.
  Plan q = SplitPlan(f->graph, f->cluster, [](size_t i) { return i < 2 ? 0 : 1; });
  EXPECT_THAT(ValidatePlan(q, *f->cost), ::testing::IsEmpty());
}

TEST(WarmStartTest, ResidentWeightsDropTheirLoads) {
  auto f = CostFixture::Make(testing::MakeChain(4), MakeBusCluster(), 1e-3);
  Plan p = SplitPlan(f->graph, f->cluster, [](size_t) { return 0; });
  Plan half = p;
  ASSERT_TRUE(ApplyWarmStart(half, f->graph, f->cluster, 0.5).ok());
  EXPECT_EQ(half.transfers.size(), 2u);
  // The first two loads in queue order are the warm ones.
  EXPECT_TRUE(half.weights[0].resident);
  EXPECT_TRUE(half.weights[1].resident);
  EXPECT_FALSE(half.weights[2].resident);
  EXPECT_THAT(ValidatePlan(half, *f->cost), ::testing::IsEmpty());
  Plan all = p;
  ASSERT_TRUE(ApplyWarmStart(all, f->graph, f->cluster, 1.0).ok());
  EXPECT_TRUE(all.transfers.empty());
  EXPECT_THAT(ValidatePlan(all, *f->cost), ::testing::IsEmpty());
  EXPECT_FALSE(ApplyWarmStart(all, f->graph, f->cluster, 1.5).ok());
}

TEST(ReadCpuWeightsInPlaceTest, CpuLoadsBecomeDhaAndGpuLoadsStay) {
  // Chrion's server: a CPU and a GPU. Ops alternate between them, so both load weights.
  auto cluster = hw::LoadCluster("chrion-1080ti");
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  auto f = CostFixture::Make(testing::MakeChain(6), *cluster, 1e-3);
  DeviceId cpu, gpu;
  for (DeviceId d : f->cluster.DeviceIds())
    (f->cluster.device(d).kind == hw::DeviceKind::kCpu ? cpu : gpu) = d;
  ASSERT_TRUE(cpu.valid() && gpu.valid());
  Plan p = SplitPlan(f->graph, f->cluster,
                     [&](size_t i) { return static_cast<int>((i % 2 ? cpu : gpu).value()); });
  auto loads_into = [&](const Plan& plan, DeviceId d) {
    size_t n = 0;
    for (const Transfer& t : plan.transfers)
      n += t.kind == TransferKind::kWeightLoad && t.dst == f->cluster.PlaceOf(d);
    return n;
  };
  ASSERT_EQ(loads_into(p, cpu), 3u);
  ASSERT_EQ(loads_into(p, gpu), 3u);
  Plan q = p;
  ReadCpuWeightsInPlace(q, f->graph, f->cluster);
  EXPECT_EQ(loads_into(q, cpu), 0u);
  EXPECT_EQ(loads_into(q, gpu), 3u);
  for (const WeightPlacement& wp : q.weights)
    EXPECT_EQ(wp.mode, wp.device == cpu ? WeightMode::kDha : WeightMode::kLoad);
  // Activations between the devices are untouched; every queue index still points at a transfer.
  EXPECT_EQ(q.transfers.size(), p.transfers.size() - 3);
  for (const CopyQueue& queue : q.queues)
    for (size_t t : queue.transfers) EXPECT_LT(t, q.transfers.size());
  EXPECT_THAT(ValidatePlan(q, *f->cost), ::testing::IsEmpty());
}

TEST(FingerprintTest, ChangesWithTheGraphAndCluster) {
  EXPECT_EQ(GraphFingerprint(testing::MakeChain(3)), GraphFingerprint(testing::MakeChain(3)));
  EXPECT_NE(GraphFingerprint(testing::MakeChain(3)), GraphFingerprint(testing::MakeChain(4)));
  EXPECT_NE(GraphFingerprint(testing::MakeChain(3, 64)),
            GraphFingerprint(testing::MakeChain(3, 32)));
  EXPECT_EQ(ClusterFingerprint(MakeBusCluster()), ClusterFingerprint(MakeBusCluster()));
  EXPECT_NE(ClusterFingerprint(MakeBusCluster(1 << 20)), ClusterFingerprint(MakeBusCluster()));
}

}  // namespace
}  // namespace hx::plan
