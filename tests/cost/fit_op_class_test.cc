#include "hexplan/cost/fit_op_class.h"

#include <gtest/gtest.h>

#include <cmath>

namespace hx::cost {
namespace {

const DevicePeak kClassPeak{100e12, 1e12};

// Samples drawn from a known curve over kernels from launch-bound to compute- and memory-bound.
std::vector<OpSample> SamplesOf(const ClassFit& truth, const std::string& harness = "",
                                double harness_s = 0.0) {
  std::vector<OpSample> out;
  for (double f = 1e6; f <= 1e13; f *= 4)
    for (double intensity : {1.0, 30.0, 300.0}) {
      OpSample s;
      s.op_class = OpClass::kGemm;
      s.label = "synthetic";
      s.flops = f;
      s.bytes = f / intensity;
      s.harness = harness;
      s.seconds = ClassKernelSeconds(truth, kClassPeak, s.flops, s.bytes) + harness_s;
      out.push_back(s);
    }
  return out;
}

ClassFit Truth() {
  ClassFit t;
  t.compute_max = 0.7;
  t.compute_half_flops = 2e9;
  t.memory_max = 0.85;
  t.memory_half_bytes = 0.0;
  t.fixed_s = 4e-6;
  return t;
}

TEST(FitOpClassTest, RecoversKnownParameters) {
  const ClassFit truth = Truth();
  auto fit = FitClassCurve(SamplesOf(truth), kClassPeak);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  EXPECT_NEAR(fit->compute_max, 0.7, 0.01);
  EXPECT_NEAR(fit->memory_max, 0.85, 0.01);
  EXPECT_NEAR(fit->fixed_s, 4e-6, 0.1e-6);
  EXPECT_NEAR(fit->compute_half_flops, 2e9, 0.1e9);
  EXPECT_LT(fit->fit_error, 0.005);
  EXPECT_TRUE(fit->harness_s.empty());
}

// A harness constant on every sample goes to harness_s, not to the kernel's fixed cost.
TEST(FitOpClassTest, HarnessConstantIsKeptApartFromTheKernel) {
  ClassFit truth = Truth();
  truth.fixed_s = 0.0;
  truth.compute_half_flops = 0.0;
  auto fit = FitClassCurve(SamplesOf(truth, "timer", 20e-6), kClassPeak);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  EXPECT_EQ(fit->fixed_s, 0.0);
  ASSERT_EQ(fit->harness_s.count("timer"), 1u);
  EXPECT_NEAR(fit->harness_s.at("timer"), 20e-6, 0.5e-6);
  EXPECT_NEAR(fit->compute_max, 0.7, 0.02);
  EXPECT_LT(fit->fit_error, 0.01);
  // The kernel's own time excludes the harness; what the source reports includes it.
  OpSample s = SamplesOf(truth, "timer", 20e-6).front();
  EXPECT_NEAR(MeasuredSeconds(*fit, kClassPeak, s), s.seconds, 0.02 * s.seconds);
  EXPECT_LT(ClassKernelSeconds(*fit, kClassPeak, s.flops, s.bytes), s.seconds - 15e-6);
}

TEST(FitOpClassTest, HeldOutHalfAlternatesByRooflineTime) {
  std::vector<OpSample> samples = SamplesOf(Truth());
  std::vector<OpSample> fitted, held_out;
  SplitByRooflineTime(samples, kClassPeak, fitted, held_out);
  EXPECT_EQ(fitted.size() + held_out.size(), samples.size());
  EXPECT_LE(held_out.size(), fitted.size());
  auto fit = FitClassWithHeldOut(samples, kClassPeak, "synthetic source");
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit->samples, static_cast<int>(fitted.size()));
  EXPECT_EQ(fit->source, "synthetic source");
  EXPECT_LT(fit->held_out_error, 0.01);
  EXPECT_NEAR(EvaluateClassFit(*fit, kClassPeak, held_out).geomean, fit->held_out_error, 1e-12);
}

TEST(FitOpClassTest, HeldOutHalfHoldsOutShapesNotRepeats) {
  // Every shape measured three times (three models with the same layer): each shape's samples
  // all land in one half, and the halves share no shape.
  std::vector<OpSample> samples;
  for (const OpSample& s : SamplesOf(Truth()))
    for (const char* group : {"model a", "model b", "model c"}) {
      samples.push_back(s);
      samples.back().group = group;
    }
  std::vector<OpSample> fitted, held_out;
  SplitByRooflineTime(samples, kClassPeak, fitted, held_out);
  EXPECT_EQ(fitted.size() + held_out.size(), samples.size());
  EXPECT_FALSE(held_out.empty());
  for (const OpSample& h : held_out)
    for (const OpSample& f : fitted)
      EXPECT_FALSE(h.flops == f.flops && h.bytes == f.bytes) << h.flops << " in both halves";
  EXPECT_EQ(fitted.size() % 3, 0u);
  EXPECT_EQ(held_out.size() % 3, 0u);
}

TEST(FitOpClassTest, ErrorSummary) {
  FitErrors e = SummariseErrors({0.1, 0.2, 0.4, 0.0});
  EXPECT_EQ(e.samples, 4);
  EXPECT_DOUBLE_EQ(e.median, 0.15);
  EXPECT_DOUBLE_EQ(e.max, 0.4);
  EXPECT_NEAR(e.geomean, std::pow(0.1 * 0.2 * 0.4 * 1e-4, 0.25), 1e-12);  // 0 floored at 1e-4
}

TEST(FitOpClassTest, BadInputIsAnError) {
  EXPECT_FALSE(FitClassCurve({}, kClassPeak).ok());
  std::vector<OpSample> samples = SamplesOf(Truth());
  EXPECT_FALSE(FitClassCurve(samples, DevicePeak{0, 1}).ok());
  samples[0].seconds = 0;
  EXPECT_FALSE(FitClassCurve(samples, kClassPeak).ok());
  EXPECT_FALSE(FitClassWithHeldOut({samples[1], samples[2]}, kClassPeak, "x").ok());
}

}  // namespace
}  // namespace hx::cost
