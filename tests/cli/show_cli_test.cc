// `hexplan show` end to end: a plan made by `place` reads back per device, as text and as JSON,
// and a plan file that is not there exits 2 naming it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "testing/cli_runner.h"

namespace hx {
namespace {

using ::testing::HasSubstr;
using testing::RunCli;

// A plan of GPT-2 small over the four V100s of SortingHat's testbed, written once per test.
std::string PlaceGpt2(const std::string& algo) {
  const std::string path = testing::MakeTempDir() + "/plan.json";
  auto placed =
      RunCli("place gpt2 --seq 32 --cluster sortinghat-v100 --algo " + algo + " -o " + path);
  EXPECT_EQ(placed.exit_code, 0) << placed.err;
  return path;
}

TEST(ShowCliTest, TextNamesEveryDeviceAndItsRuns) {
  const std::string plan = PlaceGpt2("single");
  auto shown = RunCli("show " + plan);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr("(single, gpt2 on "));
  EXPECT_THAT(shown.out, HasSubstr("transformer/h.0-11 ("));
  EXPECT_THAT(shown.out, HasSubstr("  compute    "));
  EXPECT_THAT(shown.out, HasSubstr("  transfers  in "));
}

TEST(ShowCliTest, AWarmPlansWeightsReadResidentNotLoaded) {
  const std::string path = testing::MakeTempDir() + "/warm.json";
  auto placed =
      RunCli("place gpt2 --seq 32 --cluster sortinghat-v100 --algo single --warm 1 -o " + path);
  ASSERT_EQ(placed.exit_code, 0) << placed.err;
  auto shown = RunCli("show " + path + " --json");
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  nlohmann::json j = testing::ParseJsonOrFail(shown.out);
  // Every weight stays on its GPU between requests: none is loaded per request.
  EXPECT_EQ(j["totals"]["weights"]["load"]["count"].get<size_t>(), 0u) << j.dump();
  EXPECT_GT(j["totals"]["weights"]["resident"]["count"].get<size_t>(), 0u) << j.dump();
  auto text = RunCli("show " + path);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr(" resident ("));
  EXPECT_THAT(text.out, ::testing::Not(HasSubstr(" loaded (")));
}

TEST(ShowCliTest, JsonListsDevicesRunsAndTotals) {
  const std::string plan = PlaceGpt2("heft");
  auto shown = RunCli("show " + plan + " --json");
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  nlohmann::json j = testing::ParseJsonOrFail(shown.out);
  EXPECT_EQ(j["algo"], "heft");
  EXPECT_EQ(j["model"], "gpt2");
  ASSERT_TRUE(j["devices"].is_array());
  ASSERT_FALSE(j["devices"].empty());
  size_t ops = 0;
  for (const nlohmann::json& d : j["devices"]) {
    size_t run_ops = 0;
    for (const nlohmann::json& run : d["runs"]) {
      EXPECT_TRUE(run.contains("label") && run.contains("first") && run.contains("last"));
      run_ops += run["ops"].get<size_t>();
    }
    EXPECT_EQ(run_ops, d["ops"].get<size_t>());
    EXPECT_TRUE(d["memory"].contains("total_bytes"));
    EXPECT_TRUE(d["weights"]["load"].contains("bytes"));
    EXPECT_TRUE(d["transfers_in"].contains("count"));
    ops += d["ops"].get<size_t>();
  }
  EXPECT_EQ(j["totals"]["ops"].get<size_t>(), ops);
  EXPECT_GT(j["totals"]["compute_ms"].get<double>(), 0.0);
}

TEST(ShowCliTest, AllListsEveryRun) {
  const std::string plan = PlaceGpt2("heft");
  auto some = RunCli("show " + plan);
  auto all = RunCli("show " + plan + " --all");
  ASSERT_EQ(some.exit_code, 0) << some.err;
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(all.out.find("more runs"), std::string::npos);
  EXPECT_GE(all.out.size(), some.out.size());
}

TEST(ShowCliTest, MissingPlanExitsTwoNamingTheFile) {
  auto shown = RunCli("show /nonexistent.json");
  EXPECT_EQ(shown.exit_code, 2);
  EXPECT_THAT(shown.err, HasSubstr("/nonexistent.json"));
  const std::string bad = testing::MakeTempDir() + "/bad.json";
  testing::WriteTextFile(bad, "{\"format\": \"hexplan-plan\",\n  not json}");
  auto parsed = RunCli("show " + bad);
  EXPECT_EQ(parsed.exit_code, 2);
  // The line and column of the syntax error (was "bad.json: /: not valid JSON").
  EXPECT_THAT(parsed.err, HasSubstr(bad + ":2:4: invalid JSON: syntax error"));
}

}  // namespace
}  // namespace hx
