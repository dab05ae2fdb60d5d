#pragma once
// Published measurements of a custom (non-NCCL) all-reduce inside one NVSwitch node: the kernels
// inference engines run for small tensor-parallel all-reduces instead of NCCL (TensorRT-LLM's
// customAllReduce plugin, vLLM's and SGLang's custom_all_reduce). None of ../shared/data has them;
// the numbers are SGLang's pull requests' tables (sources in each set and in docs/cost-model.md,
// "Custom all-reduce"), entered by hand.
//
// What was timed: vLLM's custom all-reduce without CUDA graphs (`vllm_ops.all_reduce` on an
// unregistered tensor: the input is copied into the registered peer buffer, then one one-shot or
// two-shot kernel), 100 calls back to back timed by the wall clock, per call, on float32 tensors
// of 512 .. 2,097,152 elements (sgl-kernel tests/test_trt_reduce.py: its 8 MiB buffer holds the
// largest size exactly at 4 bytes). The copy-then-kernel pair is what TensorRT-LLM's plugin runs
// (a cudaMemcpyAsync into its IPC buffer, then the customAllReduce kernel).

#include <string>
#include <vector>

#include "hexplan/cost/fit_collective.h"

namespace hx::cost {

struct PublishedAllReduceSet {
  std::string source;  // where the numbers are
  int gpus = 2;
  std::vector<CollectiveSample> samples;  // bytes, seconds per call
};

// The sets for "a100" or "h100" (empty for any other). `faster_variant`: SGLang's later kernel
// that copies its input inside the kernel (one launch; H100 only), reported as the sensitivity.
std::vector<PublishedAllReduceSet> PublishedCustomAllReduce(const std::string& gpu,
                                                            bool faster_variant = false);

}  // namespace hx::cost
