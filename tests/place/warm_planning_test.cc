// Planning for warm runs (PlanRequest::warm, `place --warm F`): planners see weight loads scaled by
// the resident fraction, RunPlanner warms and simulates the plan, and the result is never slower,
// simulated warm, than the cold plan warmed the same way. F = 0 is exactly the cold plan.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hexplan/cost/cost_model.h"
#include "hexplan/graph/zoo.h"
#include "hexplan/hw/presets.h"
#include "hexplan/place/planner.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/plan/plan_json.h"

namespace hx::place {
namespace {

struct WarmInputs {
  graph::Graph graph;
  std::unique_ptr<hw::Cluster> cluster;
  std::unique_ptr<cost::CostModel> cost;
};

// `model` (batch 1, its default sequence) on the 4-GPU sortinghat-v100 preset.
std::unique_ptr<WarmInputs> LoadWarmInputs(const std::string& model) {
  auto in = std::make_unique<WarmInputs>();
  auto cluster = hw::LoadCluster("sortinghat-v100");
  EXPECT_TRUE(cluster.ok()) << cluster.status().ToString();
  auto g = graph::BuildZooModel(model, graph::ZooOptions{});
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  if (!cluster.ok() || !g.ok()) return nullptr;
  in->graph = std::move(*g);
  in->cluster = std::make_unique<hw::Cluster>(std::move(*cluster));
  // The roofline: the measured HEFT-on-ResNet-50 margin below (docs/placement.md) was made with it,
  // as calib-core pinned the other quoted placement numbers.
  cost::CostModelOptions options;
  options.kind = cost::CostModelKind::kRoofline;
  in->cost = std::make_unique<cost::CostModel>(in->graph, *in->cluster, options);
  return in;
}

PlanRequest WarmRequest(const cost::CostModel& cost, double warm, const std::string& model) {
  PlanRequest request;
  request.cost = &cost;
  request.options.time_limit_s = 3.0;  // getf: a short MILP
  request.model_spec = model;
  request.cluster_spec = "sortinghat-v100";
  request.warm = warm;
  return request;
}

// The plan simulated after marking `warm` of its loaded weights resident (simulate --warm).
double SimulatedWarm(plan::Plan plan, const cost::CostModel& cost, double warm) {
  EXPECT_TRUE(plan::ApplyWarmStart(plan, cost.graph(), cost.cluster(), warm).ok());
  auto sim = sim::Simulate(plan, cost);
  EXPECT_TRUE(sim.ok()) << sim.status().ToString();
  return sim.ok() ? sim->makespan_s : 0.0;
}

TEST(WarmCostModel, ScalesWeightLoadsNotMemory) {
  auto in = LoadWarmInputs("gpt2");
  ASSERT_NE(in, nullptr);
  cost::CostModelOptions half_options;
  half_options.kind = cost::CostModelKind::kRoofline;  // as LoadWarmInputs's
  half_options.resident_weight_fraction = 0.5;
  cost::CostModel half(in->graph, *in->cluster, half_options);
  cost::CostModelOptions all_options;
  all_options.kind = cost::CostModelKind::kRoofline;
  all_options.resident_weight_fraction = 1.0;
  cost::CostModel all(in->graph, *in->cluster, all_options);
  const DeviceId gpu = in->cluster->DevicesOfKind(hw::DeviceKind::kGpu).front();
  int weights = 0;
  for (NodeId n : in->graph.NodeIds()) {
    if (in->graph.node(n).kind != graph::NodeKind::kWeight) continue;
    ++weights;
    const double cold = in->cost->WeightLoadTime(n, gpu);
    EXPECT_GT(cold, 0.0);
    EXPECT_DOUBLE_EQ(half.WeightLoadTime(n, gpu), 0.5 * cold);
    EXPECT_EQ(all.WeightLoadTime(n, gpu), 0.0);
  }
  EXPECT_GT(weights, 0);
  for (NodeId op : in->graph.Ops())
    EXPECT_EQ(all.OpMemoryBytes(op), in->cost->OpMemoryBytes(op)) << in->graph.node(op).name;
  cost::CostModelOptions bad;
  bad.resident_weight_fraction = 1.5;
  EXPECT_FALSE(bad.Validate().ok());
}

// The property the issue asks for: on several models and planners, the warm-planned outcome
// simulates (warm) no slower than the cold plan simulated warm, and the plan says it is warm.
TEST(WarmPlanning, NeverSlowerThanTheColdPlanSimulatedWarm) {
  for (const char* model : {"gpt2", "resnet50"}) {
    auto in = LoadWarmInputs(model);
    ASSERT_NE(in, nullptr);
    const cost::CostModel& cost = *in->cost;
    for (const char* algo : {"heft", "getf", "single"}) {
      auto cold = RunPlanner(algo, WarmRequest(cost, 0.0, model));
      ASSERT_TRUE(cold.ok()) << algo << " on " << model << ": " << cold.status().ToString();
      for (double warm : {1.0, 0.5}) {
        const std::string who =
            std::string(algo) + " on " + model + " warm " + std::to_string(warm);
        auto out = RunPlanner(algo, WarmRequest(cost, warm, model));
        ASSERT_TRUE(out.ok()) << who << ": " << out.status().ToString();
        const double cold_warm = SimulatedWarm(cold->result.plan, cost, warm);
        EXPECT_LE(out->sim.makespan_s, cold_warm * (1 + 1e-12)) << who;
        // Warm runs copy fewer weights: never slower than the cold plan run cold.
        EXPECT_LE(out->sim.makespan_s, cold->sim.makespan_s * (1 + 1e-12)) << who;
        EXPECT_EQ(out->warm, warm) << who;
        EXPECT_EQ(out->result.plan.warm, warm) << who;
        ASSERT_TRUE(out->warm_planning.has_value()) << who;
        EXPECT_NE(out->result.detail.find("kept the"), std::string::npos) << who;
        EXPECT_TRUE(out->sim.memory_overflows.empty()) << who;
        EXPECT_GE(out->sim.makespan_s * (1 + 1e-9), out->lower_bound.value_s()) << who;
        // The plan as written simulates to the reported latency without warming it again.
        auto again = sim::Simulate(out->result.plan, cost);
        ASSERT_TRUE(again.ok()) << who;
        EXPECT_EQ(again->makespan_s, out->sim.makespan_s) << who;
        if (std::string(model) == "resnet50" && std::string(algo) == "heft" && warm == 1.0) {
          // Measured (docs/placement.md): HEFT planned without loads beats its cold plan warmed.
          EXPECT_FALSE(out->warm_planning->kept_cold_plan) << who;
          EXPECT_LT(out->sim.makespan_s, cold_warm * (1 - 1e-3)) << who;
        }
        if (warm == 1.0) {
          EXPECT_EQ(out->sim.weight_load_bytes, 0) << who << ": every weight stays resident";
          int64_t peak = 0;  // resident weights still occupy device memory
          for (const sim::DeviceStats& d : out->sim.devices) peak += d.peak_memory_bytes;
          EXPECT_GE(peak, in->graph.ParameterBytes()) << who;
        }
      }
    }
  }
}

TEST(WarmPlanning, ZeroIsExactlyTheColdPlan) {
  auto in = LoadWarmInputs("gpt2");
  ASSERT_NE(in, nullptr);
  for (const char* algo : {"heft", "single"}) {
    PlanRequest plain = WarmRequest(*in->cost, 0.0, "gpt2");
    auto cold = RunPlanner(algo, plain);
    auto zero = RunPlanner(algo, WarmRequest(*in->cost, 0.0, "gpt2"));
    ASSERT_TRUE(cold.ok() && zero.ok()) << algo;
    EXPECT_EQ(plan::PlanToJson(zero->result.plan, in->graph, *in->cluster),
              plan::PlanToJson(cold->result.plan, in->graph, *in->cluster))
        << algo;
    EXPECT_EQ(zero->sim.makespan_s, cold->sim.makespan_s) << algo;
    EXPECT_FALSE(zero->result.plan.warm.has_value()) << algo;
    EXPECT_FALSE(zero->warm_planning.has_value()) << algo;
  }
}

TEST(WarmPlanning, RejectsAFractionOutsideZeroToOne) {
  auto in = LoadWarmInputs("gpt2");
  ASSERT_NE(in, nullptr);
  for (double bad : {1.5, -0.1, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    auto out = RunPlanner("heft", WarmRequest(*in->cost, bad, "gpt2"));
    ASSERT_FALSE(out.ok()) << bad;
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(out.status().message().find("--warm"), std::string::npos) << out.status().message();
  }
}

// A portfolio plans its members warm; the plan it returns is warmed once, not twice (twice would
// mark about 0.75 of the loaded bytes resident).
TEST(WarmPlanning, AutoWarmsItsWinnerOnce) {
  auto in = LoadWarmInputs("gpt2");
  ASSERT_NE(in, nullptr);
  PlanRequest request = WarmRequest(*in->cost, 0.5, "gpt2");
  request.options.time_limit_s = 0.5;  // the fast planners only
  auto out = RunPlanner("auto", request);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->result.plan.warm, 0.5);
  double resident = 0.0, placed = 0.0;
  for (const plan::WeightPlacement& wp : out->result.plan.weights) {
    if (wp.mode == plan::WeightMode::kDha) continue;
    const double bytes =
        static_cast<double>(in->graph.tensor(in->graph.node(wp.weight).outputs[0]).Bytes());
    placed += bytes;
    if (wp.resident) resident += bytes;
  }
  EXPECT_GT(resident, 0.0);
  EXPECT_LE(resident, 0.5 * placed + 1.0);
}

}  // namespace
}  // namespace hx::place
