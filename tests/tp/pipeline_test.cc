#include "hexplan/tp/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "hexplan/graph/zoo.h"
#include "hexplan/graph/zoo_attention.h"
#include "hexplan/hw/device_spec.h"
#include "testing/cli_runner.h"

namespace hx::tp {
namespace {

LlmShape Synthetic(int64_t layers) {  // 1.61 GB of FP16 weights per layer
  LlmShape s;
  s.name = "synthetic";
  s.layers = layers;
  s.hidden = 8192;
  s.heads = 64;
  s.ffn_hidden = 4 * 8192;
  s.vocab = 32000;
  return s;
}

LlmWorkload PipelineSmallWorkload() {
  LlmWorkload wl;
  wl.batch = 8;
  wl.input_len = 64;
  wl.output_len = 8;
  return wl;
}

void ExpectCoversEveryLayerOnce(const PipelineResult& r, int64_t layers) {
  int64_t at = 0;
  for (const auto& st : r.stages) {
    EXPECT_EQ(st.layer_begin, at);
    EXPECT_GT(st.layer_end, st.layer_begin);
    EXPECT_LE(st.layer_end - st.layer_begin, st.max_layers);
    at = st.layer_end;
  }
  EXPECT_EQ(at, layers);
}

double SlowestStage(const std::vector<int64_t>& split, const std::vector<StageTime>& times) {
  double slowest = 0.0;
  for (size_t s = 0; s < split.size(); ++s) slowest = std::max(slowest, times[s].For(split[s]));
  return slowest;
}

// The slowest stage of the best split, found by trying every split of the stages from `stage` on,
// each stage at least `least[s]` layers.
double BestSlowestStage(int64_t layers, const std::vector<StageTime>& times,
                        const std::vector<int64_t>& max_layers, const std::vector<int64_t>& least,
                        std::vector<int64_t>* split, size_t stage = 0) {
  if (stage == times.size()) return layers == 0 ? SlowestStage(*split, times) : 1e300;
  double best = 1e300;
  for (int64_t n = least[stage]; n <= std::min(layers, max_layers[stage]); ++n) {
    (*split)[stage] = n;
    best = std::min(best, BestSlowestStage(layers - n, times, max_layers, least, split, stage + 1));
  }
  return best;
}

// What SplitLayers owes the ends' stages: the first a layer where its memory holds one, then the
// last, while layers remain.
std::vector<int64_t> EndsTakeALayer(int64_t layers, const std::vector<int64_t>& max_layers) {
  std::vector<int64_t> least(max_layers.size(), 0);
  int64_t left = layers;
  for (size_t s : {size_t{0}, max_layers.size() - 1})
    if (least[s] == 0 && max_layers[s] > 0 && left > 0) least[s] = 1, --left;
  return least;
}

void SplitLayersBalancesTheSlowestStageWithinMemory() {
  auto speeds = SplitLayers(96, {{0.0, 1.0}, {0.0, 2.0}}, {96, 96});  // speed only: proportional
  ASSERT_TRUE(speeds.ok());
  EXPECT_EQ(*speeds, (std::vector<int64_t>{64, 32}));
  auto head = SplitLayers(10, {{0.0, 1.0}, {2.0, 1.0}}, {10, 10});  // ends worth two layers
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(*head, (std::vector<int64_t>{6, 4}));
  auto capped = SplitLayers(96, {{0.0, 1.0}, {0.0, 2.0}}, {40, 96});
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(*capped, (std::vector<int64_t>{40, 56}));
  EXPECT_FALSE(SplitLayers(10, {{0.0, 1.0}, {0.0, 1.0}}, {4, 5}).ok());
  std::mt19937 rng(7);  // against every split of small cases
  for (int trial = 0; trial < 300; ++trial) {
    size_t stages = 1 + rng() % 4;
    int64_t layers = 1 + static_cast<int64_t>(rng() % 12);
    std::vector<StageTime> times(stages);
    std::vector<int64_t> max_layers(stages);
    for (size_t s = 0; s < stages; ++s) {
      times[s] = {static_cast<double>(rng() % 5), 0.5 + static_cast<double>(rng() % 7)};
      max_layers[s] = static_cast<int64_t>(rng() % 8);
    }
    std::vector<int64_t> probe(stages);
    const std::vector<int64_t> least = EndsTakeALayer(layers, max_layers);
    double best = BestSlowestStage(layers, times, max_layers, least, &probe);
    auto split = SplitLayers(layers, times, max_layers);
    ASSERT_EQ(split.ok(), best < 1e300) << "trial " << trial;
    if (!split.ok()) continue;
    EXPECT_EQ(std::accumulate(split->begin(), split->end(), int64_t{0}), layers);
    for (size_t s = 0; s < stages; ++s) {
      EXPECT_LE((*split)[s], max_layers[s]);
      EXPECT_GE((*split)[s], least[s]);
    }
    EXPECT_DOUBLE_EQ(SlowestStage(*split, times), best) << "trial " << trial;
  }
}

// A fast GPU with little memory and a slow one with much: tensor parallelism gives the fast GPU
// the larger share and overflows it; the pipeline gives it the layers its memory holds.
TEST(PipelineTest, ModelLargerThanTheTpLayoutsFitsAsAPipeline) {
  hw::DeviceSpec spec = A100Sxm80Spec();
  TpSystem sys = MakeUniformSystem({1, 1}, spec, "fp16");
  sys.nodes[0].gpus[0].peak_flops *= 3;
  sys.nodes[0].gpus[0].memory_bytes = 40LL * 1000 * 1000 * 1000;
  sys.NormalizeCapabilities();
  LlmShape shape = Synthetic(56);  // 90 GB of weights: more than either GPU, less than both
  TpOptions o;
  auto tp = PlanTensorParallel(sys, shape, PipelineSmallWorkload(), o);
  ASSERT_FALSE(tp.ok());
  EXPECT_EQ(tp.status().code(), StatusCode::kResourceExhausted) << tp.status().ToString();
  auto pp = PlanPipeline(sys, shape, PipelineSmallWorkload(), o, {});
  ASSERT_TRUE(pp.ok()) << pp.status().ToString();
  ASSERT_EQ(pp->stages.size(), 2u);
  ExpectCoversEveryLayerOnce(*pp, shape.layers);
  for (const auto& st : pp->stages)
    for (int n : st.nodes)
      for (const auto& g : sys.nodes[n].gpus)
        EXPECT_LE(st.tp.memory_per_gpu_max_bytes, static_cast<double>(g.memory_bytes));
  EXPECT_GT(pp->prefill_s, 0.0);
  EXPECT_GE(pp->step_s, pp->stages[0].tp.per_token_s);
}

void StagesFollowCapabilityAndBubblesVanishWithMatchedStages() {
  TpSystem sys = MakeUniformSystem({1, 1, 2, 2}, A100Sxm80Spec(), "fp16");
  TpOptions o;
  o.check_memory = false;
  PipelineOptions p;
  p.stages = 2;
  auto r = PlanPipeline(sys, Synthetic(96), PipelineSmallWorkload(), o, p);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->stages.size(), 2u);
  EXPECT_EQ(r->stages[0].nodes, (std::vector<int>{0, 1, 2}));
  // Four GPUs over three nodes against two on one: more layers than half, at most their capability
  // share (64), and the two stages' times within one layer of each other.
  const PipelineStage &big = r->stages[0], &small = r->stages[1];
  const int64_t n0 = big.layer_end - big.layer_begin, n1 = small.layer_end - small.layer_begin;
  EXPECT_GT(n0, 48);
  EXPECT_LE(n0, 64);
  const double layer = std::max(big.tp.total_s() / static_cast<double>(n0),
                                small.tp.total_s() / static_cast<double>(n1));
  EXPECT_LE(std::fabs(big.tp.total_s() - small.tp.total_s()), layer * 1.01);
  ExpectCoversEveryLayerOnce(*r, 96);
  EXPECT_GE(r->bubble_fraction, 0.0);
  EXPECT_LT(r->bubble_fraction, 0.5);
  p.stages = 5;
  EXPECT_FALSE(PlanPipeline(sys, Synthetic(96), PipelineSmallWorkload(), o, p).ok());
}

// Llama-3-8B at batch 1 (128 in, 4 out), calibrated Megatron, over `stages` one-GPU nodes, one
// stage each.
StatusOr<PipelineResult> Llama3On1GpuStages(const hw::DeviceSpec& spec, int stages) {
  TpSystem sys = MakeUniformSystem(std::vector<int>(static_cast<size_t>(stages), 1), spec, "fp16");
  const auto attention = graph::ZooAttention("llama3-8b");
  if (!attention.has_value()) return NotFound("llama3-8b has no attention widths");
  LlmShape shape =
      ShapeFromConfig("llama3-8b", *graph::ZooTransformerConfig("llama3-8b"), 2, &*attention);
  LlmWorkload wl;
  wl.batch = 1;
  wl.input_len = 128;
  wl.output_len = 4;
  TpOptions o;
  o.method = TpMethod::kMegatron;
  o.time = *TimePreset("calibrated");
  PipelineOptions p;
  p.stages = stages;
  return PlanPipeline(sys, shape, wl, o, p);
}

// The embedding sits on the first stage and the LM head on the last: a stage's parameters count
// the ends it holds (a tied head is a copy of the embedding where the two are apart), and the
// calibrated step model times the head on the last stage only.
TEST(PipelineTest, EmbeddingOnTheFirstStageLmHeadOnTheLast) {
  LlmShape tied = Synthetic(4);
  const double layer = tied.ParameterCount() - 32000.0 * 8192;  // 4 layers, one vocab matrix
  LlmShape middle = tied;
  middle.embedding = middle.lm_head = false;
  EXPECT_DOUBLE_EQ(middle.ParameterCount(), layer);
  LlmShape head_only = tied;
  head_only.embedding = false;
  EXPECT_DOUBLE_EQ(head_only.ParameterCount(), layer + 32000.0 * 8192);  // the tied copy
  LlmShape untied = tied;
  untied.untied_lm_head = true;
  EXPECT_DOUBLE_EQ(untied.ParameterCount(), layer + 2 * 32000.0 * 8192);

  auto spec = hw::FindDeviceSpec("H100-SXM5-80GB");
  ASSERT_TRUE(spec.has_value());
  auto r = Llama3On1GpuStages(*spec, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->stages.size(), 2u);
  // The head's time moves layers to stage 0: the slower stage is within a layer of the other.
  const PipelineStage &first = r->stages[0], &second = r->stages[1];
  const int64_t n0 = first.layer_end, n1 = second.layer_end - second.layer_begin;
  EXPECT_GT(n0, n1);
  EXPECT_TRUE(first.embedding && !first.lm_head);
  EXPECT_TRUE(!second.embedding && second.lm_head);
  const double layer_step = first.tp.per_token_s / static_cast<double>(n0);  // (gather ~0)
  EXPECT_LT(std::fabs(first.tp.total_s() - second.tp.total_s()),
            (first.tp.total_s() / static_cast<double>(n0)) * 1.01);
  // The head streams 128,256 x 4096 FP16 weights each step (0.31 ms on an H100), on stage 1.
  const double floor = 128256.0 * 4096 * 2 / spec->memory_bandwidth_bytes_per_s;
  const double head = second.tp.per_token_s - static_cast<double>(n1) * layer_step;
  EXPECT_GT(head, floor);
  EXPECT_LT(head, 2 * floor);
  // Llama's head is its own matrix, as large as the embedding: stage 0 holds its extra layers more.
  EXPECT_GT(first.tp.memory_per_gpu_max_bytes, second.tp.memory_per_gpu_max_bytes);
}

// One layer per stage and an LM head that outweighs a layer: the last stage still takes a layer
// and the head, rather than leaving both to a stage timed and sized without the head.
TEST(PipelineTest, TheLastStageKeepsTheHeadWhenItOutweighsALayer) {
  auto spec = hw::FindDeviceSpec("H100-SXM5-80GB");
  ASSERT_TRUE(spec.has_value());
  auto r = Llama3On1GpuStages(*spec, 32);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->stages.size(), 32u);
  ExpectCoversEveryLayerOnce(*r, 32);
  EXPECT_TRUE(r->stages.front().embedding);
  EXPECT_TRUE(r->stages.back().lm_head);
  EXPECT_EQ(r->stages.back().layer_end - r->stages.back().layer_begin, 1);
  // The head's stage is the slowest: it outweighs the layer the others hold.
  EXPECT_GT(r->stages.back().tp.per_token_s, 2 * r->stages[1].tp.per_token_s);
}

