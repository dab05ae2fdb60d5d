#include "hexplan/cost/calibration.h"

#include <gtest/gtest.h>

#include <string>

#include "hexplan/cost/cost_model.h"
#include "hexplan/graph/graph.h"
#include "hexplan/hw/cluster.h"

namespace hx::cost {
namespace {

using graph::DType;

hw::Cluster MakeCalibrationCluster() {
  hw::Cluster c("calib");
  hw::DeviceSpec gpu;
  gpu.model = "TestGPU";
  gpu.peak_flops_fp32 = 15e12;
  gpu.peak_flops_fp16 = 120e12;
  gpu.memory_bandwidth_bytes_per_s = 900e9;
  gpu.launch_overhead_s = 4e-6;
  gpu.memory_bytes = int64_t{32} << 30;
  hw::DeviceSpec cpu;
  cpu.model = "TestCPU";
  cpu.peak_flops_fp32 = 2e12;
  cpu.memory_bandwidth_bytes_per_s = 150e9;
  cpu.memory_bytes = int64_t{256} << 30;
  PlaceId host = c.AddHostMemory("n0");
  for (int i = 0; i < 2; ++i) {
    DeviceId d = c.AddDevice("gpu" + std::to_string(i), hw::DeviceKind::kGpu, "n0", gpu);
    c.AddLink("pcie" + std::to_string(i), hw::LinkKind::kPcie, host, c.PlaceOf(d), 16e9, 1e-6);
  }
  c.mutable_device(DeviceId(1)).clock_scale = 0.5;
  DeviceId d = c.AddDevice("cpu0", hw::DeviceKind::kCpu, "n0", cpu);
  c.AddLink("membus", hw::LinkKind::kMemoryBus, host, c.PlaceOf(d), 150e9, 0);
  EXPECT_TRUE(c.Finalize().ok());
  return c;
}

// MatMuls from GEMV (memory bound) to large GEMMs (compute bound), in fp32 and fp16, and Adds.
graph::Graph MakeMixedGraph() {
  graph::Graph g("mixed");
  int n = 0;
  for (DType dtype : {DType::kF32, DType::kF16}) {
    for (int64_t rows : {1, 4, 32, 256, 1024}) {
      for (int64_t width : {256, 1024, 2048}) {
        std::string id = std::to_string(n++);
        NodeId x = g.AddInput("x" + id, dtype, {rows, width});
        NodeId w = g.AddWeight("w" + id, dtype, {width, width});
        NodeId mm =
            g.AddOpWithOutputs("MatMul", "mm" + id, {g.node(x).outputs[0], g.node(w).outputs[0]},
                               {{"y" + id, dtype, {rows, width}}});
        NodeId add =
            g.AddOpWithOutputs("Add", "add" + id, {g.node(mm).outputs[0], g.node(x).outputs[0]},
                               {{"z" + id, dtype, {rows, width}}});
        g.AddOutput(g.node(add).outputs[0]);
      }
    }
  }
  EXPECT_TRUE(g.Validate().ok());
  return g;
}

TEST(CalibrationTest, RecoversKnownEfficienciesFromSyntheticProfile) {
  hw::Cluster cluster = MakeCalibrationCluster();
  graph::Graph g = MakeMixedGraph();
  CostModelOptions truth;
  truth.model_efficiency["TestGPU"] = {0.42, 0.73};
  truth.model_efficiency["TestCPU"] = {0.31, 0.55};
  CostModel oracle(g, cluster, truth);
  // gpu0 profiled by model (nominal clock), gpu1 (half clock) by name, the CPU by model.
  Profile profile;
  for (NodeId op : g.Ops()) {
    const std::string& name = g.node(op).name;
    profile.SetNodeTime(name, "TestGPU", oracle.RooflineTime(op, DeviceId(0)));
    profile.SetNodeTime(name, "gpu1", oracle.RooflineTime(op, DeviceId(1)));
    profile.SetNodeTime(name, "TestCPU", oracle.RooflineTime(op, DeviceId(2)));
  }
  CostModelOptions options;  // defaults 0.6/0.8 and 0.5/0.7
  auto result = Calibrate(g, cluster, profile, &options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->size(), 2u);
  for (const ModelCalibration& m : *result) {
    const Efficiency& want = truth.model_efficiency.at(m.model);
    EXPECT_NEAR(m.efficiency.compute, want.compute, 1e-9) << m.model;
    EXPECT_NEAR(m.efficiency.memory, want.memory, 1e-9) << m.model;
    EXPECT_GT(m.compute_bound_ops, 0) << m.model;
    EXPECT_GT(m.memory_bound_ops, 0) << m.model;
    EXPECT_LT(m.rms_relative_error, 1e-9) << m.model;
  }
  EXPECT_EQ(result->at(1).model, "TestGPU");
  EXPECT_EQ(result->at(1).num_ops, 2 * static_cast<int>(g.Ops().size()));
  EXPECT_NEAR(options.model_efficiency.at("TestGPU").compute, 0.42, 1e-9);
  // The calibrated options reproduce the profile through the roofline.
  CostModel calibrated(g, cluster, options);
  for (NodeId op : g.Ops()) {
    EXPECT_NEAR(calibrated.OpTime(op, DeviceId(1)), oracle.OpTime(op, DeviceId(1)),
                1e-9 * oracle.OpTime(op, DeviceId(1)));
  }
}

TEST(CalibrationTest, NoisyProfileGivesCloseFactors) {
  hw::Cluster cluster = MakeCalibrationCluster();
  graph::Graph g = MakeMixedGraph();
  CostModelOptions truth;
  truth.model_efficiency["TestGPU"] = {0.5, 0.65};
  CostModel oracle(g, cluster, truth);
  Profile profile;
  int i = 0;
  for (NodeId op : g.Ops()) {
    double noise = (i++ % 2 == 0) ? 1.03 : 0.97;  // +-3%, alternating
    // Noise on the kernel time (the launch overhead is a constant of the device).
    double kernel = oracle.RooflineTime(op, DeviceId(0)) - 4e-6;
    profile.SetNodeTime(g.node(op).name, "gpu0", kernel * noise + 4e-6);
  }
  CostModelOptions options;
  auto result = Calibrate(g, cluster, profile, &options);
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->size(), 1u);
  EXPECT_NEAR(result->at(0).efficiency.compute, 0.5, 0.03);
  EXPECT_NEAR(result->at(0).efficiency.memory, 0.65, 0.04);
  EXPECT_GT(result->at(0).rms_relative_error, 0.0);
  EXPECT_LT(result->at(0).rms_relative_error, 0.05);
  // Nothing was profiled on the CPU: its defaults stay.
  EXPECT_EQ(options.model_efficiency.count("TestCPU"), 0u);
}

TEST(CalibrationTest, KindEntriesAreIgnoredUnlessAsked) {
  hw::Cluster cluster = MakeCalibrationCluster();
  graph::Graph g = MakeMixedGraph();
  Profile profile;
  for (NodeId op : g.Ops()) profile.SetNodeTime(g.node(op).name, "gpu", 1e-3);
  CostModelOptions options;
  auto none = Calibrate(g, cluster, profile, &options);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  CalibrationOptions copt;
  copt.use_kind_entries = true;
  auto some = Calibrate(g, cluster, profile, &options, copt);
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(some->size(), 1u);
  copt.max_iterations = 0;
  EXPECT_FALSE(Calibrate(g, cluster, profile, &options, copt).ok());
}

}  // namespace
}  // namespace hx::cost
