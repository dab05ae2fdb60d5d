#pragma once
// Tensor storage for the executor: a host-owned tensor value (dtype, shape, bytes) and a
// non-owning view of a tensor in some device's memory, which kernels read and write.

#include <cstdint>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/graph/graph.h"

namespace hx::exec {

// A tensor value held in host memory (inputs, outputs, weights).
struct HostTensor {
  graph::DType dtype = graph::DType::kF32;
  graph::Shape shape;
  std::vector<uint8_t> bytes;  // NumElements(shape) * DTypeSize(dtype), little-endian

  HostTensor() = default;
  HostTensor(graph::DType dtype, graph::Shape shape);  // zero-filled, 64 bytes of capacity spare
  int64_t NumElements() const { return graph::NumElements(shape); }
  template <typename T>
  T* data() {
    return reinterpret_cast<T*>(bytes.data());
  }
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
};

// A view of a tensor somewhere in memory (host or a device buffer the backend gave out).
struct TensorRef {
  graph::DType dtype = graph::DType::kF32;
  const graph::Shape* shape = nullptr;
  void* data = nullptr;

  int64_t NumElements() const { return graph::NumElements(*shape); }
  int64_t Bytes() const { return NumElements() * graph::DTypeSize(dtype); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data);
  }
};

// Normwise relative error of `a` against the reference `b` (same dtype and shape): the largest
// |a_i - b_i| divided by the largest |b_i| (at least `floor`). Integer and bool tensors compare
// exactly (any difference gives 1). +infinity on a dtype or shape mismatch, or NaN/inf in one only.
double MaxRelativeError(const HostTensor& a, const HostTensor& b, double floor = 1e-6);

// ---- NumPy .npy files (format 1.0/2.0/3.0, C order, little-endian; f4, f8, f2, i8, i4, i2,
// i1, u1, b1). Errors name the file and what is wrong.
StatusOr<HostTensor> ParseNpy(const std::string& bytes, const std::string& source_name);
StatusOr<HostTensor> ReadNpyFile(const std::string& path);
std::string NpyBytes(const HostTensor& tensor);
Status WriteNpyFile(const std::string& path, const HostTensor& tensor);

}  // namespace hx::exec
