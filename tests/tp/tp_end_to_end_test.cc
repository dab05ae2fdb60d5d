// Issue 24: `--time-preset calibrated` against published end-to-end latencies of tensor-parallel
// inference (docs/tensor-parallel.md "End to end"). Nothing here is fitted: the step model's
// kernels and collectives come from the cost layer's operator and NCCL fits.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "hexplan/graph/zoo.h"
#include "hexplan/graph/zoo_attention.h"
#include "hexplan/hw/device_spec.h"
#include "hexplan/tp/llm_tp.h"

namespace hx::tp {
namespace {

struct PublishedLatency {
  int batch, input_len, output_len;
  double total_ms;
};

// NVIDIA FasterTransformer docs/gpt_guide.md, "Performance of GPT-175B": 8 x A100-80GB on
// NVSwitch, TP 8, FP16, FT latency (ms). FT runs output_len decoder steps after the context pass
// (ParallelGpt.cc: the loop from max_input_length to max_input_length + output_len).
constexpr PublishedLatency kFtGpt175b[] = {
    {1, 128, 8, 488.86},   {8, 128, 8, 749.86},   {16, 128, 8, 1037.47},  {32, 128, 8, 1547.44},
    {1, 512, 32, 1719.96}, {8, 512, 32, 2629.97}, {16, 512, 32, 3706.23},
};

TEST(TpEndToEndTest, FasterTransformerGpt3OnEightA100sWithinTwelvePercent) {
  auto spec = hw::FindDeviceSpec("A100-SXM4-80GB");
  ASSERT_TRUE(spec.has_value());
  TpSystem sys = MakeUniformSystem({8}, *spec, "fp16");
  ASSERT_NE(sys.nodes[0].gpus[0].calibration, nullptr);
  LlmShape shape = ShapeFromConfig("gpt3-175b", *graph::ZooTransformerConfig("gpt3-175b"), 2);
  TpOptions o;
  o.method = TpMethod::kMegatron;
  o.time = *TimePreset("calibrated");
  double sum_abs = 0.0;
  for (const PublishedLatency& p : kFtGpt175b) {
    LlmWorkload wl;
    wl.batch = p.batch;
    wl.input_len = p.input_len;
    wl.output_len = p.output_len;
    auto r = PlanTensorParallel(sys, shape, wl, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    double err = r->total_s() * 1e3 / p.total_ms - 1.0;
    std::printf("  FT GPT-175B TP8 batch %d, %d/%d: published %.1f ms, ours %.1f ms (%+.1f%%)\n",
                p.batch, p.input_len, p.output_len, p.total_ms, r->total_s() * 1e3, 100 * err);
    EXPECT_LT(std::abs(err), 0.125) << "batch " << p.batch << " " << p.input_len;
    sum_abs += std::abs(err);
  }
  EXPECT_LT(sum_abs / std::size(kFtGpt175b), 0.08);
}

LlmShape Llama7bShape() {
  return ShapeFromConfig("openllama-7b", *graph::ZooTransformerConfig("openllama-7b"), 2);
}

// Total ms of `steps` decode steps after the prompt (0 steps: the first token) on `gpus` GPUs.
double Llama7bMs(const char* model, int gpus, const PublishedLatency& p, TpEngine engine) {
  auto spec = hw::FindDeviceSpec(model);
  EXPECT_TRUE(spec.has_value());
  TpSystem sys = MakeUniformSystem({gpus}, *spec, "fp16");
  EXPECT_NE(sys.nodes[0].gpus[0].calibration, nullptr);
  TpOptions o;
  o.method = TpMethod::kMegatron;
  o.time = *TimePreset("calibrated");
  o.time.engine = engine;
  LlmWorkload wl;
  wl.batch = p.batch;
  wl.input_len = p.input_len;
  wl.output_len = std::max(p.output_len, 1);
  auto r = PlanTensorParallel(sys, Llama7bShape(), wl, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return 0.0;
  return (p.output_len == 0 ? r->ttft_s() : r->total_s()) * 1e3;
}

// TensorRT-LLM v0.5 docs/source/performance.md, "High Throughput", A100 FP16, LLaMA 7B, TP 1 (the
// C++ gptSessionBenchmark): output tokens/s turned into ms for the batch (batch x out / tok/s);
// out - 1 decode steps after the context pass, which yields the first token.
constexpr PublishedLatency kTrtLlama7bThroughput[] = {
    {64, 128, 127, 64 * 128 / 3486.0 * 1e3},
    {32, 128, 2047, 32 * 2048 / 1459.0 * 1e3},
    {32, 2048, 127, 32 * 128 / 529.0 * 1e3},
    {16, 2048, 2047, 16 * 2048 / 592.0 * 1e3},
};

TEST(TpEndToEndTest, TensorRtLlmLlama7bThroughputOnOneA100WithinTenPercentFused) {
  for (const PublishedLatency& p : kTrtLlama7bThroughput) {
    double fused = Llama7bMs("A100-SXM4-80GB", 1, p, TpEngine::kFused);
    double eager = Llama7bMs("A100-SXM4-80GB", 1, p, TpEngine::kEager);
    std::printf("  TRT-LLM LLaMA-7B batch %d, %d/%d: published %.0f ms, fused %.0f, eager %.0f\n",
                p.batch, p.input_len, p.output_len + 1, p.total_ms, fused, eager);
    EXPECT_LT(std::abs(fused / p.total_ms - 1.0), 0.10) << "batch " << p.batch;
    // Eager pays the host launch on every kernel: slower, by 10-20% at these batches.
    EXPECT_GT(eager, fused * 1.05) << "batch " << p.batch;
  }
}

// LMDeploy v0.1.0a1 docs/en/benchmark/a100_fp16.md (commit ebe90bc9), llama2-7b, A100-80G, TP 1,
// batch 1 (TurboMind, FP16): output tokens/s of one request at a time -> ms per request =
// output / tok/s; output - 1 decode steps after the context pass.
constexpr PublishedLatency kLmDeployLlama2Batch1[] = {
    {1, 1, 127, 128 / 100.02 * 1e3},     {1, 128, 127, 128 / 102.21 * 1e3},
    {1, 128, 2047, 2048 / 98.92 * 1e3},  {1, 2048, 127, 128 / 86.1 * 1e3},
    {1, 2048, 2047, 2048 / 93.78 * 1e3},
};

TEST(TpEndToEndTest, LmDeployLlama2OnOneA100WithinTenPercentFused) {
  for (const PublishedLatency& p : kLmDeployLlama2Batch1) {
    double fused = Llama7bMs("A100-SXM4-80GB", 1, p, TpEngine::kFused);
    std::printf("  LMDeploy Llama-2-7B batch 1, %d/%d: published %.0f ms, fused %.0f\n",
                p.input_len, p.output_len + 1, p.total_ms, fused);
    EXPECT_LT(std::abs(fused / p.total_ms - 1.0), 0.10) << p.input_len << "/" << p.output_len + 1;
  }
}

struct NemoRow {
  const char* model;
  int gpus, batch;
  double total_ms;
};
// NeMo Framework user guide, "Llama-2 Results / Inference Performance": Llama-2-7B, 128 input and
// 20 output tokens, TensorRT-LLM engines; what the page does not say (precision, whether 20 tokens
// were always generated) keeps these rows a bracket, not a bound (docs/tensor-parallel.md).
constexpr NemoRow kNemoLlama2_7b[] = {
    {"A100-SXM4-80GB", 1, 1, 234.0}, {"A100-SXM4-80GB", 8, 1, 136.5},
    {"A100-SXM4-80GB", 1, 8, 329.5}, {"A100-SXM4-80GB", 8, 8, 181.9},
    {"H100-SXM5-80GB", 1, 1, 153.8}, {"H100-SXM5-80GB", 8, 1, 97.6},
    {"H100-SXM5-80GB", 1, 8, 199.2}, {"H100-SXM5-80GB", 8, 8, 129.1},
};

TEST(TpEndToEndTest, NemoLlama2RowsLieBetweenTheFusedAndTheEagerEngine) {
  for (const NemoRow& n : kNemoLlama2_7b) {
    PublishedLatency p{n.batch, 128, 19, n.total_ms};
    double fused = Llama7bMs(n.model, n.gpus, p, TpEngine::kFused);
    double eager = Llama7bMs(n.model, n.gpus, p, TpEngine::kEager);
    EXPECT_LT(fused, n.total_ms) << n.model << " TP " << n.gpus << " batch " << n.batch;
    EXPECT_GT(eager, n.total_ms) << n.model << " TP " << n.gpus << " batch " << n.batch;
  }
}

// LLM-Inference-Bench (Chitty-Venkata et al., arXiv 2411.00136; Plots/All_results.csv of
// github.com/argonne-lcf/LLM-Inference-Bench): Llama-2-7B, FP16, 1-4 H100, input = output = n
// tokens, "Latency" = wall time of the whole batch (s). Rows whose whole KV cache exceeds ~0.9 of
// the memory left after the weights are left out (the engines run them in waves;
// docs/tensor-parallel.md "End to end").
constexpr int kLibLengths[] = {128, 256, 512, 1024, 2048};
struct LibRow {
  int tp, batch;
  double seconds[5];  // at kLibLengths
};
constexpr LibRow kLibTrtH100[] = {
    {1, 1, {0.844, 1.681, 3.492, 7.188, 15.362}},   {1, 16, {0.989, 2.142, 4.775, 11.633, 31.472}},
    {1, 32, {1.087, 2.441, 5.941, 15.931, 0}},      {1, 64, {1.372, 3.251, 8.552, 0, 0}},
    {2, 1, {0.601, 1.212, 2.505, 5.327, 11.536}},   {2, 16, {0.717, 1.491, 3.264, 7.563, 19.281}},
    {2, 32, {0.844, 1.822, 4.161, 10.400, 29.180}}, {2, 64, {0.996, 2.261, 5.571, 15.254, 58.371}},
};
constexpr LibRow kLibVllmH100[] = {
    {1, 1, {0.933, 1.901, 3.884, 7.839, 15.841}},   {1, 16, {1.135, 2.429, 5.446, 13.169, 35.298}},
    {1, 32, {1.374, 3.042, 7.243, 19.140, 0}},      {1, 64, {1.845, 4.269, 10.825, 0, 0}},
    {2, 1, {0.791, 1.556, 3.095, 6.225, 12.709}},   {2, 16, {0.942, 1.963, 4.244, 9.796, 24.836}},
    {2, 32, {1.136, 2.451, 5.570, 13.576, 37.196}}, {2, 64, {1.593, 3.522, 8.287, 21.610, 64.129}},
    {4, 1, {0.755, 1.501, 3.008, 5.956, 11.928}},   {4, 16, {0.792, 1.606, 3.466, 7.874, 18.212}},
    {4, 32, {0.945, 1.968, 4.343, 10.171, 26.281}}, {4, 64, {1.306, 2.834, 6.566, 15.869, 43.221}},
};

// TensorRT-LLM (C++ runtime, FP16 engines): the fused engine within 10% of every TP 1 row and
// within 15% of every TP 2 row (mean 6%). TP 4 reads 3-26% high below batch 64 (NCCL's small
// all-reduce against TensorRT-LLM's own kernel) and is not bounded here.
TEST(TpEndToEndTest, LlmInferenceBenchTensorRtLlmLlama2OnH100WithinTenPercentFused) {
  double sum_abs[3] = {0, 0, 0};
  int count[3] = {0, 0, 0};
  for (const LibRow& row : kLibTrtH100) {
    for (int i = 0; i < 5; ++i) {
      if (row.seconds[i] == 0) continue;
      const int n = kLibLengths[i];
      PublishedLatency p{row.batch, n, n - 1, row.seconds[i] * 1e3};
      double fused = Llama7bMs("H100-SXM5-80GB", row.tp, p, TpEngine::kFused);
      double err = fused / p.total_ms - 1.0;
      std::printf(
          "  LIB TRT-LLM H100 TP %d batch %d, %d/%d: published %.0f ms, fused %.0f (%+.1f%%)\n",
          row.tp, row.batch, n, n, p.total_ms, fused, 100 * err);
      EXPECT_LT(std::abs(err), row.tp == 1 ? 0.10 : 0.15)
          << "TP " << row.tp << " batch " << row.batch << " length " << n;
      sum_abs[row.tp] += std::abs(err);
      ++count[row.tp];
    }
  }
  EXPECT_EQ(count[1], 17);
  EXPECT_EQ(count[2], 20);
  EXPECT_LT(sum_abs[1] / count[1], 0.06);
  EXPECT_LT(sum_abs[2] / count[2], 0.08);
}

// vLLM (CUDA graphs, but a Python scheduler and input preparation every step): every row takes
// longer than the fused engine, which has none of that host work.
TEST(TpEndToEndTest, LlmInferenceBenchVllmLlama2OnH100RowsAreAboveTheFusedEngine) {
  for (const LibRow& row : kLibVllmH100) {
    for (int i = 0; i < 5; ++i) {
      if (row.seconds[i] == 0) continue;
      const int n = kLibLengths[i];
      PublishedLatency p{row.batch, n, n - 1, row.seconds[i] * 1e3};
      EXPECT_LT(Llama7bMs("H100-SXM5-80GB", row.tp, p, TpEngine::kFused), p.total_ms)
          << "TP " << row.tp << " batch " << row.batch << " length " << n;
    }
  }
}

// The same CSV's TensorRT-LLM rows of Llama-2-70B (grouped-query attention: 8 K/V heads) on 4 H100:
// the fused engine on NCCL's all-reduce is within 10% of every batch-32 and batch-64 row and within
// 20% of all 20 (batch 1 reads up to +19% at short lengths, where the engine's own all-reduce
// kernel would read lower; docs/tensor-parallel.md "End to end").
TEST(TpEndToEndTest, LlmInferenceBenchTensorRtLlmLlama2_70bOnFourH100) {
  constexpr LibRow kRows[] = {
      {4, 1, {2.309, 4.602, 9.471, 19.741, 41.42}},
      {4, 16, {2.624, 5.437, 11.157, 23.582, 52.308}},
      {4, 32, {3.102, 6.254, 12.911, 26.715, 57.372}},
      {4, 64, {3.532, 7.295, 15.121, 32.015, 71.025}},
  };
  auto attention = graph::ZooAttention("llama2-70b");
  ASSERT_TRUE(attention.has_value());
  const LlmShape shape =
      ShapeFromConfig("llama2-70b", *graph::ZooTransformerConfig("llama2-70b"), 2, &*attention);
  EXPECT_EQ(shape.KvWidth(), 1024);
  TpSystem sys = MakeUniformSystem({4}, *hw::FindDeviceSpec("H100-SXM5-80GB"), "fp16");
  TpOptions o;
  o.method = TpMethod::kMegatron;
  o.time = *TimePreset("calibrated");
  o.time.engine = TpEngine::kFused;
  int rows = 0;
  for (const LibRow& row : kRows)
    for (int i = 0; i < 5; ++i) {
      const int n = kLibLengths[i];
      LlmWorkload wl;
      wl.batch = row.batch;
      wl.input_len = n;
      wl.output_len = n - 1;
      auto r = PlanTensorParallel(sys, shape, wl, o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      const double err = r->total_s() / row.seconds[i] - 1.0;
      EXPECT_LT(std::abs(err), row.batch >= 32 ? 0.10 : 0.20)
          << "batch " << row.batch << " length " << n << ": " << 100 * err << "%";
      ++rows;
    }
  EXPECT_EQ(rows, 20);
}

TEST(TpEndToEndTest, EngineNamesParseAndOthersAreRefused) {
  EXPECT_EQ(*ParseTpEngine("eager"), TpEngine::kEager);
  EXPECT_EQ(*ParseTpEngine("fused"), TpEngine::kFused);
  auto bad = ParseTpEngine("graph");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--engine"), std::string::npos);
  EXPECT_STREQ(TpEngineName(TpEngine::kFused), "fused");
}

}  // namespace
}  // namespace hx::tp
