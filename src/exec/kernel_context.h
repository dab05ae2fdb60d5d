#pragma once
// Private to src/exec: what every CPU kernel sees (Ctx: the op, its input and output views) and
// the helpers the kernel families share (broadcasting, axis arithmetic, typed element access).
// kernels.cc holds the registry; each family file under src/exec/kernels/ adds its kernels to it.

#include <array>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "hexplan/exec/kernels.h"

namespace hx::exec::internal {

using graph::DType;
using graph::Shape;

struct Ctx {
  const graph::Node& op;
  const std::vector<TensorRef>& in;
  const std::vector<TensorRef>& out;
  const KernelOptions& options;

  bool Has(size_t i) const { return i < in.size() && in[i].data != nullptr; }
  bool HasOut(size_t i) const { return i < out.size() && out[i].data != nullptr; }
  Status Error(const std::string& what) const {
    return InvalidArgument(op.op_type + " '" + op.name + "': " + what);
  }
  Status NeedF32(size_t i) const {
    if (!Has(i)) return Error("input " + std::to_string(i) + " is missing");
    if (in[i].dtype != DType::kF32)
      return Error(std::string("input ") + std::to_string(i) + " is " +
                   graph::DTypeName(in[i].dtype) + "; the CPU kernel supports fp32 only");
    return Status::Ok();
  }
};

using Kernel = std::function<Status(const Ctx&)>;

inline int64_t NormAxis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

// Strides of `shape` aligned to the right of a rank-`rank` output, 0 on broadcast dims.
inline std::vector<int64_t> BroadcastStrides(const Shape& shape, const Shape& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    size_t i = shape.size() - 1 - k;
    size_t o = out.size() - 1 - k;
    strides[o] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

inline bool Broadcastable(const Shape& in, const Shape& out) {
  if (in.size() > out.size()) return false;
  for (size_t k = 0; k < in.size(); ++k) {
    int64_t a = in[in.size() - 1 - k], b = out[out.size() - 1 - k];
    if (a != b && a != 1) return false;
  }
  return true;
}

// Calls f(out_index, offset_0, offset_1, ...) for every output element with the input offsets
// under numpy broadcasting.
template <size_t N, typename F>
void ForEachBroadcast(const Shape& out, const std::array<const Shape*, N>& ins, F&& f) {
  const int64_t n = graph::NumElements(out);
  std::array<std::vector<int64_t>, N> strides;
  bool all_same = true;
  for (size_t k = 0; k < N; ++k) {
    strides[k] = BroadcastStrides(*ins[k], out);
    if (*ins[k] != out) all_same = false;
  }
  std::array<int64_t, N> off{};
  if (all_same) {
    for (int64_t i = 0; i < n; ++i) {
      off.fill(i);
      f(i, off);
    }
    return;
  }
  const size_t rank = out.size();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    f(i, off);
    for (size_t d = rank; d-- > 0;) {
      ++idx[d];
      for (size_t k = 0; k < N; ++k) off[k] += strides[k][d];
      if (idx[d] < out[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= strides[k][d] * out[d];
      idx[d] = 0;
    }
  }
}

// Outer/axis/inner decomposition around `axis` of `shape`.
inline void AroundAxis(const Shape& shape, int64_t axis, int64_t* outer, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int64_t d = 0; d < axis; ++d) *outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) *inner *= shape[d];
}

// Element i of a tensor of any numeric dtype as a double, and back (bool stores v != 0).
StatusOr<double> LoadElement(DType dt, const void* p, int64_t i);
Status StoreElement(DType dt, void* p, int64_t i, double v);

// Element i of t as a double, and a double stored as t's dtype (the kernels' generic path for
// fp64, fp16, bf16, integer and bool tensors).
inline double Load(const TensorRef& t, int64_t i) { return *LoadElement(t.dtype, t.data, i); }
inline void Store(const TensorRef& t, int64_t i, double v) {
  (void)StoreElement(t.dtype, t.data, i, v);
}

// Row-major strides of shape s (in elements).
inline std::vector<int64_t> Strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// Multi-index of flat position i in shape s.
inline void Unflatten(int64_t i, const Shape& s, std::vector<int64_t>* idx) {
  idx->resize(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    (*idx)[d] = s[d] == 0 ? 0 : i % s[d];
    i = s[d] == 0 ? 0 : i / s[d];
  }
}

// Input i (int64 or int32) as integers; empty when the input is omitted.
StatusOr<std::vector<int64_t>> IntsOf(const Ctx& c, size_t i);

using KernelMap = std::map<std::string, Kernel>;
// The kernel families (src/exec/kernels/*.cc) add theirs to the registry.
void AddMathKernels(KernelMap* map);
void AddReduceKernels(KernelMap* map);
void AddTensorKernels(KernelMap* map);
void AddRecurrentKernels(KernelMap* map);
void AddSpatialKernels(KernelMap* map);
void AddEinsumKernel(KernelMap* map);
void AddLossKernels(KernelMap* map);
void AddQuantKernels(KernelMap* map);
void AddLinalgKernels(KernelMap* map);

}  // namespace hx::exec::internal
