#include "hexplan/cost/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hexplan/cost/profile.h"
#include "hexplan/graph/graph.h"
#include "hexplan/hw/cluster.h"
#include "hexplan/hw/presets.h"

namespace hx::cost {
namespace {

using graph::DType;
using graph::Graph;

// A hand-built server: host memory -> PCIe bus (16 GB/s, 1 us) shared by gpu0 and gpu1 (each on
// its own 16 GB/s, 1 us port); gpu2 alone on a 32 GB/s, 2 us link; NVLink gpu0-gpu2 (50 GB/s,
// 0.5 us); a CPU on the memory bus (100 GB/s).
constexpr double kGpuFp32 = 10e12;
constexpr double kGpuFp16 = 80e12;
constexpr double kGpuBw = 900e9;
constexpr double kGpuLaunch = 5e-6;
constexpr double kCpuFp32 = 1e12;
constexpr double kCpuBw = 100e9;

hw::DeviceSpec GpuSpec() {
  hw::DeviceSpec s;
  s.model = "TestGPU";
  s.peak_flops_fp32 = kGpuFp32;
  s.peak_flops_fp16 = kGpuFp16;
  s.peak_flops_bf16 = 0.0;  // falls back to fp32
  s.memory_bandwidth_bytes_per_s = kGpuBw;
  s.memory_bytes = int64_t{16} << 30;
  s.launch_overhead_s = kGpuLaunch;
  return s;
}

hw::DeviceSpec CpuSpec() {
  hw::DeviceSpec s;
  s.model = "TestCPU";
  s.peak_flops_fp32 = kCpuFp32;
  s.memory_bandwidth_bytes_per_s = kCpuBw;
  s.memory_bytes = int64_t{64} << 30;
  s.cores = 16;
  return s;
}

struct TestCluster {
  hw::Cluster cluster{"test"};
  DeviceId gpu0, gpu1, gpu2, cpu;
};

TestCluster MakeCluster(double gpu1_clock = 1.0, bool p2p_01 = true) {
  TestCluster t;
  hw::Cluster& c = t.cluster;
  PlaceId host = c.AddHostMemory("n0");
  PlaceId bus = c.AddSwitch("bus0", "n0");
  c.AddLink("pcie-bus0", hw::LinkKind::kPcie, host, bus, 16e9, 1e-6);
  t.gpu0 = c.AddDevice("gpu0", hw::DeviceKind::kGpu, "n0", GpuSpec());
  t.gpu1 = c.AddDevice("gpu1", hw::DeviceKind::kGpu, "n0", GpuSpec());
  t.gpu2 = c.AddDevice("gpu2", hw::DeviceKind::kGpu, "n0", GpuSpec());
  t.cpu = c.AddDevice("cpu0", hw::DeviceKind::kCpu, "n0", CpuSpec());
  c.AddLink("pcie:gpu0", hw::LinkKind::kPcie, bus, c.PlaceOf(t.gpu0), 16e9, 1e-6);
  c.AddLink("pcie:gpu1", hw::LinkKind::kPcie, bus, c.PlaceOf(t.gpu1), 16e9, 1e-6);
  c.AddLink("pcie:gpu2", hw::LinkKind::kPcie, host, c.PlaceOf(t.gpu2), 32e9, 2e-6);
  c.AddLink("nvlink:gpu0-gpu2", hw::LinkKind::kNvlink, c.PlaceOf(t.gpu0), c.PlaceOf(t.gpu2), 50e9,
            0.5e-6);
  c.AddLink("membus:cpu0", hw::LinkKind::kMemoryBus, host, c.PlaceOf(t.cpu), kCpuBw, 0.0);
  c.mutable_device(t.gpu1).clock_scale = gpu1_clock;
  if (!p2p_01) c.SetPeerToPeer(t.gpu0, t.gpu1, false);
  Status s = c.Finalize();
  EXPECT_TRUE(s.ok()) << s.ToString();
  return t;
}

// x[64,1024] @ w[1024,1024] -> y, then y + y -> z.
Graph MakeGraph(DType dtype) {
  Graph g("mm");
  NodeId x = g.AddInput("x", dtype, {64, 1024});
  NodeId w = g.AddWeight("w", dtype, {1024, 1024});
  NodeId mm = g.AddOpWithOutputs("MatMul", "mm", {g.node(x).outputs[0], g.node(w).outputs[0]},
                                 {{"y", dtype, {64, 1024}}});
  NodeId add = g.AddOpWithOutputs("Add", "add", {g.node(mm).outputs[0], g.node(mm).outputs[0]},
                                  {{"z", dtype, {64, 1024}}});
  g.AddOutput(g.node(add).outputs[0]);
  EXPECT_TRUE(g.Validate().ok());
  return g;
}

constexpr double kMmFlops = 2.0 * 64 * 1024 * 1024;
constexpr double kAct = 64.0 * 1024 * 4;       // fp32 activation bytes
constexpr double kWeight = 1024.0 * 1024 * 4;  // fp32 weight bytes

TEST(CostModelTest, RooflineMatchesHandComputedNumbers) {
  TestCluster t = MakeCluster();
  Graph g = MakeGraph(DType::kF32);
  CostModel model(g, t.cluster);
  NodeId mm = *g.FindNode("mm");
  NodeId add = *g.FindNode("add");
  ASSERT_DOUBLE_EQ(model.op_cost(mm).flops, kMmFlops);
  ASSERT_EQ(model.op_cost(mm).bytes_moved(), static_cast<int64_t>(2 * kAct + kWeight));

  // GPU, MatMul: compute 1.342e8 / (10e12 * 0.6) = 22.37 us beats memory 4.72e6 / 720e9 = 6.55 us.
  double compute = kMmFlops / (kGpuFp32 * 0.6);
  double memory = (2 * kAct + kWeight) / (kGpuBw * 0.8);
  ASSERT_GT(compute, memory);
  EXPECT_NEAR(model.OpTime(mm, t.gpu0), compute + kGpuLaunch, 1e-15);
  // CPU: compute 1.342e8 / 0.5e12 = 268 us; memory 4.72e6 / 70e9 = 67 us; no launch overhead.
  EXPECT_NEAR(model.OpTime(mm, t.cpu), kMmFlops / (kCpuFp32 * 0.5), 1e-15);

  // Add is memory bound: reads y once per distinct tensor? The rule counts its inputs as read.
  const graph::OpCost& ac = model.op_cost(add);
  double add_memory = static_cast<double>(ac.bytes_moved()) / (kGpuBw * 0.8);
  double add_compute = ac.flops / (kGpuFp32 * 0.6);
  ASSERT_GT(add_memory, add_compute);
  EXPECT_NEAR(model.OpTime(add, t.gpu0), add_memory + kGpuLaunch, 1e-15);

  // Non-op nodes cost nothing; the fastest device is a GPU.
  EXPECT_EQ(model.OpTime(*g.FindNode("w"), t.gpu0), 0.0);
  EXPECT_NEAR(model.FastestOpTime(mm), compute + kGpuLaunch, 1e-15);
}

TEST(CostModelTest, EfficiencyOptionsAndPerModelOverrides) {
  TestCluster t = MakeCluster();
  Graph g = MakeGraph(DType::kF32);
  NodeId mm = *g.FindNode("mm");
  CostModelOptions options;
  options.gpu_compute_efficiency = 0.25;
  CostModel a(g, t.cluster, options);
  EXPECT_NEAR(a.OpTime(mm, t.gpu0), kMmFlops / (kGpuFp32 * 0.25) + kGpuLaunch, 1e-15);
  options.model_efficiency["TestGPU"] = Efficiency{0.9, 0.9};
  CostModel b(g, t.cluster, options);
  EXPECT_NEAR(b.OpTime(mm, t.gpu0), kMmFlops / (kGpuFp32 * 0.9) + kGpuLaunch, 1e-15);
  // The CPU is another model: unaffected.
  EXPECT_NEAR(b.OpTime(mm, t.cpu), kMmFlops / (kCpuFp32 * 0.5), 1e-15);

  options.gpu_memory_efficiency = 0.0;
  EXPECT_FALSE(options.Validate().ok());
  options.gpu_memory_efficiency = 0.8;
  options.model_efficiency["TestGPU"].memory = -1;
  Status s = options.Validate();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("TestGPU"), std::string::npos);
}

TEST(CostModelTest, PeakFlopsFollowsTheOpDtype) {
  TestCluster t = MakeCluster();
  for (auto [dtype, peak] : {std::pair{DType::kF32, kGpuFp32}, std::pair{DType::kF16, kGpuFp16},
                             std::pair{DType::kBF16, kGpuFp32}}) {
    Graph g = MakeGraph(dtype);
    CostModel model(g, t.cluster);
    NodeId mm = *g.FindNode("mm");
    EXPECT_EQ(model.PeakFlopsFor(mm, t.gpu0), peak) << graph::DTypeName(dtype);
    double bytes = static_cast<double>(model.op_cost(mm).bytes_moved());
    double expected = std::max(kMmFlops / (peak * 0.6), bytes / (kGpuBw * 0.8)) + kGpuLaunch;
    EXPECT_NEAR(model.OpTime(mm, t.gpu0), expected, 1e-15) << graph::DTypeName(dtype);
  }
  // fp16 tensor cores make the MatMul 8x faster in compute: now memory bound.
  Graph g = MakeGraph(DType::kF16);
  CostModel model(g, t.cluster);
  NodeId mm = *g.FindNode("mm");
  EXPECT_NEAR(model.OpTime(mm, t.gpu0), (kAct + kWeight / 2) / (kGpuBw * 0.8) + kGpuLaunch, 1e-15);
}

TEST(CostModelTest, ClockScaleSlowsTheRooflineButNotTheLaunch) {
  TestCluster t = MakeCluster(/*gpu1_clock=*/135.0 / 1500.0);
  Graph g = MakeGraph(DType::kF32);
  CostModel model(g, t.cluster);
  NodeId mm = *g.FindNode("mm");
  double fast = model.OpTime(mm, t.gpu0) - kGpuLaunch;
  double slow = model.OpTime(mm, t.gpu1) - kGpuLaunch;
  EXPECT_NEAR(slow, fast * 1500.0 / 135.0, 1e-12);
}

TEST(CostModelTest, ProfileTakesPrecedenceByNameThenModelThenSignature) {
  TestCluster t = MakeCluster(/*gpu1_clock=*/0.5);
  Graph g = MakeGraph(DType::kF32);
  NodeId mm = *g.FindNode("mm");
  NodeId add = *g.FindNode("add");
  Profile profile;
  profile.SetSignatureTime(OpSignature(g, mm), "TestGPU", 9e-3);
  profile.SetNodeTime("mm", "TestGPU", 3e-3);
  profile.SetNodeTime("mm", "gpu2", 1e-3);
  profile.SetSignatureTime(OpSignature(g, add), "cpu", 7e-3);
  CostModel model(g, t.cluster, {}, &profile);
  EXPECT_DOUBLE_EQ(model.OpTime(mm, t.gpu2), 1e-3);  // by device name
  EXPECT_DOUBLE_EQ(model.OpTime(mm, t.gpu0), 3e-3);  // by model, over the signature
  // By model at the nominal clock: gpu1 runs at half clock.
  EXPECT_DOUBLE_EQ(model.OpTime(mm, t.gpu1), 6e-3);
  // Not profiled on the CPU by node or model: the roofline.
  EXPECT_DOUBLE_EQ(model.OpTime(mm, t.cpu), model.RooflineTime(mm, t.cpu));
  // By signature and device kind.
  EXPECT_DOUBLE_EQ(model.OpTime(add, t.cpu), 7e-3);
  EXPECT_DOUBLE_EQ(model.OpTime(add, t.gpu0), model.RooflineTime(add, t.gpu0));
  EXPECT_EQ(OpSignature(g, mm), "MatMul|fp32|[64,1024]x[1024,1024]");

  // Unsupported marks.
  profile.SetNodeUnsupported("add", "gpu2");
  EXPECT_FALSE(model.Supports(add, t.gpu2));
  EXPECT_TRUE(std::isinf(model.OpTime(add, t.gpu2)));
  EXPECT_TRUE(model.Supports(add, t.gpu0));
}

TEST(CostModelTest, UnknownPeakMakesAnUnprofiledOpUnsupported) {
  hw::Cluster c("anon");
  hw::DeviceSpec spec;
  spec.model = "anon";
  spec.peak_flops_fp32 = 1.0;  // memory bandwidth unknown (0)
  DeviceId d = c.AddDevice("dev0", hw::DeviceKind::kGpu, "n", spec);
  c.AddLink("l", hw::LinkKind::kPcie, c.HostOf(d), c.PlaceOf(d), 1e9, 0);
  ASSERT_TRUE(c.Finalize().ok());
  Graph g = MakeGraph(DType::kF32);
  CostModel model(g, c);
  EXPECT_FALSE(model.Supports(*g.FindNode("mm"), d));
  Profile profile;
  profile.SetNodeTime("mm", "*", 2e-3);
  CostModel profiled(g, c, {}, &profile);
  EXPECT_TRUE(profiled.Supports(*g.FindNode("mm"), d));
  EXPECT_DOUBLE_EQ(profiled.OpTime(*g.FindNode("mm"), d), 2e-3);
}

TEST(CostModelTest, DirectHostAccessStreamsWeightsOverTheHostRoute) {
  TestCluster t = MakeCluster();
  Graph g = MakeGraph(DType::kF32);
  CostModel model(g, t.cluster);
  NodeId mm = *g.FindNode("mm");
  NodeId add = *g.FindNode("add");
  EXPECT_EQ(model.OpWeightBytes(mm), static_cast<int64_t>(kWeight));
  // gpu0's host route: bus link then its port, 16 GB/s bottleneck, 2 us latency.
  double stream = 2e-6 + kWeight / 16e9;
  double compute = kMmFlops / (kGpuFp32 * 0.6);
  ASSERT_GT(stream, compute);
  EXPECT_NEAR(model.OpTimeDha(mm, t.gpu0), stream + kGpuLaunch, 1e-15);
  EXPECT_GT(model.OpTimeDha(mm, t.gpu0), model.OpTime(mm, t.gpu0));
  // gpu2 has its own faster link: 32 GB/s, 2 us.
  EXPECT_NEAR(model.OpTimeDha(mm, t.gpu2), 2e-6 + kWeight / 32e9 + kGpuLaunch, 1e-15);
  // No weights: DHA changes nothing.
  EXPECT_DOUBLE_EQ(model.OpTimeDha(add, t.gpu0), model.OpTime(add, t.gpu0));
  // A profiled time is a floor, and the weights still cross the bus.
  Profile profile;
  profile.SetNodeTime("mm", "gpu0", 1e-5);
  profile.SetNodeTime("mm", "gpu2", 5e-3);
  CostModel profiled(g, t.cluster, {}, &profile);
  EXPECT_NEAR(profiled.OpTimeDha(mm, t.gpu0), stream + kGpuLaunch, 1e-15);
  EXPECT_DOUBLE_EQ(profiled.OpTimeDha(mm, t.gpu2), 5e-3);
}

// On a CPU, "host memory" is the memory the profiled kernel already read its weights from: the
// measured time is the DHA time, with no memory-bus floor on top (which would charge an LSTM's
// cache-resident weights at DRAM speed on every step). Unprofiled, the roofline still streams them.
TEST(CostModelTest, MeasuredCpuOpsReadTheirWeightsInPlaceAtTheirMeasuredTime) {
  TestCluster t = MakeCluster();
  Graph g = MakeGraph(DType::kF32);
  NodeId mm = *g.FindNode("mm");
  const double bus = kWeight / kCpuBw;  // the membus floor the weights would otherwise pay
  Profile profile;
  profile.SetNodeTime("mm", "cpu0", bus / 10.0);
  profile.SetNodeTime("mm", "gpu0", 1e-5);
  CostModel profiled(g, t.cluster, {}, &profile);
  EXPECT_TRUE(profiled.DhaIsMeasured(mm, t.cpu));
  EXPECT_DOUBLE_EQ(profiled.OpTimeDha(mm, t.cpu), bus / 10.0);
  EXPECT_DOUBLE_EQ(profiled.OpTimeDha(mm, t.cpu), profiled.OpTime(mm, t.cpu));
  // A GPU's DHA still crosses PCIe.
  EXPECT_FALSE(profiled.DhaIsMeasured(mm, t.gpu0));
  EXPECT_GT(profiled.OpTimeDha(mm, t.gpu0), 1e-5);
  // Without a measurement, a CPU op streams its weights (roofline).
  CostModel roofline(g, t.cluster);
  EXPECT_FALSE(roofline.DhaIsMeasured(mm, t.cpu));
  EXPECT_GE(roofline.OpTimeDha(mm, t.cpu), bus);
}

TEST(CostModelTest, TransfersUseRouteLatencyAndBottleneck) {
  TestCluster t = MakeCluster();
  Graph g = MakeGraph(DType::kF32);
  CostModel model(g, t.cluster);
  const hw::Cluster& c = t.cluster;
  int64_t bytes = 1 << 20;
  EXPECT_EQ(model.TransferTime(bytes, c.PlaceOf(t.gpu0), c.PlaceOf(t.gpu0)), 0.0);
  // NVLink gpu0 -> gpu2: 0.5 us + 1 MiB / 50 GB/s.
  EXPECT_NEAR(model.TransferTime(bytes, c.PlaceOf(t.gpu0), c.PlaceOf(t.gpu2)),
              0.5e-6 + bytes / 50e9, 1e-15);
  // Host -> gpu0 over the shared bus: 2 us + bytes / 16 GB/s.
  EXPECT_NEAR(model.TransferTime(bytes, c.HostOf(t.gpu0), c.PlaceOf(t.gpu0)), 2e-6 + bytes / 16e9,
              1e-15);
  // A weight load is the host route.
  EXPECT_NEAR(model.WeightLoadTime(*g.FindNode("w"), t.gpu2), 2e-6 + kWeight / 32e9, 1e-15);
  EXPECT_EQ(model.WeightLoadTime(*g.FindNode("mm"), t.gpu2), 0.0);
  // Tensor transfer: y from gpu0 to gpu2.
  TensorId y = *g.FindTensor("y");
  EXPECT_NEAR(model.TensorTransferTime(y, t.gpu0, t.gpu2), 0.5e-6 + kAct / 50e9, 1e-15);
  EXPECT_EQ(model.TensorTransferTime(y, t.gpu0, t.gpu0), 0.0);
  // Profiled per-edge times win, by tensor name or producer name.
  Profile profile;
  profile.SetTransferTime("y", "gpu0", "gpu2", 0.125);
  profile.SetTransferTime("add", "TestGPU", "TestGPU", 0.25);
  CostModel profiled(g, t.cluster, {}, &profile);
  EXPECT_DOUBLE_EQ(profiled.TensorTransferTime(y, t.gpu0, t.gpu2), 0.125);
  EXPECT_NEAR(profiled.TensorTransferTime(y, t.gpu2, t.gpu0), 0.5e-6 + kAct / 50e9, 1e-15);
  EXPECT_DOUBLE_EQ(profiled.TensorTransferTime(*g.FindTensor("z"), t.gpu1, t.gpu2), 0.25);
}

TEST(CostModelTest, GpuToGpuWithoutPeerToPeerGoesThroughHost) {
  TestCluster t = MakeCluster(1.0, /*p2p_01=*/false);
  Graph g = MakeGraph(DType::kF32);
  CostModel model(g, t.cluster);
  const hw::Route& route = t.cluster.DeviceRoute(t.gpu0, t.gpu1);
  EXPECT_TRUE(route.via_host);
  int64_t bytes = 1 << 20;
  double expected = route.TransferSeconds(bytes);
  EXPECT_DOUBLE_EQ(model.TransferTime(bytes, t.cluster.PlaceOf(t.gpu0), t.cluster.PlaceOf(t.gpu1)),
                   expected);
  // Through host memory means at least the four PCIe hops' latency.
  EXPECT_GE(expected, 4e-6 + bytes / 16e9 - 1e-15);
}

TEST(CostModelTest, SortingHatStaticAdjustments) {
  TestCluster t = MakeCluster();
  Graph g = MakeGraph(DType::kF32);
  NodeId mm = *g.FindNode("mm");
  CostModel plain(g, t.cluster);
  CostModelOptions options;
  options.sortinghat_static_adjustments = true;
  CostModel adjusted(g, t.cluster, options);
  // gpu0 and gpu1 share the bus; gpu2 has its own link.
  EXPECT_EQ(adjusted.HostBusSharing(t.gpu0), 2);
  EXPECT_EQ(adjusted.HostBusSharing(t.gpu1), 2);
  EXPECT_EQ(adjusted.HostBusSharing(t.gpu2), 1);
  // DHA x 2 x sharing GPUs.
  EXPECT_NEAR(adjusted.OpTimeDha(mm, t.gpu0), plain.OpTimeDha(mm, t.gpu0) * 4, 1e-15);
  EXPECT_NEAR(adjusted.OpTimeDha(mm, t.gpu2), plain.OpTimeDha(mm, t.gpu2) * 2, 1e-15);
  // Plain op times are not adjusted.
  EXPECT_DOUBLE_EQ(adjusted.OpTime(mm, t.gpu0), plain.OpTime(mm, t.gpu0));
  const hw::Cluster& c = t.cluster;
  int64_t bytes = 1 << 20;
  // One direct link (NVLink gpu0-gpu2): x1.5.
  EXPECT_NEAR(adjusted.TransferTime(bytes, c.PlaceOf(t.gpu0), c.PlaceOf(t.gpu2)),
              1.5 * plain.TransferTime(bytes, c.PlaceOf(t.gpu0), c.PlaceOf(t.gpu2)), 1e-15);
  // No direct link (gpu0-gpu1 over the bus switch): x total GPUs (3).
  EXPECT_NEAR(adjusted.TransferTime(bytes, c.PlaceOf(t.gpu0), c.PlaceOf(t.gpu1)),
              3 * plain.TransferTime(bytes, c.PlaceOf(t.gpu0), c.PlaceOf(t.gpu1)), 1e-15);
  // Host to device: unadjusted.
  EXPECT_DOUBLE_EQ(adjusted.TransferTime(bytes, c.HostOf(t.gpu0), c.PlaceOf(t.gpu0)),
                   plain.TransferTime(bytes, c.HostOf(t.gpu0), c.PlaceOf(t.gpu0)));
}

TEST(CostModelTest, SortingHatPresetsBusSharingAndDirectLinks) {
  Graph g = MakeGraph(DType::kF32);
  NodeId mm = *g.FindNode("mm");
  CostModelOptions options;
  options.sortinghat_static_adjustments = true;
  // V100 station: two PCIe buses, each shared by two GPUs; NVLink between every pair.
  auto v100 = hw::BuildPreset("sortinghat-v100");
  ASSERT_TRUE(v100.ok()) << v100.status().ToString();
  CostModel plain(g, *v100);
  CostModel adjusted(g, *v100, options);
  for (DeviceId d : v100->DevicesOfKind(hw::DeviceKind::kGpu)) {
    EXPECT_EQ(adjusted.HostBusSharing(d), 2) << v100->device(d).name;
    EXPECT_NEAR(adjusted.OpTimeDha(mm, d), 4 * plain.OpTimeDha(mm, d), 1e-12);
  }
  PlaceId g0 = v100->PlaceOf(*v100->FindDevice("gpu0"));
  PlaceId g3 = v100->PlaceOf(*v100->FindDevice("gpu3"));
  EXPECT_NEAR(adjusted.TransferTime(1 << 20, g0, g3), 1.5 * plain.TransferTime(1 << 20, g0, g3),
              1e-12);
  // A6000: one bus per GPU; gpu0 has no NVLink, so gpu0 -> gpu1 is not direct: x3.
  auto a6000 = hw::BuildPreset("sortinghat-a6000");
  ASSERT_TRUE(a6000.ok()) << a6000.status().ToString();
  CostModel a_plain(g, *a6000);
  CostModel a_adj(g, *a6000, options);
  for (DeviceId d : a6000->DevicesOfKind(hw::DeviceKind::kGpu)) {
    EXPECT_EQ(a_adj.HostBusSharing(d), 1) << a6000->device(d).name;
  }
  PlaceId a0 = a6000->PlaceOf(*a6000->FindDevice("gpu0"));
  PlaceId a1 = a6000->PlaceOf(*a6000->FindDevice("gpu1"));
  PlaceId a2 = a6000->PlaceOf(*a6000->FindDevice("gpu2"));
  EXPECT_NEAR(a_adj.TransferTime(1 << 20, a0, a1), 3 * a_plain.TransferTime(1 << 20, a0, a1),
              1e-12);
  EXPECT_NEAR(a_adj.TransferTime(1 << 20, a1, a2), 1.5 * a_plain.TransferTime(1 << 20, a1, a2),
              1e-12);
  // The hetero V100: GPU2 and GPU3 at 135 of 1500 MHz.
  auto hetero = hw::BuildPreset("sortinghat-v100-hetero");
  ASSERT_TRUE(hetero.ok());
  CostModel h(g, *hetero);
  DeviceId fast = *hetero->FindDevice("gpu0");
  DeviceId slow = *hetero->FindDevice("gpu1");
  // What the clock does not stretch: the launch, and a calibrated class's fixed cost.
  const DeviceCalibration* cal = h.CalibrationFor(fast);
  double launch = h.LaunchCost(fast) + (cal ? cal->Fit(h.op_class(mm)).fixed_s : 0.0);
  EXPECT_NEAR(h.OpTime(mm, slow) - launch, (h.OpTime(mm, fast) - launch) * 1500.0 / 135.0, 1e-12);
}

TEST(CostModelTest, MemoryFootprintCountsWeightsOutputsAndIm2col) {
  TestCluster t = MakeCluster();
  Graph g = MakeGraph(DType::kF32);
  CostModel model(g, t.cluster);
  NodeId mm = *g.FindNode("mm");
  EXPECT_EQ(model.OpWeightBytes(mm), static_cast<int64_t>(kWeight));
  EXPECT_EQ(model.OpOutputBytes(mm), static_cast<int64_t>(kAct));
  EXPECT_EQ(model.OpWorkspaceBytes(mm), 0);
  EXPECT_EQ(model.OpMemoryBytes(mm), static_cast<int64_t>(kWeight + kAct));
  EXPECT_EQ(model.OpMemoryBytes(mm, t.gpu0, /*dha=*/true), static_cast<int64_t>(kAct));

  // Conv 3x3, stride 1, pad 1 on [2,16,32,32] -> [2,32,32,32]: im2col holds
  // 2 * 16 * 9 * 32 * 32 floats.
  Graph cg("conv");
  NodeId x = cg.AddInput("x", DType::kF32, {2, 16, 32, 32});
  NodeId w = cg.AddWeight("w", DType::kF32, {32, 16, 3, 3});
  graph::Attributes attrs;
  attrs.Set("kernel_shape", std::vector<int64_t>{3, 3});
  attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  attrs.Set("strides", std::vector<int64_t>{1, 1});
  NodeId conv = cg.AddOpWithOutputs("Conv", "conv", {cg.node(x).outputs[0], cg.node(w).outputs[0]},
                                    {{"y", DType::kF32, {2, 32, 32, 32}}}, attrs);
  // 1x1 conv, stride 1, no pads: no im2col.
  NodeId w1 = cg.AddWeight("w1", DType::kF32, {8, 32, 1, 1});
  NodeId conv1 =
      cg.AddOpWithOutputs("Conv", "conv1", {cg.node(conv).outputs[0], cg.node(w1).outputs[0]},
                          {{"y1", DType::kF32, {2, 8, 32, 32}}});
  cg.AddOutput(cg.node(conv1).outputs[0]);
  ASSERT_TRUE(cg.Validate().ok());
  CostModel cm(cg, t.cluster);
  int64_t im2col = int64_t{2} * 16 * 9 * 32 * 32 * 4;
  EXPECT_EQ(cm.OpWorkspaceBytes(conv), im2col);
  EXPECT_EQ(cm.OpMemoryBytes(conv), 32 * 16 * 9 * 4 + 2 * 32 * 32 * 32 * 4 + im2col);
  EXPECT_EQ(cm.OpWorkspaceBytes(conv1), 0);
  // A profiled memory figure wins.
  Profile profile;
  profile.SetNodeMemory("conv", 12345);
  CostModel pm(cg, t.cluster, {}, &profile);
  EXPECT_EQ(pm.OpMemoryBytes(conv), 12345);
}

// The questions the simulator and the validator ask instead of reading the profile.
TEST(CostModelTest, WithoutAProfileNoProfiledQuestionHasAnAnswer) {
  TestCluster t = MakeCluster();
  Graph g = MakeGraph(DType::kF32);
  CostModel model(g, t.cluster);
  NodeId mm = *g.FindNode("mm");
  TensorId y = *g.FindTensor("y");
  EXPECT_FALSE(model.StatedMemory(mm).has_value());
  EXPECT_FALSE(model.ProfiledTransferTime(y, t.gpu0, t.gpu2).has_value());
  EXPECT_FALSE(model.TransferSendCost(t.gpu0, t.gpu2).has_value());
  EXPECT_FALSE(model.TransferRecvCost(t.gpu0, t.gpu2).has_value());
  EXPECT_FALSE(model.SubgraphStartCost(t.cpu).has_value());
  EXPECT_FALSE(model.CpuContention(t.cpu).has_value());
  // An empty profile says nothing either.
  Profile empty;
  CostModel profiled(g, t.cluster, {}, &empty);
  EXPECT_FALSE(profiled.StatedMemory(mm).has_value());
  EXPECT_FALSE(profiled.ProfiledTransferTime(y, t.gpu0, t.gpu2).has_value());
  EXPECT_FALSE(profiled.SubgraphStartCost(t.gpu0).has_value());
}

TEST(CostModelTest, StatedMemoryIsTheWorkloadsFigureAndTheFootprintTakesIt) {
  TestCluster t = MakeCluster();
  Graph g = MakeGraph(DType::kF32);
  NodeId mm = *g.FindNode("mm");
  NodeId add = *g.FindNode("add");
  Profile profile;
  profile.SetNodeMemory("mm", 12345);
  CostModel model(g, t.cluster, {}, &profile);
  ASSERT_TRUE(model.StatedMemory(mm).has_value());
  EXPECT_EQ(*model.StatedMemory(mm), 12345);
  EXPECT_EQ(model.OpMemoryBytes(mm), 12345);
  EXPECT_FALSE(model.StatedMemory(add).has_value());
  EXPECT_EQ(model.OpMemoryBytes(add), model.OpOutputBytes(add));
}

TEST(CostModelTest, ProfiledTransferTimeByTensorThenProducerNamesThenModels) {
  TestCluster t = MakeCluster();
  Graph g = MakeGraph(DType::kF32);
  TensorId y = *g.FindTensor("y");
  TensorId z = *g.FindTensor("z");
  Profile profile;
  profile.SetTransferTime("y", "gpu0", "gpu2", 0.125);
  profile.SetTransferTime("y", "TestGPU", "TestGPU", 0.5);
  profile.SetTransferTime("add", "TestGPU", "TestGPU", 0.25);
  // An infinite time does not count: the producer's entry answers instead.
  profile.SetTransferTime("z", "gpu0", "gpu1", std::numeric_limits<double>::infinity());
  profile.SetTransferTime("add", "gpu0", "gpu1", 0.75);
  CostModel model(g, t.cluster, {}, &profile);
  EXPECT_DOUBLE_EQ(*model.ProfiledTransferTime(y, t.gpu0, t.gpu2), 0.125);  // device names
  EXPECT_DOUBLE_EQ(*model.ProfiledTransferTime(y, t.gpu1, t.gpu2), 0.5);    // device models
  EXPECT_DOUBLE_EQ(*model.ProfiledTransferTime(z, t.gpu1, t.gpu2), 0.25);   // producer's name
  EXPECT_DOUBLE_EQ(*model.ProfiledTransferTime(z, t.gpu0, t.gpu1), 0.75);
  EXPECT_FALSE(model.ProfiledTransferTime(y, t.gpu0, t.cpu).has_value());
  // The measured time as it is: SortingHat's static adjustments are TensorTransferTime's.
  CostModelOptions options;
  options.sortinghat_static_adjustments = true;
  CostModel adjusted(g, t.cluster, options, &profile);
  EXPECT_DOUBLE_EQ(*adjusted.ProfiledTransferTime(y, t.gpu0, t.gpu2), 0.125);
  EXPECT_DOUBLE_EQ(adjusted.TensorTransferTime(y, t.gpu0, t.gpu2), 0.125 * 1.5);
}

TEST(CostModelTest, SendAndReceiveCostsByDeviceNamesThenModels) {
  TestCluster t = MakeCluster();
  Graph g = MakeGraph(DType::kF32);
  Profile profile;
  profile.SetSendCost("gpu0", "gpu2", 1e-6);
  profile.SetSendCost("TestGPU", "TestGPU", 2e-6);
  profile.SetRecvCost("cpu0", "gpu0", 3e-6);
  CostModel model(g, t.cluster, {}, &profile);
  EXPECT_DOUBLE_EQ(*model.TransferSendCost(t.gpu0, t.gpu2), 1e-6);
  EXPECT_DOUBLE_EQ(*model.TransferSendCost(t.gpu2, t.gpu0), 2e-6);
  EXPECT_DOUBLE_EQ(*model.TransferSendCost(t.gpu1, t.gpu2), 2e-6);
  EXPECT_FALSE(model.TransferSendCost(t.gpu0, t.cpu).has_value());
  EXPECT_DOUBLE_EQ(*model.TransferRecvCost(t.cpu, t.gpu0), 3e-6);
  EXPECT_FALSE(model.TransferRecvCost(t.gpu0, t.cpu).has_value());
  EXPECT_FALSE(model.TransferRecvCost(t.gpu0, t.gpu2).has_value());
}

TEST(CostModelTest, SubgraphStartCostAndCpuContentionPerDevice) {
  TestCluster t = MakeCluster();
  Graph g = MakeGraph(DType::kF32);
  Profile profile;
  profile.SetSubgraphCost("cpu0", 4e-6);
  profile.SetSubgraphCost("TestGPU", 5e-6);
  profile.SetCpuContention("TestCPU", 0.1);
  profile.SetCpuContention("TestGPU", 0.2);
  CostModel model(g, t.cluster, {}, &profile);
  EXPECT_DOUBLE_EQ(*model.SubgraphStartCost(t.cpu), 4e-6);
  EXPECT_DOUBLE_EQ(*model.SubgraphStartCost(t.gpu1), 5e-6);
  EXPECT_DOUBLE_EQ(*model.CpuContention(t.cpu), 0.1);
  // Core-group contention is a CPU device's: a GPU has none whatever the profile holds.
  EXPECT_FALSE(model.CpuContention(t.gpu0).has_value());
}

}  // namespace
}  // namespace hx::cost
