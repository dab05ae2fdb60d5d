#include "onnx_tensor_util.h"

#include <cmath>
#include <cstring>

namespace hx::graph::onnx_internal {

using onnx::TensorProto;

std::optional<DType> DTypeFromOnnx(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT:
      return DType::kF32;
    case TensorProto::FLOAT16:
      return DType::kF16;
    case TensorProto::BFLOAT16:
      return DType::kBF16;
    case TensorProto::DOUBLE:
      return DType::kF64;
    case TensorProto::INT64:
      return DType::kI64;
    case TensorProto::UINT64:
      return DType::kI64;
    case TensorProto::INT32:
      return DType::kI32;
    case TensorProto::UINT32:
      return DType::kI32;
    case TensorProto::INT16:
      return DType::kI16;
    case TensorProto::UINT16:
      return DType::kI16;
    case TensorProto::INT8:
      return DType::kI8;
    case TensorProto::UINT8:
      return DType::kU8;
    case TensorProto::BOOL:
      return DType::kBool;
    default:
      return std::nullopt;
  }
}

int32_t OnnxFromDType(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return TensorProto::FLOAT;
    case DType::kF16:
      return TensorProto::FLOAT16;
    case DType::kBF16:
      return TensorProto::BFLOAT16;
    case DType::kF64:
      return TensorProto::DOUBLE;
    case DType::kI64:
      return TensorProto::INT64;
    case DType::kI32:
      return TensorProto::INT32;
    case DType::kI16:
      return TensorProto::INT16;
    case DType::kI8:
      return TensorProto::INT8;
    case DType::kU8:
      return TensorProto::UINT8;
    case DType::kBool:
      return TensorProto::BOOL;
  }
  return TensorProto::UNDEFINED;
}

const char* OnnxTypeName(int32_t elem_type) {
  if (TensorProto::DataType_IsValid(elem_type)) {
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(elem_type)).c_str();
  }
  return "INVALID";
}

StatusOr<int64_t> CheckedNumElements(const Shape& dims, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) {
      return InvalidArgument(what + " has a negative dimension " + ShapeToString(dims));
    }
    if (d == 0) return int64_t{0};
  }
  for (int64_t d : dims) {
    if (n > kMaxTensorElements / d) {
      return InvalidArgument(what + " has too many elements " + ShapeToString(dims));
    }
    n *= d;
  }
  return n;
}

namespace {

template <typename Field, typename Out>
std::string PackField(const Field& field) {
  std::string out(static_cast<size_t>(field.size()) * sizeof(Out), '\0');
  for (int i = 0; i < field.size(); ++i) {
    Out v = static_cast<Out>(field.Get(i));
    std::memcpy(&out[static_cast<size_t>(i) * sizeof(Out)], &v, sizeof(Out));
  }
  return out;
}

}  // namespace

StatusOr<std::optional<std::string>> TensorPayload(const TensorProto& tensor, DType dtype,
                                                   int64_t num_elements) {
  const std::string what = "tensor '" + tensor.name() + "'";
  if (tensor.data_location() == TensorProto::EXTERNAL) return std::optional<std::string>();
  const int64_t expected_bytes = num_elements * DTypeSize(dtype);
  if (tensor.has_raw_data()) {
    if (static_cast<int64_t>(tensor.raw_data().size()) != expected_bytes) {
      return InvalidArgument(what + ": raw_data has " + std::to_string(tensor.raw_data().size()) +
                             " bytes, expected " + std::to_string(expected_bytes) + " for " +
                             std::to_string(num_elements) + " elements");
    }
    return std::optional<std::string>(tensor.raw_data());
  }
  int64_t count = 0;
  std::string out;
  const int32_t t = tensor.data_type();
  if (t == TensorProto::FLOAT) {
    count = tensor.float_data_size();
    out = PackField<decltype(tensor.float_data()), float>(tensor.float_data());
  } else if (t == TensorProto::DOUBLE) {
    count = tensor.double_data_size();
    out = PackField<decltype(tensor.double_data()), double>(tensor.double_data());
  } else if (t == TensorProto::INT64) {
    count = tensor.int64_data_size();
    out = PackField<decltype(tensor.int64_data()), int64_t>(tensor.int64_data());
  } else if (t == TensorProto::UINT64) {
    count = tensor.uint64_data_size();
    out = PackField<decltype(tensor.uint64_data()), uint64_t>(tensor.uint64_data());
  } else if (t == TensorProto::UINT32) {
    count = tensor.uint64_data_size();
    out = PackField<decltype(tensor.uint64_data()), uint32_t>(tensor.uint64_data());
  } else if (t == TensorProto::INT32) {
    count = tensor.int32_data_size();
    out = PackField<decltype(tensor.int32_data()), int32_t>(tensor.int32_data());
  } else if (t == TensorProto::INT16 || t == TensorProto::UINT16 || t == TensorProto::FLOAT16 ||
             t == TensorProto::BFLOAT16) {
    count = tensor.int32_data_size();
    out = PackField<decltype(tensor.int32_data()), uint16_t>(tensor.int32_data());
  } else if (t == TensorProto::INT8 || t == TensorProto::UINT8 || t == TensorProto::BOOL) {
    count = tensor.int32_data_size();
    out = PackField<decltype(tensor.int32_data()), uint8_t>(tensor.int32_data());
  }
  if (count == 0 && num_elements > 0) return std::optional<std::string>();  // stripped
  if (count != num_elements) {
    return InvalidArgument(what + ": has " + std::to_string(count) + " values, expected " +
                           std::to_string(num_elements));
  }
  return std::optional<std::string>(std::move(out));
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    v = mant ? std::nanf("") : INFINITY;
  } else {
    v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  }
  return sign ? -v : v;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  if (std::isnan(f)) return sign | 0x7e00;
  float a = std::fabs(f);
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < std::ldexp(1.0f, -24)) return sign;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  if (e < -13) {      // subnormal
    return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(a, 24)));
  }
  uint32_t mant = static_cast<uint32_t>(std::nearbyint(std::ldexp(a, 11 - e)));  // 1024..2048
  int exp = e + 14;
  if (mant == 2048) {
    mant = 1024;
    ++exp;
  }
  if (exp >= 31) return sign | 0x7c00;
  return sign | static_cast<uint16_t>((exp << 10) | (mant & 0x3ff));
}

