#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hx::graph {

enum class DType : uint8_t {
  kF32,
  kF16,
  kBF16,
  kF64,
  kI64,
  kI32,
  kI16,
  kI8,
  kU8,
  kBool,
};

// Bytes per element.
int64_t DTypeSize(DType dtype);
// "fp32", "fp16", "bf16", "fp64", "int64", ...
const char* DTypeName(DType dtype);
// Accepts the names above and common aliases ("float32", "float", "half", "float16", "bfloat16").
std::optional<DType> ParseDType(std::string_view name);
bool IsFloatingPoint(DType dtype);

}  // namespace hx::graph
