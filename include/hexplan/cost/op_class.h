#pragma once
// Which efficiency curve of a device calibration an operator uses (device_calibration.h): by its op
// type, whether an ONNX op ("Conv", "MatMul"), a zoo op or a PipeDream module class ("Conv2d",
// "Linear", "BatchNorm2d"). Matching ignores case; unknown types are kOther.

#include <string_view>

#include "hexplan/core/id.h"
#include "hexplan/cost/device_calibration.h"
#include "hexplan/graph/graph.h"

namespace hx::cost {

// By type alone: MatMul is kGemm here (ClassifyOp tells attention products apart).
OpClass ClassifyOpType(std::string_view op_type);

// A convolution cuDNN runs with Winograd's F(2x2, 3x3) algorithm: a 3x3 kernel, stride 1,
// dilation 1, one group. Its FLOPs are the direct count / kWinogradFlopDivisor (16 multiplies per
// 2x2 output tile and input channel instead of 36; Lavin and Gray, CVPR 2016): PipeDream's 3x3
// convolutions run at up to 1.7x the V100's fp32 peak by the direct count.
inline constexpr double kWinogradFlopDivisor = 2.25;
bool IsWinogradConvolution(double kernel_h, double kernel_w, double stride_h, double stride_w,
                           double dilation, double groups);

// A convolution's class by its shape: kWinogradConvolution (above), else kGroupedConvolution
// where 1 < groups and each group sees more than one input channel (a depthwise convolution, one
// channel per group, stays kConvolution: its kernels run at the dense curve's rate in PipeDream's
// NASNets), else kImageConvolution where one group reads at most kImageConvolutionChannels
// channels (the first layer of an image network: PipeDream's 3-channel 7x7 and 11x11 convolutions
// run at 1.6-3 TFLOP/s on the V100, against 8-12 for the dense layers after them), else
// kConvolution. `in_channels_per_group` is the weight's second dimension.
inline constexpr double kImageConvolutionChannels = 4;
OpClass ConvolutionClass(double kernel_h, double kernel_w, double stride_h, double stride_w,
                         double dilation, double groups, double in_channels_per_group);

// An op node's class. A MatMul/Einsum of rank >= 3 with no weight input (both operands computed:
// the score and context products of attention) is kAttention. A Conv is classed by
// ConvolutionClass from its kernel_shape (else its weight's last two dimensions), strides,
// dilations, group and its weight's second dimension (input channels per group). Non-op nodes are
// kOther.
OpClass ClassifyOp(const graph::Graph& graph, NodeId op);

// The bytes a layer normalization reads beyond its input once, its output once and its scale: a
// row of more than kLayerNormRowElements is read three times (mean, variance, normalise) instead
// of once, so 2 x `input_bytes` more; 0 for shorter rows. What LLMCompass's A100 layernorm shows
// (its rate halves from 8192 to 16384 and 32768 columns while softmax's does not;
// docs/cost-model.md "Fits"). Used by the calibration reader and by the calibrated op time.
inline constexpr double kLayerNormRowElements = 8192;
double LayerNormExtraBytes(double row_elements, double input_bytes);

// The same for an op node: its class is kNormalization, its type LayerNormalization (or
// PipeDream's LayerNorm) and its first input's last dimension is the row. 0 for any other op.
double LayerNormExtraBytes(const graph::Graph& graph, NodeId op);

}  // namespace hx::cost
