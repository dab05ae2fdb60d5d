#include "hexplan/tp/llmcompass.h"

#include <cmath>
#include <limits>

#include "hexplan/cost/calibration_data.h"

namespace hx::tp {
namespace {

double LogErr(double pred, double meas) { return std::log(pred / meas); }

}  // namespace

StatusOr<std::vector<KernelSample>> ReadLlmCompassMicrobench(const std::string& dir) {
  HX_ASSIGN_OR_RETURN(std::vector<cost::OpSample> ops, cost::ReadLlmCompassOps(dir));
  std::vector<KernelSample> out;
  for (const cost::OpSample& op : ops) out.push_back({op.label, op.flops, op.bytes, op.seconds});
  return out;
}

StatusOr<ComputeFit> FitComputeEfficiency(const std::vector<KernelSample>& samples,
                                          const TpGpu& gpu) {
  if (samples.empty()) return InvalidArgument("no kernel samples to fit");
  ComputeFit best;
  double best_err = std::numeric_limits<double>::infinity();
  // Coarse grid (steps of 0.02 and 2 us), then the +-1 neighbourhood of the best at full
  // resolution.
  auto try_point = [&](int ge, int me, int ov) {
    if (ge < 40 || ge > 100 || me < 30 || me > 100 || ov < 0 || ov > 60) return;
    TimeParams p;
    p.gemm_efficiency = ge / 100.0;
    p.memory_efficiency = me / 100.0;
    p.kernel_overhead_s = ov * 1e-6;
    double err = 0.0;
    for (const auto& s : samples) {
      double e = LogErr(KernelSeconds(s.flops, s.bytes, gpu, p), s.seconds);
      err += e * e;
      if (err >= best_err) return;
    }
    best_err = err;
    best.params = p;
  };
  for (int ge = 40; ge <= 100; ge += 2)
    for (int me = 30; me <= 100; me += 2)
      for (int ov = 0; ov <= 60; ov += 2) try_point(ge, me, ov);
  int ge0 = static_cast<int>(std::lround(best.params.gemm_efficiency * 100));
  int me0 = static_cast<int>(std::lround(best.params.memory_efficiency * 100));
  int ov0 = static_cast<int>(std::lround(best.params.kernel_overhead_s * 1e6));
  for (int dg = -1; dg <= 1; ++dg)
    for (int dm = -1; dm <= 1; ++dm)
      for (int dv = -1; dv <= 1; ++dv) try_point(ge0 + dg, me0 + dm, ov0 + dv);
  best.params.preset = "llmcompass-fit";
  double log_sum = 0.0;
  for (const auto& s : samples) {
    double rel = std::abs(KernelSeconds(s.flops, s.bytes, gpu, best.params) / s.seconds - 1.0);
    log_sum += std::log(std::max(rel, 1e-4));
  }
  best.samples = static_cast<int>(samples.size());
  best.geomean_rel_error = std::exp(log_sum / samples.size());
  return best;
}

StatusOr<LayerComparison> CompareLlmCompassLayer(const std::string& dir, bool prefill,
                                                 const TpGpu& gpu, const TimeParams& p,
                                                 const AllReduceModel& allreduce) {
  return CompareLlmCompassLayerWith(
      dir, prefill,
      [&](cost::OpClass, double flops, double bytes) {
        return KernelSeconds(flops, bytes, gpu, p);
      },
      allreduce);
}

StatusOr<LayerComparison> CompareLlmCompassLayerWith(const std::string& dir, bool prefill,
                                                     const KernelClock& kernel,
                                                     const AllReduceModel& allreduce) {
  const std::string path = dir + "/ae/figure5/ijkl/real_hardware/" +
                           (prefill ? "transformer_A100.csv" : "transformerAR_A100.csv");
  HX_ASSIGN_OR_RETURN(auto rows, cost::ReadLlmCompassRows(path, 1));
  const char* names[] = {"Q_K_V",         "Q_mul_K", "A_mul_V",       "Wo_proj",
                         "W1_proj",       "W2_proj", "Softmax",       "LayerNorm_MHA",
                         "LayerNorm_FFN", "GeLU",    "AllReduce_MHA", "AllReduce_FFN"};
  if (rows.size() != 12)
    return ParseError(path + ": expected 12 rows (LLMCompass's operator order), got " +
                      std::to_string(rows.size()));
  // GPT-3 175B: d = 12288, 96 heads of 128; TP = 4.
  const double d = 12288, heads = 96 / 4.0, hd = 128, tp = 4, b = 2;
  const double batch = 8, q = prefill ? 2048 : 1, kv = prefill ? 2048 : 2048 + 1024;
  const double m = batch * q;  // tokens
  using cost::OpClass;
  auto gemm = [&](double mm, double k, double n) {
    return kernel(OpClass::kGemm, 2 * mm * k * n, b * (mm * k + k * n + mm * n));
  };
  double scores = batch * heads * q * kv;
  double pred[12] = {
      gemm(m, d, 3 * d / tp),
      kernel(OpClass::kGemm, 2 * scores * hd, b * (batch * heads * (q + kv) * hd + scores)),
      kernel(OpClass::kGemm, 2 * scores * hd, b * (scores + batch * heads * (kv + q) * hd)),
      gemm(m, d / tp, d),
      gemm(m, d, 4 * d / tp),
      gemm(m, 4 * d / tp, d),
      kernel(OpClass::kNormalization, 0, 2 * b * scores),
      kernel(OpClass::kNormalization, 0, 2 * b * m * d),
      kernel(OpClass::kNormalization, 0, 2 * b * m * d),
      kernel(OpClass::kElementwise, 0, 2 * b * m * 4 * d / tp),
      allreduce.AllReduceSeconds(b * m * d),
      allreduce.AllReduceSeconds(b * m * d),
  };
  LayerComparison c;
  c.phase = prefill ? "prefill" : "decode";
  for (int i = 0; i < 12; ++i) {
    c.ops.push_back({names[i], rows[i][0], pred[i]});
    c.measured_total_s += rows[i][0];
    c.predicted_total_s += pred[i];
  }
  return c;
}

}  // namespace hx::tp
