// Chrion: Algorithm 1's order and merges, Algorithm 2's sweep over CPU cores, the memory term, and
// the baseline LSTM of its Table 6 on chrion-1080ti.
#include "hexplan/place/chrion/chrion.h"

#include <gtest/gtest.h>

#include <set>

#include "hexplan/cost/cost_model.h"
#include "hexplan/cost/cpu_contention.h"
#include "hexplan/graph/zoo.h"
#include "hexplan/hw/presets.h"
#include "hexplan/place/planner.h"
#include "hexplan/plan/validator.h"
#include "testing/graph_builders.h"

namespace hx::place {
namespace {

hw::Cluster Chrion1080Ti() {
  auto c = hw::LoadCluster("chrion-1080ti");
  EXPECT_TRUE(c.ok());
  return *c;
}

TEST(CpuContention, OneCoreIsSlowerThanTheChipAndContentionGrows) {
  hw::Cluster c = Chrion1080Ti();
  graph::Graph g = testing::MakeChain(1, 512, 512);
  cost::CostModelOptions roofline;  // the roofline's CPU peak counts all 12 cores
  roofline.kind = cost::CostModelKind::kRoofline;
  cost::CostModel cost(g, c, roofline);
  const DeviceId cpu = *c.FindDevice("cpu0");
  const NodeId op = g.Ops()[0];
  const double chip = cost.OpTime(op, cpu);
  const double launch = c.device(cpu).spec.launch_overhead_s;
  const double one = cost::CpuCoreOpTime(cost, op, cpu, 1);
  EXPECT_NEAR(one, launch + (chip - launch) * 12, 1e-12);
  cost::CpuContentionOptions o;
  o.gamma = 0.1;
  EXPECT_NEAR(cost::CpuCoreOpTime(cost, op, cpu, 4, o), launch + (chip - launch) * 12 * 1.3, 1e-12);
  EXPECT_DOUBLE_EQ(cost::CpuContentionSlowdown(0), 1.0);
  o.gamma = -1;
  EXPECT_FALSE(o.Validate().ok());
}

// A calibrated CPU's op time already is one core's: a core is not 12x slower, only contention and
// the calibration's dispatch remain.
TEST(CpuContention, ACalibratedCpuTimeIsOneCoresTime) {
  hw::Cluster c = Chrion1080Ti();
  graph::Graph g = testing::MakeChain(1, 512, 512);
  cost::CostModel cost(g, c);
  const DeviceId cpu = *c.FindDevice("cpu0");
  ASSERT_NE(cost.CalibrationFor(cpu), nullptr);
  const NodeId op = g.Ops()[0];
  const double dev = cost.OpTime(op, cpu);
  const double launch = cost.LaunchCost(cpu);
  EXPECT_DOUBLE_EQ(launch, cost.CalibrationFor(cpu)->kernel_launch_s);
  EXPECT_NEAR(cost::CpuCoreOpTime(cost, op, cpu, 1), dev, 1e-15);
  cost::CpuContentionOptions o;
  o.gamma = 0.1;
  EXPECT_NEAR(cost::CpuCoreOpTime(cost, op, cpu, 4, o), launch + (dev - launch) * 1.3, 1e-12);
  const cost::CpuContentionOptions applied = cost::CpuContentionFor(cost, cpu, o);
  EXPECT_EQ(applied.op_cores, 1);
  EXPECT_DOUBLE_EQ(applied.op_launch_s, launch);
  o.op_cores = -1;
  EXPECT_FALSE(o.Validate().ok());
}

// A GPU behind a slow link (10 MB/s), so that copying an activation between the GPU and the CPU
// outweighs running the op.
hw::Cluster SlowLinkCluster() {
  hw::Cluster c("slow-link");
  const PlaceId host = c.AddHostMemory("node0");
  const DeviceId gpu =
      c.AddDevice("gpu0", hw::DeviceKind::kGpu, "node0", *hw::FindDeviceSpec("GTX-1080-Ti"));
  hw::DeviceSpec cpu_spec = *hw::FindDeviceSpec("Xeon E5-2685 v3");
  cpu_spec.memory_bytes = int64_t{64} << 30;
  const DeviceId cpu = c.AddDevice("cpu0", hw::DeviceKind::kCpu, "node0", cpu_spec);
  c.AddLink("pcie:gpu0", hw::LinkKind::kPcie, host, c.PlaceOf(gpu), 1e7, 1e-6);
  c.AddLink("membus:cpu0", hw::LinkKind::kMemoryBus, host, c.PlaceOf(cpu), 68e9, 1e-7);
  EXPECT_TRUE(c.Finalize().ok());
  return c;
}

TEST(ChrionOrder, IsTopologicalAndMergesWhenTheCopyOutweighsTheWork) {
  hw::Cluster c = SlowLinkCluster();
  const DeviceId gpu = *c.FindDevice("gpu0");
  const DeviceId cpu = *c.FindDevice("cpu0");
  // A fork-join of chains: every chain link has one predecessor, so each chain child follows its
  // parent (DFS); the fork's other children wait in the BFS queue.
  graph::Graph g = testing::MakeForkJoin(3, 4, 16);
  cost::CostModel cost(g, c);
  auto order = ChrionTopologicalOrder(cost, gpu, cpu);
  ASSERT_TRUE(order.ok()) << order.status().ToString();
  ASSERT_EQ(order->order.size(), g.Ops().size());
  std::vector<int> pos(g.num_nodes(), -1);
  for (size_t i = 0; i < order->order.size(); ++i) pos[order->order[i].index()] = i;
  int merged = 0;
  for (NodeId v : g.Ops()) {
    for (NodeId p : g.predecessors(v))
      if (g.node(p).is_op()) {
        EXPECT_LT(pos[p.index()], pos[v.index()]);
      }
    const NodeId parent = order->merged_into[v.index()];
    if (!parent.valid()) continue;
    ++merged;
    EXPECT_EQ(pos[v.index()], pos[parent.index()] + 1) << "a merged child follows its parent";
    int op_preds = 0;
    for (NodeId p : g.predecessors(v)) op_preds += g.node(p).is_op();
    EXPECT_EQ(op_preds, 1);
  }
  // The rule decides: merges happen exactly when the GPU<->CPU copy exceeds the mean op time.
  int expected = 0;
  for (NodeId v : g.Ops()) {
    std::vector<NodeId> preds;
    for (NodeId p : g.predecessors(v))
      if (g.node(p).is_op()) preds.push_back(p);
    if (preds.size() != 1) continue;
    double copy = 0.0;
    for (TensorId t : g.node(v).inputs)
      if (t.valid() && g.tensor(t).producer == preds[0])
        copy +=
            std::max(cost.TensorTransferTime(t, gpu, cpu), cost.TensorTransferTime(t, cpu, gpu));
    const double mean = 0.5 * (cost.OpTime(v, gpu) + cost::CpuCoreOpTime(cost, v, cpu, 1));
    if (copy > mean) ++expected;
  }
  // Every qualifying child is merged but the fork's second and third branch heads (a parent
  // merges one child).
  EXPECT_EQ(expected, 3 * 4);
  EXPECT_EQ(merged, expected - 2);
  // On the real machine (PCIe gen3) under the roofline the same small copies are cheaper than the
  // ops: no merge. (Calibrated, a copy's fixed cost outweighs a 3 us kernel: they merge, below.)
  hw::Cluster fast = Chrion1080Ti();
  cost::CostModelOptions roofline;
  roofline.kind = cost::CostModelKind::kRoofline;
  cost::CostModel fast_cost(g, fast, roofline);
  auto plain =
      ChrionTopologicalOrder(fast_cost, *fast.FindDevice("gpu0"), *fast.FindDevice("cpu0"));
  ASSERT_TRUE(plain.ok());
  for (NodeId v : g.Ops()) EXPECT_FALSE(plain->merged_into[v.index()].valid());
  cost::CostModel calibrated(g, fast);
  auto kept =
      ChrionTopologicalOrder(calibrated, *fast.FindDevice("gpu0"), *fast.FindDevice("cpu0"));
  ASSERT_TRUE(kept.ok());
  int calibrated_merges = 0;
  for (NodeId v : g.Ops()) calibrated_merges += kept->merged_into[v.index()].valid();
  EXPECT_GT(calibrated_merges, 0);
}

TEST(Chrion, SweepStartsGpuOnlyAndPicksTheCheapestCoreCount) {
  hw::Cluster c = Chrion1080Ti();
  const graph::Graph g = testing::MakeZooLstm(4, 16, 8);
  cost::CostModel cost(g, c);
  ChrionOptions o;
  o.alpha = 0.3;
  auto run = RunChrion(cost, o);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_EQ(run->total_cores, 12);
  ASSERT_EQ(run->sweep.size(), 13u);
  const ChrionSchedule& gpu_only = run->sweep[0];
  for (NodeId v : g.Ops()) EXPECT_EQ(gpu_only.processor[v.index()], 0);
  EXPECT_NEAR(gpu_only.cost, 1.0 + o.alpha, 1e-9);  // L0/L0 + alpha * M0/M0
  for (const ChrionSchedule& s : run->sweep) {
    EXPECT_GE(s.cost, run->sweep[run->best].cost);
    for (NodeId v : g.Ops()) EXPECT_LE(s.processor[v.index()], s.cores);
  }
}

// Chrion's baseline (Table 6): 12 layers, batch 8, io 64, seq 96.
class ChrionBaseline : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = Chrion1080Ti();
    graph_ = testing::MakeZooLstm(12, 96, 8);  // io 64, the zoo's default
    cost_ = std::make_unique<cost::CostModel>(graph_, cluster_);
  }
  StatusOr<PlacementOutcome> RunAlgo(const std::string& algo, double alpha) {
    PlanRequest r;
    r.cost = cost_.get();
    if (algo == "chrion") HX_RETURN_IF_ERROR(r.planner_options.Give("alpha", alpha));
    return RunPlanner(algo, r);
  }
  hw::Cluster cluster_;
  graph::Graph graph_;
  std::unique_ptr<cost::CostModel> cost_;
};

