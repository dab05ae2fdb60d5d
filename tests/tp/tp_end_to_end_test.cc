// Issue 24: `--time-preset calibrated` against published end-to-end latencies of tensor-parallel
// inference (docs/tensor-parallel.md "End to end"). Nothing here is fitted: the step model's
// kernels and collectives come from the cost layer's operator and NCCL fits.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "hexplan/graph/zoo.h"
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

}  // namespace
}  // namespace hx::tp