TEST(PipelineCliTest, PpAutoAndBadCounts) {
  auto r =
      testing::RunCli("tp gpt3-175b --cluster asym:S8 --pp auto --output-len 4 --batch 16 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  int64_t at = 0;
  const auto& stages = j["pipeline"]["stages"];
  for (size_t s = 0; s < stages.size(); ++s) {
    EXPECT_EQ(stages[s]["layers"][0].get<int64_t>(), at);
    at = stages[s]["layers"][1].get<int64_t>();
    EXPECT_EQ(stages[s]["embedding"].get<bool>(), s == 0);
    EXPECT_EQ(stages[s]["lm_head"].get<bool>(), s + 1 == stages.size());
  }
  EXPECT_EQ(at, 96);
  for (const char* bad : {"17"}) {  // (0 and non-numbers: PipelineArgs, same message)
    auto b = testing::RunCli(std::string("tp gpt3-175b --cluster asym:S8 --pp ") + bad);
    EXPECT_EQ(b.exit_code, 2) << bad;
    EXPECT_NE(b.err.find("--pp"), std::string::npos) << b.err;
  }
  // More micro-batches than sequences: the user's to fix, with the two numbers named.
  auto m = testing::RunCli("tp gpt3-175b --cluster asym:S8 --pp 2 --batch 16 --micro-batches 17");
  EXPECT_EQ(m.exit_code, 2) << m.err;
  EXPECT_NE(m.err.find("--micro-batches 17"), std::string::npos) << m.err;
  EXPECT_NE(m.err.find("(16)"), std::string::npos) << m.err;
  EXPECT_EQ(m.out, "");
}

TEST(PipelineTest, SplitsAndStages) {
  SplitLayersBalancesTheSlowestStageWithinMemory();
  StagesFollowCapabilityAndBubblesVanishWithMatchedStages();
}

}  // namespace
}  // namespace hx::tp
