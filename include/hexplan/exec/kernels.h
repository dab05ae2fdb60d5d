#pragma once
// The CPU kernels: one function per ONNX op type. fp32 takes fast loops (and BLAS); fp64, fp16,
// bf16, integer and bool tensors run through double (src/exec/kernels/*.cc). Output shapes are the
// graph's (every tensor shape is static), so a kernel only computes values. MatMul, Gemm and Conv
// use OpenBLAS; `naive` switches them to plain loops (the reference implementation the tests
// compare against).

#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/exec/tensor.h"
#include "hexplan/graph/graph.h"

namespace hx::exec {

struct KernelOptions {
  bool naive = false;  // plain loops instead of BLAS (reference)
};

// True when `op_type` (default ONNX domain) has a CPU kernel.
bool HasCpuKernel(const std::string& op_type);
// Every op type with a CPU kernel, sorted.
std::vector<std::string> CpuKernelOpTypes();

// Runs `op`. inputs/outputs follow op.inputs/op.outputs; an omitted optional input or output has
// data == nullptr. Errors (unsupported dtype or attribute, an index out of range) name the op.
Status RunCpuKernel(const graph::Node& op, const std::vector<TensorRef>& inputs,
                    const std::vector<TensorRef>& outputs, const KernelOptions& options = {});

}  // namespace hx::exec
