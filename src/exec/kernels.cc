#include "hexplan/exec/kernels.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

#include "exec/kernel_context.h"

namespace hx::exec {
namespace internal {

float HalfToFloat(uint16_t h) {
  const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  const float sign = (h & 0x8000) != 0 ? -1.0f : 1.0f;
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -24);
  if (exp == 31)
    return mant != 0 ? std::numeric_limits<float>::quiet_NaN()
                     : sign * std::numeric_limits<float>::infinity();
  return sign * std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
}

uint16_t FloatToHalf(float f) {  // round to nearest even
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | (ax > 0x7f800000u ? 0x7e00 : 0x7c00);
  if (ax >= 0x477ff000u) return sign | 0x7c00;   // rounds above the largest half
  if (ax < 0x38800000u) {                        // subnormal half (or zero)
    const float v = std::fabs(f) * 16777216.0f;  // units of 2^-24
    return sign | static_cast<uint16_t>(std::nearbyint(v));
  }
  uint32_t m = ax + 0xfffu + ((ax >> 13) & 1u) - (112u << 23);
  return sign | static_cast<uint16_t>(m >> 13);
}

// double -> int64 without undefined behaviour (NaN is 0, out-of-range values saturate); narrower
// integer types then wrap modulo 2^n, as numpy's integer arithmetic does.
int64_t ToInt64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

template <typename T>
double LoadAs(const void* p, int64_t i) {
  return static_cast<double>(static_cast<const T*>(p)[i]);
}
StatusOr<double> LoadElement(DType dt, const void* p, int64_t i) {
  switch (dt) {
    case DType::kF32:
      return LoadAs<float>(p, i);
    case DType::kF64:
      return LoadAs<double>(p, i);
    case DType::kI64:
      return LoadAs<int64_t>(p, i);
    case DType::kI32:
      return LoadAs<int32_t>(p, i);
    case DType::kI16:
      return LoadAs<int16_t>(p, i);
    case DType::kI8:
      return LoadAs<int8_t>(p, i);
    case DType::kU8:
    case DType::kBool:
      return LoadAs<uint8_t>(p, i);
    case DType::kF16:
      return HalfToFloat(static_cast<const uint16_t*>(p)[i]);
    case DType::kBF16: {
      const uint32_t bits = static_cast<uint32_t>(static_cast<const uint16_t*>(p)[i]) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    default:
      return Unimplemented(std::string("dtype ") + graph::DTypeName(dt));
  }
}
Status StoreElement(DType dt, void* p, int64_t i, double v) {
  switch (dt) {
    case DType::kF32:
      static_cast<float*>(p)[i] = static_cast<float>(v);
      break;
    case DType::kF64:
      static_cast<double*>(p)[i] = v;
      break;
    case DType::kI64:
      static_cast<int64_t*>(p)[i] = static_cast<int64_t>(ToInt64(v));
      break;
    case DType::kI32:
      static_cast<int32_t*>(p)[i] = static_cast<int32_t>(ToInt64(v));
      break;
    case DType::kI16:
      static_cast<int16_t*>(p)[i] = static_cast<int16_t>(ToInt64(v));
      break;
    case DType::kI8:
      static_cast<int8_t*>(p)[i] = static_cast<int8_t>(ToInt64(v));
      break;
    case DType::kU8:
      static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(ToInt64(v));
      break;
    case DType::kBool:
      static_cast<uint8_t*>(p)[i] = v != 0.0;
      break;
    case DType::kF16:
      static_cast<uint16_t*>(p)[i] = FloatToHalf(static_cast<float>(v));
      break;
    case DType::kBF16: {  // the upper half of the fp32 bits (truncation, as ONNX's tests expect)
      const float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(bits >> 16);
      break;
    }
    default:
      return Unimplemented(std::string("dtype ") + graph::DTypeName(dt));
  }
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> IntsOf(const Ctx& c, size_t i) {
  std::vector<int64_t> v;
  if (!c.Has(i)) return v;
  const int64_t n = c.in[i].NumElements();
  for (int64_t k = 0; k < n; ++k) {
    if (c.in[i].dtype == DType::kI64)
      v.push_back(c.in[i].as<int64_t>()[k]);
    else if (c.in[i].dtype == DType::kI32)
      v.push_back(c.in[i].as<int32_t>()[k]);
    else
      return c.Error("input " + std::to_string(i) + " must be int64 or int32");
  }
  return v;
}

}  // namespace internal

namespace {

using graph::DType;
using graph::Shape;
using namespace internal;  // NOLINT: the kernels' shared helpers

// ---- Elementwise.

Kernel Unary(std::function<float(float)> fn) {
  return [fn](const Ctx& c) -> Status {
    HX_RETURN_IF_ERROR(c.NeedF32(0));
    const float* x = c.in[0].as<float>();
    float* y = c.out[0].as<float>();
    const int64_t n = c.out[0].NumElements();
    if (c.in[0].NumElements() != n) return c.Error("input and output sizes differ");
    for (int64_t i = 0; i < n; ++i) y[i] = fn(x[i]);
    return Status::Ok();
  };
}

// erf in float without calls or branches: x P(x^2) / Q(x^2) on x clamped to [-4, 4] (erf rounds
// to +-1 in float beyond; NaN passes through the clamp), the rational fit Eigen and XLA use;
// within 5e-7 (relative) of std::erf. On GCC's vector types, four lanes at a time (GCC does not
// vectorise the clamp of a plain loop: NaN compares may trap). std::erf per element was 8% of
// GPT-2 small.
template <typename V>
V FastErfF32(V v, V lo, V hi) {
  const V x = v < lo ? lo : (v > hi ? hi : v), x2 = x * x;
  V p = -2.72614225801306e-10f * x2 + 2.77068142495902e-08f;
  p = p * x2 - 2.10102402082508e-06f;
  p = p * x2 - 5.69250639462346e-05f;
  p = p * x2 - 7.34990630326855e-04f;
  p = p * x2 - 2.95459980854025e-03f;
  p = p * x2 - 1.60960333262415e-02f;
  V q = -1.45660718464996e-05f * x2 - 2.13374055278905e-04f;
  q = q * x2 - 1.68282697438203e-03f;
  q = q * x2 - 7.37332916720468e-03f;
  q = q * x2 - 1.42647390514189e-02f;
  return x * p / q;
}

Status ErfKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(c.NeedF32(0));
  const float* x = c.in[0].as<float>();
  float* y = c.out[0].as<float>();
  const int64_t n = c.out[0].NumElements();
  if (c.in[0].NumElements() != n) return c.Error("input and output sizes differ");
  typedef float Lanes __attribute__((vector_size(16)));
  const Lanes lo = Lanes{} - 4.0f, hi = Lanes{} + 4.0f;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    Lanes v;
    std::memcpy(&v, x + i, sizeof v);
    v = FastErfF32(v, lo, hi);
    std::memcpy(y + i, &v, sizeof v);
  }
  for (; i < n; ++i) y[i] = FastErfF32(x[i], -4.0f, 4.0f);
  return Status::Ok();
}

Kernel Binary(float (*fn)(float, float)) {
  return [fn](const Ctx& c) -> Status {
    HX_RETURN_IF_ERROR(c.NeedF32(0));
    HX_RETURN_IF_ERROR(c.NeedF32(1));
    const Shape& out = *c.out[0].shape;
    if (!Broadcastable(*c.in[0].shape, out) || !Broadcastable(*c.in[1].shape, out))
      return c.Error("inputs " + graph::ShapeToString(*c.in[0].shape) + " and " +
                     graph::ShapeToString(*c.in[1].shape) + " do not broadcast to " +
                     graph::ShapeToString(out));
    const float* a = c.in[0].as<float>();
    const float* b = c.in[1].as<float>();
    float* y = c.out[0].as<float>();
    if (c.in[1].NumElements() == 1 && *c.in[0].shape == out) {
      const float s = b[0];
      const int64_t n = c.out[0].NumElements();
      for (int64_t i = 0; i < n; ++i) y[i] = fn(a[i], s);
      return Status::Ok();
    }
    ForEachBroadcast<2>(
        out, {c.in[0].shape, c.in[1].shape},
        [&](int64_t i, const std::array<int64_t, 2>& o) { y[i] = fn(a[o[0]], b[o[1]]); });
    return Status::Ok();
  };
}

float GeluErf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }
float GeluTanh(float x) {
  return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}
