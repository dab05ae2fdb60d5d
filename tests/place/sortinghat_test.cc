// SortingHat: dominator partition (§3.1), the per-submodel MILP (§3.3) on hand-made problems, and
// the planner end to end (merged plan, per-bus queues, DHA / relay, estimate against the simulator,
// the Fig. 3 situation and the ablations).
#include "hexplan/place/sortinghat/sortinghat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "hexplan/cost/cost_model.h"
#include "hexplan/graph/analysis.h"
#include "hexplan/graph/pipedream_io.h"
#include "hexplan/hw/presets.h"
#include "hexplan/place/planner.h"
#include "place/sortinghat/sortinghat_milp.h"
#include "testing/graph_builders.h"
#include "testing/test_paths.h"

namespace hx::place {
namespace {

using graph::DType;
using graph::Graph;

std::vector<std::string> Names(const Graph& g, const std::vector<NodeId>& ids) {
  std::vector<std::string> out;
  for (NodeId id : ids) out.push_back(g.node(id).name);
  return out;
}

// Every op in exactly one submodel, in topological order, edges never going back, and every
// edge into a later submodel leaving from one node (the hand-over SortingHat's placeholder holds).
void ExpectSoundPartition(const Graph& g, const SortingHatPartition& p, const std::string& who) {
  std::vector<int> seen(g.num_nodes(), 0);
  for (const auto& sm : p.submodels)
    for (NodeId op : sm) ++seen[op.index()];
  for (NodeId op : g.Ops()) EXPECT_EQ(seen[op.index()], 1) << who << " " << g.node(op).name;
  for (const graph::Edge& e : g.Edges()) {
    const int a = p.submodel_of[e.src.index()], b = p.submodel_of[e.dst.index()];
    if (a < 0 || b < 0) continue;
    EXPECT_LE(a, b) << who << ": " << g.node(e.src).name << " -> " << g.node(e.dst).name;
  }
  for (size_t s = 1; s < p.submodels.size(); ++s) {
    std::set<uint32_t> from;
    for (NodeId op : p.submodels[s])
      for (NodeId pred : g.predecessors(op)) {
        const int ps = p.submodel_of[pred.index()];
        if (g.node(pred).is_op() && ps >= 0 && ps < static_cast<int>(s)) from.insert(pred.value());
      }
    EXPECT_LE(from.size(), 1u) << who << ": submodel " << s << " has several hand-overs";
  }
}

TEST(SortingHatPartitionTest, Figure6CutsAtD) {
  Graph g = testing::MakeSortingHatFig6();
  auto p = PartitionByDominators(g, 1);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->submodels.size(), 2u);
  EXPECT_EQ(Names(g, p->submodels[0]), (std::vector<std::string>{"B", "C", "D"}));
  EXPECT_EQ(Names(g, p->submodels[1]), (std::vector<std::string>{"E", "F", "G"}));
  ExpectSoundPartition(g, *p, "fig6");
  // Two dominators per submodel: one submodel.
  auto two = PartitionByDominators(g, 2);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->submodels.size(), 1u);
  EXPECT_FALSE(PartitionByDominators(g, 0).ok());
}

TEST(SortingHatPartitionTest, ChainAndForkJoin) {
  Graph chain = testing::MakeChain(5);
  auto p = PartitionByDominators(chain, 1);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->submodels.size(), 5u);  // every op dominates the output
  ExpectSoundPartition(chain, *p, "chain");
  auto p2 = PartitionByDominators(chain, 2);
  ASSERT_TRUE(p2.ok());
  EXPECT_EQ(p2->submodels.size(), 3u);
  // Weights go with their reader.
  for (NodeId w : chain.Weights())
    EXPECT_EQ(p->submodel_of[w.index()], p->submodel_of[chain.successors(w)[0].index()]);
  Graph fj = testing::MakeForkJoin(3, 2);
  auto q = PartitionByDominators(fj, 1);
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->submodels.size(), 2u);  // {fork}, {branches..., join}
  EXPECT_EQ(q->submodels[1].size(), 7u);
  ExpectSoundPartition(fj, *q, "forkjoin");
}

