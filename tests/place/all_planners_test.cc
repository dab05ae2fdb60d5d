// Properties of EVERY registered planner (PlannerNames(), the exact MILP planners with a short
// limit on small inputs only): each op placed once, routes and memory (RunPlanner checks the plan),
// every op after its producers, one op at a time per device, no memory overflow in the simulator,
// and a simulated latency no lower than the lower bound — on random DAGs, on zoo models and on the
// imported workloads that carry their own devices (MOIRAI CSV, EfficientMIP JSON).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "hexplan/core/stopwatch.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/cost/workload.h"
#include "hexplan/graph/zoo.h"
#include "hexplan/hw/presets.h"
#include "hexplan/place/planner.h"
#include "testing/graph_builders.h"
#include "testing/test_paths.h"

namespace hx::place {
namespace {

// MILP planners: they run on small inputs only, with a short limit.
const std::set<std::string> kExact = {"moirai", "efficientmip", "getf", "sortinghat", "auto"};

void ExpectSound(const PlacementOutcome& out, const graph::Graph& g, const std::string& who) {
  const sim::SimResult& sim = out.sim;
  EXPECT_GE(sim.makespan_s * (1 + 1e-9) + 1e-12, out.lower_bound.value_s()) << who;
  EXPECT_TRUE(sim.memory_overflows.empty())
      << who << ": " << (sim.memory_overflows.empty() ? "" : sim.memory_overflows[0]);
  std::map<uint32_t, int> placed;
  for (const plan::DeviceSchedule& ds : out.result.plan.devices)
    for (const plan::Subgraph& sg : ds.subgraphs)
      for (NodeId op : sg.ops) ++placed[op.value()];
  for (NodeId id : g.Ops()) {
    EXPECT_EQ(placed[id.value()], 1) << who << ": op " << g.node(id).name;
    for (NodeId pred : g.predecessors(id)) {
      if (!g.node(pred).is_op()) continue;
      EXPECT_GE(sim.ops[id.index()].start + 1e-12, sim.ops[pred.index()].finish)
          << who << ": " << g.node(id).name << " starts before " << g.node(pred).name;
    }
  }
  std::map<uint32_t, std::vector<std::pair<double, double>>> by_device;
  for (NodeId id : g.Ops())
    by_device[sim.ops[id.index()].device.value()].push_back(
        {sim.ops[id.index()].start, sim.ops[id.index()].finish});
  for (auto& [dev, spans] : by_device) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i)
      EXPECT_GE(spans[i].first + 1e-12, spans[i - 1].second) << who << " overlaps on " << dev;
  }
}

// Runs `name`; a planner may refuse a tight input only with ResourceExhausted (no plan fits).
void CheckPlanner(const std::string& name, const cost::CostModel& cost, double limit,
                  const std::string& what) {
  PlanRequest request;
  request.cost = &cost;
  request.options.time_limit_s = limit;
  request.model_spec = what;
  auto out = RunPlanner(name, request);
  if (!out.ok()) {
    EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted)
        << name << " on " << what << ": " << out.status().ToString();
    return;
  }
  ExpectSound(*out, cost.graph(), name + " on " + what);
}

TEST(AllPlanners, RegistryHasTheFastPlanners) {
  const std::vector<std::string> names = PlannerNames();
  for (const char* n : {"single", "heft", "peft", "m-topo", "m-etf", "m-sct", "deepplan", "chrion",
                        "pipeline", "auto"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

TEST(AllPlanners, RandomDagsOnGpusAndOnCpuPlusGpu) {
  for (const char* preset : {"sortinghat-v100", "chrion-1080ti"}) {
    auto cluster = hw::LoadCluster(preset);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    for (uint64_t seed = 1; seed <= 2; ++seed) {
      for (const std::string& name : PlannerNames()) {
        const bool exact = kExact.count(name) > 0;
        if (exact && seed > 1) continue;  // one small instance each, under a short limit
        graph::Graph g = testing::MakeRandomDag(exact ? 6 : 20, seed, 128);
        cost::CostModel cost(g, *cluster);
        Stopwatch watch;
        CheckPlanner(name, cost, exact ? 0.2 : 5.0,
                     "random DAG " + std::to_string(seed) + " on " + preset);
        RecordProperty(name + "_" + preset + "_s", std::to_string(watch.ElapsedSeconds()));
      }
    }
  }
}

TEST(AllPlanners, ZooModels) {
  auto cluster = hw::LoadCluster("sortinghat-v100");
  ASSERT_TRUE(cluster.ok());
  graph::ZooOptions gpt2;
  gpt2.seq = 32;
  graph::ZooOptions resnet;
  resnet.image_size = 64;
  for (const auto& [model, options] : std::vector<std::pair<std::string, graph::ZooOptions>>{
           {"gpt2", gpt2}, {"resnet50", resnet}}) {
    auto g = graph::BuildZooModel(model, options);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    cost::CostModel cost(*g, *cluster);
    for (const std::string& name : PlannerNames()) {
      if (kExact.count(name)) continue;  // a MILP over thousands of ops is not a unit test
      CheckPlanner(name, cost, 5.0, model);
    }
  }
}

TEST(AllPlanners, ImportedWorkloadsOnTheirOwnDevices) {
  const std::string base = testing::SharedDataDir() + "/placement/";
  for (const std::string& file :
       {base + "moirai/sample-data-csv/GoogLeNet.csv",
        base + "dnn-partitioning/latency-inputs/OperatorGraphs/bert_l-3_inference.json",
        // Zero-length nodes tied in start time with their readers on one device: the plan's
        // queues must follow the dependencies (once a deadlock for HEFT, PEFT and m-ETF).
        base + "dnn-partitioning/latency-inputs/LayerGraphs/bert24_inference.json"}) {
    auto w = cost::ReadWorkloadFile(file);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE(w->cluster.has_value()) << file;
    cost::CostModel cost(w->graph, *w->cluster, {}, &w->profile);
    for (const std::string& name : PlannerNames()) {
      if (kExact.count(name)) continue;
      CheckPlanner(name, cost, 5.0, file);
    }
  }
}

}  // namespace
}  // namespace hx::place