float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

Status GeluKernel(const Ctx& c) {
  const std::string approx = c.op.attrs.GetString("approximate", "none");
  if (approx != "none" && approx != "tanh") return c.Error("unknown approximate '" + approx + "'");
  return Unary(approx == "tanh" ? GeluTanh : GeluErf)(c);
}

Status ClipKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(c.NeedF32(0));
  float lo =
      static_cast<float>(c.op.attrs.GetFloat("min", -std::numeric_limits<float>::infinity()));
  float hi = static_cast<float>(c.op.attrs.GetFloat("max", std::numeric_limits<float>::infinity()));
  if (c.Has(1)) lo = c.in[1].as<float>()[0];
  if (c.Has(2)) hi = c.in[2].as<float>()[0];
  return Unary([lo, hi](float x) { return std::min(std::max(x, lo), hi); })(c);
}

Status WhereKernel(const Ctx& c) {
  if (!c.Has(0) || !c.Has(1) || !c.Has(2)) return c.Error("needs condition, X and Y");
  if (c.in[0].dtype != DType::kBool && c.in[0].dtype != DType::kU8)
    return c.Error("condition must be bool");
  if (c.in[1].dtype != c.in[2].dtype || c.in[1].dtype != c.out[0].dtype)
    return c.Error("X, Y and the output must share a dtype");
  const Shape& out = *c.out[0].shape;
  for (int k = 0; k < 3; ++k)
    if (!Broadcastable(*c.in[k].shape, out))
      return c.Error("inputs do not broadcast to the output");
  const uint8_t* cond = c.in[0].as<uint8_t>();
  const int64_t es = graph::DTypeSize(c.out[0].dtype);
  const char* x = c.in[1].as<char>();
  const char* y = c.in[2].as<char>();
  char* o = c.out[0].as<char>();
  ForEachBroadcast<3>(out, {c.in[0].shape, c.in[1].shape, c.in[2].shape},
                      [&](int64_t i, const std::array<int64_t, 3>& off) {
                        std::memcpy(o + i * es, cond[off[0]] ? x + off[1] * es : y + off[2] * es,
                                    static_cast<size_t>(es));
                      });
  return Status::Ok();
}

Status ExpandKernel(const Ctx& c) {
  if (c.in[0].dtype != c.out[0].dtype) return c.Error("output dtype differs from the input's");
  const Shape& out = *c.out[0].shape;
  if (!Broadcastable(*c.in[0].shape, out)) return c.Error("input does not broadcast to the output");
  const int64_t es = graph::DTypeSize(c.out[0].dtype);
  const char* x = c.in[0].as<char>();
  char* o = c.out[0].as<char>();
  ForEachBroadcast<1>(out, {c.in[0].shape}, [&](int64_t i, const std::array<int64_t, 1>& off) {
    std::memcpy(o + i * es, x + off[0] * es, static_cast<size_t>(es));
  });
  return Status::Ok();
}

Status SumKernel(const Ctx& c) {  // variadic, broadcasting
  const Shape& out = *c.out[0].shape;
  float* y = c.out[0].as<float>();
  std::fill(y, y + c.out[0].NumElements(), 0.0f);
  for (size_t k = 0; k < c.in.size(); ++k) {
    HX_RETURN_IF_ERROR(c.NeedF32(k));
    if (!Broadcastable(*c.in[k].shape, out))
      return c.Error("inputs do not broadcast to the output");
    const float* x = c.in[k].as<float>();
    ForEachBroadcast<1>(out, {c.in[k].shape},
                        [&](int64_t i, const std::array<int64_t, 1>& o) { y[i] += x[o[0]]; });
  }
  return Status::Ok();
}

// ---- Conversions and constants.

Status CastKernel(const Ctx& c) {
  const int64_t n = c.out[0].NumElements();
  if (c.in[0].NumElements() != n) return c.Error("input and output sizes differ");
  for (int64_t i = 0; i < n; ++i) {
    auto v = LoadElement(c.in[0].dtype, c.in[0].data, i);
    if (!v.ok()) return c.Error(v.status().message());
    Status s = StoreElement(c.out[0].dtype, c.out[0].data, i, *v);
    if (!s.ok()) return c.Error(s.message());
  }
  return Status::Ok();
}

Status ConstantKernel(const Ctx& c) {
  const TensorRef& o = c.out[0];
  const int64_t n = o.NumElements();
  if (c.op.data) {
    if (static_cast<int64_t>(c.op.data->size()) != o.Bytes())
      return c.Error("payload has " + std::to_string(c.op.data->size()) + " bytes, expected " +
                     std::to_string(o.Bytes()));
    std::memcpy(o.data, c.op.data->data(), c.op.data->size());
    return Status::Ok();
  }
  std::vector<double> values;
  const auto& a = c.op.attrs;
  if (a.Has("value_float")) {
    values = {a.GetFloat("value_float", 0.0)};
  } else if (a.Has("value_int")) {
    values = {static_cast<double>(a.GetInt("value_int", 0))};
  } else if (a.Has("value_floats")) {
    values = a.GetFloats("value_floats");
  } else if (a.Has("value_ints")) {
    for (int64_t v : a.GetInts("value_ints")) values.push_back(static_cast<double>(v));
  } else {
    return c.Error("has no value (no payload and no value_float(s)/value_int(s) attribute)");
  }
  if (static_cast<int64_t>(values.size()) != n && values.size() != 1)
    return c.Error("value has " + std::to_string(values.size()) + " elements, the output " +
                   std::to_string(n));
  for (int64_t i = 0; i < n; ++i) {
    Status s = StoreElement(o.dtype, o.data, i, values[values.size() == 1 ? 0 : i]);
    if (!s.ok()) return c.Error(s.message());
  }
  return Status::Ok();
}

// ---- Data movement (any dtype).

Status CopyKernel(const Ctx& c) {  // Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout
  if (c.in[0].Bytes() != c.out[0].Bytes()) return c.Error("input and output sizes differ");
  if (c.in[0].data != c.out[0].data)
    std::memcpy(c.out[0].data, c.in[0].data, static_cast<size_t>(c.out[0].Bytes()));
  return Status::Ok();
}