TEST(SortingHatPartitionTest, PipeDreamNasNetAndDenseNet) {
  const std::string root =
      testing::SharedDataDir() + "/placement/pipedream/profiler/image_classification/profiles/";
  for (const std::string model : {"nasnetamobile", "densenet121"}) {
    auto profile = graph::ReadPipeDreamGraphFile(root + model + "/graph.txt");
    ASSERT_TRUE(profile.ok()) << profile.status().ToString();
    const Graph& g = profile->graph;
    auto doms = graph::SinkDominators(g);
    ASSERT_TRUE(doms.ok());
    auto p1 = PartitionByDominators(g, 1);
    auto p3 = PartitionByDominators(g, 3);
    ASSERT_TRUE(p1.ok() && p3.ok()) << model;
    ExpectSoundPartition(g, *p1, model);
    ExpectSoundPartition(g, *p3, model);
    // nDom = 3 groups the nDom = 1 submodels three by three.
    EXPECT_EQ(p3->submodels.size(), (p1->submodels.size() + 2) / 3) << model;
    size_t op_doms = 0;
    for (NodeId d : *doms) op_doms += g.node(d).is_op();
    EXPECT_LE(p1->submodels.size(), op_doms + 1) << model;
    size_t largest = 0;
    for (const auto& sm : p1->submodels) largest = std::max(largest, sm.size());
    if (model == "densenet121") {
      // The Concat after every dense layer hands over one tensor: dozens of small submodels.
      EXPECT_GE(p1->submodels.size(), 50u);
      EXPECT_LT(largest, 20u);
    } else {
      // NASNet cells read the two previous cells: almost nothing dominates the output, so the
      // cells stay together in one large submodel (the MILP then keeps its warm start).
      EXPECT_LE(p1->submodels.size(), 5u);
      EXPECT_GT(largest, g.Ops().size() * 9 / 10);
    }
  }
}

// ---- The MILP on hand-made constants.
namespace sh = sortinghat;

// One unit reading two equal weights; GPU 0 and GPU 1 on separate buses or one shared bus.
sh::Problem TwoWeightProblem(bool separate_buses) {
  sh::Problem p;
  p.topo.k = 2;
  p.topo.q = 2;
  p.topo.memory = {1e12, 1e12};
  if (separate_buses) {
    p.topo.bus_of = {0, 1};
    p.topo.buses = {{0}, {1}};
  } else {
    p.topo.bus_of = {0, 0};
    p.topo.buses = {{0, 1}};
  }
  sh::Unit u;
  u.time = {1.0, 1.0};
  u.time_dha = {30.0, 30.0};  // DHA is slow: loads win
  u.memory = 0;
  u.copy = {{0, 0}, {0, 0}};
  p.units.push_back(u);
  for (int i = 0; i < 2; ++i) {
    sh::Weight w;
    w.bytes = 1e6;
    w.load = {10.0, 10.0};
    w.copy = {{0, 1.0}, {1.0, 0}};  // NVLink: 10x faster than the PCIe load
    w.readers = {0};
    p.weights.push_back(w);
  }
  p.carried.prev_sg_fin = {0, 0};
  p.carried.prev_dt_fin.assign(p.topo.buses.size(), 0.0);
  p.carried.prev_memory = {0, 0};
  return p;
}

TEST(SortingHatMilpTest, ParallelTransmissionOnlyPaysOnSeparateBuses) {
  // Warm start: everything on GPU 0, both weights loaded over its bus: 10 + 10 + 1 = 21.
  sh::Assignment warm{{1}, {1, 1}};
  for (bool separate : {true, false}) {
    sh::Problem p = TwoWeightProblem(separate);
    sh::Timing wt = sh::Evaluate(p, warm);
    ASSERT_TRUE(wt.valid) << wt.why;
    EXPECT_DOUBLE_EQ(wt.total, 21.0);
    sh::SolveOptions o;
    o.time_limit_s = 10;
    auto sol = sh::Solve(p, warm, o, nullptr);
    ASSERT_TRUE(sol.ok()) << sol.status().ToString();
    EXPECT_EQ(sol->status, PlanStatus::kOptimal);
    // Separate buses: one weight loads through GPU 1 at the same time and is forwarded over
    // NVLink: max(10, 10 + 1) + 1 (copy-in) + 1 (compute) = 12. A shared bus serialises the loads
    // whatever the GPU: 21 stays optimal.
    EXPECT_NEAR(sol->timing.total, separate ? 12.0 : 21.0, 1e-6) << separate;
    if (separate) {
      const auto& ws = sol->assignment.weight_slot;
      EXPECT_NE(p.topo.gpu_of(ws[0]), p.topo.gpu_of(ws[1]));
    }
    // What the MILP reports is what its assignment evaluates to.
    sh::Timing again = sh::Evaluate(p, sol->assignment);
    EXPECT_DOUBLE_EQ(again.total, sol->timing.total);
  }
}

