#pragma once
// Baidu DeepBench's measured forward times of GEMM and convolution kernels on an NVIDIA V100 in
// FP32: github.com/baidu-research/DeepBench, results/train/DeepBench_NV_V100.xlsx, sheet "Results
// FP32" (sheet "Specs": NVIDIA DGX-1, V100, CUDA 10.1.243, cuDNN 7.6.2.24, driver 418.67; the
// benchmark times each kernel alone, cuBLAS SGEMM and cuDNN's forward convolution with the
// algorithm cuDNN picks, averaged over repeated calls). None of ../shared/data has them; the
// numbers are the workbook's, entered by a script from its cells (Apache-2.0). They are the V100
// calibration's named-device source of absolute kernel speed (docs/cost-model.md, "DeepBench").

#include <vector>

#include "hexplan/cost/fit_op_class.h"

namespace hx::cost {

struct DeepBenchGemm {
  const char* application;  // "DeepSpeech", "Speaker ID", ...
  int m = 0, n = 0, k = 0;
  bool a_transposed = false, b_transposed = false;
  double ms = 0.0;
};

struct DeepBenchConv {
  const char* application;
  int w = 0, h = 0, c = 0, n = 0, k = 0;  // input width, height, channels; batch; filters
  int s = 0, r = 0;                       // filter width, height
  int pad_w = 0, pad_h = 0, stride_w = 1, stride_h = 1;
  double ms = 0.0;
};

const std::vector<DeepBenchGemm>& DeepBenchV100Gemms();
const std::vector<DeepBenchConv>& DeepBenchV100Convs();

// Both tables as samples (group "DeepBench V100 gemm" / "DeepBench V100 convolution", no
// harness): a GEMM as kGemm with 2MNK FLOPs and its three fp32 matrices' bytes; a convolution by
// ConvolutionClass (op_class.h) with 2 N K P Q C R S FLOPs (Winograd's divided as the PipeDream
// reader does) and its input, filter and output bytes.
std::vector<OpSample> DeepBenchV100Samples();

}  // namespace hx::cost
