// Reductions (ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare, ArgMax/ArgMin),
// axis-wise normalisations (LogSoftmax, Hardmax, CumSum) and InstanceNormalization/LRN, over any
// numeric dtype through double.

#include <cmath>
#include <limits>

#include "exec/kernel_context.h"

namespace hx::exec::internal {
namespace {

Status CheckLoadable(const Ctx& c, size_t i) {
  if (!c.Has(i)) return c.Error("input " + std::to_string(i) + " is missing");
  if (!LoadElement(c.in[i].dtype, c.in[i].data, 0).ok())
    return c.Error(std::string("input ") + std::to_string(i) + " is " +
                   graph::DTypeName(c.in[i].dtype) + ", which the CPU kernel does not support");
  return Status::Ok();
}

enum class Reduce : uint8_t {
  kSum,
  kMean,
  kMax,
  kMin,
  kProd,
  kL1,
  kL2,
  kLogSum,
  kLogSumExp,
  kSumSq
};

double Init(Reduce r) {
  switch (r) {
    case Reduce::kMax:
      return -std::numeric_limits<double>::infinity();
    case Reduce::kMin:
      return std::numeric_limits<double>::infinity();
    case Reduce::kProd:
      return 1.0;
    default:
      return 0.0;
  }
}

double Combine(Reduce r, double acc, double x) {
  switch (r) {
    case Reduce::kMax:
      return std::max(acc, x);
    case Reduce::kMin:
      return std::min(acc, x);
    case Reduce::kProd:
      return acc * x;
    case Reduce::kL1:
      return acc + std::abs(x);
    case Reduce::kL2:
    case Reduce::kSumSq:
      return acc + x * x;
    case Reduce::kLogSumExp:
      return acc + std::exp(x);
    default:
      return acc + x;
  }
}

double Finish(Reduce r, double acc, double count) {
  switch (r) {
    case Reduce::kMean:
      return acc / count;
    case Reduce::kL2:
      return std::sqrt(acc);
    case Reduce::kLogSum:
    case Reduce::kLogSumExp:
      return std::log(acc);
    default:
      return acc;
  }
}

// Which dims are reduced: the `axes` attribute, else input 1 (ReduceSum since opset 13); none
// given reduces all, or none with noop_with_empty_axes=1.
StatusOr<std::vector<bool>> ReducedDims(const Ctx& c, const Shape& s) {
  std::vector<int64_t> axes = c.op.attrs.GetInts("axes");
  if (axes.empty()) {
    HX_ASSIGN_OR_RETURN(axes, IntsOf(c, 1));
  }
  const bool noop = c.op.attrs.GetInt("noop_with_empty_axes", 0) != 0;
  std::vector<bool> reduced(s.size(), axes.empty() && !noop);
  for (int64_t a : axes) {
    const int64_t n = NormAxis(a, s.size());
    if (n < 0 || n >= static_cast<int64_t>(s.size())) return c.Error("axis out of range");
    reduced[static_cast<size_t>(n)] = true;
  }
  return reduced;
}

Status ReduceAny(const Ctx& c, Reduce r) {
  HX_RETURN_IF_ERROR(CheckLoadable(c, 0));
  const Shape& s = *c.in[0].shape;
  HX_ASSIGN_OR_RETURN(std::vector<bool> reduced, ReducedDims(c, s));
  Shape kept;
  for (size_t d = 0; d < s.size(); ++d) kept.push_back(reduced[d] ? 1 : s[d]);
  const int64_t out_n = graph::NumElements(kept);
  if (out_n != c.out[0].NumElements()) return c.Error("output size does not match the reduction");
  std::vector<double> acc(static_cast<size_t>(out_n), Init(r));
  const int64_t n = c.in[0].NumElements();
  ForEachBroadcast<1>(s, {&kept}, [&](int64_t i, const std::array<int64_t, 1>& o) {
    double& a = acc[static_cast<size_t>(o[0])];
    a = Combine(r, a, Load(c.in[0], i));
  });
  const double count = out_n > 0 ? static_cast<double>(n) / static_cast<double>(out_n) : 1.0;
  for (int64_t i = 0; i < out_n; ++i)
    Store(c.out[0], i, Finish(r, acc[static_cast<size_t>(i)], count));
  return Status::Ok();
}

// Input 0 viewed as [outer, n, inner] around the `axis` attribute (default `fallback`).
struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t At(int64_t o, int64_t k, int64_t i) const { return (o * n + k) * inner + i; }
};

StatusOr<AxisView> ViewAround(const Ctx& c, int64_t axis_attr) {
  const Shape& s = *c.in[0].shape;
  const int64_t axis = NormAxis(axis_attr, s.size());
  if (axis < 0 || axis >= static_cast<int64_t>(s.size())) return c.Error("axis out of range");
  AxisView v;
  AroundAxis(s, axis, &v.outer, &v.inner);
  v.n = s[static_cast<size_t>(axis)];
  return v;
}

Status ArgKernel(const Ctx& c, bool max) {
  HX_RETURN_IF_ERROR(CheckLoadable(c, 0));
  HX_ASSIGN_OR_RETURN(AxisView v, ViewAround(c, c.op.attrs.GetInt("axis", 0)));
  const bool last = c.op.attrs.GetInt("select_last_index", 0) != 0;
  if (c.out[0].dtype != DType::kI64) return c.Error("output must be int64");
  if (c.out[0].NumElements() != v.outer * v.inner) return c.Error("output size does not match");
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.inner; ++i) {
      int64_t best = 0;
      double bv = Load(c.in[0], v.At(o, 0, i));
      for (int64_t k = 1; k < v.n; ++k) {
        const double x = Load(c.in[0], v.At(o, k, i));
        const bool better = max ? (last ? x >= bv : x > bv) : (last ? x <= bv : x < bv);
        if (better) best = k, bv = x;
      }
      c.out[0].as<int64_t>()[o * v.inner + i] = best;
    }
  return Status::Ok();
}

