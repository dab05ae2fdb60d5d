// `place --warm F` and `compare --warm F` through the real binary: the plan file records `warm` and
// its resident weights, so `simulate` of it prints the latency `place` printed without --warm; a
// fraction outside [0, 1] is exit 2 naming --warm.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/cli_runner.h"

namespace hx {
namespace {

using nlohmann::json;
using testing::RunCli;

constexpr char kGpt2OnFourV100s[] = "gpt2 --cluster sortinghat-v100";

TEST(WarmCliTest, PlaceWarmThenSimulateGivesTheSameLatency) {
  const std::string dir = testing::MakeTempDir();
  const std::string plan = dir + "/p.json";
  auto placed =
      RunCli(std::string("place ") + kGpt2OnFourV100s + " --algo heft --warm 1 --json -o " + plan);
  ASSERT_EQ(placed.exit_code, 0) << placed.err;
  json p = testing::ParseJsonOrFail(placed.out);
  EXPECT_EQ(p.at("warm").get<double>(), 1.0);
  ASSERT_TRUE(p.contains("warm_planning")) << p.dump();
  EXPECT_LE(p["latency_ms"].get<double>(),
            p["warm_planning"]["warm_planned_ms"].get<double>() * (1 + 1e-12));
  json file = testing::ParseJsonOrFail(testing::ReadTextFile(plan));
  EXPECT_EQ(file.at("warm").get<double>(), 1.0);
  for (const json& t : file.at("transfers"))
    EXPECT_NE(t.at("kind"), "weight_load") << "every weight stays resident: " << t.dump();

  auto simulated = RunCli("simulate " + plan + " --json");
  ASSERT_EQ(simulated.exit_code, 0) << simulated.err;
  json s = testing::ParseJsonOrFail(simulated.out);
  EXPECT_DOUBLE_EQ(s.at("latency_ms").get<double>(), p.at("latency_ms").get<double>());
  EXPECT_DOUBLE_EQ(s.at("lower_bound_ms").get<double>(), p.at("lower_bound_ms").get<double>());
  EXPECT_EQ(s.at("warm").get<double>(), 1.0);
  EXPECT_EQ(s.at("weight_load_bytes").get<double>(), 0.0);

  // The cold plan of the same planner, simulated warm, is no faster than the warm plan.
  const std::string cold_plan = dir + "/cold.json";
  auto cold =
      RunCli(std::string("place ") + kGpt2OnFourV100s + " --algo heft --json -o " + cold_plan);
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_EQ(testing::ParseJsonOrFail(cold.out).at("warm").get<double>(), 0.0);
  EXPECT_EQ(testing::ParseJsonOrFail(testing::ReadTextFile(cold_plan)).count("warm"), 0u);
  auto cold_warm = RunCli("simulate " + cold_plan + " --warm 1 --json");
  ASSERT_EQ(cold_warm.exit_code, 0) << cold_warm.err;
  EXPECT_LE(p["latency_ms"].get<double>(),
            testing::ParseJsonOrFail(cold_warm.out)["latency_ms"].get<double>() * (1 + 1e-12));
}

TEST(WarmCliTest, PlaceTextSaysWarm) {
  auto r = RunCli(std::string("place ") + kGpt2OnFourV100s + " --algo heft --warm 0.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(simulated, warm 0.50)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("planned warm"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kept the"), std::string::npos) << r.out;
}

TEST(WarmCliTest, CompareWarmRows) {
  const std::string algos = " --algos single,heft,m-etf";
  auto warm = RunCli(std::string("compare ") + kGpt2OnFourV100s + algos + " --warm 1 --json");
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  auto cold = RunCli(std::string("compare ") + kGpt2OnFourV100s + algos + " --json");
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  json w = testing::ParseJsonOrFail(warm.out), c = testing::ParseJsonOrFail(cold.out);
  EXPECT_EQ(w.at("warm").get<double>(), 1.0);
  EXPECT_EQ(c.at("warm").get<double>(), 0.0);
  ASSERT_EQ(w.at("results").size(), 3u);
  for (const json& row : w["results"]) {
    EXPECT_EQ(row.at("warm").get<double>(), 1.0) << row.dump();
    ASSERT_TRUE(row.contains("warm_planning")) << row.dump();
    bool matched = false;
    for (const json& cold_row : c["results"]) {
      if (cold_row["algo"] != row["algo"]) continue;
      matched = true;
      // Warm runs copy no weights: faster than the same planner's cold start.
      EXPECT_LT(row["latency_ms"].get<double>(), cold_row["latency_ms"].get<double>())
          << row["algo"];
    }
    EXPECT_TRUE(matched) << row.dump();
  }
  auto text = RunCli(std::string("compare ") + kGpt2OnFourV100s + algos + " --warm 1");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("planned for warm runs (warm 1.00)"), std::string::npos) << text.out;
}

TEST(WarmCliTest, AFractionOutsideZeroToOneIsExitTwo) {
  for (const char* bad : {"1.5", "-0.5", "nan", "inf"}) {
    for (const char* cmd : {"place", "compare"}) {
      auto r = RunCli(std::string(cmd) + " " + kGpt2OnFourV100s + " --warm " + bad);
      EXPECT_EQ(r.exit_code, 2) << cmd << " --warm " << bad << ": " << r.err;
      EXPECT_NE(r.err.find("--warm"), std::string::npos) << r.err;
    }
  }
}

}  // namespace
}  // namespace hx