// Inference-mode Dropout is the identity and its mask all true. Training mode (input 2) with a
// ratio above 0 drops at random: refused, since a seeded run could not match any other runtime.
Status DropoutKernel(const Ctx& c) {
  bool training = false;
  if (c.Has(2)) {
    if (c.in[2].dtype != DType::kBool) return c.Error("training_mode must be bool");
    training = c.in[2].as<uint8_t>()[0] != 0;
  }
  double ratio = c.op.attrs.GetFloat("ratio", 0.5);
  if (c.Has(1)) {
    auto r = LoadElement(c.in[1].dtype, c.in[1].data, 0);
    if (!r.ok()) return c.Error("ratio: " + r.status().message());
    ratio = *r;
  }
  if (training && ratio != 0.0)
    return c.Error("training_mode=true with ratio " + std::to_string(ratio) +
                   " (random dropout) is unsupported");
  HX_RETURN_IF_ERROR(CopyKernel(c));
  if (c.HasOut(1)) {
    if (c.out[1].dtype != DType::kBool) return c.Error("mask output must be bool");
    std::memset(c.out[1].data, 1, static_cast<size_t>(c.out[1].Bytes()));
  }
  return Status::Ok();
}

// Whether `perm` swaps the last two dims and keeps the others.
bool TransposeSwapsLastTwo(const std::vector<int64_t>& perm) {
  const int64_t r = static_cast<int64_t>(perm.size());
  if (r < 2 || perm[r - 2] != r - 1 || perm[r - 1] != r - 2) return false;
  for (int64_t d = 0; d + 2 < r; ++d)
    if (perm[d] != d) return false;
  return true;
}

// [batch, R, C] -> [batch, C, R] in 32x32 tiles (fp32). The general index walk reads the input a
// cache line per element when it swaps the last two dims: GPT-2's tied lm_head, a [50257, 768]
// Transpose each run, took 463 ms of a 666 ms run.
void TransposeLastTwoF32(const float* x, float* y, int64_t batch, int64_t R, int64_t C) {
  constexpr int64_t kTile = 32;
  for (int64_t b = 0; b < batch; ++b, x += R * C, y += R * C)
    for (int64_t i0 = 0; i0 < R; i0 += kTile)
      for (int64_t j0 = 0; j0 < C; j0 += kTile) {
        const int64_t i1 = std::min(R, i0 + kTile), j1 = std::min(C, j0 + kTile);
        for (int64_t j = j0; j < j1; ++j)
          for (int64_t i = i0; i < i1; ++i) y[j * R + i] = x[i * C + j];
      }
}

Status TransposeKernel(const Ctx& c) {
  const Shape& in = *c.in[0].shape;
  const size_t rank = in.size();
  std::vector<int64_t> perm = c.op.attrs.GetInts("perm");
  if (perm.empty())
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  if (perm.size() != rank) return c.Error("perm has the wrong length");
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * in[d];
  const Shape& out = *c.out[0].shape;
  std::vector<int64_t> strides(rank);  // input stride of each output dim
  for (size_t d = 0; d < rank; ++d) {
    if (perm[d] < 0 || perm[d] >= static_cast<int64_t>(rank)) return c.Error("bad perm");
    strides[d] = in_strides[static_cast<size_t>(perm[d])];
    if (out[d] != in[static_cast<size_t>(perm[d])])
      return c.Error("output shape does not match perm");
  }
  const int64_t es = graph::DTypeSize(c.in[0].dtype);
  const char* x = c.in[0].as<char>();
  char* y = c.out[0].as<char>();
  const int64_t n = c.out[0].NumElements();
  const bool f32 = es == 4;
  if (f32 && TransposeSwapsLastTwo(perm)) {
    const int64_t R = in[rank - 2], C = in[rank - 1];
    if (R * C > 0)
      TransposeLastTwoF32(reinterpret_cast<const float*>(x), reinterpret_cast<float*>(y),
                          n / (R * C), R, C);
    return Status::Ok();
  }
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (f32)
      reinterpret_cast<float*>(y)[i] = reinterpret_cast<const float*>(x)[off];
    else
      std::memcpy(y + i * es, x + off * es, static_cast<size_t>(es));
    for (size_t d = rank; d-- > 0;) {
      ++idx[d];
      off += strides[d];
      if (idx[d] < out[d]) break;
      off -= strides[d] * out[d];
      idx[d] = 0;
    }
  }
  return Status::Ok();
}

Status ConcatKernel(const Ctx& c) {
  const Shape& out = *c.out[0].shape;
  const int64_t axis = NormAxis(c.op.attrs.GetInt("axis", 0), out.size());
  if (axis < 0 || axis >= static_cast<int64_t>(out.size())) return c.Error("axis out of range");
  int64_t outer, inner;
  AroundAxis(out, axis, &outer, &inner);
  const int64_t es = graph::DTypeSize(c.out[0].dtype);
  const int64_t out_row = out[static_cast<size_t>(axis)] * inner * es;
  int64_t pos = 0;
  for (const TensorRef& t : c.in) {
    if (t.data == nullptr) continue;
    if (t.dtype != c.out[0].dtype) return c.Error("inputs differ in dtype");
    const int64_t row = (*t.shape)[static_cast<size_t>(axis)] * inner * es;
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(c.out[0].as<char>() + o * out_row + pos, t.as<char>() + o * row,
                  static_cast<size_t>(row));
    pos += row;
  }
  if (pos != out_row) return c.Error("input sizes along the axis do not add up to the output's");
  return Status::Ok();
}

Status SplitKernel(const Ctx& c) {
  const Shape& in = *c.in[0].shape;
  const int64_t axis = NormAxis(c.op.attrs.GetInt("axis", 0), in.size());
  if (axis < 0 || axis >= static_cast<int64_t>(in.size())) return c.Error("axis out of range");
  int64_t outer, inner;
  AroundAxis(in, axis, &outer, &inner);
  const int64_t es = graph::DTypeSize(c.in[0].dtype);
  const int64_t in_row = in[static_cast<size_t>(axis)] * inner * es;
  int64_t pos = 0;
  for (const TensorRef& t : c.out) {
    if (t.shape == nullptr) continue;
    const int64_t row = (*t.shape)[static_cast<size_t>(axis)] * inner * es;
    if (t.data != nullptr)
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(t.as<char>() + o * row, c.in[0].as<char>() + o * in_row + pos,
                    static_cast<size_t>(row));
    pos += row;
  }
  if (pos > in_row) return c.Error("output sizes along the axis exceed the input's");
  return Status::Ok();
}

Status SliceKernel(const Ctx& c) {
  const Shape& in = *c.in[0].shape;
  const size_t rank = in.size();
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.op.attrs.Has("starts")) {  // opset < 10
    starts = c.op.attrs.GetInts("starts");
    ends = c.op.attrs.GetInts("ends");
    axes = c.op.attrs.GetInts("axes");
  } else {
    HX_ASSIGN_OR_RETURN(starts, IntsOf(c, 1));
    HX_ASSIGN_OR_RETURN(ends, IntsOf(c, 2));
    HX_ASSIGN_OR_RETURN(axes, IntsOf(c, 3));
    HX_ASSIGN_OR_RETURN(steps, IntsOf(c, 4));
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return c.Error("starts, ends, axes and steps differ in length");
  std::vector<int64_t> begin(rank, 0), step(rank, 1);
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t a = NormAxis(axes[k], rank);
    if (a < 0 || a >= static_cast<int64_t>(rank)) return c.Error("axis out of range");
    const int64_t dim = in[static_cast<size_t>(a)];
    if (steps[k] == 0) return c.Error("step 0");
    int64_t s = starts[k] < 0 ? starts[k] + dim : starts[k];
    s = steps[k] > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
    begin[static_cast<size_t>(a)] = s;
    step[static_cast<size_t>(a)] = steps[k];
  }
  const Shape& out = *c.out[0].shape;
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * in[d];
  const int64_t es = graph::DTypeSize(c.in[0].dtype);
  const int64_t n = c.out[0].NumElements();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) {
      int64_t src = begin[d] + idx[d] * step[d];
      if (src < 0 || src >= in[d]) return c.Error("output shape does not match the slice");
      off += src * in_strides[d];
    }
    std::memcpy(c.out[0].as<char>() + i * es, c.in[0].as<char>() + off * es,
                static_cast<size_t>(es));
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  return Status::Ok();
}

