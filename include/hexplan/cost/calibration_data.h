#pragma once
// Readers of the measured operator data the calibration fits use (../shared/data; each folder's
// PROVENANCE.md gives the fields and the devices): every reader turns rows into OpSamples with the
// FLOPs and bytes their shapes imply. docs/cost-model.md "Fits" lists the sources and devices.

#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/cost/fit_op_class.h"

namespace hx::cost {

// The numbers of each non-blank line of an LLMCompass real_hardware CSV, unit suffixes ("ms",
// "Tflops") stripped; a line with fewer than `columns` numbers is a ParseError naming it.
StatusOr<std::vector<std::vector<double>>> ReadLlmCompassRows(const std::string& path,
                                                              size_t columns);

// LLMCompass's A100 operator microbenchmarks (ae/figure5/*/real_hardware/*_A100.csv under
// `llmcompass_dir`): fp16 matmul (M, K, N) as kGemm; softmax and layernorm (M x N) as
// kNormalization; GeLU as kElementwise (2 bytes read and 2 written per element). The GPT-3 layer
// (ae/figure5/ijkl) is not read: it is the tp layer's held-out check.
StatusOr<std::vector<OpSample>> ReadLlmCompassOps(const std::string& llmcompass_dir);

// vidur's per-op times of one model's layer (data/profiling/compute/<gpu>/<model>/mlp.csv,
// median column), fp16: the four projections as kGemm (per-rank TP shards: M = tokens), RMSNorms
// as kNormalization, activation, residual add and RoPE as kElementwise. `group` names the source
// in reports ("vidur a100 Llama-2-70b").
StatusOr<std::vector<OpSample>> ReadVidurMlp(const std::string& mlp_csv, const std::string& group);

// PipeDream's per-layer forward times of one model (profiler/*/profiles/<model>/graph.txt), fp32:
// Conv2d and Linear by their shapes, BatchNorm2d, ReLU, Add, Concat, Dropout, pooling and LSTM by
// the activation sizes the file gives (an input's size is its producers' activation_size).
// Layers without a kernel of their own (Input, __getitem__, View, Size, hidden), composite modules
// (EmuBidirLSTM, RecurrentAttention) and layers timed 0 are left out. `group` is the model name,
// `harness` the profiler's (image classification and translation profiles were taken apart).
// Classes: Conv2d by ConvolutionClass (op_class.h), Dropout kDropout, pooling kPooling.
// With `fold_untimed_layers` (the image-classification profiler), an Add or Concat timed 0 is
// counted in the next layer the forward pass reaches (by node number among its consumers): its
// bytes are added to that layer's, whose measured time covers its kernel (ResNet-18's ReLUs after
// a residual Add take 1.43 ms, those after a BatchNorm of the same size 0.74 ms). GNMT's
// translation profiles show no such thing (its Dropouts after an Add take what the others take).
StatusOr<std::vector<OpSample>> ReadPipeDreamLayers(const std::string& graph_txt,
                                                    const std::string& group,
                                                    const std::string& harness,
                                                    bool fold_untimed_layers = false);

}  // namespace hx::cost
