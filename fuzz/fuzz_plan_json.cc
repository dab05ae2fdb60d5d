// libFuzzer target: ParsePlanHeader and ParsePlan on arbitrary text must return a Status, never
// crash. Names resolve against one fixed graph and cluster, the ones the seeds in
// fuzz/corpus/plan_json/ were planned for (`hexplan place lstm --layers 1 --io 8 --seq 2 --cluster
// asym:gpus=1,1 -o plan.json`). A plan that reads must pass through the validator (which reports
// its problems, never crashes) and write back.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_util.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/graph/zoo.h"
#include "hexplan/hw/presets.h"
#include "hexplan/plan/plan_json.h"
#include "hexplan/plan/validator.h"

namespace {

struct Fixture {
  hx::graph::Graph graph;
  hx::hw::Cluster cluster;
};

const Fixture& GetFixture() {
  static const Fixture* fixture = [] {
    hx::graph::ZooOptions options;
    options.seq = 2;
    options.lstm_layers = 1;
    options.lstm_io = 8;
    auto graph = hx::graph::BuildZooModel("lstm", options);
    auto cluster = hx::hw::BuildPreset("asym:gpus=1,1");
    if (!graph.ok() || !cluster.ok()) std::abort();  // the fixture itself is broken
    return new Fixture{std::move(*graph), std::move(*cluster)};
  }();
  return *fixture;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 16)) return 0;
  const Fixture& fixture = GetFixture();
  const std::string text = hx::fuzz::ToString(data, size);
  (void)hx::plan::ParsePlanHeader(text, "fuzz.json");
  auto plan = hx::plan::ParsePlan(text, "fuzz.json", fixture.graph, fixture.cluster);
  if (plan.ok()) {
    static const hx::cost::CostModel* cost =
        new hx::cost::CostModel(fixture.graph, fixture.cluster);
    (void)hx::plan::ValidatePlan(*plan, *cost);
    (void)hx::plan::PlanToJson(*plan, fixture.graph, fixture.cluster);
  }
  return 0;
}
