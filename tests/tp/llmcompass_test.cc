#include "hexplan/tp/llmcompass.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "hexplan/cost/calibration_fits.h"
#include "hexplan/cost/fit_op_class.h"
#include "testing/test_paths.h"

namespace hx::tp {
namespace {

std::string Dir() { return testing::SharedDataDir() + "/tp/PrincetonUniversity-LLMCompass"; }

TpGpu A100() {
  TpGpu g;
  g.name = "a100";
  g.peak_flops = 312e12;
  g.memory_bandwidth = 2039e9;
  g.memory_bytes = 80LL * 1000 * 1000 * 1000;
  g.capability = 1;
  return g;
}

// Calibrate on LLMCompass's operator microbenchmarks and vidur's 4-GPU A100 all-reduce, then
// predict its measured GPT-3 175B layer (TP=4): the layer totals are out-of-sample.
TEST(LlmCompassTest, ReproducesMeasuredLayerTimes) {
  auto samples = ReadLlmCompassMicrobench(Dir());
  ASSERT_TRUE(samples.ok()) << samples.status().ToString();
  EXPECT_EQ(samples->size(), 20u + 22 + 22 + 20);
  auto fit = FitComputeEfficiency(*samples, A100());
  ASSERT_TRUE(fit.ok());
  auto ar_samples = ReadVidurAllReduce(testing::SharedDataDir() +
                                           "/tp/microsoft-vidur/data/profiling/network/a100_dgx/"
                                           "all_reduce.csv",
                                       4, 4);
  ASSERT_TRUE(ar_samples.ok());
  auto ar = FitAllReduce(*ar_samples, 4);
  ASSERT_TRUE(ar.ok());
  std::printf("compute fit: gemm_eff=%.2f mem_eff=%.2f overhead=%.0fus geomean=%.3f (n=%d)\n",
              fit->params.gemm_efficiency, fit->params.memory_efficiency,
              fit->params.kernel_overhead_s * 1e6, fit->geomean_rel_error, fit->samples);
  for (bool prefill : {true, false}) {
    auto c = CompareLlmCompassLayer(Dir(), prefill, A100(), fit->params, *ar);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    for (const auto& op : c->ops)
      std::printf("  %-8s %-14s measured %9.4f ms predicted %9.4f ms (%+.1f%%)\n", c->phase.c_str(),
                  op.op.c_str(), op.measured_s * 1e3, op.predicted_s * 1e3, 100 * op.rel_error());
    std::printf("  %-8s TOTAL          measured %9.4f ms predicted %9.4f ms (%+.1f%%)\n",
                c->phase.c_str(), c->measured_total_s * 1e3, c->predicted_total_s * 1e3,
                100 * c->total_rel_error());
    EXPECT_NEAR(c->measured_total_s, prefill ? 66.75e-3 : 1.111e-3, prefill ? 0.01e-3 : 0.002e-3);
    EXPECT_LT(std::abs(c->total_rel_error()), prefill ? 0.10 : 0.20) << c->phase;
  }
}

// The step model on the cost layer's fits (issue 24): every kernel of the layer timed by the
// shipped A100-SXM4-80GB calibration's class curves (fitted to LLMCompass's operator
// microbenchmarks and vidur's operator times, never to this layer), as LLMCompass's harness
// reports it, and vidur's 4-GPU all-reduce.
TEST(LlmCompassTest, CalibrationClassFitsPredictTheLayer) {
  const auto& builtin = cost::BuiltinCalibrations();
  auto it = builtin.find("A100-SXM4-80GB");
  ASSERT_NE(it, builtin.end());
  const cost::DeviceCalibration& cal = it->second;
  auto peak = cost::CalibrationPeak("A100-SXM4-80GB");
  ASSERT_TRUE(peak.ok());
  auto ar_samples = ReadVidurAllReduce(testing::SharedDataDir() +
                                           "/tp/microsoft-vidur/data/profiling/network/a100_dgx/"
                                           "all_reduce.csv",
                                       4, 4);
  ASSERT_TRUE(ar_samples.ok());
  auto ar = FitAllReduce(*ar_samples, 4);
  ASSERT_TRUE(ar.ok());
  KernelClock clock = [&](cost::OpClass c, double flops, double bytes) {
    const cost::ClassFit& fit = cal.Fit(c);
    auto h = fit.harness_s.find("LLMCompass");
    return cost::ClassKernelSeconds(fit, *peak, flops, bytes) +
           (h == fit.harness_s.end() ? 0.0 : h->second);
  };
  for (bool prefill : {true, false}) {
    auto c = CompareLlmCompassLayerWith(Dir(), prefill, clock, *ar);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    for (const auto& op : c->ops)
      std::printf("  calibrated %-8s %-14s measured %9.4f ms predicted %9.4f ms (%+.1f%%)\n",
                  c->phase.c_str(), op.op.c_str(), op.measured_s * 1e3, op.predicted_s * 1e3,
                  100 * op.rel_error());
    std::printf("  calibrated %-8s TOTAL          measured %9.4f ms predicted %9.4f ms (%+.1f%%)\n",
                c->phase.c_str(), c->measured_total_s * 1e3, c->predicted_total_s * 1e3,
                100 * c->total_rel_error());
    EXPECT_LT(std::abs(c->total_rel_error()), 0.25) << c->phase;
  }
}

// Issue 24's held-out check: the layer from curves fitted on the operator data of the machine it
// was measured on (LLMCompass's microbenchmarks, one curve and harness constant per operator;
// vidur's A100 GEMVs for the matmul curve's memory-bound regime), vidur's 4-GPU all-reduce.
// Within 5% for prefill and for decode; the layer is in no fit.
TEST(LlmCompassTest, OperatorFitsPredictTheLayerWithin5Percent) {
  const std::string vidur = testing::SharedDataDir() + "/tp/microsoft-vidur/data/profiling/";
  auto fits = FitLlmCompassOperators(
      Dir(), {vidur + "compute/a100/meta-llama/Llama-2-70b-hf/mlp.csv",
              vidur + "compute/a100/codellama/CodeLlama-34b-Instruct-hf/mlp.csv"});
  ASSERT_TRUE(fits.ok()) << fits.status().ToString();
  EXPECT_GT(fits->matmul.samples, 100);  // 20 LLMCompass matmuls + vidur's GEMVs
  EXPECT_LT(fits->matmul.fit_error, 0.1);
  auto ar_samples = ReadVidurAllReduce(vidur + "network/a100_dgx/all_reduce.csv", 4, 4);
  ASSERT_TRUE(ar_samples.ok());
  auto ar = FitAllReduce(*ar_samples, 4);
  ASSERT_TRUE(ar.ok());
  OpClock clock = [&](LlmCompassOp op, double flops, double bytes) {
    return fits->Seconds(op, flops, bytes);
  };
  for (bool prefill : {true, false}) {
    auto c = CompareLlmCompassLayerOps(Dir(), prefill, clock, *ar);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    for (const auto& op : c->ops)
      std::printf("  per-op fits %-8s %-14s measured %9.4f ms predicted %9.4f ms (%+.1f%%)\n",
                  c->phase.c_str(), op.op.c_str(), op.measured_s * 1e3, op.predicted_s * 1e3,
                  100 * op.rel_error());
    std::printf(
        "  per-op fits %-8s TOTAL          measured %9.4f ms predicted %9.4f ms (%+.1f%%)\n",
        c->phase.c_str(), c->measured_total_s * 1e3, c->predicted_total_s * 1e3,
        100 * c->total_rel_error());
    EXPECT_LT(std::abs(c->total_rel_error()), 0.05) << c->phase;
  }
}

TEST(LlmCompassTest, MissingDataIsAnError) {
  EXPECT_FALSE(ReadLlmCompassMicrobench("/nonexistent").ok());
  EXPECT_FALSE(FitComputeEfficiency({}, A100()).ok());
}

}  // namespace
}  // namespace hx::tp