Status GatherKernel(const Ctx& c) {
  const Shape& data = *c.in[0].shape;
  const int64_t axis = NormAxis(c.op.attrs.GetInt("axis", 0), data.size());
  if (axis < 0 || axis >= static_cast<int64_t>(data.size())) return c.Error("axis out of range");
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> indices, IntsOf(c, 1));
  int64_t outer, inner;
  AroundAxis(data, axis, &outer, &inner);
  const int64_t dim = data[static_cast<size_t>(axis)];
  const int64_t es = graph::DTypeSize(c.in[0].dtype);
  const int64_t row = inner * es;
  const int64_t ni = static_cast<int64_t>(indices.size());
  if (c.out[0].NumElements() != outer * ni * inner) return c.Error("output size does not match");
  char* y = c.out[0].as<char>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < ni; ++k) {
      int64_t j = indices[static_cast<size_t>(k)];
      if (j < 0) j += dim;
      if (j < 0 || j >= dim)
        return c.Error("index " + std::to_string(indices[static_cast<size_t>(k)]) +
                       " out of range for a dim of " + std::to_string(dim));
      std::memcpy(y + (o * ni + k) * row, c.in[0].as<char>() + (o * dim + j) * row,
                  static_cast<size_t>(row));
    }
  }
  return Status::Ok();
}

Status PadKernel(const Ctx& c) {
  const std::string mode = c.op.attrs.GetString("mode", "constant");
  if (mode != "constant") return c.Error("only mode=constant is supported");
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> pads, IntsOf(c, 1));
  if (pads.empty()) pads = c.op.attrs.GetInts("pads");
  const Shape& in = *c.in[0].shape;
  const size_t rank = in.size();
  if (pads.size() != 2 * rank) return c.Error("pads must have 2*rank entries");
  double value = 0.0;
  if (c.Has(2)) {
    auto v = LoadElement(c.in[2].dtype, c.in[2].data, 0);
    if (!v.ok()) return c.Error(v.status().message());
    value = *v;
  }
  const Shape& out = *c.out[0].shape;
  const int64_t n = c.out[0].NumElements();
  for (int64_t i = 0; i < n; ++i)
    HX_RETURN_IF_ERROR(StoreElement(c.out[0].dtype, c.out[0].data, i, value));
  const int64_t es = graph::DTypeSize(c.in[0].dtype);
  std::vector<int64_t> out_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) out_strides[d - 1] = out_strides[d] * out[d];
  const int64_t m = c.in[0].NumElements();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < m; ++i) {
    int64_t off = 0;
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) {
      int64_t o = idx[d] + pads[d];
      if (o < 0 || o >= out[d]) inside = false;
      off += o * out_strides[d];
    }
    if (inside)
      std::memcpy(c.out[0].as<char>() + off * es, c.in[0].as<char>() + i * es,
                  static_cast<size_t>(es));
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < in[d]) break;
      idx[d] = 0;
    }
  }
  return Status::Ok();
}

// ---- Normalisation and reductions (fp32).

Status SoftmaxKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(c.NeedF32(0));
  const Shape& s = *c.in[0].shape;
  const int64_t axis = NormAxis(c.op.attrs.GetInt("axis", -1), s.size());
  if (axis < 0 || axis >= static_cast<int64_t>(s.size())) return c.Error("axis out of range");
  int64_t outer, inner;
  AroundAxis(s, axis, &outer, &inner);
  const int64_t n = s[static_cast<size_t>(axis)];
  const float* x = c.in[0].as<float>();
  float* y = c.out[0].as<float>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * n * inner + i;
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t k = 0; k < n; ++k) mx = std::max(mx, x[base + k * inner]);
      double sum = 0.0;
      for (int64_t k = 0; k < n; ++k) {
        float e = std::exp(x[base + k * inner] - mx);
        y[base + k * inner] = e;
        sum += e;
      }
      const float inv = static_cast<float>(1.0 / sum);
      for (int64_t k = 0; k < n; ++k) y[base + k * inner] *= inv;
    }
  }
  return Status::Ok();
}

Status LayerNormKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(c.NeedF32(0));
  HX_RETURN_IF_ERROR(c.NeedF32(1));
  const Shape& s = *c.in[0].shape;
  const int64_t axis = NormAxis(c.op.attrs.GetInt("axis", -1), s.size());
  if (axis < 0 || axis >= static_cast<int64_t>(s.size())) return c.Error("axis out of range");
  const double eps = c.op.attrs.GetFloat("epsilon", 1e-5);
  int64_t outer = 1, n = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d)
    (d < axis ? outer : n) *= s[static_cast<size_t>(d)];
  if (c.in[1].NumElements() != n) return c.Error("scale size does not match the normalised dims");
  const float* x = c.in[0].as<float>();
  const float* g = c.in[1].as<float>();
  const float* b = c.Has(2) ? c.in[2].as<float>() : nullptr;
  if (b != nullptr && c.in[2].NumElements() != n) return c.Error("bias size mismatch");
  float* y = c.out[0].as<float>();
  for (int64_t o = 0; o < outer; ++o) {
    const float* xr = x + o * n;
    double mean = 0.0;
    for (int64_t k = 0; k < n; ++k) mean += xr[k];
    mean /= static_cast<double>(n);
    double var = 0.0;
    for (int64_t k = 0; k < n; ++k) var += (xr[k] - mean) * (xr[k] - mean);
    var /= static_cast<double>(n);
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t k = 0; k < n; ++k) {
      float v = static_cast<float>((xr[k] - mean) * inv) * g[k];
      y[o * n + k] = b != nullptr ? v + b[k] : v;
    }
    if (c.HasOut(1)) c.out[1].as<float>()[o] = static_cast<float>(mean);
    if (c.HasOut(2)) c.out[2].as<float>()[o] = static_cast<float>(inv);
  }
  return Status::Ok();
}

