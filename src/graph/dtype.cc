#include "hexplan/graph/dtype.h"

#include <algorithm>
#include <string>

namespace hx::graph {

int64_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kF16:
      return 2;
    case DType::kBF16:
      return 2;
    case DType::kF64:
      return 8;
    case DType::kI64:
      return 8;
    case DType::kI32:
      return 4;
    case DType::kI16:
      return 2;
    case DType::kI8:
      return 1;
    case DType::kU8:
      return 1;
    case DType::kBool:
      return 1;
  }
  return 0;
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "fp32";
    case DType::kF16:
      return "fp16";
    case DType::kBF16:
      return "bf16";
    case DType::kF64:
      return "fp64";
    case DType::kI64:
      return "int64";
    case DType::kI32:
      return "int32";
    case DType::kI16:
      return "int16";
    case DType::kI8:
      return "int8";
    case DType::kU8:
      return "uint8";
    case DType::kBool:
      return "bool";
  }
  return "?";
}

std::optional<DType> ParseDType(std::string_view name) {
  std::string s(name);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "fp32" || s == "float32" || s == "float" || s == "f32") return DType::kF32;
  if (s == "fp16" || s == "float16" || s == "half" || s == "f16") return DType::kF16;
  if (s == "bf16" || s == "bfloat16") return DType::kBF16;
  if (s == "fp64" || s == "float64" || s == "double" || s == "f64") return DType::kF64;
  if (s == "int64" || s == "i64") return DType::kI64;
  if (s == "int32" || s == "i32") return DType::kI32;
  if (s == "int16" || s == "i16") return DType::kI16;
  if (s == "int8" || s == "i8") return DType::kI8;
  if (s == "uint8" || s == "u8") return DType::kU8;
  if (s == "bool") return DType::kBool;
  return std::nullopt;
}

bool IsFloatingPoint(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16 ||
         dtype == DType::kF64;
}

}  // namespace hx::graph