TEST_F(ChrionBaseline, AlphaZeroIsNoSlowerThanGpuOnly) {
  auto gpu_only = RunAlgo("single", 0.0);  // `single` runs everything on the GPU
  ASSERT_TRUE(gpu_only.ok());
  ASSERT_EQ(cluster_.device(gpu_only->result.plan.devices[0].device).name, "gpu0");
  auto chrion = RunAlgo("chrion", 0.0);
  ASSERT_TRUE(chrion.ok()) << chrion.status().ToString();
  EXPECT_LE(chrion->sim.makespan_s, gpu_only->sim.makespan_s * (1 + 1e-9));
  EXPECT_NE(chrion->result.detail.find("k*="), std::string::npos);
}

TEST_F(ChrionBaseline, GpuMemoryDoesNotGrowWithAlpha) {
  ChrionOptions o;
  o.alpha = 0.0;
  auto a0 = RunChrion(*cost_, o);
  o.alpha = 1.0;
  auto a1 = RunChrion(*cost_, o);
  ASSERT_TRUE(a0.ok() && a1.ok());
  EXPECT_LE(a1->sweep[a1->best].gpu_memory_bytes, a0->sweep[a0->best].gpu_memory_bytes);
}

TEST(Chrion, PlannedGpuMemoryShrinksAsAlphaGrows) {
  hw::Cluster c = Chrion1080Ti();
  const graph::Graph g = testing::MakeZooLstm(4, 24, 8);
  cost::CostModel cost(g, c);
  auto run = [&](double alpha) -> StatusOr<PlacementOutcome> {
    PlanRequest r;
    r.cost = &cost;
    HX_RETURN_IF_ERROR(r.planner_options.Give("alpha", alpha));
    return RunPlanner("chrion", r);
  };
  auto p0 = run(0.0);
  auto p1 = run(1.0);
  ASSERT_TRUE(p0.ok() && p1.ok());
  const DeviceId gpu = *c.FindDevice("gpu0");
  EXPECT_LE(plan::PlanMemoryBound(p1->result.plan, cost)[gpu.index()].total(),
            plan::PlanMemoryBound(p0->result.plan, cost)[gpu.index()].total());
  EXPECT_LE(p1->sim.devices[gpu.index()].peak_memory_bytes,
            p0->sim.devices[gpu.index()].peak_memory_bytes);
}

