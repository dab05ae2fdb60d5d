// Workloads that state each op's footprint (MOIRAI mi) and per-edge transfer times (pc_kk'): the
// footprints are held for the whole run (plan bound, simulator, planners' memory) and the
// simulator copies an edge in the time the file gives.
#include <gtest/gtest.h>

#include <fstream>

#include "hexplan/cost/cost_model.h"
#include "hexplan/cost/workload.h"
#include "hexplan/place/planner.h"
#include "hexplan/place/problem_builder.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/plan/validator.h"
#include "hexplan/sim/simulator.h"
#include "testing/cli_runner.h"
#include "testing/test_paths.h"

namespace hx::place {
namespace {

std::string Example1() {
  return testing::SharedDataDir() + "/placement/moirai/sample-data-csv/example-1.csv";
}

TEST(WorkloadMemory, SingleOnExample1NamesEachDevicesShortfall) {
  auto w = cost::ReadWorkloadFile(Example1());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  cost::CostModel cost(w->graph, *w->cluster, {}, &w->profile);
  PlanRequest r;
  r.cost = &cost;
  auto out = RunPlanner("single", r);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted);
  const std::string& m = out.status().message();
  // 44 units of stated footprints against 14 / 14 / 16.
  EXPECT_NE(m.find("dev0 needs 44 B"), std::string::npos) << m;
  EXPECT_NE(m.find("has 14 B: short by 30 B"), std::string::npos) << m;
  EXPECT_NE(m.find("dev2 needs 44 B"), std::string::npos) << m;
  EXPECT_NE(m.find("has 16 B: short by 28 B"), std::string::npos) << m;
}

TEST(WorkloadMemory, StatedFootprintsAreResidentInTheBoundAndTheSimulator) {
  auto w = cost::ReadWorkloadFile(Example1());
  ASSERT_TRUE(w.ok());
  cost::CostModel cost(w->graph, *w->cluster, {}, &w->profile);
  plan::Plan p;
  plan::DeviceSchedule ds;
  ds.device = DeviceId(2);
  for (NodeId op : w->graph.Ops()) ds.subgraphs.push_back(plan::Subgraph{{op}});
  p.devices.push_back(ds);
  ASSERT_TRUE(plan::CompleteTransfers(p, w->graph, *w->cluster).ok());
  const auto bound = plan::PlanMemoryBound(p, cost);
  EXPECT_EQ(bound[2].stated_bytes, 44);
  EXPECT_EQ(bound[2].total(), 44);
  EXPECT_EQ(bound[0].total(), 0);
  auto sim = sim::Simulate(p, cost);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  EXPECT_EQ(sim->devices[2].peak_memory_bytes, 44);
  ASSERT_FALSE(sim->devices[2].memory.empty());
  EXPECT_EQ(sim->devices[2].memory.front().time, 0.0);
  EXPECT_EQ(sim->devices[2].memory.back().bytes, 44);  // held to the end
  EXPECT_EQ(sim->memory_overflows.size(), 1u);         // 44 on a 16-unit device
  EXPECT_FALSE(plan::CheckPlan(p, cost, "test").ok());
}

TEST(WorkloadMemory, NoActivationReserveWhenTheWorkloadStatesEveryFootprint) {
  auto w = cost::ReadWorkloadFile(Example1());
  ASSERT_TRUE(w.ok());
  cost::CostModel cost(w->graph, *w->cluster, {}, &w->profile);
  auto problem = BuildGraphProblem(cost);
  ASSERT_TRUE(problem.ok());
  EXPECT_DOUBLE_EQ(problem->problem.device_memory(0), 14.0);
  EXPECT_DOUBLE_EQ(problem->problem.device_memory(2), 16.0);
  ProblemBuildOptions reserve;
  reserve.activation_reserve_fraction = 0.5;
  auto halved = BuildGraphProblem(cost, reserve);
  ASSERT_TRUE(halved.ok());
  EXPECT_DOUBLE_EQ(halved->problem.device_memory(2), 8.0);
}

TEST(WorkloadMemory, SimulatorCopiesAnEdgeInTheWorkloadsTime) {
  // task0 (source) -> task1 -> (edge 5) -> task2; pc01 of edge 5 is 7 ms.
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/three.csv";
  std::ofstream(path) << "task,c_task,dir_succ,p0,p1,pc00,pc01,pc10,pc11,mi,m0,m1\n"
                         "0,,1,0,0,,,,,0,100,100\n"
                         "1,5,2,3,4,0,7,9,0,10,,\n"
                         "2,,,2,6,,,,,10,,\n";
  auto w = cost::ReadWorkloadFile(path);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  cost::CostModel cost(w->graph, *w->cluster, {}, &w->profile);
  plan::Plan p;
  std::vector<NodeId> ops = w->graph.Ops();
  ASSERT_EQ(ops.size(), 3u);
  auto find = [&](const std::string& name) {
    for (NodeId id : ops)
      if (w->graph.node(id).name == name) return id;
    return NodeId();
  };
  p.devices.push_back({DeviceId(0), {plan::Subgraph{{find("task0")}}, {{find("task1")}}}});
  p.devices.push_back({DeviceId(1), {plan::Subgraph{{find("task2")}}}});
  ASSERT_TRUE(plan::CompleteTransfers(p, w->graph, *w->cluster).ok());
  auto sim = sim::Simulate(p, cost);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  EXPECT_NEAR(sim->makespan_s, (0 + 3 + 7 + 6) * 1e-3, 1e-12);
}

}  // namespace
}  // namespace hx::place