float BFloat16ToFloat(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t FloatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((x >> 16) | 0x40);
  const uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

StatusOr<ConstValue> DecodeConst(DType dtype, const Shape& dims, const std::string& raw) {
  ConstValue v;
  v.dtype = dtype;
  v.dims = dims;
  HX_ASSIGN_OR_RETURN(int64_t n, CheckedNumElements(dims, "constant"));
  if (static_cast<int64_t>(raw.size()) != n * DTypeSize(dtype)) {
    return InvalidArgument("constant payload has " + std::to_string(raw.size()) +
                           " bytes, expected " + std::to_string(n * DTypeSize(dtype)));
  }
  const char* p = raw.data();
  auto read = [&](auto tag, int64_t i) {
    decltype(tag) x;
    std::memcpy(&x, p + i * static_cast<int64_t>(sizeof(x)), sizeof(x));
    return x;
  };
  if (v.is_float())
    v.floats.resize(n);
  else
    v.ints.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DType::kF32:
        v.floats[i] = read(float{}, i);
        break;
      case DType::kF64:
        v.floats[i] = read(double{}, i);
        break;
      case DType::kF16:
        v.floats[i] = HalfToFloat(read(uint16_t{}, i));
        break;
      case DType::kBF16:
        v.floats[i] = BFloat16ToFloat(read(uint16_t{}, i));
        break;
      case DType::kI64:
        v.ints[i] = read(int64_t{}, i);
        break;
      case DType::kI32:
        v.ints[i] = read(int32_t{}, i);
        break;
      case DType::kI16:
        v.ints[i] = read(int16_t{}, i);
        break;
      case DType::kI8:
        v.ints[i] = read(int8_t{}, i);
        break;
      case DType::kU8:
        v.ints[i] = read(uint8_t{}, i);
        break;
      case DType::kBool:
        v.ints[i] = read(uint8_t{}, i) != 0;
        break;
    }
  }
  return v;
}

std::string EncodeConst(const ConstValue& value) {
  const int64_t n = value.size();
  const int64_t width = DTypeSize(value.dtype);
  std::string out(static_cast<size_t>(n * width), '\0');
  char* p = out.data();
  auto write = [&](auto x, int64_t i) { std::memcpy(p + i * width, &x, sizeof(x)); };
  for (int64_t i = 0; i < n; ++i) {
    switch (value.dtype) {
      case DType::kF32:
        write(static_cast<float>(value.floats[i]), i);
        break;
      case DType::kF64:
        write(value.floats[i], i);
        break;
      case DType::kF16:
        write(FloatToHalf(static_cast<float>(value.floats[i])), i);
        break;
      case DType::kBF16:
        write(FloatToBFloat16(static_cast<float>(value.floats[i])), i);
        break;
      case DType::kI64:
        write(value.ints[i], i);
        break;
      case DType::kI32:
        write(static_cast<int32_t>(value.ints[i]), i);
        break;
      case DType::kI16:
        write(static_cast<int16_t>(value.ints[i]), i);
        break;
      case DType::kI8:
        write(static_cast<int8_t>(value.ints[i]), i);
        break;
      case DType::kU8:
        write(static_cast<uint8_t>(value.ints[i]), i);
        break;
      case DType::kBool:
        write(static_cast<uint8_t>(value.ints[i] != 0), i);
        break;
    }
  }
  return out;
}

void ConstToTensorProto(const ConstValue& value, const std::string& name, TensorProto* tensor) {
  tensor->Clear();
  tensor->set_name(name);
  tensor->set_data_type(OnnxFromDType(value.dtype));
  for (int64_t d : value.dims) tensor->add_dims(d);
  tensor->set_raw_data(EncodeConst(value));
}

}  // namespace hx::graph::onnx_internal