// LogSoftmax (log = true) or Hardmax (one-hot of the first maximum) along `axis` (default -1).
Status AxiswiseKernel(const Ctx& c, bool log) {
  HX_RETURN_IF_ERROR(CheckLoadable(c, 0));
  HX_ASSIGN_OR_RETURN(AxisView v, ViewAround(c, c.op.attrs.GetInt("axis", -1)));
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.inner; ++i) {
      double mx = -std::numeric_limits<double>::infinity();
      int64_t arg = 0;
      for (int64_t k = 0; k < v.n; ++k) {
        const double x = Load(c.in[0], v.At(o, k, i));
        if (x > mx) mx = x, arg = k;
      }
      double sum = 0.0;
      for (int64_t k = 0; k < v.n && log; ++k) sum += std::exp(Load(c.in[0], v.At(o, k, i)) - mx);
      for (int64_t k = 0; k < v.n; ++k) {
        const int64_t at = v.At(o, k, i);
        Store(c.out[0], at, log ? Load(c.in[0], at) - mx - std::log(sum) : (k == arg ? 1.0 : 0.0));
      }
    }
  return Status::Ok();
}

Status CumSumKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(CheckLoadable(c, 0));
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> axis, IntsOf(c, 1));
  if (axis.size() != 1) return c.Error("axis must be a scalar");
  HX_ASSIGN_OR_RETURN(AxisView v, ViewAround(c, axis[0]));
  const bool exclusive = c.op.attrs.GetInt("exclusive", 0) != 0;
  const bool reverse = c.op.attrs.GetInt("reverse", 0) != 0;
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.inner; ++i) {
      double acc = 0.0;
      for (int64_t step = 0; step < v.n; ++step) {
        const int64_t k = reverse ? v.n - 1 - step : step;
        const double x = Load(c.in[0], v.At(o, k, i));
        if (!exclusive) acc += x;
        Store(c.out[0], v.At(o, k, i), acc);
        if (exclusive) acc += x;
      }
    }
  return Status::Ok();
}

// y = scale * (x - mean) / sqrt(var + epsilon) + B per (n, c) over the spatial dims.
Status InstanceNormKernel(const Ctx& c) {
  for (size_t k = 0; k < 3; ++k) HX_RETURN_IF_ERROR(CheckLoadable(c, k));
  const Shape& s = *c.in[0].shape;
  if (s.size() < 3) return c.Error("input must be at least 3-D");
  const double eps = c.op.attrs.GetFloat("epsilon", 1e-5);
  const int64_t C = s[1], inner = graph::NumElements(s) / (s[0] * C);
  for (int64_t nc = 0; nc < s[0] * C; ++nc) {
    double sum = 0.0, sq = 0.0;
    for (int64_t i = 0; i < inner; ++i) sum += Load(c.in[0], nc * inner + i);
    const double mean = sum / static_cast<double>(inner);
    for (int64_t i = 0; i < inner; ++i) {
      const double d = Load(c.in[0], nc * inner + i) - mean;
      sq += d * d;
    }
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(inner) + eps);
    const double g = Load(c.in[1], nc % C), b = Load(c.in[2], nc % C);
    for (int64_t i = 0; i < inner; ++i)
      Store(c.out[0], nc * inner + i, (Load(c.in[0], nc * inner + i) - mean) * inv * g + b);
  }
  return Status::Ok();
}

