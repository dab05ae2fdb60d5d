// Elementwise math over every numeric dtype: unary functions and activations, variadic and
// binary arithmetic with numpy broadcasting, comparisons and logic (bool outputs). fp32 inputs of
// the ops kernels.cc already has keep its fp32 loops; other dtypes (fp64, fp16, integers, bool) go
// through double, which holds every value these ops produce in the ONNX tests' ranges exactly.
// Every DType loads and stores (exec/kernel_context.h), so these kernels take any of them.

#include <cmath>
#include <limits>

#include "exec/kernel_context.h"

namespace hx::exec::internal {
namespace {

using UnaryFn = std::function<double(double)>;
using BinaryFn = std::function<double(double, double)>;

// y = fn(x) for any numeric dtype (x and y may differ: IsNaN's output is bool).
Kernel MapUnary(UnaryFn fn) {
  return [fn](const Ctx& c) -> Status {
    if (!c.Has(0)) return c.Error("input 0 is missing");
    const int64_t n = c.out[0].NumElements();
    if (c.in[0].NumElements() != n) return c.Error("input and output sizes differ");
    for (int64_t i = 0; i < n; ++i) Store(c.out[0], i, fn(Load(c.in[0], i)));
    return Status::Ok();
  };
}

// y = fold(fn, x0, x1, ...) under broadcasting, in double.
Status FoldInputs(const Ctx& c, const BinaryFn& fn, size_t first, std::vector<double>* acc) {
  const Shape& out = *c.out[0].shape;
  const int64_t n = c.out[0].NumElements();
  acc->assign(static_cast<size_t>(n), 0.0);
  bool started = false;
  for (size_t k = first; k < c.in.size(); ++k) {
    if (!c.Has(k)) continue;
    if (!Broadcastable(*c.in[k].shape, out))
      return c.Error("input " + std::to_string(k) + " " + graph::ShapeToString(*c.in[k].shape) +
                     " does not broadcast to " + graph::ShapeToString(out));
    const TensorRef& x = c.in[k];
    ForEachBroadcast<1>(out, {x.shape}, [&](int64_t i, const std::array<int64_t, 1>& o) {
      const double v = Load(x, o[0]);
      (*acc)[static_cast<size_t>(i)] = started ? fn((*acc)[static_cast<size_t>(i)], v) : v;
    });
    started = true;
  }
  if (!started) return c.Error("has no inputs");
  return Status::Ok();
}

Kernel Variadic(BinaryFn fn, bool mean = false) {
  return [fn, mean](const Ctx& c) -> Status {
    std::vector<double> acc;
    HX_RETURN_IF_ERROR(FoldInputs(c, fn, 0, &acc));
    double count = 0;
    for (size_t k = 0; k < c.in.size(); ++k) count += c.Has(k) ? 1 : 0;
    for (size_t i = 0; i < acc.size(); ++i)
      Store(c.out[0], static_cast<int64_t>(i), mean ? acc[i] / count : acc[i]);
    return Status::Ok();
  };
}

// Two inputs, broadcasting: y = fn(a, b) (the output dtype may differ: comparisons give bool).
Kernel MapBinary(BinaryFn fn) {
  return [fn](const Ctx& c) -> Status {
    if (!c.Has(0) || !c.Has(1)) return c.Error("needs two inputs");
    const Shape& out = *c.out[0].shape;
    for (size_t k = 0; k < 2; ++k)
      if (!Broadcastable(*c.in[k].shape, out))
        return c.Error("inputs " + graph::ShapeToString(*c.in[0].shape) + " and " +
                       graph::ShapeToString(*c.in[1].shape) + " do not broadcast to " +
                       graph::ShapeToString(out));
    ForEachBroadcast<2>(out, {c.in[0].shape, c.in[1].shape},
                        [&](int64_t i, const std::array<int64_t, 2>& o) {
                          Store(c.out[0], i, fn(Load(c.in[0], o[0]), Load(c.in[1], o[1])));
                        });
    return Status::Ok();
  };
}

bool AllF32(const Ctx& c) {
  for (size_t k = 0; k < c.in.size(); ++k)
    if (c.Has(k) && c.in[k].dtype != DType::kF32) return false;
  return c.out[0].dtype == DType::kF32;
}

// The existing fp32 kernel when every input is fp32 and there are `min`..`max` inputs; `other`
// otherwise.
Kernel F32Or(Kernel f32, Kernel other, size_t min_inputs, size_t max_inputs) {
  return [f32, other, min_inputs, max_inputs](const Ctx& c) -> Status {
    if (AllF32(c) && c.in.size() >= min_inputs && c.in.size() <= max_inputs) return f32(c);
    return other(c);
  };
}

bool IsIntegral(DType dt) { return !graph::IsFloatingPoint(dt); }

// Div and Mod on integers are integer operations (Div truncates; Mod with fmod=0 takes the
// divisor's sign, as Python's %); division by zero is an error, not a crash.
Kernel IntegerAwareDiv() {
  Kernel fdiv = MapBinary([](double a, double b) { return a / b; });
  Kernel idiv = MapBinary([](double a, double b) { return b == 0 ? 0.0 : std::trunc(a / b); });
  return [fdiv, idiv](const Ctx& c) -> Status {
    return IsIntegral(c.out[0].dtype) ? idiv(c) : fdiv(c);
  };
}

Status ModKernel(const Ctx& c) {
  const bool fmod = c.op.attrs.GetInt("fmod", 0) != 0;
  if (!fmod && !IsIntegral(c.out[0].dtype))
    return c.Error("fmod=0 on floating-point inputs (ONNX requires fmod=1)");
  if (fmod) return MapBinary([](double a, double b) { return std::fmod(a, b); })(c);
  return MapBinary([](double a, double b) {
    if (b == 0) return 0.0;
    double r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  })(c);
}

Status BitShiftKernel(const Ctx& c) {
  const std::string dir = c.op.attrs.GetString("direction", "");
  if (dir != "LEFT" && dir != "RIGHT") return c.Error("direction must be LEFT or RIGHT");
  // The reader maps unsigned types to signed ones; the tests' values fit either.
  const bool left = dir == "LEFT";
  return MapBinary([left](double a, double b) {
    const uint64_t x = static_cast<uint64_t>(a), s = static_cast<uint64_t>(b);
    if (s >= 64) return 0.0;
    return static_cast<double>(left ? x << s : x >> s);
  })(c);
}

double Attr(const Ctx& c, const char* name, double fallback) {
  return c.op.attrs.GetFloat(name, fallback);
}

// Activations whose parameters are attributes.
Status EluKernel(const Ctx& c) {
  const double a = Attr(c, "alpha", 1.0);
  return MapUnary([a](double x) { return x >= 0 ? x : a * (std::exp(x) - 1); })(c);
}
Status CeluKernel(const Ctx& c) {
  const double a = Attr(c, "alpha", 1.0);
  return MapUnary(
      [a](double x) { return std::max(0.0, x) + std::min(0.0, a * (std::exp(x / a) - 1)); })(c);
}
Status SeluKernel(const Ctx& c) {
  const double a = Attr(c, "alpha", 1.67326319217681884765625);
  const double g = Attr(c, "gamma", 1.05070102214813232421875);
  return MapUnary([a, g](double x) { return x > 0 ? g * x : g * a * (std::exp(x) - 1); })(c);
}
Status LeakyReluKernel(const Ctx& c) {
  const double a = Attr(c, "alpha", 0.01);
  return MapUnary([a](double x) { return x >= 0 ? x : a * x; })(c);
}
Status ThresholdedReluKernel(const Ctx& c) {
  const double a = Attr(c, "alpha", 1.0);
  return MapUnary([a](double x) { return x > a ? x : 0.0; })(c);
}
Status HardSigmoidKernel(const Ctx& c) {
  const double a = Attr(c, "alpha", 0.2), b = Attr(c, "beta", 0.5);
  return MapUnary([a, b](double x) { return std::clamp(a * x + b, 0.0, 1.0); })(c);
}
Status ShrinkKernel(const Ctx& c) {
  const double bias = Attr(c, "bias", 0.0), l = Attr(c, "lambd", 0.5);
  return MapUnary([bias, l](double x) { return x < -l ? x + bias : x > l ? x - bias : 0.0; })(c);
}
Status IsInfKernel(const Ctx& c) {
  const bool neg = c.op.attrs.GetInt("detect_negative", 1) != 0;
  const bool pos = c.op.attrs.GetInt("detect_positive", 1) != 0;
  return MapUnary([neg, pos](double x) {
    return std::isinf(x) && ((x > 0 && pos) || (x < 0 && neg)) ? 1.0 : 0.0;
  })(c);
}

Status PReluKernel(const Ctx& c) {
  return MapBinary([](double x, double s) { return x >= 0 ? x : s * x; })(c);
}

// Clip for any dtype; min and max are inputs 1 and 2 (opset 11+) or attributes (before).
Status ClipAnyKernel(const Ctx& c) {
  double lo = Attr(c, "min", -std::numeric_limits<double>::infinity());
  double hi = Attr(c, "max", std::numeric_limits<double>::infinity());
  if (c.Has(1)) lo = Load(c.in[1], 0);
  if (c.Has(2)) hi = Load(c.in[2], 0);
  return MapUnary([lo, hi](double x) { return std::min(std::max(x, lo), hi); })(c);
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

void AddUnary(KernelMap* map) {
  KernelMap& m = *map;
  m["Acos"] = MapUnary([](double x) { return std::acos(x); });
  m["Acosh"] = MapUnary([](double x) { return std::acosh(x); });
  m["Asin"] = MapUnary([](double x) { return std::asin(x); });
  m["Asinh"] = MapUnary([](double x) { return std::asinh(x); });
  m["Atan"] = MapUnary([](double x) { return std::atan(x); });
  m["Atanh"] = MapUnary([](double x) { return std::atanh(x); });
  m["Cosh"] = MapUnary([](double x) { return std::cosh(x); });
  m["Sinh"] = MapUnary([](double x) { return std::sinh(x); });
  m["Tan"] = MapUnary([](double x) { return std::tan(x); });
  m["Softsign"] = MapUnary([](double x) { return x / (1 + std::abs(x)); });
  m["Softplus"] = MapUnary([](double x) { return std::log1p(std::exp(x)); });
  m["Floor"] = MapUnary([](double x) { return std::floor(x); });
  m["Ceil"] = MapUnary([](double x) { return std::ceil(x); });
  m["Round"] = MapUnary([](double x) { return std::nearbyint(x); });
  m["Sign"] = MapUnary([](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; });
  m["IsNaN"] = MapUnary([](double x) { return std::isnan(x) ? 1.0 : 0.0; });
  m["Not"] = MapUnary([](double x) { return x != 0 ? 0.0 : 1.0; });
  m["HardSwish"] = MapUnary([](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); });
  m["Mish"] = MapUnary([](double x) { return x * std::tanh(std::log1p(std::exp(x))); });
  m["Elu"] = EluKernel;
  m["Celu"] = CeluKernel;
  m["Selu"] = SeluKernel;
  m["LeakyRelu"] = LeakyReluKernel;
  m["ThresholdedRelu"] = ThresholdedReluKernel;
  m["HardSigmoid"] = HardSigmoidKernel;
  m["Shrink"] = ShrinkKernel;
  m["IsInf"] = IsInfKernel;
}

// The fp32-only unary kernels of kernels.cc gain the other dtypes.
void WidenUnary(KernelMap* map) {
  const std::map<std::string, UnaryFn> wide = {
      {"Relu", [](double x) { return x > 0 ? x : 0.0; }},
      {"Sigmoid", Sigmoid},
      {"Tanh", [](double x) { return std::tanh(x); }},
      {"Erf", [](double x) { return std::erf(x); }},
      {"Sqrt", [](double x) { return std::sqrt(x); }},
      {"Cos", [](double x) { return std::cos(x); }},
      {"Sin", [](double x) { return std::sin(x); }},
      {"Exp", [](double x) { return std::exp(x); }},
      {"Log", [](double x) { return std::log(x); }},
      {"Neg", [](double x) { return -x; }},
      {"Abs", [](double x) { return std::abs(x); }},
      {"Reciprocal", [](double x) { return 1.0 / x; }},
  };
  for (const auto& [name, fn] : wide) (*map)[name] = F32Or((*map)[name], MapUnary(fn), 1, 1);
  (*map)["Clip"] = F32Or((*map)["Clip"], ClipAnyKernel, 1, 3);
}

void AddBinary(KernelMap* map) {
  KernelMap& m = *map;
  auto wrap = [&m](const std::string& name, Kernel other) {
    m[name] = F32Or(m[name], other, 2, 2);
  };
  wrap("Add", MapBinary([](double a, double b) { return a + b; }));
  wrap("Sub", MapBinary([](double a, double b) { return a - b; }));
  wrap("Mul", MapBinary([](double a, double b) { return a * b; }));
  wrap("Div", IntegerAwareDiv());
  wrap("Pow", MapBinary([](double a, double b) { return std::pow(a, b); }));
  // Max, Min, Sum and Mean are variadic: the fp32 kernels cover two (Sum: any number of) inputs.
  wrap("Max", Variadic([](double a, double b) {
         return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN()
                                               : std::max(a, b);
       }));
  wrap("Min", Variadic([](double a, double b) {
         return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN()
                                               : std::min(a, b);
       }));
  m["Sum"] = F32Or(m["Sum"], Variadic([](double a, double b) { return a + b; }), 1, 1 << 20);
  m["Mean"] = Variadic([](double a, double b) { return a + b; }, true);
  m["Mod"] = ModKernel;
  m["BitShift"] = BitShiftKernel;
  m["PRelu"] = PReluKernel;
  m["Equal"] = MapBinary([](double a, double b) { return a == b ? 1.0 : 0.0; });
  m["Less"] = MapBinary([](double a, double b) { return a < b ? 1.0 : 0.0; });
  m["Greater"] = MapBinary([](double a, double b) { return a > b ? 1.0 : 0.0; });
  m["LessOrEqual"] = MapBinary([](double a, double b) { return a <= b ? 1.0 : 0.0; });
  m["GreaterOrEqual"] = MapBinary([](double a, double b) { return a >= b ? 1.0 : 0.0; });
  m["And"] = MapBinary([](double a, double b) { return a != 0 && b != 0 ? 1.0 : 0.0; });
  m["Or"] = MapBinary([](double a, double b) { return a != 0 || b != 0 ? 1.0 : 0.0; });
  m["Xor"] = MapBinary([](double a, double b) { return (a != 0) != (b != 0) ? 1.0 : 0.0; });
}

}  // namespace

void AddMathKernels(KernelMap* map) {
  AddUnary(map);
  WidenUnary(map);
  AddBinary(map);
}

}  // namespace hx::exec::internal