Status ReduceKernel(const Ctx& c, bool mean) {
  HX_RETURN_IF_ERROR(c.NeedF32(0));
  const Shape& s = *c.in[0].shape;
  std::vector<int64_t> axes = c.op.attrs.GetInts("axes");
  if (axes.empty()) {
    HX_ASSIGN_OR_RETURN(axes, IntsOf(c, 1));
  }
  const bool keep = c.op.attrs.GetInt("keepdims", 1) != 0;
  std::vector<bool> reduced(s.size(), axes.empty());
  for (int64_t a : axes) {
    int64_t n = NormAxis(a, s.size());
    if (n < 0 || n >= static_cast<int64_t>(s.size())) return c.Error("axis out of range");
    reduced[static_cast<size_t>(n)] = true;
  }
  Shape kept_shape;
  for (size_t d = 0; d < s.size(); ++d) kept_shape.push_back(reduced[d] ? 1 : s[d]);
  (void)keep;
  const int64_t out_n = graph::NumElements(kept_shape);
  if (out_n != c.out[0].NumElements()) return c.Error("output size does not match the reduction");
  std::vector<double> acc(static_cast<size_t>(out_n), 0.0);
  std::vector<int64_t> strides = BroadcastStrides(kept_shape, s);
  const float* x = c.in[0].as<float>();
  const int64_t n = c.in[0].NumElements();
  std::vector<int64_t> idx(s.size(), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    acc[static_cast<size_t>(off)] += x[i];
    for (size_t d = s.size(); d-- > 0;) {
      ++idx[d];
      off += strides[d];
      if (idx[d] < s[d]) break;
      off -= strides[d] * s[d];
      idx[d] = 0;
    }
  }
  const double count = out_n > 0 ? static_cast<double>(n) / static_cast<double>(out_n) : 1.0;
  float* y = c.out[0].as<float>();
  for (int64_t i = 0; i < out_n; ++i)
    y[i] = static_cast<float>(mean ? acc[static_cast<size_t>(i)] / count
                                   : acc[static_cast<size_t>(i)]);
  return Status::Ok();
}

Status LpNormKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(c.NeedF32(0));
  const Shape& s = *c.in[0].shape;
  const int64_t axis = NormAxis(c.op.attrs.GetInt("axis", -1), s.size());
  const int64_t p = c.op.attrs.GetInt("p", 2);
  if (axis < 0 || axis >= static_cast<int64_t>(s.size())) return c.Error("axis out of range");
  if (p != 1 && p != 2) return c.Error("p must be 1 or 2");
  int64_t outer, inner;
  AroundAxis(s, axis, &outer, &inner);
  const int64_t n = s[static_cast<size_t>(axis)];
  const float* x = c.in[0].as<float>();
  float* y = c.out[0].as<float>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * n * inner + i;
      double norm = 0.0;
      for (int64_t k = 0; k < n; ++k) {
        const double v = x[base + k * inner];
        norm += p == 1 ? std::abs(v) : v * v;
      }
      if (p == 2) norm = std::sqrt(norm);
      const float inv = norm > 0.0 ? static_cast<float>(1.0 / norm) : 0.0f;
      for (int64_t k = 0; k < n; ++k) y[base + k * inner] = x[base + k * inner] * inv;
    }
  return Status::Ok();
}

// training_mode=1: normalise with the batch's own statistics (population variance) and write the
// updated running statistics (input * momentum + batch * (1 - momentum)) to outputs 1 and 2.
Status BatchNormTraining(const Ctx& c, int64_t N, int64_t C, int64_t inner, double eps) {
  const double momentum = c.op.attrs.GetFloat("momentum", 0.9);
  const float *x = c.in[0].as<float>(), *g = c.in[1].as<float>(), *b = c.in[2].as<float>(),
              *m = c.in[3].as<float>(), *v = c.in[4].as<float>();
  float* y = c.out[0].as<float>();
  const double count = static_cast<double>(N * inner);
  for (int64_t ch = 0; ch < C; ++ch) {
    double sum = 0.0, sq = 0.0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < inner; ++i) sum += x[(n * C + ch) * inner + i];
    const double mean = sum / count;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < inner; ++i) {
        const double d = x[(n * C + ch) * inner + i] - mean;
        sq += d * d;
      }
    const double var = sq / count, inv = 1.0 / std::sqrt(var + eps);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t k = (n * C + ch) * inner + i;
        y[k] = static_cast<float>((x[k] - mean) * inv * g[ch] + b[ch]);
      }
    if (c.HasOut(1))
      c.out[1].as<float>()[ch] = static_cast<float>(m[ch] * momentum + mean * (1 - momentum));
    if (c.HasOut(2))
      c.out[2].as<float>()[ch] = static_cast<float>(v[ch] * momentum + var * (1 - momentum));
  }
  return Status::Ok();
}

Status BatchNormKernel(const Ctx& c) {
  for (size_t i = 0; i < 5; ++i) HX_RETURN_IF_ERROR(c.NeedF32(i));
  const Shape& s = *c.in[0].shape;
  if (s.size() < 2) return c.Error("input must be at least 2-D");
  const double eps = c.op.attrs.GetFloat("epsilon", 1e-5);
  const int64_t N = s[0], C = s[1];
  int64_t inner = 1;
  for (size_t d = 2; d < s.size(); ++d) inner *= s[d];
  for (size_t i = 1; i < 5; ++i)
    if (c.in[i].NumElements() != C) return c.Error("per-channel inputs must have C elements");
  if (c.op.attrs.GetInt("training_mode", 0) != 0) return BatchNormTraining(c, N, C, inner, eps);
  if (c.HasOut(1) || c.HasOut(2))
    return c.Error("running_mean/running_var outputs exist only with training_mode=1");
  const float *x = c.in[0].as<float>(), *g = c.in[1].as<float>(), *b = c.in[2].as<float>(),
              *m = c.in[3].as<float>(), *v = c.in[4].as<float>();
  float* y = c.out[0].as<float>();
  for (int64_t ch = 0; ch < C; ++ch) {
    const float scale = static_cast<float>(g[ch] / std::sqrt(static_cast<double>(v[ch]) + eps));
    const float shift = b[ch] - m[ch] * scale;
    for (int64_t n = 0; n < N; ++n) {
      const int64_t base = (n * C + ch) * inner;
      for (int64_t i = 0; i < inner; ++i) y[base + i] = x[base + i] * scale + shift;
    }
  }
  return Status::Ok();
}

// ---- GEMM family.

// y[N] = alpha * B a + beta * y with B [N, K] (`tb`), else alpha * B^T a + beta * y with B [K, N].
// A matrix of a MiB or more is read from memory at one core's bandwidth, and the calling device
// thread's OpenMP team (its core group, dnnl_ops BindTeam) reads it faster: each thread computes
// its share of y (mobilenet_v2's classifier, 1000 x 1280, 0.32 -> 0.17 ms on two cores).
void Sgemv(bool tb, int64_t N, int64_t K, float alpha, const float* a, int64_t inc_a,
           const float* B, int64_t ldb, float beta, float* y) {
  constexpr int64_t kTeamElements = int64_t{1} << 18;
#if defined(__SANITIZE_THREAD__)
  const int team = 1;  // libgomp is not instrumented: ThreadSanitizer would flag its barriers
#else
  const int team = N * K >= kTeamElements ? std::min<int64_t>(omp_get_max_threads(), N / 16) : 1;
#endif
  const auto part = [&](int64_t lo, int64_t hi) {
    if (hi <= lo) return;
    if (tb)
      cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(hi - lo), static_cast<int>(K),
                  alpha, B + lo * ldb, static_cast<int>(ldb), a, static_cast<int>(inc_a), beta,
                  y + lo, 1);
    else
      cblas_sgemv(CblasRowMajor, CblasTrans, static_cast<int>(K), static_cast<int>(hi - lo), alpha,
                  B + lo, static_cast<int>(ldb), a, static_cast<int>(inc_a), beta, y + lo, 1);
  };
  if (team <= 1) return part(0, N);
#pragma omp parallel num_threads(team)
  {
    const int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    const int64_t chunk = ((N + n - 1) / n + 15) / 16 * 16;  // whole cache lines of y each
    part(std::min(N, t * chunk), std::min(N, (t + 1) * chunk));
  }
}

