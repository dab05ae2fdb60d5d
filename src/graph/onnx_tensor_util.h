#pragma once
// Private helpers shared by the ONNX reader and writer: element types, tensor payloads, and the
// small constant values that shape arithmetic folding works on. Protobuf types stay inside
// src/graph.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/graph/dtype.h"
#include "hexplan/graph/graph.h"
#include "onnx/onnx_pb.h"

namespace hx::graph::onnx_internal {

// Tensors with more elements than this are never materialised as constant values.
inline constexpr int64_t kMaxFoldElements = int64_t{1} << 16;
// A tensor with more elements than this is rejected as bad input (no real model comes close).
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 50;

// ONNX TensorProto::DataType <-> DType. Unsigned types map to the signed type of the same width.
std::optional<DType> DTypeFromOnnx(int32_t elem_type);
int32_t OnnxFromDType(DType dtype);
const char* OnnxTypeName(int32_t elem_type);

// Element count of `dims`; an error when a dim is negative or the count exceeds kMaxTensorElements.
StatusOr<int64_t> CheckedNumElements(const Shape& dims, const std::string& what);

// The raw little-endian payload of `tensor`, from raw_data or the typed fields. nullopt when the
// tensor carries no payload (stored externally, or stripped). An error when the payload size does
// not match the dims.
StatusOr<std::optional<std::string>> TensorPayload(const onnx::TensorProto& tensor, DType dtype,
                                                   int64_t num_elements);

// A small constant tensor: integers (and bools) in `ints`, floating point in `floats`.
struct ConstValue {
  DType dtype = DType::kI64;
  Shape dims;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  bool is_float() const { return IsFloatingPoint(dtype); }
  int64_t size() const {
    return is_float() ? static_cast<int64_t>(floats.size()) : static_cast<int64_t>(ints.size());
  }
  double AsDouble(int64_t i) const { return is_float() ? floats[i] : static_cast<double>(ints[i]); }
};

// Decodes a raw payload (as TensorPayload returns) into a value.
StatusOr<ConstValue> DecodeConst(DType dtype, const Shape& dims, const std::string& raw);
// Encodes a value into a raw little-endian payload.
std::string EncodeConst(const ConstValue& value);
// Fills `tensor` (name, type, dims, raw_data) from `value`.
void ConstToTensorProto(const ConstValue& value, const std::string& name,
                        onnx::TensorProto* tensor);

float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
float BFloat16ToFloat(uint16_t b);
uint16_t FloatToBFloat16(float f);

}  // namespace hx::graph::onnx_internal