TEST(SortingHatMilpTest, EvaluateRejectsInconsistentAssignments) {
  sh::Problem p = TwoWeightProblem(true);
  // A reader in a DHA slot (position 0) with its weight loaded: violates (5).
  EXPECT_FALSE(sh::Evaluate(p, {{0}, {1, 1}}).valid);
  // DHA consistently: both weights in DRAM, the unit in slot 0: 30.
  sh::Timing t = sh::Evaluate(p, {{0}, {-1, -1}});
  ASSERT_TRUE(t.valid) << t.why;
  EXPECT_DOUBLE_EQ(t.total, 30.0);
  p.weights[0].no_dha = true;
  EXPECT_FALSE(sh::Evaluate(p, {{0}, {-1, -1}}).valid);
  // Memory (11): too small a GPU.
  p = TwoWeightProblem(true);
  p.topo.memory = {0.5e6, 1e12};
  EXPECT_FALSE(sh::Evaluate(p, {{1}, {1, 1}}).valid);
  EXPECT_FALSE(sh::Evaluate(p, {{1}, {3, 3}}).valid);  // copies into GPU 0 take its memory too
  EXPECT_TRUE(sh::Evaluate(p, {{3}, {3, 3}}).valid);
}

// ---- The planner end to end.
struct SortingHatInputs {
  Graph graph;
  hw::Cluster cluster;
  std::unique_ptr<cost::CostModel> cost;
};

// Heap-allocated: the cost model keeps pointers to the graph and cluster.
std::unique_ptr<SortingHatInputs> MakeSortingHatInputs(Graph g, hw::Cluster c) {
  auto s =
      std::make_unique<SortingHatInputs>(SortingHatInputs{std::move(g), std::move(c), nullptr});
  s->cost = std::make_unique<cost::CostModel>(s->graph, s->cluster);
  return s;
}

// The same request without SortingHat's own options (for the planners compared with it).
PlanRequest PlainRequest(const std::unique_ptr<SortingHatInputs>& s) {
  PlanRequest r;
  r.cost = s->cost.get();
  r.options.time_limit_s = 20;
  return r;
}

PlanRequest SortingHatRequest(const std::unique_ptr<SortingHatInputs>& s,
                              const std::string& ablation = "") {
  PlanRequest r;
  r.cost = s->cost.get();
  r.options.time_limit_s = 20;
  EXPECT_TRUE(r.planner_options.Give("submodel-time-limit", 0.2).ok());
  if (!ablation.empty()) EXPECT_TRUE(r.planner_options.Give("ablation", ablation).ok());
  return r;
}

// Two V100s of the sortinghat-v100 preset with its links: on one PCIe bus (GPU1+GPU2 of Fig. 2)
// or on two (GPU1+GPU3); one NVLink between them either way.
hw::Cluster TwoV100s(bool separate_buses) {
  auto full = hw::BuildPreset("sortinghat-v100");
  EXPECT_TRUE(full.ok());
  const hw::Cluster& f = *full;
  const hw::Link& mem = f.link(*f.FindLink("node0.membus"));
  const hw::Link& bus = f.link(*f.FindLink("pcie-bus0"));
  const hw::Link& leaf = f.link(*f.FindLink("pcie:gpu0"));
  const hw::Link& nv = f.link(*f.FindLink("nvlink:gpu0-gpu1"));
  const hw::DeviceSpec spec = f.device(*f.FindDevice("gpu0")).spec;
  hw::Cluster c(separate_buses ? "v100-separate-buses" : "v100-shared-bus");
  PlaceId host = c.AddHostMemory("node0");
  PlaceId root = c.AddSwitch("node0.cpu", "node0");
  c.AddLink("node0.membus", hw::LinkKind::kMemoryBus, host, root, mem.bandwidth_bytes_per_s,
            mem.latency_s);
  PlaceId sw;
  std::vector<DeviceId> gpus;
  for (int i = 0; i < 2; ++i) {
    if (i == 0 || separate_buses) {
      sw = c.AddSwitch("pcie-switch" + std::to_string(i), "node0");
      c.AddLink("pcie-bus" + std::to_string(i), hw::LinkKind::kPcie, root, sw,
                bus.bandwidth_bytes_per_s, bus.latency_s);
    }
    gpus.push_back(c.AddDevice("gpu" + std::to_string(i), hw::DeviceKind::kGpu, "node0", spec));
    c.AddLink("pcie:gpu" + std::to_string(i), hw::LinkKind::kPcie, sw, c.PlaceOf(gpus.back()),
              leaf.bandwidth_bytes_per_s, leaf.latency_s);
  }
  c.AddLink("nvlink:gpu0-gpu1", hw::LinkKind::kNvlink, c.PlaceOf(gpus[0]), c.PlaceOf(gpus[1]),
            nv.bandwidth_bytes_per_s, nv.latency_s, true, nv.count);
  EXPECT_TRUE(c.Finalize().ok());
  return c;
}