// C[M,N] = alpha * op(A) op(B) + beta * C, row-major.
void Sgemm(bool naive, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
           const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
           int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (!naive && M == 1) {
    // A row vector times a matrix (batch 1: LSTM cells, decoder steps) is a GEMV. sgemm would
    // pack op(B) into OpenBLAS's shared buffer pool on every call: slower, and with several
    // device threads calling at once the pool's buffers move between their cores.
    if (beta == 0.0f) std::fill(C, C + N, 0.0f);  // BLAS may scale stale values by 0 (NaN * 0)
    Sgemv(tb, N, K, alpha, A, ta ? lda : 1, B, ldb, beta, C);
    return;
  }
  if (!naive) {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), alpha, A,
                static_cast<int>(lda), B, static_cast<int>(ldb), beta, C, static_cast<int>(ldc));
    return;
  }
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) {
        const float a = ta ? A[k * lda + i] : A[i * lda + k];
        const float b = tb ? B[j * ldb + k] : B[k * ldb + j];
        acc += static_cast<double>(a) * b;
      }
      float prev = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
      C[i * ldc + j] = static_cast<float>(alpha * acc) + prev;
    }
  }
}

Status MatMulKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(c.NeedF32(0));
  HX_RETURN_IF_ERROR(c.NeedF32(1));
  Shape a = *c.in[0].shape, b = *c.in[1].shape;
  if (a.empty() || b.empty()) return c.Error("scalar inputs");
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const int64_t M = a[a.size() - 2], K = a.back(), N = b.back();
  if (b[b.size() - 2] != K)
    return c.Error("inner dims differ: " + graph::ShapeToString(*c.in[0].shape) + " x " +
                   graph::ShapeToString(*c.in[1].shape));
  Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  const size_t rank = std::max(ab.size(), bb.size());
  Shape batch(rank, 1);
  for (size_t k = 0; k < rank; ++k) {
    int64_t x = k < ab.size() ? ab[ab.size() - 1 - k] : 1;
    int64_t y = k < bb.size() ? bb[bb.size() - 1 - k] : 1;
    if (x != y && x != 1 && y != 1) return c.Error("batch dims do not broadcast");
    batch[rank - 1 - k] = std::max(x, y);
  }
  const int64_t nb = graph::NumElements(batch);
  if (c.out[0].NumElements() != nb * M * N) return c.Error("output size does not match");
  const float* A = c.in[0].as<float>();
  const float* B = c.in[1].as<float>();
  float* Y = c.out[0].as<float>();
  if (bb.empty() || graph::NumElements(bb) == 1) {  // one B for every batch: fold batch into M
    if (graph::NumElements(ab) == nb) {
      Sgemm(c.options.naive, false, false, nb * M, N, K, 1.0f, A, K, B, N, 0.0f, Y, N);
      return Status::Ok();
    }
  }
  int64_t k = 0;
  ForEachBroadcast<2>(batch, {&ab, &bb}, [&](int64_t i, const std::array<int64_t, 2>& off) {
    Sgemm(c.options.naive, false, false, M, N, K, 1.0f, A + off[0] * M * K, K, B + off[1] * K * N,
          N, 0.0f, Y + i * M * N, N);
    ++k;
  });
  return Status::Ok();
}

Status GemmKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(c.NeedF32(0));
  HX_RETURN_IF_ERROR(c.NeedF32(1));
  const Shape& a = *c.in[0].shape;
  const Shape& b = *c.in[1].shape;
  if (a.size() != 2 || b.size() != 2) return c.Error("A and B must be 2-D");
  const bool ta = c.op.attrs.GetInt("transA", 0) != 0, tb = c.op.attrs.GetInt("transB", 0) != 0;
  const float alpha = static_cast<float>(c.op.attrs.GetFloat("alpha", 1.0));
  float beta = static_cast<float>(c.op.attrs.GetFloat("beta", 1.0));
  const int64_t M = ta ? a[1] : a[0], K = ta ? a[0] : a[1];
  const int64_t N = tb ? b[0] : b[1];
  if ((tb ? b[1] : b[0]) != K) return c.Error("inner dims differ");
  Shape out{M, N};
  if (*c.out[0].shape != out) return c.Error("output shape does not match");
  float* Y = c.out[0].as<float>();
  if (c.Has(2)) {
    HX_RETURN_IF_ERROR(c.NeedF32(2));
    if (!Broadcastable(*c.in[2].shape, out)) return c.Error("C does not broadcast to [M,N]");
    const float* C = c.in[2].as<float>();
    ForEachBroadcast<1>(out, {c.in[2].shape},
                        [&](int64_t i, const std::array<int64_t, 1>& o) { Y[i] = C[o[0]]; });
  } else {
    beta = 0.0f;
  }
  Sgemm(c.options.naive, ta, tb, M, N, K, alpha, c.in[0].as<float>(), a[1], c.in[1].as<float>(),
        b[1], beta, Y, N);
  return Status::Ok();
}

struct Conv2dGeom {
  int64_t N, C, H, W, M, kh, kw, OH, OW, sh, sw, ph, pw, dh, dw, group;
};

StatusOr<Conv2dGeom> ConvGeometry(const Ctx& c, const Shape& x, const Shape& y, int64_t kh,
                                  int64_t kw) {
  // 1-D (NCL) runs as 2-D with a height of 1.
  const bool one_d = x.size() == 3 && y.size() == 3;
  if (!one_d && (x.size() != 4 || y.size() != 4))
    return c.Error("only 1-D (NCL) and 2-D (NCHW) are supported");
  const std::string auto_pad = c.op.attrs.GetString("auto_pad", "NOTSET");
  std::vector<int64_t> strides = c.op.attrs.GetInts("strides", one_d ? Shape{1} : Shape{1, 1});
  std::vector<int64_t> pads = c.op.attrs.GetInts("pads", one_d ? Shape{0, 0} : Shape{0, 0, 0, 0});
  std::vector<int64_t> dil = c.op.attrs.GetInts("dilations", one_d ? Shape{1} : Shape{1, 1});
  if (one_d && strides.size() == 1 && pads.size() == 2 && dil.size() == 1) {
    strides = {1, strides[0]};
    pads = {0, pads[0], 0, pads[1]};
    dil = {1, dil[0]};
  }
  if (strides.size() != 2 || pads.size() != 4 || dil.size() != 2)
    return c.Error("strides, pads or dilations have the wrong length");
  const int64_t H = one_d ? 1 : x[2], W = one_d ? x[2] : x[3];
  const int64_t OH = one_d ? 1 : y[2], OW = one_d ? y[2] : y[3];
  Conv2dGeom g{x[0],    x[1],       H,          W,
               y[1],    kh,         kw,         OH,
               OW,      strides[0], strides[1], pads[0],
               pads[1], dil[0],     dil[1],     c.op.attrs.GetInt("group", 1)};
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    auto same = [&](int64_t in, int64_t out, int64_t k, int64_t s, int64_t d) {
      int64_t total = std::max<int64_t>(0, (out - 1) * s + (k - 1) * d + 1 - in);
      return auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    };
    g.ph = same(g.H, g.OH, kh, g.sh, g.dh);
    g.pw = same(g.W, g.OW, kw, g.sw, g.dw);
  } else if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    return c.Error("unknown auto_pad '" + auto_pad + "'");
  } else if (auto_pad == "VALID") {
    g.ph = g.pw = 0;
  }
  if (g.group < 1 || g.C % g.group != 0 || g.M % g.group != 0)
    return c.Error("channels not divisible by group");
  return g;
}