// Local response normalisation across channels.
Status LrnKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(CheckLoadable(c, 0));
  const Shape& s = *c.in[0].shape;
  if (s.size() < 3) return c.Error("input must be at least 3-D");
  const int64_t size = c.op.attrs.GetInt("size", 0);
  if (size < 1) return c.Error("size must be positive");
  const double alpha = c.op.attrs.GetFloat("alpha", 1e-4), beta = c.op.attrs.GetFloat("beta", 0.75);
  const double bias = c.op.attrs.GetFloat("bias", 1.0);
  const int64_t C = s[1], inner = graph::NumElements(s) / (s[0] * C);
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t i = 0; i < inner; ++i) {
        double sq = 0.0;
        for (int64_t k = std::max<int64_t>(0, ch - lo); k <= std::min(C - 1, ch + hi); ++k) {
          const double x = Load(c.in[0], (n * C + k) * inner + i);
          sq += x * x;
        }
        const int64_t at = (n * C + ch) * inner + i;
        Store(c.out[0], at,
              Load(c.in[0], at) / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
      }
  return Status::Ok();
}

// (x - mean) / (sqrt(var) + 1e-9) over `axes` (default 0, 2, 3), as ONNX's function body says.
Status MvnKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(CheckLoadable(c, 0));
  const Shape& s = *c.in[0].shape;
  std::vector<int64_t> axes = c.op.attrs.GetInts("axes", {0, 2, 3});
  std::vector<bool> reduced(s.size(), false);
  for (int64_t a : axes) {
    const int64_t n = NormAxis(a, s.size());
    if (n < 0 || n >= static_cast<int64_t>(s.size())) return c.Error("axis out of range");
    reduced[static_cast<size_t>(n)] = true;
  }
  Shape kept;
  for (size_t d = 0; d < s.size(); ++d) kept.push_back(reduced[d] ? 1 : s[d]);
  const int64_t kn = graph::NumElements(kept);
  std::vector<double> sum(static_cast<size_t>(kn), 0.0), sq = sum;
  ForEachBroadcast<1>(s, {&kept}, [&](int64_t i, const std::array<int64_t, 1>& o) {
    const double x = Load(c.in[0], i);
    sum[static_cast<size_t>(o[0])] += x;
    sq[static_cast<size_t>(o[0])] += x * x;
  });
  const double count = static_cast<double>(graph::NumElements(s)) / static_cast<double>(kn);
  ForEachBroadcast<1>(s, {&kept}, [&](int64_t i, const std::array<int64_t, 1>& o) {
    const double mean = sum[static_cast<size_t>(o[0])] / count;
    const double var = sq[static_cast<size_t>(o[0])] / count - mean * mean;
    Store(c.out[0], i, (Load(c.in[0], i) - mean) / (std::sqrt(std::max(var, 0.0)) + 1e-9));
  });
  return Status::Ok();
}

}  // namespace

void AddReduceKernels(KernelMap* map) {
  KernelMap& m = *map;
  const std::pair<const char*, Reduce> reductions[] = {
      {"ReduceSum", Reduce::kSum},
      {"ReduceMean", Reduce::kMean},
      {"ReduceMax", Reduce::kMax},
      {"ReduceMin", Reduce::kMin},
      {"ReduceProd", Reduce::kProd},
      {"ReduceL1", Reduce::kL1},
      {"ReduceL2", Reduce::kL2},
      {"ReduceLogSum", Reduce::kLogSum},
      {"ReduceLogSumExp", Reduce::kLogSumExp},
      {"ReduceSumSquare", Reduce::kSumSq},
  };
  for (const auto& [name, r] : reductions) {
    const Reduce kind = r;
    Kernel f32 = m.count(name) ? m[name] : Kernel();  // kernels.cc's fp32 loops, where it has them
    m[name] = [kind, f32](const Ctx& c) {
      const bool plain = c.in[0].dtype == DType::kF32 && c.out[0].dtype == DType::kF32 &&
                         c.op.attrs.GetInt("noop_with_empty_axes", 0) == 0;
      return plain && f32 ? f32(c) : ReduceAny(c, kind);
    };
  }
  m["ArgMax"] = [](const Ctx& c) { return ArgKernel(c, true); };
  m["ArgMin"] = [](const Ctx& c) { return ArgKernel(c, false); };
  m["LogSoftmax"] = [](const Ctx& c) { return AxiswiseKernel(c, true); };
  m["Hardmax"] = [](const Ctx& c) { return AxiswiseKernel(c, false); };
  m["CumSum"] = CumSumKernel;
  m["InstanceNormalization"] = InstanceNormKernel;
  m["LRN"] = LrnKernel;
  m["MeanVarianceNormalization"] = MvnKernel;
}

}  // namespace hx::exec::internal
