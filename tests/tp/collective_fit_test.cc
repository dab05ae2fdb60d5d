#include "hexplan/tp/collective_fit.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "testing/test_paths.h"

namespace hx::tp {
namespace {

std::string VidurPath(const std::string& system) {
  return testing::SharedDataDir() + "/tp/microsoft-vidur/data/profiling/network/" + system +
         "/all_reduce.csv";
}

TEST(CollectiveFitTest, RecoversSyntheticAlphaBeta) {
  // t = 2(n-1) alpha + 2(n-1)/n S / bw with alpha = 5 us, bw = 150 GB/s on 4 GPUs.
  std::vector<CollectiveSample> samples;
  for (double s = 4096; s < 1e9; s *= 2) {
    samples.push_back({s, 6 * 5e-6 + 1.5 * s / 150e9});
  }
  FitOptions options;
  options.max_lines = 1;
  auto model = FitAllReduce(samples, 4, options);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_EQ(model->lines.size(), 1u);
  EXPECT_NEAR(model->lines[0].alpha_s, 5e-6, 1e-9);
  EXPECT_NEAR(model->lines[0].bus_bytes_per_s, 150e9, 1e6);
  FitReport r = EvaluateFit(*model, samples);
  EXPECT_LT(r.mean_rel_error, 1e-6);
}

TEST(CollectiveFitTest, RecoversTwoProtocolMinimum) {
  // Fast-start low-bandwidth line and slow-start high-bandwidth line; the measured time is the min.
  AlphaBetaLine ll{1e-6, 20e9}, simple{10e-6, 200e9};
  std::vector<CollectiveSample> samples;
  for (double s = 1024; s < 5e8; s *= 1.5) {
    samples.push_back({s, std::min(ll.AllReduceSeconds(s, 8), simple.AllReduceSeconds(s, 8))});
  }
  auto model = FitAllReduce(samples, 8);
  ASSERT_TRUE(model.ok());
  FitReport r = EvaluateFit(*model, samples);
  EXPECT_LT(r.mean_rel_error, 0.01);
  FitOptions one;
  one.max_lines = 1;
  auto plain = FitAllReduce(samples, 8, one);
  ASSERT_TRUE(plain.ok());
  EXPECT_GT(EvaluateFit(*plain, samples).mean_rel_error, 0.1);  // one line cannot fit both regimes
}

TEST(CollectiveFitTest, RejectsBadInput) {
  EXPECT_FALSE(FitAllReduce({{1, 1}, {2, 2}}, 1).ok());
  EXPECT_FALSE(FitAllReduce({{1, 1}}, 2).ok());
  EXPECT_FALSE(ReadVidurAllReduce("/nonexistent.csv", 2, 2).ok());
  auto missing = ReadVidurAllReduce(VidurPath("h100_dgx"), 3, 3);
  EXPECT_FALSE(missing.ok());
}

// The measured vidur NCCL all-reduce profiles: the fitted model must be within 10% geomean on every
// (GPU, TP) set, in-sample and on held-out sizes.
TEST(CollectiveFitTest, FitsVidurMeasurements) {
  struct Case {
    const char* system;
    int gpus;
  } cases[] = {{"a100_dgx", 2}, {"a100_dgx", 4}, {"a100_dgx", 8},
               {"h100_dgx", 2}, {"h100_dgx", 4}, {"h100_dgx", 8}};
  for (const auto& c : cases) {
    auto samples = ReadVidurAllReduce(VidurPath(c.system), c.gpus, c.gpus);
    ASSERT_TRUE(samples.ok()) << samples.status().ToString();
    EXPECT_GT(samples->size(), 900u);
    auto model = FitAllReduce(*samples, c.gpus);
    ASSERT_TRUE(model.ok());
    FitReport r = EvaluateFit(*model, *samples);
    auto held = HeldOutFit(*samples, c.gpus);
    ASSERT_TRUE(held.ok());
    std::printf("%s tp=%d lines=%zu geomean=%.3f mean=%.3f heldout_geomean=%.3f\n", c.system,
                c.gpus, model->lines.size(), r.geomean_rel_error, r.mean_rel_error,
                held->geomean_rel_error);
    for (const auto& b : r.buckets)
      std::printf("   [%.0f,%.0f) n=%d geo=%.3f mean=%.3f\n", b.min_bytes, b.max_bytes, b.samples,
                  b.geomean_rel_error, b.mean_rel_error);
    EXPECT_LT(r.geomean_rel_error, 0.10) << c.system << " tp=" << c.gpus;
    EXPECT_LT(held->geomean_rel_error, 0.10) << c.system << " tp=" << c.gpus;
  }
}

}  // namespace
}  // namespace hx::tp
