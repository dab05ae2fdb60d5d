#include "hexplan/tp/llmcompass.h"

#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "hexplan/cost/calibration_data.h"
#include "hexplan/cost/calibration_fits.h"

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
  return CompareLlmCompassLayerOps(
      dir, prefill,
      [&](LlmCompassOp op, double flops, double bytes) {
        cost::OpClass c = op == LlmCompassOp::kMatmul    ? cost::OpClass::kGemm
                          : op == LlmCompassOp::kGelu    ? cost::OpClass::kElementwise
                          : op == LlmCompassOp::kSoftmax ? cost::OpClass::kSoftmax
                                                         : cost::OpClass::kNormalization;
        return kernel(c, flops, bytes);
      },
      allreduce);
}

StatusOr<LayerComparison> CompareLlmCompassLayerOps(const std::string& dir, bool prefill,
                                                    const OpClock& kernel,
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
  using Op = LlmCompassOp;
  auto gemm = [&](double mm, double k, double n) {
    return kernel(Op::kMatmul, 2 * mm * k * n, b * (mm * k + k * n + mm * n));
  };
  double scores = batch * heads * q * kv;
  double pred[12] = {
      3 * gemm(m, d, d / tp),  // LLMCompass times Q_proj and reports it x 3 (transformer.py)
      kernel(Op::kMatmul, 2 * scores * hd, b * (batch * heads * (q + kv) * hd + scores)),
      kernel(Op::kMatmul, 2 * scores * hd, b * (scores + batch * heads * (kv + q) * hd)),
      gemm(m, d / tp, d),
      gemm(m, d, 4 * d / tp),
      gemm(m, 4 * d / tp, d),
      kernel(Op::kSoftmax, 0, 2 * b * scores),
      kernel(Op::kLayerNorm, 0, 2 * b * m * d),
      kernel(Op::kLayerNorm, 0, 2 * b * m * d),
      kernel(Op::kGelu, 0, 2 * b * m * 4 * d / tp),
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

const cost::ClassFit& LlmCompassOperatorFits::Fit(LlmCompassOp op) const {
  switch (op) {
    case LlmCompassOp::kSoftmax:
      return softmax;
    case LlmCompassOp::kLayerNorm:
      return layernorm;
    case LlmCompassOp::kGelu:
      return gelu;
    case LlmCompassOp::kMatmul:
      break;
  }
  return matmul;
}

double LlmCompassOperatorFits::Seconds(LlmCompassOp op, double flops, double bytes) const {
  const cost::ClassFit& fit = Fit(op);
  auto h = fit.harness_s.find("LLMCompass");
  return cost::ClassKernelSeconds(fit, peak, flops, bytes) +
         (h == fit.harness_s.end() ? 0.0 : h->second);
}

namespace {

// vidur's memory-bound GEMMs (arithmetic intensity < 64 FLOP/byte: <= 64 tokens).
Status AppendVidurGemvs(const std::vector<std::string>& csvs, std::vector<cost::OpSample>& out) {
  for (const std::string& csv : csvs) {
    HX_ASSIGN_OR_RETURN(auto samples, cost::ReadVidurMlp(csv, "vidur a100"));
    for (const cost::OpSample& s : samples)
      if (s.op_class == cost::OpClass::kGemm && s.flops < 64 * s.bytes) out.push_back(s);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<LlmCompassOperatorFits> FitLlmCompassOperators(
    const std::string& llmcompass_dir, const std::vector<std::string>& vidur_a100_mlp_csvs) {
  HX_ASSIGN_OR_RETURN(std::vector<cost::OpSample> ops, cost::ReadLlmCompassOps(llmcompass_dir));
  LlmCompassOperatorFits fits;
  HX_ASSIGN_OR_RETURN(fits.peak, cost::CalibrationPeak("A100-SXM4-80GB"));
  std::map<std::string, std::vector<cost::OpSample>> by_op;
  for (cost::OpSample& s : ops) {
    s.harness = "LLMCompass";
    by_op[s.label].push_back(s);
  }
  HX_RETURN_IF_ERROR(AppendVidurGemvs(vidur_a100_mlp_csvs, by_op["matmul"]));
  std::pair<const char*, cost::ClassFit*> targets[] = {{"matmul", &fits.matmul},
                                                       {"softmax", &fits.softmax},
                                                       {"layernorm", &fits.layernorm},
                                                       {"gelu", &fits.gelu}};
  for (auto& [label, fit] : targets) {
    if (by_op[label].empty())
      return NotFound(llmcompass_dir + ": no LLMCompass " + label + " microbenchmarks");
    HX_ASSIGN_OR_RETURN(*fit, cost::FitClassCurve(by_op[label], fits.peak));
  }
  return fits;
}

}  // namespace hx::tp