// Chrion's Table 6 under the calibrated model (docs/cost-model.md, "Chrion on chrion-1080ti"): the
// latency reduction of Algorithm 2's own plan (--guard false, the plan as the paper ran it) against
// GPU-only, within 10 points of the paper's and with its sign: the baseline, two variants where
// hybrid execution loses (4 layers, io 128) and the one where it wins most (batch 1). The whole
// table (13 variants, two of them misses: batch 4 and 128 steps) is scripts/chrion-table6.py;
// here four, for time (each runs Algorithm 2 for 13 core counts).
struct Table6Case {
  const char* name;
  int layers, batch, io, seq;
  double paper_percent;  // (GPU-only - latency-optimal) / GPU-only, Table 6
};

class ChrionTable6 : public ::testing::TestWithParam<Table6Case> {};

TEST_P(ChrionTable6, ReductionWithinTenPointsOfThePaperWithItsSign) {
  const Table6Case& v = GetParam();
  hw::Cluster c = Chrion1080Ti();
  graph::ZooOptions zoo;
  zoo.lstm_layers = v.layers;
  zoo.batch = v.batch;
  zoo.lstm_io = v.io;
  zoo.seq = v.seq;
  auto g = graph::BuildZooModel("lstm", zoo);
  ASSERT_TRUE(g.ok());
  cost::CostModel cost(*g, c);
  ASSERT_NE(cost.CalibrationFor(*c.FindDevice("gpu0")), nullptr);
  ASSERT_NE(cost.CalibrationFor(*c.FindDevice("cpu0")), nullptr);
  PlanRequest gpu_only;
  gpu_only.cost = &cost;
  auto single = RunPlanner("single", gpu_only);
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  PlanRequest paper;
  paper.cost = &cost;
  ASSERT_TRUE(paper.planner_options.Give("guard", false).ok());
  auto chrion = RunPlanner("chrion", paper);
  ASSERT_TRUE(chrion.ok()) << chrion.status().ToString();
  const double ours = 100.0 * (1.0 - chrion->sim.makespan_s / single->sim.makespan_s);
  EXPECT_NEAR(ours, v.paper_percent, 10.0) << v.name;
  EXPECT_EQ(ours > 0, v.paper_percent > 0) << v.name << ": " << ours << " %";
  // With the guard (the default), a hybrid plan that simulates slower is replaced by GPU-only.
  if (ours < 0) {
    auto guarded = RunPlanner("chrion", gpu_only);
    ASSERT_TRUE(guarded.ok());
    EXPECT_NE(guarded->result.detail.find("kept GPU-only"), std::string::npos) << v.name;
    EXPECT_NEAR(guarded->sim.makespan_s, single->sim.makespan_s, 0.01 * single->sim.makespan_s);
  }
}

INSTANTIATE_TEST_SUITE_P(Table6, ChrionTable6,
                         ::testing::Values(Table6Case{"baseline", 12, 8, 64, 96, 12.3},
                                           Table6Case{"layers4", 4, 8, 64, 96, -3.2},
                                           Table6Case{"batch1", 12, 1, 64, 96, 17.4},
                                           Table6Case{"io128", 12, 8, 128, 96, -22.9}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Chrion, NeedsAGpu) {
  auto c = hw::LoadCluster("local-cpu:cores=4");
  ASSERT_TRUE(c.ok());
  graph::Graph g = testing::MakeChain(3);
  cost::CostModel cost(g, *c);
  auto run = RunChrion(cost, {});
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("no GPU"), std::string::npos);
}

}  // namespace
}  // namespace hx::place