Status ConvKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(c.NeedF32(0));
  HX_RETURN_IF_ERROR(c.NeedF32(1));
  const Shape& w = *c.in[1].shape;
  if (w.size() != 4 && w.size() != 3) return c.Error("only 1-D (NCL) and 2-D (NCHW) are supported");
  const int64_t wkh = w.size() == 4 ? w[2] : 1, wkw = w.back();
  HX_ASSIGN_OR_RETURN(Conv2dGeom g, ConvGeometry(c, *c.in[0].shape, *c.out[0].shape, wkh, wkw));
  const int64_t cg = g.C / g.group, mg = g.M / g.group;
  if (w[0] != g.M || w[1] != cg) return c.Error("weight shape does not match the channels");
  const float* X = c.in[0].as<float>();
  const float* Wt = c.in[1].as<float>();
  const float* bias = c.Has(2) ? c.in[2].as<float>() : nullptr;
  float* Y = c.out[0].as<float>();
  const int64_t ohw = g.OH * g.OW, kk = cg * g.kh * g.kw;
  if (c.options.naive) {
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t m = 0; m < g.M; ++m) {
        const int64_t gr = m / mg;
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            double acc = bias ? bias[m] : 0.0;
            for (int64_t ci = 0; ci < cg; ++ci)
              for (int64_t i = 0; i < g.kh; ++i)
                for (int64_t j = 0; j < g.kw; ++j) {
                  int64_t ih = oh * g.sh - g.ph + i * g.dh, iw = ow * g.sw - g.pw + j * g.dw;
                  if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
                  acc += static_cast<double>(X[((n * g.C + gr * cg + ci) * g.H + ih) * g.W + iw]) *
                         Wt[((m * cg + ci) * g.kh + i) * g.kw + j];
                }
            Y[((n * g.M + m) * g.OH + oh) * g.OW + ow] = static_cast<float>(acc);
          }
      }
    return Status::Ok();
  }
  const bool pointwise = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 &&
                         g.pw == 0 && g.OH == g.H && g.OW == g.W;
  std::vector<float> col(pointwise ? 0 : static_cast<size_t>(kk * ohw));
  for (int64_t n = 0; n < g.N; ++n) {
    for (int64_t gr = 0; gr < g.group; ++gr) {
      const float* xg = X + (n * g.C + gr * cg) * g.H * g.W;
      const float* B = xg;
      if (!pointwise) {
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t i = 0; i < g.kh; ++i)
            for (int64_t j = 0; j < g.kw; ++j) {
              float* row = col.data() + ((ci * g.kh + i) * g.kw + j) * ohw;
              for (int64_t oh = 0; oh < g.OH; ++oh) {
                const int64_t ih = oh * g.sh - g.ph + i * g.dh;
                for (int64_t ow = 0; ow < g.OW; ++ow) {
                  const int64_t iw = ow * g.sw - g.pw + j * g.dw;
                  row[oh * g.OW + ow] = (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W)
                                            ? 0.0f
                                            : xg[(ci * g.H + ih) * g.W + iw];
                }
              }
            }
        B = col.data();
      }
      float* yg = Y + (n * g.M + gr * mg) * ohw;
      Sgemm(false, false, false, mg, ohw, kk, 1.0f, Wt + gr * mg * kk, kk, B, ohw, 0.0f, yg, ohw);
      if (bias != nullptr)
        for (int64_t m = 0; m < mg; ++m)
          for (int64_t p = 0; p < ohw; ++p) yg[m * ohw + p] += bias[gr * mg + m];
    }
  }
  return Status::Ok();
}

Status PoolKernel(const Ctx& c, bool max) {
  HX_RETURN_IF_ERROR(c.NeedF32(0));
  std::vector<int64_t> k = c.op.attrs.GetInts("kernel_shape");
  if (k.size() == 1) k.insert(k.begin(), 1);
  if (k.size() != 2) return c.Error("kernel_shape must have 1 or 2 entries (1-D or 2-D pooling)");
  HX_ASSIGN_OR_RETURN(Conv2dGeom g, ConvGeometry(c, *c.in[0].shape, *c.out[0].shape, k[0], k[1]));
  if (g.M != g.C) return c.Error("output channels differ from input channels");
  const bool count_pad = c.op.attrs.GetInt("count_include_pad", 0) != 0;
  const bool column_major = c.op.attrs.GetInt("storage_order", 0) != 0;
  const float* X = c.in[0].as<float>();
  float* Y = c.out[0].as<float>();
  int64_t* I = c.HasOut(1) ? c.out[1].as<int64_t>() : nullptr;  // MaxPool's Indices
  if (I != nullptr && c.out[1].dtype != DType::kI64) return c.Error("Indices must be int64");
  for (int64_t nc = 0; nc < g.N * g.C; ++nc)
    for (int64_t oh = 0; oh < g.OH; ++oh)
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        float best = -std::numeric_limits<float>::infinity();
        double sum = 0.0;
        int64_t count = 0, padded = 0, arg = 0;
        for (int64_t i = 0; i < g.kh; ++i)
          for (int64_t j = 0; j < g.kw; ++j) {
            int64_t ih = oh * g.sh - g.ph + i * g.dh, iw = ow * g.sw - g.pw + j * g.dw;
            if (ih >= g.H + g.ph || iw >= g.W + g.pw) continue;  // beyond the padded input
            ++padded;
            if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
            float v = X[(nc * g.H + ih) * g.W + iw];
            if (v > best || count == 0)
              arg = column_major ? (nc * g.W + iw) * g.H + ih : (nc * g.H + ih) * g.W + iw;
            best = std::max(best, v);
            sum += v;
            ++count;
          }
        const int64_t div = count_pad ? padded : count;
        Y[(nc * g.OH + oh) * g.OW + ow] =
            max ? best : static_cast<float>(div > 0 ? sum / static_cast<double>(div) : 0.0);
        if (I != nullptr) I[(nc * g.OH + oh) * g.OW + ow] = arg;
      }
  return Status::Ok();
}

Status GlobalAveragePoolKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(c.NeedF32(0));
  const Shape& s = *c.in[0].shape;
  if (s.size() < 3) return c.Error("input must be at least 3-D");
  int64_t inner = 1;
  for (size_t d = 2; d < s.size(); ++d) inner *= s[d];
  const float* x = c.in[0].as<float>();
  float* y = c.out[0].as<float>();
  for (int64_t nc = 0; nc < s[0] * s[1]; ++nc) {
    double sum = 0.0;
    for (int64_t i = 0; i < inner; ++i) sum += x[nc * inner + i];
    y[nc] = static_cast<float>(sum / static_cast<double>(inner));
  }
  return Status::Ok();
}

