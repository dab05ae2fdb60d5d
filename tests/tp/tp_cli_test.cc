#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "hexplan/hw/presets.h"
#include "hexplan/tp/llm_tp.h"
#include "hexplan/tp/tp_report.h"
#include "hexplan/tp/tp_system.h"
#include "testing/cli_runner.h"

namespace hx::tp {
namespace {

TEST(TpClusterTest, AsymPresetsGiveTableOneCapabilities) {
  auto c = hw::LoadCluster("asym:gpus=1,1,2,3,3");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto sys = TpSystemFromCluster(*c, "fp16");
  ASSERT_TRUE(sys.ok()) << sys.status().ToString();
  EXPECT_EQ(sys->Capabilities(), (std::vector<double>{1, 1, 2, 3, 3}));
  EXPECT_NEAR(sys->nodes[2].intra_bandwidth, 300e9, 1e6);
  EXPECT_NEAR(sys->nodes[0].inter_bandwidth, 100e9, 1e6);
  EXPECT_NEAR(sys->nodes[0].inter_latency_s, 200e-9, 1e-12);
  auto s8 = hw::LoadCluster("asym:S8");
  ASSERT_TRUE(s8.ok());
  auto s8sys = TpSystemFromCluster(*s8, "fp16");
  ASSERT_TRUE(s8sys.ok());
  EXPECT_EQ(s8sys->nodes.size(), 16u);
  EXPECT_EQ(s8sys->NumGpus(), 24);
}

TEST(TpCliTest, JsonHasGroupsVolumeLatencyAndPlan) {
  auto r = testing::RunCli(
      "tp --model gpt3-175b --cluster asym:gpus=1,1,2,3,3 --algo asymgroup --groups 2 --batch 20 "
      "--output-len 16 --ignore-memory --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["groups"].size(), 2u);
  std::vector<std::vector<int>> groups;
  for (const auto& g : j["groups"]) groups.push_back(g["nodes"].get<std::vector<int>>());
  std::sort(groups.begin(), groups.end());
  EXPECT_EQ(groups, (std::vector<std::vector<int>>{{0, 1, 2}, {3, 4}}));
  for (const auto& g : j["groups"]) {
    double cap = g["capability"];
    EXPECT_TRUE(cap == 4.0 || cap == 6.0);
  }
  EXPECT_GT(j["comm_volume_bytes"].get<double>(), 0);
  EXPECT_GT(j["latency_ms"].get<double>(), 0);
  ASSERT_EQ(j["plan"]["nodes"].size(), 5u);
  EXPECT_EQ(j["plan"]["nodes"][4]["batch"], (std::vector<int>{14, 20}));
  EXPECT_EQ(j["plan"]["nodes"][0]["blocks"].size(), 4u);
}

TEST(TpCliTest, BaselinesRun) {
  for (const char* algo : {"megatron", "autoddl"}) {
    auto r = testing::RunCli(std::string("tp --model gpt3-175b --cluster asym:S16 --algo ") + algo +
                             " --output-len 8 --json --no-plan");
    ASSERT_EQ(r.exit_code, 0) << algo << ": " << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["method"], algo);
    EXPECT_FALSE(j.contains("plan"));
  }
}

TEST(TpCliTest, BadInputExitsTwo) {
  // k larger than the node count.
  auto k =
      testing::RunCli("tp --model gpt3-175b --cluster asym:nodes=4 --groups 5 --ignore-memory");
  EXPECT_EQ(k.exit_code, 2);
  EXPECT_NE(k.err.find("larger than the number of nodes"), std::string::npos) << k.err;
  // The model does not fit 4 x 40 GB.
  auto mem = testing::RunCli("tp --model gpt3-175b --cluster asym:nodes=4");
  EXPECT_EQ(mem.exit_code, 2);
  EXPECT_NE(mem.err.find("GB of GPU memory"), std::string::npos) << mem.err;
  EXPECT_NE(mem.err.find("gpt3-175b"), std::string::npos) << mem.err;
  auto algo = testing::RunCli("tp --model gpt3-175b --cluster asym:S0 --algo tesseract");
  EXPECT_EQ(algo.exit_code, 2);
  auto model = testing::RunCli("tp --model resnet50 --cluster asym:S0");
  EXPECT_EQ(model.exit_code, 2);
}

TEST(TpCliTest, UnknownChoicesListTheRegisteredNames) {
  auto algo = testing::RunCli("tp --model gpt3-175b --cluster asym:S0 --algo tesseract");
  EXPECT_EQ(algo.exit_code, 2);
  EXPECT_NE(algo.err.find("--algo"), std::string::npos) << algo.err;
  EXPECT_NE(algo.err.find(TpMethodRegistry().NameList()), std::string::npos) << algo.err;
  auto group = testing::RunCli("tp --model gpt3-175b --cluster asym:S0 --group-algo random");
  EXPECT_EQ(group.exit_code, 2);
  EXPECT_NE(group.err.find("--group-algo"), std::string::npos) << group.err;
  EXPECT_NE(group.err.find(GroupAlgoRegistry().NameList()), std::string::npos) << group.err;
  auto help = testing::RunCli("tp --help");
  EXPECT_EQ(help.exit_code, 0);
  for (const TpMethodEntry& m : TpMethods()) {
    EXPECT_NE(help.out.find(m.description), std::string::npos) << m.name;
  }
  for (const GroupAlgoEntry& g : GroupAlgos()) {
    EXPECT_NE(help.out.find(g.description), std::string::npos) << g.name;
  }
}

TEST(TpCliTest, ModelIsPositionalWithModelAsAlias) {
  const std::string rest = " --cluster asym:S16 --output-len 4 --json --no-plan";
  auto pos = testing::RunCli("tp gpt3-175b" + rest);
  auto flag = testing::RunCli("tp --model gpt3-175b" + rest);
  ASSERT_EQ(pos.exit_code, 0) << pos.err;
  ASSERT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(pos.out, flag.out);
  auto both = testing::RunCli("tp gpt3-175b --model gpt3-13b" + rest);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--model"), std::string::npos) << both.err;
}

TEST(TpCliTest, EngineFusedIsFasterThanEagerAndUnknownEnginesExitTwo) {
  const std::string rest =
      " --cluster dgx-a100 --algo megatron --batch 1 --output-len 4 --time-preset calibrated "
      "--json --no-plan --engine ";
  auto eager = testing::RunCli("tp openllama-7b" + rest + "eager");
  auto fused = testing::RunCli("tp openllama-7b" + rest + "fused");
  ASSERT_EQ(eager.exit_code, 0) << eager.err;
  ASSERT_EQ(fused.exit_code, 0) << fused.err;
  double te = nlohmann::json::parse(eager.out)["total_ms"].get<double>();
  double tf = nlohmann::json::parse(fused.out)["total_ms"].get<double>();
  // At batch 1 on 8 GPUs the step is mostly fixed costs: no host launch on the critical path
  // and one attention kernel instead of three take a third off.
  EXPECT_LT(tf, 0.8 * te);
  auto bad = testing::RunCli("tp openllama-7b" + rest + "graph");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--engine"), std::string::npos) << bad.err;
}

// --all-reduce custom: the engine kernel's fit prices Megatron's small all-reduces on one H100
// node (decode: 8 KiB a call); messages over its largest measured size (prefill of 8 x 128 tokens:
// 8 MiB) stay on NCCL, as do GPU counts without a custom fit (8 A100s), with a warning.
TEST(TpCliTest, CustomAllReduceServesSmallMessagesAndFallsBackToNccl) {
  const std::string rest =
      " --algo megatron --input-len 128 --output-len 16 --time-preset calibrated --engine fused "
      "--json --no-plan";
  auto run = [&](const std::string& args) {
    auto r = testing::RunCli("tp openllama-7b" + rest + " " + args);
    EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  };
  const std::string h100 = "--cluster dgx-h100:gpus=4 --batch 8";
  nlohmann::json nccl = run(h100 + " --all-reduce nccl"),
                 custom = run(h100 + " --all-reduce custom");
  ASSERT_FALSE(nccl.empty());
  ASSERT_FALSE(custom.empty());
  // NCCL's 4-GPU ring costs ~30 us a call, the custom kernel ~10: two calls per layer, 32 layers.
  EXPECT_LT(custom["decode_comm_ms"].get<double>(), 0.5 * nccl["decode_comm_ms"].get<double>());
  EXPECT_EQ(custom["decode_compute_ms"].get<double>(), nccl["decode_compute_ms"].get<double>());
  EXPECT_EQ(custom["prefill_comm_ms"].get<double>(), nccl["prefill_comm_ms"].get<double>());
  // No custom fit for 8 A100s: the same times, and the warning says why.
  auto a_nccl = testing::RunCli("tp openllama-7b" + rest + " --cluster dgx-a100 --batch 1");
  auto a_custom = testing::RunCli("tp openllama-7b" + rest +
                                  " --cluster dgx-a100 --batch 1 --all-reduce custom");
  ASSERT_EQ(a_custom.exit_code, 0) << a_custom.err;
  EXPECT_EQ(nlohmann::json::parse(a_custom.out)["total_ms"],
            nlohmann::json::parse(a_nccl.out)["total_ms"]);
  EXPECT_NE(a_custom.err.find("no custom all-reduce fit for 8 x A100-SXM4-80GB"), std::string::npos)
      << a_custom.err;
  auto bad = testing::RunCli("tp openllama-7b" + rest + " --cluster dgx-a100 --all-reduce mpi");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--all-reduce 'mpi'"), std::string::npos) << bad.err;
  auto paper = testing::RunCli(
      "tp openllama-7b --cluster dgx-a100 --algo megatron --time-preset paper --all-reduce custom");
  EXPECT_EQ(paper.exit_code, 2);
  EXPECT_NE(paper.err.find("needs --time-preset calibrated"), std::string::npos) << paper.err;
}

TEST(TpCliTest, ZooDecodersRunAndEncodersAndOtherDtypesAreRefused) {
  // (every zoo decoder plans: TpZooTest; here the CLI's refusals, one process each)
  auto g13 = testing::RunCli("tp gpt3-13b --cluster asym:S16 --output-len 4 --json --no-plan");
  ASSERT_EQ(g13.exit_code, 0) << g13.err;
  auto bert = testing::RunCli("tp bert-large --cluster dgx-a100");
  EXPECT_EQ(bert.exit_code, 2);
  EXPECT_NE(bert.err.find("encoder"), std::string::npos) << bert.err;
  auto int8 = testing::RunCli("tp gpt3-6.7b --cluster dgx-a100 --dtype int8");
  EXPECT_EQ(int8.exit_code, 2);
  EXPECT_NE(int8.err.find("--dtype 'int8'"), std::string::npos) << int8.err;
}

void IdealIsOfferedAndRuns() {
  // (every method plans in the library: TpMethodRegistryTest; ideal was offered and then failed)
  auto r = testing::RunCli("tp gpt3-175b --cluster asym:S8 --ignore-memory --algo ideal --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["comm_volume_bytes"].get<double>(), 0);
  EXPECT_TRUE(j["volume_only"].get<bool>());
  EXPECT_TRUE(j["total_ms"].is_null());
  EXPECT_FALSE(j.contains("plan"));
}

void SingleNodeVolumeIsNotPrintedAsZero() {
  auto r = testing::RunCli("tp gpt3-6.7b --cluster dgx-a100 --output-len 4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("0.000 GB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MB over NVLink"), std::string::npos) << r.out;
}

TEST(TpCliTest, CompareListsEveryMethodAndMarksTheWinner) {
  auto r = testing::RunCli(
      "tp gpt3-175b --cluster asym:S8 --output-len 4 --ignore-memory --compare --json --rate 4 "
      "--requests 20");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["methods"].size(), 4u);
  double best = 1e300;
  std::string fastest;
  for (const auto& m : j["methods"]) {
    ASSERT_FALSE(m.contains("error")) << m.dump();
    if (m["volume_only"].get<bool>()) continue;
    EXPECT_GE(m["serving"]["ttft_ms"]["p99"].get<double>(),
              m["serving"]["ttft_ms"]["p50"].get<double>());
    EXPECT_GT(m["ttft_ms"].get<double>(), 0);
    EXPECT_GT(m["tpot_ms"].get<double>(), 0);
    if (m["total_ms"].get<double>() < best) best = m["total_ms"], fastest = m["method"];
  }
  EXPECT_EQ(j["winner"], fastest);
  auto text =
      testing::RunCli("tp gpt3-175b --cluster asym:S8 --output-len 4 --ignore-memory --compare");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("* " + fastest), std::string::npos) << text.out;
}

void RateAddsServingPercentiles() {
  auto r = testing::RunCli(
      "tp gpt3-175b --cluster asym:S8 --batch 32 --output-len 16 --rate 4 --requests 50 --json "
      "--no-plan");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("serving"));
  for (const char* k : {"ttft_ms", "tpot_ms", "latency_ms"}) {
    EXPECT_GT(j["serving"][k]["p50"].get<double>(), 0) << k;
    EXPECT_GE(j["serving"][k]["p99"].get<double>(), j["serving"][k]["p50"].get<double>()) << k;
  }
}

TEST(TpReportTest, SvgChartIsWellFormed) {
  ChartSpec c;
  c.title = "a < b";
  c.x = {"1", "2", "3"};
  c.series = {{"x", {1, 2, 3}}, {"y", {3, 2, 1}}};
  std::string svg = RenderChartSvg(c);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("a &lt; b"), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  c.bars = true;
  std::string bars = RenderChartSvg(c);
  EXPECT_NE(bars.find("<rect x="), std::string::npos);
  EXPECT_NE(bars.find("</svg>"), std::string::npos);
}

TEST(TpCliTest, IdealSingleNodeAndRate) {
  IdealIsOfferedAndRuns();
  SingleNodeVolumeIsNotPrintedAsZero();
  RateAddsServingPercentiles();
}

}  // namespace
}  // namespace hx::tp
