#pragma once
// A device model's calibration: what its kernels, copies and collectives really cost, fitted to
// measured data (../shared/data) or measured by `hexplan profile` on the user's own GPU. One file
// per device model (data/calibration/<model>.yaml, docs/cost-model.md "Calibrated model"); the cost
// model uses it in place of the plain roofline unless CostModelOptions::kind is kRoofline.
//
// Kernel time of an op of class c with F FLOPs and B bytes on a device with peak P and bandwidth W:
//   t = max(min_s, fixed_s + max(F / (P * compute(F)), B / (W * memory(B))))
//   compute(F) = compute_max * F / (F + compute_half_flops)   (small kernels reach less of peak)
//   memory(B)  = memory_max  * B / (B + memory_half_bytes)
// Copy of S bytes over a link of nominal bandwidth L: t = fixed_s + S / (L * fraction).

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hexplan/core/status.h"

namespace hx::cost {

// What kind of kernel an operator is, for its efficiency curve (ClassifyOp in op_class.h).
enum class OpClass : uint8_t {
  kGemm,           // MatMul, Gemm, linear layers (and PipeDream's Linear)
  kConvolution,    // Conv, ConvTranspose
  kAttention,      // fused attention / the batched score and context products of attention
  kElementwise,    // activations, Add/Mul, casts, copies, reshapes that move data
  kNormalization,  // LayerNorm, BatchNorm, Softmax, reductions
  kRecurrent,      // LSTM, GRU, RNN cells
  kOther,          // everything else (pooling, gathers, ...)
  // Kinds inside elementwise and normalization whose kernels the measured data shows running at a
  // different efficiency (docs/cost-model.md "Fits"); a file without one uses its parent class.
  kFusedElementwise,     // fused kernels pairing the two halves of a tensor: SiLU-and-mul (SwiGLU,
                         // GeGLU), rotary embedding; parent kElementwise
  kSoftmax,              // Softmax, LogSoftmax; parent kNormalization
  kRmsNormalization,     // RMSNorm (SimplifiedLayerNormalization); parent kNormalization
  kWinogradConvolution,  // 3x3, stride 1, dilation 1, one group: cuDNN's Winograd kernels; its
                         // FLOPs count Winograd's multiplies (op_class.h); parent kConvolution
  kGroupedConvolution,   // 1 < groups < input channels (ResNeXt's): cuDNN's grouped kernels;
                         // parent kConvolution
  kImageConvolution,     // one group, at most kImageConvolutionChannels input channels (a network's
                         // first layer on an RGB image): no channel vectorisation; parent
                         // kConvolution
  kPooling,              // MaxPool, AveragePool and their global forms; parent kOther
  kDropout,              // training-mode dropout (a random mask drawn and written per element);
                         // parent kElementwise
  kDecodeAttention,      // fused attention of one new token per sequence over its KV cache (an
                         // LLM's decode step: FlashAttention's and FlashInfer's decode kernels,
                         // TensorRT-LLM's masked MHA); chosen by phase, not by op type; parent
                         // kAttention
};
inline constexpr int kNumOpClasses = 16;
std::string_view OpClassName(OpClass c);  // "gemm", "convolution", ...
std::optional<OpClass> ParseOpClass(std::string_view name);
// The class whose curve a file without `c` uses: kElementwise for kFusedElementwise and kDropout,
// kNormalization for kSoftmax and kRmsNormalization, kConvolution for kWinogradConvolution,
// kGroupedConvolution and kImageConvolution, kOther for kPooling, kAttention for
// kDecodeAttention, `c` itself for the others.
OpClass ParentOpClass(OpClass c);

// The efficiency curve of one operator class on one device model, and where it came from.
struct ClassFit {
  double compute_max = 0.6;         // fraction of peak FLOP/s a large kernel reaches
  double compute_half_flops = 0.0;  // FLOPs at which a kernel reaches half of compute_max
  double memory_max = 0.8;          // fraction of peak memory bandwidth a large kernel reaches
  double memory_half_bytes = 0.0;   // bytes at which a kernel reaches half of memory_max
  double fixed_s = 0.0;             // per kernel: launch and synchronisation as the data shows it
  std::string source;           // "LLMCompass matmul_A100.csv (A100-SXM4-80GB)" or "assumed: ..."
  int samples = 0;              // 0: not fitted (an assumption, see source)
  double fit_error = 0.0;       // geomean |relative error| on the samples fitted
  double held_out_error = 0.0;  // ... on the held-out samples
  // What each measurement harness of the fitted data adds to every time it reports (Python
  // timers, profiler hooks, a synchronisation per measurement), by harness name ("PipeDream
  // image_classification"); fitted with the curve, not part of a kernel's time. Sources that
  // time kernels inside a running model (vidur) have none: their constant is fixed_s.
  std::map<std::string, double> harness_s;
  // The floor a small kernel shows: t = max(min_s, fixed_s + max(...)); 0 = none. Added with the
  // fits (docs/cost-model.md "Fits"): vidur's RMSNorm takes ~7 us from 1 to ~150 tokens, then
  // grows linearly from a ~3 us intercept, which an additive fixed_s alone cannot follow.
  double min_s = 0.0;
};

// Host memory a copy reads or writes: page-locked, pageable (staged through a pinned buffer by the
// driver), or mapped into the device's address space (direct host access, DeepPlan's DHA).
enum class HostMemory : uint8_t { kPinned, kPageable, kMapped };
enum class CopyDirection : uint8_t { kHostToDevice, kDeviceToHost, kPeer };

// One kind of copy: the fraction of the link's nominal bandwidth it reaches and its fixed cost.
struct CopyFit {
  double fraction = 1.0;
  double fixed_s = 0.0;
  std::string source;
};

struct CopyCalibration {
  CopyFit h2d_pinned, h2d_pageable, d2h_pinned, d2h_pageable;
  CopyFit dha_mapped;  // kernel reads of mapped host memory (per link nominal bandwidth)
  CopyFit peer;        // GPU to GPU (NVLink or PCIe P2P)
  // Two copies at once on one shared bus each get this fraction of their one-copy rate x 1/2 of the
  // link (1.0: the bus divides evenly; < 1: arbitration loses some).
  double shared_bus_efficiency = 1.0;
  std::string shared_bus_source;
  const CopyFit& For(CopyDirection direction, HostMemory memory) const;
};

// Alpha-beta lines of a collective on `gpus` GPUs over one fabric: the time is the fastest line's
// steps * alpha_s + algorithm bytes / bus_bytes_per_s (docs/cost-model.md "Collectives").
struct CollectiveLine {
  double alpha_s = 0.0;
  double bus_bytes_per_s = 0.0;
};
struct CollectiveCalibration {
  std::string collective = "all_reduce";  // "all_reduce", "send_recv"
  std::string fabric = "nvlink";          // "nvlink", "pcie", "infiniband", ...
  // Which implementation was measured: "nccl" (the library's ring or tree), or "custom" (an
  // engine's own one-shot / two-shot kernel over peer-mapped buffers inside a node, as
  // TensorRT-LLM, vLLM and SGLang run small all-reduces; docs/cost-model.md "Collectives").
  std::string library = "nccl";
  // The largest message the fit holds for (0: any). A custom kernel's buffer caps what it takes;
  // larger messages go to NCCL.
  double max_bytes = 0.0;
  int gpus = 2;
  std::vector<CollectiveLine> lines;
  std::string source;
  int samples = 0;
  double fit_error = 0.0;
  double held_out_error = 0.0;
};

struct DeviceCalibration {
  std::string model;              // hw::DeviceSpec::model it applies to ("V100-SXM2-32GB")
  std::string measured_on;        // the device the data came from, when it is not `model`
  double kernel_launch_s = 5e-6;  // per kernel the framework launches (host dispatch + launch)
  std::map<OpClass, ClassFit> classes;  // a class not listed uses its parent's, else kOther's fit
  CopyCalibration copy;
  std::vector<CollectiveCalibration> collectives;
  std::vector<std::string> notes;  // assumptions, each with its source
  // classes[c], else classes[ParentOpClass(c)], else classes[kOther], else a default fit.
  const ClassFit& Fit(OpClass c) const;
  Status Validate() const;
};

// YAML, one file per model; errors name the file and the field.
// Reading: a YAML syntax error is a ParseError, a bad or unknown field InvalidArgument ("file:line:
// classes.gemm.compute_max: expected a fraction in (0, 1], got 1.5"); both exit 2. Missing fields
// keep the defaults above; `model` is required. Writing validates first and writes atomically; the
// numbers are the shortest decimals that read back to the same doubles (a round trip is exact).
StatusOr<DeviceCalibration> ReadDeviceCalibration(const std::string& path);
Status WriteDeviceCalibration(const DeviceCalibration& calibration, const std::string& path);
// The same on text in memory; `source` names it in errors.
StatusOr<DeviceCalibration> ParseDeviceCalibration(const std::string& text,
                                                   const std::string& source);
std::string DeviceCalibrationYaml(const DeviceCalibration& calibration);

// The calibrations that ship with hexplan (data/calibration/*.yaml, compiled into the library), by
// model name.
const std::map<std::string, DeviceCalibration>& BuiltinCalibrations();

}  // namespace hx::cost