// ONNX LSTM, layout 0, forward or reverse, default activations (sigmoid, tanh, tanh).
Status LstmKernel(const Ctx& c) {
  for (size_t i = 0; i < 3; ++i) HX_RETURN_IF_ERROR(c.NeedF32(i));
  const std::string dir = c.op.attrs.GetString("direction", "forward");
  if (dir != "forward" && dir != "reverse")
    return c.Error("direction '" + dir + "' unsupported (forward or reverse)");
  if (c.op.attrs.GetInt("layout", 0) != 0) return c.Error("layout=1 unsupported");
  if (c.op.attrs.Has("activations") || c.op.attrs.Has("clip"))
    return c.Error("custom activations and clip are unsupported");
  if (c.Has(4)) return c.Error("sequence_lens is unsupported (full sequences only)");
  if (c.Has(7)) return c.Error("peepholes (P) are unsupported");
  const Shape& xs = *c.in[0].shape;
  if (xs.size() != 3) return c.Error("X must be [seq, batch, input]");
  const int64_t S = xs[0], B = xs[1], I = xs[2];
  const int64_t H = (*c.in[2].shape)[2];
  if ((*c.in[1].shape) != Shape{1, 4 * H, I} || (*c.in[2].shape) != Shape{1, 4 * H, H})
    return c.Error("W or R shape does not match one direction of hidden size " + std::to_string(H));
  const float* W = c.in[1].as<float>();
  const float* R = c.in[2].as<float>();
  const float* bias = c.Has(3) ? c.in[3].as<float>() : nullptr;
  std::vector<float> h(static_cast<size_t>(B * H), 0.0f), cs(h.size(), 0.0f);
  if (c.Has(5)) std::memcpy(h.data(), c.in[5].data, h.size() * 4);
  if (c.Has(6)) std::memcpy(cs.data(), c.in[6].data, cs.size() * 4);
  std::vector<float> gates(static_cast<size_t>(B * 4 * H));
  for (int64_t step = 0; step < S; ++step) {
    const int64_t t = dir == "forward" ? step : S - 1 - step;
    const float* xt = c.in[0].as<float>() + t * B * I;
    // gates = x W^T + h R^T + Wb + Rb
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < 4 * H; ++j)
        gates[static_cast<size_t>(b * 4 * H + j)] = bias ? bias[j] + bias[4 * H + j] : 0.0f;
    Sgemm(c.options.naive, false, true, B, 4 * H, I, 1.0f, xt, I, W, I, 1.0f, gates.data(), 4 * H);
    Sgemm(c.options.naive, false, true, B, 4 * H, H, 1.0f, h.data(), H, R, H, 1.0f, gates.data(),
          4 * H);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t k = 0; k < H; ++k) {
        const float* gb = gates.data() + b * 4 * H;
        const float ig = Sigmoid(gb[k]), og = Sigmoid(gb[H + k]), fg = Sigmoid(gb[2 * H + k]);
        const float cg = std::tanh(gb[3 * H + k]);
        float& cell = cs[static_cast<size_t>(b * H + k)];
        cell = fg * cell + ig * cg;
        h[static_cast<size_t>(b * H + k)] = og * std::tanh(cell);
      }
    if (c.HasOut(0)) std::memcpy(c.out[0].as<float>() + t * B * H, h.data(), h.size() * 4);
  }
  if (c.HasOut(1)) std::memcpy(c.out[1].data, h.data(), h.size() * 4);
  if (c.HasOut(2)) std::memcpy(c.out[2].data, cs.data(), cs.size() * 4);
  return Status::Ok();
}

KernelMap* BaseKernels() {
  return new KernelMap{
      {"Relu", Unary([](float x) { return x > 0.0f ? x : 0.0f; })},
      {"Sigmoid", Unary(Sigmoid)},
      {"Tanh", Unary([](float x) { return std::tanh(x); })},
      {"Erf", ErfKernel},
      {"Sqrt", Unary([](float x) { return std::sqrt(x); })},
      {"Cos", Unary([](float x) { return std::cos(x); })},
      {"Sin", Unary([](float x) { return std::sin(x); })},
      {"Exp", Unary([](float x) { return std::exp(x); })},
      {"Log", Unary([](float x) { return std::log(x); })},
      {"Neg", Unary([](float x) { return -x; })},
      {"Abs", Unary([](float x) { return std::abs(x); })},
      {"Reciprocal", Unary([](float x) { return 1.0f / x; })},
      {"SiLU", Unary([](float x) { return x * Sigmoid(x); })},
      {"Gelu", GeluKernel},
      {"Clip", ClipKernel},
      {"Add", Binary([](float a, float b) { return a + b; })},
      {"Sub", Binary([](float a, float b) { return a - b; })},
      {"Mul", Binary([](float a, float b) { return a * b; })},
      {"Div", Binary([](float a, float b) { return a / b; })},
      {"Pow", Binary([](float a, float b) {
         return b == 2.0f ? a * a : b == 3.0f ? a * a * a : std::pow(a, b);
       })},
      {"Max", Binary([](float a, float b) { return std::max(a, b); })},
      {"Min", Binary([](float a, float b) { return std::min(a, b); })},
      {"Sum", SumKernel},
      {"Where", WhereKernel},
      {"Expand", ExpandKernel},
      {"Cast", CastKernel},
      {"Constant", ConstantKernel},
      {"Reshape", CopyKernel},
      {"Flatten", CopyKernel},
      {"Squeeze", CopyKernel},
      {"Unsqueeze", CopyKernel},
      {"Identity", CopyKernel},
      {"Dropout", DropoutKernel},
      {"Transpose", TransposeKernel},
      {"Concat", ConcatKernel},
      {"Split", SplitKernel},
      {"Slice", SliceKernel},
      {"Gather", GatherKernel},
      {"Pad", PadKernel},
      {"Softmax", SoftmaxKernel},
      {"LayerNormalization", LayerNormKernel},
      {"ReduceMean", [](const Ctx& c) { return ReduceKernel(c, true); }},
      {"ReduceSum", [](const Ctx& c) { return ReduceKernel(c, false); }},
      {"BatchNormalization", BatchNormKernel},
      {"LpNormalization", LpNormKernel},
      {"MatMul", MatMulKernel},
      {"Gemm", GemmKernel},
      {"Conv", ConvKernel},
      {"MaxPool", [](const Ctx& c) { return PoolKernel(c, true); }},
      {"AveragePool", [](const Ctx& c) { return PoolKernel(c, false); }},
      {"GlobalAveragePool", GlobalAveragePoolKernel},
      {"LSTM", LstmKernel},
  };
}

const KernelMap& Kernels() {
  static const KernelMap* kernels = [] {
    KernelMap* map = BaseKernels();
    AddMathKernels(map);
    AddReduceKernels(map);
    AddTensorKernels(map);
    AddRecurrentKernels(map);
    AddSpatialKernels(map);
    AddEinsumKernel(map);
    AddLossKernels(map);
    AddQuantKernels(map);
    AddLinalgKernels(map);
    return map;
  }();
  return *kernels;
}

}  // namespace

bool HasCpuKernel(const std::string& op_type) { return Kernels().count(op_type) > 0; }

std::vector<std::string> CpuKernelOpTypes() {
  std::vector<std::string> names;
  for (const auto& [name, kernel] : Kernels()) names.push_back(name);
  return names;
}

Status RunCpuKernel(const graph::Node& op, const std::vector<TensorRef>& inputs,
                    const std::vector<TensorRef>& outputs, const KernelOptions& options) {
  auto it = Kernels().find(op.op_type);
  if (it == Kernels().end() || !(op.domain.empty() || op.domain == "ai.onnx"))
    return Unimplemented("op '" + op.name + "': no CPU kernel for op type '" +
                         (op.domain.empty() ? "" : op.domain + ".") + op.op_type + "'");
  if (!outputs.empty() && outputs[0].shape != nullptr && outputs[0].NumElements() == 0)
    return Status::Ok();  // an empty output: nothing to compute
  if (outputs.empty() || outputs[0].data == nullptr)
    return InvalidArgument(op.op_type + " '" + op.name + "': has no output");
  Ctx ctx{op, inputs, outputs, options};
  return it->second(ctx);
}

}  // namespace hx::exec
