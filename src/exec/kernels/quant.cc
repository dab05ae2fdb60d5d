// Linear quantisation: QuantizeLinear, DequantizeLinear (per tensor or per `axis`) and
// DynamicQuantizeLinear (uint8), rounding half to even and saturating as ONNX specifies.

#include <cmath>

#include "exec/kernel_context.h"

namespace hx::exec::internal {
namespace {

double Saturate(DType dt, double v) {
  if (dt == DType::kU8) return std::clamp(v, 0.0, 255.0);
  if (dt == DType::kI8) return std::clamp(v, -128.0, 127.0);
  return v;
}

// Index into a per-axis parameter (scale, zero point) of element i, or 0 when it is a scalar.
StatusOr<std::function<int64_t(int64_t)>> ParamIndex(const Ctx& c, size_t param) {
  const Shape& s = *c.in[0].shape;
  const int64_t n = c.in[param].NumElements();
  if (n == 1) return std::function<int64_t(int64_t)>([](int64_t) { return int64_t{0}; });
  const int64_t axis = NormAxis(c.op.attrs.GetInt("axis", 1), s.size());
  if (axis < 0 || axis >= static_cast<int64_t>(s.size()) || s[static_cast<size_t>(axis)] != n)
    return c.Error("scale/zero point size does not match the axis");
  int64_t outer, inner;
  AroundAxis(s, axis, &outer, &inner);
  return std::function<int64_t(int64_t)>([n, inner](int64_t i) { return (i / inner) % n; });
}

Status QuantizeKernel(const Ctx& c, bool quantize) {
  if (!c.Has(0) || !c.Has(1)) return c.Error("needs x and a scale");
  HX_ASSIGN_OR_RETURN(auto idx, ParamIndex(c, 1));
  const DType qtype = quantize ? c.out[0].dtype : c.in[0].dtype;
  if (qtype != DType::kU8 && qtype != DType::kI8)
    return c.Error(std::string("quantized type ") + graph::DTypeName(qtype) + " is unsupported");
  for (int64_t i = 0; i < c.out[0].NumElements(); ++i) {
    const int64_t p = idx(i);
    const double scale = Load(c.in[1], p), zp = c.Has(2) ? Load(c.in[2], p) : 0.0;
    const double x = Load(c.in[0], i);
    // In fp32, as ONNX's reference computes it (a double quotient rounds differently at .5).
    const float xf = static_cast<float>(x), sf = static_cast<float>(scale);
    Store(c.out[0], i,
          quantize ? Saturate(qtype, std::nearbyint(xf / sf) + zp)
                   : static_cast<float>(static_cast<float>(x - zp) * sf));
  }
  return Status::Ok();
}

// In fp32, as ONNX defines it: scale = (max(0, max x) - min(0, min x)) / 255, zero point =
// saturate(round(-min / scale)), y = saturate(round(x / scale) + zero point).
Status DynamicQuantizeKernel(const Ctx& c) {
  if (c.out[0].dtype != DType::kU8) return c.Error("output must be uint8");
  if (c.in[0].dtype != DType::kF32) return c.Error("input must be fp32");
  const float* x = c.in[0].as<float>();
  float lo = 0.0f, hi = 0.0f;
  const int64_t n = c.in[0].NumElements();
  for (int64_t i = 0; i < n; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
  const float scale = (hi - lo) / 255.0f;
  const float zp = scale == 0.0f ? 0.0f : std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f);
  for (int64_t i = 0; i < n; ++i) {
    const float q = scale == 0.0f ? 0.0f : std::nearbyint(x[i] / scale);
    c.out[0].as<uint8_t>()[i] = static_cast<uint8_t>(std::clamp(q + zp, 0.0f, 255.0f));
  }
  if (c.HasOut(1)) Store(c.out[1], 0, scale);
  if (c.HasOut(2)) Store(c.out[2], 0, zp);
  return Status::Ok();
}

}  // namespace

void AddQuantKernels(KernelMap* map) {
  (*map)["QuantizeLinear"] = [](const Ctx& c) { return QuantizeKernel(c, true); };
  (*map)["DequantizeLinear"] = [](const Ctx& c) { return QuantizeKernel(c, false); };
  (*map)["DynamicQuantizeLinear"] = DynamicQuantizeKernel;
}

}  // namespace hx::exec::internal
