// Size-regime fits (cost/fit_collective.h, FitShape::kSizeRegimes) on synthetic data with a known
// answer: a token bucket's two rates, an eager/rendezvous jump, and the same with noise.
#include "hexplan/cost/fit_collective.h"

#include <gtest/gtest.h>

#include <cmath>

namespace hx::cost {
namespace {

AllReduceFitOptions RegimeOptions(int max_lines) {
  AllReduceFitOptions o;
  o.shape = FitShape::kSizeRegimes;
  o.max_lines = max_lines;
  o.keep_line_below = 0.5;
  return o;
}

// Point to point as a two-rank ring: t = 2 alpha + S / bw.
double TwoLineSeconds(double bytes, double bound, AlphaBetaLine small, AlphaBetaLine large) {
  return (bytes <= bound ? small : large).AllReduceSeconds(bytes, 2);
}

// 4 KiB .. 64 MiB by 2x; `even` picks the 4x grid (fitted), else the sizes between (held out).
std::vector<CollectiveSample> TwoRegimeSamples(bool even, double bound, AlphaBetaLine small,
                                               AlphaBetaLine large, double noise = 0.0) {
  std::vector<CollectiveSample> out;
  int i = 0;
  for (double s = 4096; s <= 64.0 * (1 << 20); s *= 2, ++i) {
    if ((i % 2 == 0) != even) continue;
    // Deterministic +-noise, alternating in sign.
    const double wobble = 1.0 + noise * ((i / 2) % 2 ? 1.0 : -1.0);
    out.push_back({s, TwoLineSeconds(s, bound, small, large) * wobble});
  }
  return out;
}

TEST(FitCollectiveRegimesTest, RecoversABurstAndAShapedRate) {
  // Within a 256 KiB burst: 20 us + S / 1.1 GB/s; beyond it the shaped 125 MB/s with a
  // negative intercept (the burst's bytes left early): the lines cross at about 256 KiB.
  const AlphaBetaLine burst{10e-6, 1.1e9};
  const double b_small = 1.0 / 1.1e9, b_large = 1.0 / 125e6, cross = 256.0 * 1024;
  const double a_large = 20e-6 + (b_small - b_large) * cross;  // < 0: continuous at `cross`
  ASSERT_LT(a_large, 0);
  std::vector<CollectiveSample> fit, held;
  int i = 0;
  for (double s = 4096; s <= 64.0 * (1 << 20); s *= 2, ++i) {
    const double t = std::max(burst.AllReduceSeconds(s, 2), a_large + s * b_large);
    (i % 2 == 0 ? fit : held).push_back({s, t});
  }
  auto model = FitAllReduce(fit, 2, RegimeOptions(3));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_EQ(model->lines.size(), 2u);
  ASSERT_EQ(model->regime_upper_bytes.size(), 1u);
  EXPECT_NEAR(model->lines[0].alpha_s, 10e-6, 1e-9);
  EXPECT_NEAR(model->lines[0].bus_bytes_per_s, 1.1e9, 1e6);
  EXPECT_NEAR(model->lines[1].bus_bytes_per_s, 125e6, 1e5);
  EXPECT_NEAR(model->lines[1].alpha_s, a_large / 2, 1e-8);  // two steps of a two-rank ring
  // The bound is where the lines cross, between the 4x grid's 64 KiB and 1 MiB.
  EXPECT_NEAR(model->regime_upper_bytes[0], cross, 0.02 * cross);
  EXPECT_LT(EvaluateFit(*model, fit).geomean_rel_error, 1e-3);
  EXPECT_LT(EvaluateFit(*model, held).geomean_rel_error, 1e-3);  // sizes left out of the fit
  // One line misses both regimes.
  auto one = FitAllReduce(fit, 2, RegimeOptions(1));
  ASSERT_TRUE(one.ok());
  EXPECT_GT(EvaluateFit(*one, held).geomean_rel_error, 0.3);
}

TEST(FitCollectiveRegimesTest, RecoversAnEagerToRendezvousJump) {
  // Eager up to 64 KiB: 5 us + S / 2 GB/s; rendezvous above: 60 us + S / 3 GB/s (a jump).
  const AlphaBetaLine eager{2.5e-6, 2e9}, rendezvous{30e-6, 3e9};
  const double bound = 65536;
  auto fit = TwoRegimeSamples(true, bound, eager, rendezvous);
  auto held = TwoRegimeSamples(false, bound, eager, rendezvous);
  auto model = FitAllReduce(fit, 2, RegimeOptions(3));
  ASSERT_TRUE(model.ok());
  ASSERT_EQ(model->lines.size(), 2u);
  EXPECT_NEAR(model->lines[0].alpha_s, eager.alpha_s, 1e-9);
  EXPECT_NEAR(model->lines[1].alpha_s, rendezvous.alpha_s, 1e-8);
  EXPECT_NEAR(model->lines[1].bus_bytes_per_s, rendezvous.bus_bytes_per_s, 3e6);
  // The lines do not cross between 64 KiB and 256 KiB: the bound is their geometric mean.
  EXPECT_NEAR(model->regime_upper_bytes[0], std::sqrt(65536.0 * 262144.0), 1.0);
  EXPECT_LT(EvaluateFit(*model, fit).geomean_rel_error, 1e-3);
  // 128 KiB (held out) falls on the bound: priced by the rendezvous line, as measured.
  EXPECT_LT(EvaluateFit(*model, held).geomean_rel_error, 1e-3);
  EXPECT_EQ(&model->LineFor(4096), &model->lines[0]);
  EXPECT_EQ(&model->LineFor(1 << 20), &model->lines[1]);
}

TEST(FitCollectiveRegimesTest, NoiseDoesNotBuyExtraRegimes) {
  // +-3 % noise on the jump: two regimes (not three), within 5 % on the held-out sizes.
  const AlphaBetaLine eager{2.5e-6, 2e9}, rendezvous{30e-6, 3e9};
  auto fit = TwoRegimeSamples(true, 65536, eager, rendezvous, 0.03);
  auto held = TwoRegimeSamples(false, 65536, eager, rendezvous, 0.03);
  auto model = FitAllReduce(fit, 2, RegimeOptions(3));
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->lines.size(), 2u);
  EXPECT_LT(EvaluateFit(*model, held).geomean_rel_error, 0.05);
  // A plain line on a plain alpha-beta stays one regime.
  std::vector<CollectiveSample> plain;
  for (double s = 4096; s < 1e8; s *= 4) plain.push_back({s, 2e-5 + s / 1e9});
  auto line = FitAllReduce(plain, 2, RegimeOptions(3));
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(line->lines.size(), 1u);
  EXPECT_TRUE(line->regime_upper_bytes.empty());
}

TEST(FitCollectiveRegimesTest, RejectsBadOptions) {
  AllReduceFitOptions o = RegimeOptions(2);
  o.keep_line_below = 0;
  EXPECT_FALSE(FitAllReduce({{1, 1}, {2, 2}}, 2, o).ok());
  o = RegimeOptions(2);
  o.min_regime_sizes = 1;
  EXPECT_FALSE(FitAllReduce({{1, 1}, {2, 2}}, 2, o).ok());
  // Too few sizes for two regimes: one line.
  auto few = FitAllReduce({{1, 1}, {2, 2}, {4, 3}}, 2, RegimeOptions(2));
  ASSERT_TRUE(few.ok());
  EXPECT_EQ(few->lines.size(), 1u);
}

}  // namespace
}  // namespace hx::cost