TEST(SortingHatPlannerTest, MergedPlanHasBusQueuesSubmodelsAndAnAccurateEstimate) {
  auto s =
      MakeSortingHatInputs(testing::MakeForkJoin(3, 2, 1024), *hw::BuildPreset("sortinghat-v100"));
  SortingHatReport report;
  auto direct = PlanSortingHat(SortingHatRequest(s), &report);
  ASSERT_TRUE(direct.ok()) << direct.status().ToString();
  auto out = RunPlanner("sortinghat", SortingHatRequest(s));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  auto single = RunPlanner("single", PlainRequest(s));
  ASSERT_TRUE(single.ok());
  EXPECT_LE(out->sim.makespan_s, single->sim.makespan_s * (1 + 1e-9));
  EXPECT_TRUE(out->sim.memory_overflows.empty());
  ASSERT_EQ(report.submodels.size(), 2u);
  ASSERT_GT(report.merged_sim_s, 0.0);
  // Fig. 11: the MILP's own estimate against the simulator (paper: within 3% on hardware).
  EXPECT_NEAR(report.milp_estimate_s, report.merged_sim_s, 0.1 * report.merged_sim_s);
  if (report.kept_milp) {
    const plan::Plan& plan = out->result.plan;
    EXPECT_EQ(plan.submodels.size(), 2u);
    ASSERT_TRUE(out->result.model_objective_s.has_value());
    EXPECT_NEAR(*out->result.model_objective_s, report.milp_estimate_s, 1e-12);
    ASSERT_TRUE(plan.estimate_ms.has_value());
    // Every weight load is on a per-bus queue.
    std::set<std::string> load_queues;
    for (const plan::CopyQueue& q : plan.queues)
      for (size_t t : q.transfers)
        if (plan.transfers[t].kind == plan::TransferKind::kWeightLoad) load_queues.insert(q.name);
    for (const std::string& q : load_queues) EXPECT_EQ(q.rfind("bus:pcie-bus", 0), 0u) << q;
  }
}

TEST(SortingHatPlannerTest, Figure3SeparateBusesBeatASharedBus) {
  // Weight-heavy branches (16 MB per MatMul): loading dominates, as for the paper's Fig. 3.
  auto shared = MakeSortingHatInputs(testing::MakeForkJoin(2, 2, 2048), TwoV100s(false));
  auto separate = MakeSortingHatInputs(testing::MakeForkJoin(2, 2, 2048), TwoV100s(true));
  auto a = RunPlanner("sortinghat", SortingHatRequest(shared));
  auto b = RunPlanner("sortinghat", SortingHatRequest(separate));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_LT(b->sim.makespan_s, 0.8 * a->sim.makespan_s)
      << "separate " << b->sim.makespan_s << " s, shared " << a->sim.makespan_s << " s";
  // The single-GPU time is the same on both: one GPU's bus either way.
  auto sa = RunPlanner("single", PlainRequest(shared));
  auto sb = RunPlanner("single", PlainRequest(separate));
  ASSERT_TRUE(sa.ok() && sb.ok());
  EXPECT_NEAR(sa->sim.makespan_s, sb->sim.makespan_s, 1e-9);
  EXPECT_LT(b->sim.makespan_s, sb->sim.makespan_s);
}

TEST(SortingHatPlannerTest, AblationsGiveValidPlans) {
  auto s = MakeSortingHatInputs(testing::MakeForkJoin(2, 2, 1024),
                                *hw::BuildPreset("sortinghat-v100-hetero"));
  for (const std::string ablation : {"no-contention", "no-topology", "independent"}) {
    auto out = RunPlanner("sortinghat", SortingHatRequest(s, ablation));
    ASSERT_TRUE(out.ok()) << ablation << ": " << out.status().ToString();
    // Ablations return their own merged plan, never a warm start.
    EXPECT_EQ(out->result.plan.submodels.size(), 2u) << ablation;
    if (ablation == "no-contention") {
      for (const plan::CopyQueue& q : out->result.plan.queues)
        EXPECT_EQ(q.name.rfind("bus:", 0), std::string::npos) << q.name;
    }
  }
  PlanRequest bad = SortingHatRequest(s);
  ASSERT_TRUE(bad.planner_options.Give("q", int64_t{1}).ok());
  EXPECT_EQ(PlanSortingHat(bad).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hx::place
