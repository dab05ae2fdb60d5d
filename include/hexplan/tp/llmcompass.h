#pragma once
// Checks the compute + communication model against LLMCompass's measurements on real A100s
// (../shared/data/tp/PrincetonUniversity-LLMCompass): calibrate the roofline's efficiencies on its
// operator microbenchmarks (GEMM, softmax, layernorm, GeLU), then predict one GPT-3 175B decoder
// layer at TP=4 (prefill: batch 8 x 2048 tokens; decode: batch 8, KV 3072) and compare per
// operator.

#include <functional>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/cost/device_calibration.h"
#include "hexplan/cost/fit_op_class.h"
#include "hexplan/tp/collective_fit.h"
#include "hexplan/tp/llm_tp.h"
#include "hexplan/tp/tp_system.h"

namespace hx::tp {

struct KernelSample {
  std::string op;  // "matmul", "softmax", "layernorm", "gelu"
  double flops = 0.0;
  double bytes = 0.0;
  double seconds = 0.0;
};

// Reads the A100 microbenchmarks under `llmcompass_dir` (ae/figure5/*/real_hardware/*_A100.csv).
StatusOr<std::vector<KernelSample>> ReadLlmCompassMicrobench(const std::string& llmcompass_dir);

struct ComputeFit {
  TimeParams params;               // gemm_efficiency, memory_efficiency, kernel_overhead_s fitted
  double geomean_rel_error = 0.0;  // on the microbenchmarks
  int samples = 0;
};
// Grid search minimising the squared log error of the roofline on the samples.
StatusOr<ComputeFit> FitComputeEfficiency(const std::vector<KernelSample>& samples,
                                          const TpGpu& gpu);

struct OpComparison {
  std::string op;
  double measured_s = 0.0;
  double predicted_s = 0.0;
  double rel_error() const { return (predicted_s - measured_s) / measured_s; }
};
struct LayerComparison {
  std::string phase;              // "prefill" or "decode"
  std::vector<OpComparison> ops;  // LLMCompass's order, then "total"
  double measured_total_s = 0.0;
  double predicted_total_s = 0.0;
  double total_rel_error() const {
    return (predicted_total_s - measured_total_s) / measured_total_s;
  }
};

// Predicts the LLMCompass GPT-3 175B layer at TP=4 with `params` for compute and `allreduce` (a
// 4-GPU all-reduce model) for the two all-reduces, and compares with the measured CSV.
StatusOr<LayerComparison> CompareLlmCompassLayer(const std::string& llmcompass_dir, bool prefill,
                                                 const TpGpu& gpu, const TimeParams& params,
                                                 const AllReduceModel& allreduce);

// The same layer with every kernel timed by `kernel(class, FLOPs, bytes)`: the step model on the
// cost layer's operator fits (cost::ClassKernelSeconds with a DeviceCalibration's class curves).
// Classes: the projections and the two attention products are kGemm, softmax and LayerNorm
// kNormalization, GeLU kElementwise.
using KernelClock = std::function<double(cost::OpClass, double flops, double bytes)>;
StatusOr<LayerComparison> CompareLlmCompassLayerWith(const std::string& llmcompass_dir,
                                                     bool prefill, const KernelClock& kernel,
                                                     const AllReduceModel& allreduce);

// LLMCompass's operator kinds: the layer's Q_K_V (three GEMMs, as its harness times them:
// software_model/transformer.py runs Q_proj three times), Wo/W1/W2 and the two batched attention
// products are kMatmul.
enum class LlmCompassOp : uint8_t { kMatmul, kSoftmax, kLayerNorm, kGelu };
using OpClock = std::function<double(LlmCompassOp, double flops, double bytes)>;
StatusOr<LayerComparison> CompareLlmCompassLayerOps(const std::string& llmcompass_dir, bool prefill,
                                                    const OpClock& kernel,
                                                    const AllReduceModel& allreduce);

// One curve per LLMCompass operator (cost::FitClassCurve, the cost layer's curve form) fitted on
// the operator data of the machine the layer was measured on: LLMCompass's A100 microbenchmarks
// (84 runs), each operator with its own harness constant (a Python timer around a torch call:
// ~11 us for torch.softmax, ~47 us for the torch.compile'd LayerNorm and GeLU). LLMCompass times
// one memory-bound GEMM (64 x 12288 x 12288), so the matmul curve's memory-bound regime also
// takes vidur's A100 GEMVs (the four projections at <= 64 tokens, arithmetic intensity < 64
// FLOP/byte; kernel times, no harness), each source weighing the same. The layer stays out.
struct LlmCompassOperatorFits {
  cost::DevicePeak peak;
  cost::ClassFit matmul, softmax, layernorm, gelu;
  const cost::ClassFit& Fit(LlmCompassOp op) const;
  // The kernel's time on its curve plus LLMCompass's harness constant for the operator.
  double Seconds(LlmCompassOp op, double flops, double bytes) const;
};
StatusOr<LlmCompassOperatorFits> FitLlmCompassOperators(
    const std::string& llmcompass_dir, const std::vector<std::string>& vidur_a100_mlp_csvs);

}  // namespace hx::tp
