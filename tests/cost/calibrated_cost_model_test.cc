// The calibrated cost model (issue 21, docs/cost-model.md "Calibrated model"): op times from the
// class curves, copies at a fraction of the route plus a fixed cost, and the roofline kind
// unchanged.

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "hexplan/cost/cost_model.h"
#include "hexplan/cost/device_calibration.h"
#include "hexplan/graph/graph.h"
#include "hexplan/graph/model_loader.h"
#include "hexplan/hw/cluster.h"
#include "hexplan/hw/presets.h"

namespace hx::cost {
namespace {

using graph::DType;
using graph::Graph;

constexpr double kPeak = 10e12;  // fp32 FLOP/s
constexpr double kBw = 900e9;    // device memory bytes/s
constexpr double kBusBw = 16e9;
constexpr double kLat = 1e-6;

hw::DeviceSpec Spec(const std::string& model) {
  hw::DeviceSpec s;
  s.model = model;
  s.peak_flops_fp32 = kPeak;
  s.memory_bandwidth_bytes_per_s = kBw;
  s.memory_bytes = int64_t{16} << 30;
  s.launch_overhead_s = 5e-6;
  return s;
}

// host -> bus (16 GB/s) -> gpu0, gpu1 (ports 32 GB/s); NVLink gpu0-gpu1 (50 GB/s); gpu2 of another
// model on the same bus. Every link has 1 us latency.
struct Fixture {
  hw::Cluster cluster{"calibrated"};
  DeviceId gpu0, gpu1, gpu2;
  Graph graph{"mm"};
  Fixture(bool p2p = true) {
    hw::Cluster& c = cluster;
    PlaceId host = c.AddHostMemory("n0");
    PlaceId bus = c.AddSwitch("bus", "n0");
    c.AddLink("pcie-bus", hw::LinkKind::kPcie, host, bus, kBusBw, kLat);
    gpu0 = c.AddDevice("gpu0", hw::DeviceKind::kGpu, "n0", Spec("CalGPU"));
    gpu1 = c.AddDevice("gpu1", hw::DeviceKind::kGpu, "n0", Spec("CalGPU"));
    gpu2 = c.AddDevice("gpu2", hw::DeviceKind::kGpu, "n0", Spec("PlainGPU"));
    for (DeviceId d : {gpu0, gpu1, gpu2})
      c.AddLink("pcie:" + c.device(d).name, hw::LinkKind::kPcie, bus, c.PlaceOf(d), 2 * kBusBw,
                kLat);
    c.AddLink("nvlink", hw::LinkKind::kNvlink, c.PlaceOf(gpu0), c.PlaceOf(gpu1), 50e9, kLat);
    if (!p2p) c.SetPeerToPeer(gpu0, gpu2, false);
    EXPECT_TRUE(c.Finalize().ok());
    // x[64,1024] @ w[1024,1024] -> y; relu(y) -> z.
    NodeId x = graph.AddInput("x", DType::kF32, {64, 1024});
    NodeId w = graph.AddWeight("w", DType::kF32, {1024, 1024});
    NodeId mm =
        graph.AddOpWithOutputs("MatMul", "mm", {graph.node(x).outputs[0], graph.node(w).outputs[0]},
                               {{"y", DType::kF32, {64, 1024}}});
    NodeId relu = graph.AddOpWithOutputs("Relu", "relu", {graph.node(mm).outputs[0]},
                                         {{"z", DType::kF32, {64, 1024}}});
    graph.AddOutput(graph.node(relu).outputs[0]);
    EXPECT_TRUE(graph.Validate().ok());
  }
  NodeId Node(const std::string& name) const { return *graph.FindNode(name); }
};

DeviceCalibration Calibration() {
  DeviceCalibration c;
  c.model = "CalGPU";
  c.kernel_launch_s = 7e-6;
  ClassFit gemm;
  gemm.compute_max = 0.5;
  gemm.compute_half_flops = 1e8;
  gemm.memory_max = 0.7;
  gemm.memory_half_bytes = 1e6;
  gemm.fixed_s = 3e-6;
  c.classes[OpClass::kGemm] = gemm;
  ClassFit other;
  other.compute_max = 0.4;
  other.memory_max = 0.25;
  other.fixed_s = 1e-6;
  c.classes[OpClass::kOther] = other;
  c.copy.h2d_pinned = {0.75, 9e-6, "test"};
  c.copy.d2h_pinned = {0.8, 4e-6, "test"};
  c.copy.dha_mapped = {0.5, 2e-6, "test"};
  c.copy.peer = {0.9, 6e-6, "test"};
  c.copy.shared_bus_efficiency = 0.85;
  return c;
}

CostModelOptions Calibrated() {
  CostModelOptions o;
  o.calibrations["CalGPU"] = Calibration();
  return o;
}

TEST(CalibratedCostModelTest, OpTimeFollowsTheClassCurve) {
  Fixture f;
  CostModel model(f.graph, f.cluster, Calibrated());
  NodeId mm = f.Node("mm");
  const double flops = model.op_cost(mm).flops;
  const double bytes = static_cast<double>(model.op_cost(mm).bytes_moved());
  // fixed + max((F + F_half) / (P * 0.5), (B + B_half) / (W * 0.7)) + launch.
  const double expected =
      3e-6 + std::max((flops + 1e8) / (kPeak * 0.5), (bytes + 1e6) / (kBw * 0.7)) + 7e-6;
  EXPECT_DOUBLE_EQ(model.OpTime(mm, f.gpu0), expected);
  EXPECT_EQ(model.op_class(mm), OpClass::kGemm);
  // Relu is elementwise, which the calibration does not list: kOther's fit.
  NodeId relu = f.Node("relu");
  EXPECT_EQ(model.op_class(relu), OpClass::kElementwise);
  const double relu_bytes = static_cast<double>(model.op_cost(relu).bytes_moved());
  EXPECT_DOUBLE_EQ(model.OpTime(relu, f.gpu0), 1e-6 + relu_bytes / (kBw * 0.25) + 7e-6);
  // A model without a calibration: the roofline, as before.
  EXPECT_EQ(model.OpTime(mm, f.gpu2), model.RooflineTime(mm, f.gpu2));
  EXPECT_EQ(model.CalibrationFor(f.gpu2), nullptr);
  EXPECT_EQ(model.LaunchCost(f.gpu2), 5e-6);
  EXPECT_EQ(model.LaunchCost(f.gpu0), 7e-6);
}

TEST(CalibratedCostModelTest, CopiesAreFixedPlusBytesOverTheFractionOfTheBottleneck) {
  Fixture f;
  CostModel model(f.graph, f.cluster, Calibrated());
  const int64_t n = 4 << 20;
  const PlaceId host = f.cluster.HostOf(f.gpu0);
  const PlaceId g0 = f.cluster.PlaceOf(f.gpu0);
  const PlaceId g1 = f.cluster.PlaceOf(f.gpu1);
  // Host -> gpu0: two hops (2 us), bottleneck the 16 GB/s bus.
  EXPECT_DOUBLE_EQ(model.TransferTime(n, host, g0), 2e-6 + 9e-6 + n / (kBusBw * 0.75));
  EXPECT_DOUBLE_EQ(model.WeightLoadTime(f.Node("w"), f.gpu0),
                   2e-6 + 9e-6 + (4 << 20) / (kBusBw * 0.75));
  EXPECT_DOUBLE_EQ(model.TransferTime(n, g0, host), 2e-6 + 4e-6 + n / (kBusBw * 0.8));
  EXPECT_DOUBLE_EQ(model.TransferTime(n, g0, g1), 1e-6 + 6e-6 + n / (50e9 * 0.9));
  EXPECT_DOUBLE_EQ(model.CopyTime(n, host, g0, HostMemory::kMapped),
                   2e-6 + 2e-6 + n / (kBusBw * 0.5));
  // The uncalibrated model's device: nominal rate.
  const PlaceId g2 = f.cluster.PlaceOf(f.gpu2);
  EXPECT_EQ(model.TransferTime(n, host, g2), f.cluster.GetRoute(host, g2).TransferSeconds(n));
  // Shared-bus efficiency on the links of calibrated GPUs' host routes only.
  EXPECT_EQ(model.SharedBusEfficiency(*f.cluster.FindLink("pcie-bus")), 0.85);
  EXPECT_EQ(model.SharedBusEfficiency(*f.cluster.FindLink("pcie:gpu0")), 0.85);
  EXPECT_EQ(model.SharedBusEfficiency(*f.cluster.FindLink("pcie:gpu2")), 1.0);
  EXPECT_EQ(model.SharedBusEfficiency(*f.cluster.FindLink("nvlink")), 1.0);
}

TEST(CalibratedCostModelTest, CopyThroughTheHostTakesTheSlowerDirectionAndBothFixedCosts) {
  Fixture f(/*p2p=*/false);
  CostModel model(f.graph, f.cluster, Calibrated());
  const PlaceId g0 = f.cluster.PlaceOf(f.gpu0);
  const PlaceId g2 = f.cluster.PlaceOf(f.gpu2);
  ASSERT_TRUE(f.cluster.GetRoute(g0, g2).via_host);
  CopyCost c = model.CopyCostFor(g0, g2);
  EXPECT_EQ(c.fraction, 0.75);
  EXPECT_EQ(c.fixed_s, 4e-6 + 9e-6);
}

TEST(CalibratedCostModelTest, DhaStreamsAtTheMappedFraction) {
  Fixture f;
  CostModel model(f.graph, f.cluster, Calibrated());
  NodeId mm = f.Node("mm");
  const graph::OpCost& c = model.op_cost(mm);
  const double compute = (c.flops + 1e8) / (kPeak * 0.5);
  const double act = (static_cast<double>(c.input_bytes + c.output_bytes) + 1e6) / (kBw * 0.7);
  const double stream = 2e-6 + 2e-6 + model.OpWeightBytes(mm) / (kBusBw * 0.5);
  EXPECT_DOUBLE_EQ(model.OpTimeDha(mm, f.gpu0), 3e-6 + std::max({compute, act, stream}) + 7e-6);
}

TEST(CalibratedCostModelTest, RooflineKindIsTheOldModelExactly) {
  Fixture f;
  CostModelOptions roofline = Calibrated();
  roofline.kind = CostModelKind::kRoofline;
  CostModel model(f.graph, f.cluster, roofline);
  // The old numbers: the roofline with the spec's launch, and route.TransferSeconds.
  for (DeviceId d : f.cluster.DeviceIds()) {
    EXPECT_EQ(model.CalibrationFor(d), nullptr);
    for (NodeId op : f.graph.Ops()) EXPECT_EQ(model.OpTime(op, d), model.RooflineTime(op, d));
    const hw::Route& r = f.cluster.HostToDevice(d);
    EXPECT_EQ(model.WeightLoadTime(f.Node("w"), d), r.TransferSeconds(4 << 20));
    const graph::OpCost& c = model.op_cost(f.Node("mm"));
    const double compute = c.flops / (kPeak * 0.6);
    const double act = static_cast<double>(c.input_bytes + c.output_bytes) / (kBw * 0.8);
    EXPECT_EQ(model.OpTimeDha(f.Node("mm"), d),
              std::max(std::max(compute, act), r.TransferSeconds(4 << 20)) + 5e-6);
  }
  for (size_t l = 0; l < f.cluster.num_links(); ++l)
    EXPECT_EQ(model.SharedBusEfficiency(LinkId(l)), 1.0);
}

TEST(CalibratedCostModelTest, ModelEfficiencyEntryKeepsTheRoofline) {
  Fixture f;
  CostModelOptions o = Calibrated();
  o.model_efficiency["CalGPU"] = {0.3, 0.4};
  CostModel model(f.graph, f.cluster, o);
  EXPECT_EQ(model.CalibrationFor(f.gpu0), nullptr);
  EXPECT_EQ(model.OpTime(f.Node("mm"), f.gpu0), model.RooflineTime(f.Node("mm"), f.gpu0));
}

TEST(CalibratedCostModelTest, OptionsRejectAMislabelledCalibration) {
  CostModelOptions o = Calibrated();
  o.calibrations["Other"] = Calibration();
  Status s = o.Validate();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("calibrations[Other]"), std::string::npos) << s.message();
  o = Calibrated();
  o.calibrations["CalGPU"].copy.h2d_pinned.fraction = 0.0;
  EXPECT_FALSE(o.Validate().ok());
  EXPECT_EQ(ParseCostModelKind("roofline"), CostModelKind::kRoofline);
  EXPECT_EQ(ParseCostModelKind("calibrated"), CostModelKind::kCalibrated);
  EXPECT_FALSE(ParseCostModelKind("exact").has_value());
}

TEST(CalibratedCostModelTest, ACopiedModelKeepsTheUserCalibration) {
  Fixture f;
  auto original = std::make_unique<CostModel>(f.graph, f.cluster, Calibrated());
  const double t = original->OpTime(f.Node("mm"), f.gpu0);
  CostModel copy = *original;
  original.reset();
  ASSERT_NE(copy.CalibrationFor(f.gpu0), nullptr);
  EXPECT_EQ(copy.CalibrationFor(f.gpu0)->kernel_launch_s, 7e-6);
  EXPECT_EQ(copy.OpTime(f.Node("mm"), f.gpu0), t);
}

// ResNet-50 at batch 1 on the SortingHat V100 server: the builtin V100 calibration makes loading
// the weights and running the ops slower than the roofline said, and the roofline kind is what the
// model was before (equal to RooflineTime and the routes' nominal times).
TEST(CalibratedCostModelTest, ResNet50OnV100IsSlowerCalibratedThanRoofline) {
  auto graph = graph::LoadModel("resnet50", graph::ZooOptions{});
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  auto cluster = hw::LoadCluster("sortinghat-v100");
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  ASSERT_TRUE(BuiltinCalibrations().count("V100-SXM2-32GB"));
  CostModelOptions roofline;
  roofline.kind = CostModelKind::kRoofline;
  CostModel plain(*graph, *cluster, roofline);
  CostModel calibrated(*graph, *cluster);
  const DeviceId gpu(0);
  ASSERT_NE(calibrated.CalibrationFor(gpu), nullptr);
  double plain_load = 0, calibrated_load = 0, plain_ops = 0, calibrated_ops = 0;
  for (NodeId w : graph->Weights()) {
    plain_load += plain.WeightLoadTime(w, gpu);
    calibrated_load += calibrated.WeightLoadTime(w, gpu);
    EXPECT_EQ(plain.WeightLoadTime(w, gpu), cluster->HostToDevice(gpu).TransferSeconds(
                                                graph->tensor(graph->node(w).outputs[0]).Bytes()));
  }
  for (NodeId op : graph->Ops()) {
    plain_ops += plain.OpTime(op, gpu);
    calibrated_ops += calibrated.OpTime(op, gpu);
    EXPECT_EQ(plain.OpTime(op, gpu), plain.RooflineTime(op, gpu));
  }
  const double h2d = calibrated.CalibrationFor(gpu)->copy.h2d_pinned.fraction;
  EXPECT_GT(calibrated_load, plain_load / h2d);  // the fraction, plus the fixed costs
  EXPECT_GT(calibrated_ops, plain_ops);
}

}  // namespace
}  // namespace hx::cost
