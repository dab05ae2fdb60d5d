// Core-group contention: the profile measures it (ops alone vs on every core group at once), the
// profile file keeps it, and the simulator slows down the CPU ops that overlap by it.
#include <gtest/gtest.h>

#include "exec_test_util.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/cost/profile.h"
#include "hexplan/exec/profiler.h"
#include "hexplan/sim/simulator.h"

namespace hx::exec {
namespace {

using testing::CpuCluster;
using testing::MakePlan;
using testing::PlanSpec;

// Two independent ops "a" and "b" reading the graph input, each a graph output.
graph::Graph Fork(int64_t elements) {
  graph::Graph g("fork");
  TensorId x = g.node(g.AddInput("x", graph::DType::kF32, {elements})).outputs[0];
  for (const char* name : {"a", "b"}) {
    TensorId t =
        g.node(g.AddOpWithOutputs("Relu", name, {x},
                                  {{std::string(name) + ".out", graph::DType::kF32, {elements}}}))
            .outputs[0];
    g.AddOutput(t);
  }
  return g;
}

struct Finish {
  double a = 0.0, b = 0.0;
};

Finish SimulateFork(const cost::Profile& profile) {
  graph::Graph g = Fork(16);
  hw::Cluster cluster = CpuCluster(2);
  PlanSpec spec;
  spec.device_of = [](size_t k) { return static_cast<int>(k); };  // one op per device
  plan::Plan p = MakePlan(g, cluster, spec);
  cost::CostModel cost(g, cluster, {}, &profile);
  auto sim = sim::Simulate(p, cost);
  EXPECT_TRUE(sim.ok()) << sim.status().ToString();
  if (!sim.ok()) return {};
  Finish f;
  for (NodeId op : g.Ops()) (g.node(op).name == "a" ? f.a : f.b) = sim->ops[op.index()].finish;
  EXPECT_NE(sim->ops[g.Ops()[0].index()].device, sim->ops[g.Ops()[1].index()].device);
  return f;
}

TEST(CpuContentionSimTest, OverlappingOpsOnCoreGroupsShareTheSlowdown) {
  const std::string model = CpuCluster(2).device(DeviceId(0)).spec.model;
  cost::Profile profile;
  profile.SetNodeTime("a", model, 10e-3);
  profile.SetNodeTime("b", model, 4e-3);
  // No contention measured: each op takes its profiled time.
  Finish alone = SimulateFork(profile);
  EXPECT_NEAR(alone.a, 10e-3, 1e-9);
  EXPECT_NEAR(alone.b, 4e-3, 1e-9);
  // gamma 0.5: while both run, each runs at rate 1/1.5. b's 4 ms of work take 6 ms; a has done
  // 4 ms of its 10 by then and does the remaining 6 ms alone at full speed: 12 ms.
  profile.SetCpuContention(model, 0.5);
  Finish together = SimulateFork(profile);
  EXPECT_NEAR(together.b, 6e-3, 1e-9);
  EXPECT_NEAR(together.a, 12e-3, 1e-9);
}

TEST(CpuContentionSimTest, OpsOnOneCoreGroupDoNotSlowEachOtherDown) {
  graph::Graph g = Fork(16);
  hw::Cluster cluster = CpuCluster(2);
  cost::Profile profile;
  const std::string model = cluster.device(DeviceId(0)).spec.model;
  profile.SetNodeTime("a", model, 10e-3);
  profile.SetNodeTime("b", model, 4e-3);
  profile.SetCpuContention(model, 0.5);
  plan::Plan p = MakePlan(g, cluster, PlanSpec{});  // both on device 0, one after the other
  cost::CostModel cost(g, cluster, {}, &profile);
  auto sim = sim::Simulate(p, cost);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  EXPECT_NEAR(sim->makespan_s, 14e-3, 1e-9);
}

TEST(CpuContentionProfileTest, JsonKeepsTheTermAndRejectsABadOne) {
  cost::Profile p;
  p.SetNodeTime("a", "cpu-core", 1e-3);
  p.SetCpuContention("cpu-core", 0.25);
  auto back = cost::Profile::FromJson(p.ToJson(), "p.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(back->CpuContention("cpu:0", "cpu-core").has_value());
  EXPECT_DOUBLE_EQ(*back->CpuContention("cpu:0", "cpu-core"), 0.25);
  EXPECT_FALSE(back->CpuContention("cpu:0", "other").has_value());
  auto bad = cost::Profile::FromJson(
      R"({"format":"hexplan-profile","version":1,"cpu_contention":[{"device":"x","gamma":-1}]})",
      "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cpu_contention[0].gamma"), std::string::npos)
      << bad.status().message();
}

TEST(CpuContentionProfileTest, ProfileMeasuresOpsAloneAndOnAllGroupsAtOnce) {
  graph::Graph g = Fork(1 << 14);
  hw::Cluster cluster = CpuCluster(2);
  auto backend = CpuBackend::Create(cluster);
  ASSERT_TRUE(backend.ok());
  std::vector<HostTensor> weights(g.num_nodes());
  std::map<std::string, HostTensor> inputs;
  inputs.emplace("x", HostTensor(graph::DType::kF32, {1 << 14}));
  ProfileOptions options;
  options.repeats = 3;
  options.budget_s = 0.5;
  options.contention = true;
  ProfileCalibration cal;
  auto profile = ProfileGraph(g, cluster, weights, inputs, **backend, options, &cal);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  const std::string model = cluster.device(DeviceId(0)).spec.model;
  ASSERT_TRUE(profile->CpuContention("cpu:0", model).has_value());
  EXPECT_GE(*profile->CpuContention("cpu:0", model), 0.0);
  EXPECT_DOUBLE_EQ(*profile->CpuContention("cpu:0", model), cal.contention_gamma);
  EXPECT_GT(cal.kernel_sum_s, 0.0);
  EXPECT_GT(cal.concurrent_kernel_sum_s, 0.0);
  // gamma is the time-weighted slowdown of the concurrent sweep over two groups.
  EXPECT_NEAR(cal.contention_gamma,
              std::max(0.0, cal.concurrent_kernel_sum_s / cal.kernel_sum_s - 1.0), 1e-12);
  // The exchange and subgraph calibrations: in the profile as the calibration says (the receive
  // cost only when positive), and a hop at least the threads' own work on it.
  // (The send cost is a difference of two short timings: on a loaded machine it can come out at
  // 0, and then it is not written.)
  EXPECT_GE(cal.send_s, 0.0);
  EXPECT_EQ(profile->SendCost("cpu:0", model, "cpu:1", model).value_or(0.0), cal.send_s);
  EXPECT_GE(cal.recv_s, 0.0);
  EXPECT_EQ(profile->RecvCost("cpu:0", model, "cpu:1", model).value_or(0.0), cal.recv_s);
  EXPECT_EQ(profile->SubgraphCost("cpu:0", model).value_or(0.0), cal.subgraph_s);
  EXPECT_GE(cal.subgraph_s, 0.0);
  for (const auto& [node, pairs] : profile->transfer_times())
    for (const auto& [pair, seconds] : pairs) EXPECT_GE(seconds, cal.send_s + cal.recv_s) << node;
  // Without either contention measurement the profile has no term, and the simulator none either.
  options.contention = false;
  options.concurrent_runs = false;
  auto plain = ProfileGraph(g, cluster, weights, inputs, **backend, options);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_TRUE(plain->cpu_contention().empty());
  EXPECT_FALSE(plain->node_times().empty());
  options.budget_s = -1.0;
  EXPECT_FALSE(ProfileGraph(g, cluster, weights, inputs, **backend, options).ok());
}

TEST(CpuContentionProfileTest, DefaultTermIsTheSideBySideSlowdown) {
  // By default the term comes from the graph run twice side by side in one executor: one copy per
  // core group against both copies on one (per copy: half of that run).
  graph::Graph g = Fork(1 << 12);
  hw::Cluster cluster = CpuCluster(2);
  auto backend = CpuBackend::Create(cluster);
  ASSERT_TRUE(backend.ok());
  std::vector<HostTensor> weights(g.num_nodes());
  std::map<std::string, HostTensor> inputs;
  inputs.emplace("x", HostTensor(graph::DType::kF32, {1 << 12}));
  ProfileOptions options;
  options.budget_s = 0.2;
  ProfileCalibration cal;
  auto profile = ProfileGraph(g, cluster, weights, inputs, **backend, options, &cal);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  const std::string model = cluster.device(DeviceId(0)).spec.model;
  ASSERT_TRUE(profile->CpuContention("cpu:1", model).has_value());
  EXPECT_DOUBLE_EQ(*profile->CpuContention("cpu:1", model), cal.contention_gamma);
  ASSERT_GT(cal.alone_run_s, 0.0);
  EXPECT_GT(cal.together_run_s, 0.0);
  EXPECT_GE(cal.contention_gamma, 0.0);  // the median over pairs of runs of together / alone - 1
  EXPECT_DOUBLE_EQ(cal.concurrent_kernel_sum_s, 0.0);  // the op sweep did not run
  // One core group: nothing runs beside it, no term.
  hw::Cluster one = CpuCluster(1);
  auto single_backend = CpuBackend::Create(one);
  ASSERT_TRUE(single_backend.ok());
  auto alone = ProfileGraph(g, one, weights, inputs, **single_backend, options);
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  EXPECT_TRUE(alone->cpu_contention().empty());
}

TEST(CpuContentionProfileTest, SideBySideKeepsConstantPayloads) {
  // The side-by-side graph copies every op with its payload: a Constant holding its value as
  // bytes (as ONNX exports write them) must still have it in both copies.
  graph::Graph g("constant");
  TensorId x = g.node(g.AddInput("x", graph::DType::kF32, {4})).outputs[0];
  const NodeId c = g.AddOpWithOutputs("Constant", "c", {}, {{"c.out", graph::DType::kF32, {4}}});
  const std::vector<float> value = {1, 2, 3, 4};
  g.mutable_node(c).data = std::make_shared<const std::string>(
      reinterpret_cast<const char*>(value.data()), value.size() * sizeof(float));
  TensorId y = g.node(g.AddOpWithOutputs("Add", "add", {x, g.node(c).outputs[0]},
                                         {{"y", graph::DType::kF32, {4}}}))
                   .outputs[0];
  g.AddOutput(y);
  hw::Cluster cluster = CpuCluster(2);
  auto backend = CpuBackend::Create(cluster);
  ASSERT_TRUE(backend.ok());
  std::vector<HostTensor> weights(g.num_nodes());
  std::map<std::string, HostTensor> inputs;
  inputs.emplace("x", HostTensor(graph::DType::kF32, {4}));
  ProfileOptions options;
  options.budget_s = 0.1;
  ProfileCalibration cal;
  auto profile = ProfileGraph(g, cluster, weights, inputs, **backend, options, &cal);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_GT(cal.together_run_s, 0.0);
}

}  // namespace
}  // namespace hx::exec
