// End-to-end: `place <EfficientMIP JSON> --algo efficientmip --json` reports the model's own
// latency, its bound and gap; the exported LP solved elsewhere and loaded back with --solution
// gives the same plan.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "hexplan/milp/solver.h"
#include "testing/cli_runner.h"
#include "testing/test_paths.h"

namespace hx {
namespace {

using nlohmann::json;
using testing::RunCli;

// A chain of four nodes (accelerator 1, 2, 3, 4 ms; CPU 10x), 100 MiB each, every output 1 MiB
// (0.48828125 ms at EfficientMIP's 2 GiB/s), two accelerators of 250 MiB: the best split is
// {n0,n1} {n2,n3}: 3 + 2 * 0.48828125 + 7 = 10.9765625 ms.
constexpr double kCutMs = 0.48828125;
constexpr double kChainMs = 10.9765625;
std::string TinyChainJson() {
  json j;
  j["maxSizePerFPGA"] = 250 << 20;
  j["maxFPGAs"] = 2;
  j["maxCPUs"] = 1;
  j["nodes"] = json::array();
  for (int i = 0; i < 4; ++i)
    j["nodes"].push_back({{"id", i},
                          {"name", "n" + std::to_string(i)},
                          {"supportedOnFpga", true},
                          {"cpuLatency", 10.0 * (i + 1)},
                          {"fpgaLatency", 1.0 * (i + 1)},
                          {"isBackwardNode", false},
                          {"size", 100 << 20}});
  j["edges"] = json::array();
  for (int i = 0; i + 1 < 4; ++i)
    j["edges"].push_back({{"sourceId", i}, {"destId", i + 1}, {"cost", kCutMs}, {"size", 1 << 20}});
  return j.dump();
}

TEST(EfficientMipCliTest, BertLayerGraphReportsObjectiveBoundAndGap) {
  const std::string path = testing::SharedDataDir() +
                           "/placement/dnn-partitioning/latency-inputs/LayerGraphs/"
                           "bert24_inference.json";
  auto r = RunCli("place " + path + " --algo efficientmip --q 1 --time-limit 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = testing::ParseJsonOrFail(r.out);
  ASSERT_TRUE(j.contains("model_objective_ms")) << r.out;
  ASSERT_TRUE(j.contains("bound_ms")) << r.out;
  ASSERT_TRUE(j.contains("gap")) << r.out;
  const double objective = j.at("model_objective_ms").get<double>();
  EXPECT_LE(j.at("bound_ms").get<double>(), objective * (1 + 1e-9));
  // No split beats EfficientMIP's optimum 100.219 ms (two cheapest cuts of the chain).
  EXPECT_GE(objective, 100.219 - 1e-3);
  EXPECT_GE(j.at("gap").get<double>(), 0.0);
  const std::string status = j.at("status");
  EXPECT_TRUE(status == "optimal" || status == "feasible" || status == "time_limit" ||
              status == "warm_start")
      << status;
}

TEST(EfficientMipCliTest, ExportedLpSolvedElsewhereGivesTheSamePlan) {
  const std::string dir = testing::MakeTempDir();
  testing::WriteTextFile(dir + "/chain.json", TinyChainJson());
  auto solved =
      RunCli("place " + dir + "/chain.json --algo efficientmip --q 1 --json --export-lp " + dir +
             "/chain.lp -o " + dir + "/solved.json");
  ASSERT_EQ(solved.exit_code, 0) << solved.err;
  json a = testing::ParseJsonOrFail(solved.out);
  EXPECT_EQ(a.at("status"), "optimal");
  EXPECT_NEAR(a.at("model_objective_ms").get<double>(), kChainMs, 1e-9);
  EXPECT_NEAR(a.at("bound_ms").get<double>(), kChainMs, 1e-9);
  EXPECT_NEAR(a.at("gap").get<double>(), 0.0, 1e-12);

  auto model = milp::ReadModelFile(dir + "/chain.lp");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto r = milp::SolveWithCbc(*model, milp::SolveOptions{});
  ASSERT_TRUE(r.ok() && r->has_solution());
  EXPECT_NEAR(r->objective * 1e3, kChainMs, 1e-6);
  std::string sol = "# Objective value = " + std::to_string(r->objective) + "\n";
  char buf[160];
  for (size_t v = 0; v < model->num_vars(); ++v) {
    std::snprintf(buf, sizeof buf, "%s %.17g\n", model->vars()[v].name.c_str(), r->values[v]);
    sol += buf;
  }
  testing::WriteTextFile(dir + "/chain.sol", sol);
  auto loaded = RunCli("place " + dir + "/chain.json --algo efficientmip --q 1 --json --solution " +
                       dir + "/chain.sol -o " + dir + "/loaded.json");
  ASSERT_EQ(loaded.exit_code, 0) << loaded.err;
  json b = testing::ParseJsonOrFail(loaded.out);
  EXPECT_EQ(b.at("status"), "feasible");
  EXPECT_NEAR(b.at("model_objective_ms").get<double>(), kChainMs, 1e-9);
  EXPECT_NEAR(b.at("latency_ms").get<double>(), a.at("latency_ms").get<double>(), 1e-9);
}

}  // namespace
}  // namespace hx
