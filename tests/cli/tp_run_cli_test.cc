// `hexplan run MODEL --tp-plan FILE` through the real binary: a `hexplan tp --json` plan of gpt2
// on four nodes runs as four thread ranks and matches the one-process forward; bad plans exit 2.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/cli_runner.h"

namespace hx {
namespace {

using nlohmann::json;
using testing::RunCli;

// Plans gpt2 with `algo` on `cluster` (batch 2, 4 tokens) into DIR/ALGO.json; returns the path.
std::string TpRunCliPlan(const std::string& dir, const std::string& algo,
                         const std::string& cluster, const std::string& extra = "") {
  const std::string path = dir + "/" + algo + ".json";
  auto r = RunCli("tp gpt2 --cluster " + cluster + " --algo " + algo +
                  " --batch 2 --input-len 4 --output-len 1 --dtype fp32 --json " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  testing::WriteTextFile(path, r.out);
  return path;
}

TEST(TpRunCliTest, AsymGroupPlanMatchesTheReference) {
  // AsymGroup on uneven nodes, two groups kept (no reduction to a baseline's layout): uneven
  // batch slices (two of them empty), row blocks and column pieces. Megatron and AutoDDL run in
  // exec_tests (TpRunnerTest).
  const std::string dir = testing::MakeTempDir();
  const std::string asym =
      TpRunCliPlan(dir, "asymgroup", "asym:gpus=1,1,2,3", "--groups 2 --paper-groups");
  auto r = RunCli("run gpt2 --tp-plan " + asym +
                  " --tp-layers 1 --warmup 1 --repeat 3 --json --output " + dir + "/out.npy");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = testing::ParseJsonOrFail(r.out);
  EXPECT_EQ(j["layout"], "asymgroup");
  EXPECT_EQ(j["ranks"], 4);
  EXPECT_EQ(j["transport"], "threads");
  EXPECT_EQ(j["layers"], 1);
  EXPECT_LE(j["max_relative_error"].get<double>(), 1e-5);
  EXPECT_TRUE(std::filesystem::exists(dir + "/out.npy"));
  // Three measured forwards after one unmeasured; the time printed is their median.
  auto runs = j["forward_ms_runs"].get<std::vector<double>>();
  ASSERT_EQ(runs.size(), 3u);
  std::sort(runs.begin(), runs.end());
  EXPECT_DOUBLE_EQ(j["forward_ms"].get<double>(), runs[1]);
  EXPECT_GT(runs[0], 0.0);
  EXPECT_EQ(RunCli("run gpt2 --tp-plan " + asym + " --repeat 0").exit_code, 2);
}

TEST(TpRunCliTest, BadPlansExitTwoNamingTheFile) {
  const std::string dir = testing::MakeTempDir();
  const std::string plan = dir + "/plan.json";
  // What `hexplan tp ... --json --no-plan` prints, less the times: no per-node plan.
  testing::WriteTextFile(plan,
                         R"({"model": "gpt2", "batch": 2, "input_len": 4, "method": "megatron",
                             "layout": "megatron"})");
  auto r = RunCli("run gpt2 --tp-plan " + plan);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no 'plan'"), std::string::npos) << r.err;
  // A one-node plan (blocks are checked against the model later) for another model.
  const std::string one = dir + "/one.json";
  testing::WriteTextFile(one, R"({"model": "gpt2", "batch": 2, "input_len": 4,
      "method": "megatron", "layout": "megatron", "plan": {"nodes": [{"node": 0, "name": "n0",
      "group": 0, "capability": 1, "batch": [0, 2], "blocks": []}]}})");
  r = RunCli("run gpt2-xl --tp-plan " + one);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("planned for 'gpt2'"), std::string::npos) << r.err;
  r = RunCli("run gpt2 --tp-plan " + one + " --tp-layers 1");  // no qkv block
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("node n0 has no block of qkv"), std::string::npos) << r.err;
  // Over the 4 GiB weight cap (GPT-3 175B's 96 layers), before any weight is made.
  testing::WriteTextFile(dir + "/big.json",
                         R"({"model": "gpt3-175b", "batch": 1, "input_len": 1,
      "method": "megatron", "layout": "megatron", "plan": {"nodes": [{"node": 0, "name": "n0",
      "group": 0, "capability": 1, "batch": [0, 1], "blocks": []}]}})");
  r = RunCli("run gpt3-175b --tp-plan " + dir + "/big.json");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("4 GiB cap"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hx
