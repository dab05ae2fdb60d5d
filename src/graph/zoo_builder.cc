#include "zoo_builder.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace hx::graph::zoo_internal {
namespace {

int64_t NormAxis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

std::string Key(const char* kind, const std::vector<int64_t>& v) {
  std::string key = kind;
  for (int64_t x : v) key += "," + std::to_string(x);
  return key;
}

}  // namespace

Shape BroadcastShapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    HX_CHECK(da == db || da == 1 || db == 1);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

ZooBuilder::ZooBuilder(const std::string& name, DType dtype) : graph_(name), dtype_(dtype) {}

void ZooBuilder::SetScope(const std::string& scope) {
  scope_ = scope;
  const_cache_.clear();
}

std::string ZooBuilder::UniqueOpName(const std::string& type) {
  std::string base = scope_.empty() ? "/" + type : "/" + scope_ + "/" + type;
  int& count = name_counts_[base];
  std::string name = count == 0 ? base : base + "_" + std::to_string(count);
  ++count;
  return name;
}

TensorId ZooBuilder::Input(const std::string& name, DType dtype, Shape shape) {
  NodeId id = graph_.AddInput(name, dtype, std::move(shape));
  return graph_.node(id).outputs[0];
}

TensorId ZooBuilder::Weight(const std::string& name, Shape shape) {
  return TypedWeight(name, dtype_, std::move(shape));
}

TensorId ZooBuilder::TypedWeight(const std::string& name, DType dtype, Shape shape) {
  NodeId id = graph_.AddWeight(name, dtype, std::move(shape));
  return graph_.node(id).outputs[0];
}

TensorId ZooBuilder::ConstFloat(double value) {
  char key_buf[40];
  std::snprintf(key_buf, sizeof(key_buf), "f%a", value);  // exact: no two values share a key
  const std::string key = key_buf;
  auto it = const_cache_.find(key);
  if (it != const_cache_.end()) return it->second;
  Attributes attrs;
  attrs.Set("value_float", value);
  TensorId t = Op("Constant", {}, {}, std::move(attrs), dtype_);
  const_cache_.emplace(key, t);
  return t;
}

TensorId ZooBuilder::ConstFloats(const std::vector<double>& values) {
  Attributes attrs;
  attrs.Set("value_floats", values);
  return Op("Constant", {}, {static_cast<int64_t>(values.size())}, std::move(attrs), dtype_);
}

TensorId ZooBuilder::ConstInts(const std::vector<int64_t>& values) {
  std::string key = Key("i", values);
  auto it = const_cache_.find(key);
  if (it != const_cache_.end()) return it->second;
  Attributes attrs;
  attrs.Set("value_ints", values);
  TensorId t =
      Op("Constant", {}, {static_cast<int64_t>(values.size())}, std::move(attrs), DType::kI64);
  const_cache_.emplace(key, t);
  return t;
}

TensorId ZooBuilder::Op(const std::string& type, std::vector<TensorId> inputs, Shape shape,
                        Attributes attrs, std::optional<DType> dtype) {
  if (!dtype) {
    for (TensorId t : inputs) {
      if (t.valid() && IsFloatingPoint(graph_.tensor(t).dtype)) {
        dtype = graph_.tensor(t).dtype;
        break;
      }
    }
  }
  const std::string name = UniqueOpName(type);
  TensorId out = graph_.AddTensor(name + "_output_0", dtype.value_or(dtype_), std::move(shape));
  graph_.AddOp(type, name, std::move(inputs), {out}, std::move(attrs));
  return out;
}

std::vector<TensorId> ZooBuilder::OpN(const std::string& type, std::vector<TensorId> inputs,
                                      const std::vector<Shape>& shapes, Attributes attrs) {
  DType dtype = inputs.empty() ? dtype_ : graph_.tensor(inputs[0]).dtype;
  const std::string name = UniqueOpName(type);
  std::vector<TensorId> outs;
  for (size_t i = 0; i < shapes.size(); ++i)
    outs.push_back(graph_.AddTensor(name + "_output_" + std::to_string(i), dtype, shapes[i]));
  graph_.AddOp(type, name, std::move(inputs), outs, std::move(attrs));
  return outs;
}

TensorId ZooBuilder::Unary(const std::string& type, TensorId x, Attributes attrs) {
  return Op(type, {x}, shape(x), std::move(attrs), dtype_of(x));
}

TensorId ZooBuilder::Binary(const std::string& type, TensorId a, TensorId b) {
  const DType dt = IsFloatingPoint(dtype_of(a)) ? dtype_of(a) : dtype_of(b);
  return Op(type, {a, b}, BroadcastShapes(shape(a), shape(b)), {}, dt);
}

TensorId ZooBuilder::Where(TensorId cond, TensorId a, TensorId b) {
  Shape s = BroadcastShapes(BroadcastShapes(shape(cond), shape(a)), shape(b));
  return Op("Where", {cond, a, b}, std::move(s), {}, dtype_of(a));
}

TensorId ZooBuilder::MatMul(TensorId a, TensorId b) {
  const Shape sa = shape(a);
  const Shape sb = shape(b);
  HX_CHECK(sa.size() >= 2 && sb.size() >= 2 && sa.back() == sb[sb.size() - 2]);
  Shape batch_a(sa.begin(), sa.end() - 2);
  Shape batch_b(sb.begin(), sb.end() - 2);
  Shape out = BroadcastShapes(batch_a, batch_b);
  out.push_back(sa[sa.size() - 2]);
  out.push_back(sb.back());
  return Op("MatMul", {a, b}, std::move(out), {}, dtype_of(a));
}

TensorId ZooBuilder::Reshape(TensorId x, const Shape& shape_out) {
  HX_CHECK(NumElements(shape_out) == NumElements(shape(x)));
  return Op("Reshape", {x, ConstInts(shape_out)}, shape_out, {}, dtype_of(x));
}

TensorId ZooBuilder::Transpose(TensorId x, const std::vector<int64_t>& perm) {
  const Shape in = shape(x);
  HX_CHECK(perm.size() == in.size());
  Shape out(in.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = in[static_cast<size_t>(perm[i])];
  Attributes attrs;
  attrs.Set("perm", perm);
  return Op("Transpose", {x}, std::move(out), std::move(attrs), dtype_of(x));
}

TensorId ZooBuilder::Unsqueeze(TensorId x, const std::vector<int64_t>& axes) {
  Shape out = shape(x);
  const size_t rank = out.size() + axes.size();
  std::vector<int64_t> sorted;
  for (int64_t a : axes) sorted.push_back(NormAxis(a, rank));
  std::sort(sorted.begin(), sorted.end());
  for (int64_t a : sorted) out.insert(out.begin() + a, 1);
  return Op("Unsqueeze", {x, ConstInts(axes)}, std::move(out), {}, dtype_of(x));
}

TensorId ZooBuilder::Concat(const std::vector<TensorId>& xs, int64_t axis) {
  HX_CHECK(!xs.empty());
  Shape out = shape(xs[0]);
  const int64_t a = NormAxis(axis, out.size());
  for (size_t i = 1; i < xs.size(); ++i) out[a] += shape(xs[i])[a];
  Attributes attrs;
  attrs.Set("axis", axis);
  return Op("Concat", xs, std::move(out), std::move(attrs), dtype_of(xs[0]));
}

std::vector<TensorId> ZooBuilder::Split(TensorId x, int64_t axis,
                                        const std::vector<int64_t>& sizes) {
  const Shape in = shape(x);
  const int64_t a = NormAxis(axis, in.size());
  std::vector<Shape> shapes;
  int64_t total = 0;
  for (int64_t s : sizes) {
    Shape piece = in;
    piece[a] = s;
    shapes.push_back(std::move(piece));
    total += s;
  }
  HX_CHECK(total == in[a]);
  Attributes attrs;
  attrs.Set("axis", axis);
  return OpN("Split", {x, ConstInts(sizes)}, shapes, std::move(attrs));
}

TensorId ZooBuilder::Slice(TensorId x, int64_t axis, int64_t start, int64_t end) {
  Shape out = shape(x);
  const int64_t a = NormAxis(axis, out.size());
  HX_CHECK(start >= 0 && end <= out[a] && start <= end);
  out[a] = end - start;
  return Op("Slice", {x, ConstInts({start}), ConstInts({end}), ConstInts({axis})}, std::move(out),
            {}, dtype_of(x));
}

TensorId ZooBuilder::Gather(TensorId data, TensorId indices, int64_t axis) {
  const Shape d = shape(data);
  const int64_t a = NormAxis(axis, d.size());
  Shape out(d.begin(), d.begin() + a);
  for (int64_t s : shape(indices)) out.push_back(s);
  for (size_t i = a + 1; i < d.size(); ++i) out.push_back(d[i]);
  Attributes attrs;
  attrs.Set("axis", axis);
  return Op("Gather", {data, indices}, std::move(out), std::move(attrs), dtype_of(data));
}

TensorId ZooBuilder::Softmax(TensorId x, int64_t axis) {
  Attributes attrs;
  attrs.Set("axis", axis);
  return Unary("Softmax", x, std::move(attrs));
}

TensorId ZooBuilder::ReduceMean(TensorId x, const std::vector<int64_t>& axes, bool keepdims) {
  Shape out = shape(x);
  std::vector<int64_t> norm;
  for (int64_t a : axes) norm.push_back(NormAxis(a, out.size()));
  std::sort(norm.rbegin(), norm.rend());
  for (int64_t a : norm) {
    if (keepdims) {
      out[a] = 1;
    } else {
      out.erase(out.begin() + a);
    }
  }
  Attributes attrs;
  attrs.Set("axes", axes);
  attrs.Set("keepdims", static_cast<int64_t>(keepdims ? 1 : 0));
  return Op("ReduceMean", {x}, std::move(out), std::move(attrs), dtype_of(x));
}

TensorId ZooBuilder::Pad(TensorId x, const std::vector<int64_t>& pads) {
  Shape out = shape(x);
  HX_CHECK(pads.size() == 2 * out.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] += pads[i] + pads[i + out.size()];
  return Op("Pad", {x, ConstInts(pads)}, std::move(out), {}, dtype_of(x));
}

TensorId ZooBuilder::Linear(TensorId x, const std::string& prefix, int64_t out, bool bias) {
  const int64_t in = shape(x).back();
  TensorId y = MatMul(x, Weight(prefix + ".weight", {in, out}));
  if (bias) y = Binary("Add", Weight(prefix + ".bias", {out}), y);
  return y;
}

TensorId ZooBuilder::Gemm(TensorId x, const std::string& prefix, int64_t out, bool bias) {
  const Shape in = shape(x);
  HX_CHECK(in.size() == 2);
  std::vector<TensorId> inputs = {x, Weight(prefix + ".weight", {out, in[1]})};
  if (bias) inputs.push_back(Weight(prefix + ".bias", {out}));
  Attributes attrs;
  attrs.Set("alpha", 1.0);
  attrs.Set("beta", 1.0);
  attrs.Set("transB", static_cast<int64_t>(1));
  return Op("Gemm", std::move(inputs), {in[0], out}, std::move(attrs), dtype_of(x));
}

TensorId ZooBuilder::LayerNorm(TensorId x, const std::string& prefix, double eps, bool bias) {
  const int64_t d = shape(x).back();
  std::vector<TensorId> inputs = {x, Weight(prefix + ".weight", {d})};
  if (bias) inputs.push_back(Weight(prefix + ".bias", {d}));
  Attributes attrs;
  attrs.Set("axis", static_cast<int64_t>(-1));
  attrs.Set("epsilon", eps);
  return Op("LayerNormalization", std::move(inputs), shape(x), std::move(attrs), dtype_of(x));
}

TensorId ZooBuilder::RmsNorm(TensorId x, const std::string& prefix, double eps) {
  const int64_t d = shape(x).back();
  TensorId sq = Binary("Pow", x, ConstFloat(2.0));
  TensorId var = ReduceMean(sq, {-1}, true);
  TensorId std_dev = Unary("Sqrt", Binary("Add", var, ConstFloat(eps)));
  TensorId normed = Binary("Div", x, std_dev);
  return Binary("Mul", Weight(prefix + ".weight", {d}), normed);
}

TensorId ZooBuilder::GeluErf(TensorId x) {
  TensorId e = Unary("Erf", Binary("Div", x, ConstFloat(std::sqrt(2.0))));
  TensorId one_plus = Binary("Add", e, ConstFloat(1.0));
  return Binary("Mul", Binary("Mul", x, one_plus), ConstFloat(0.5));
}

TensorId ZooBuilder::GeluTanh(TensorId x) {
  TensorId half_x = Binary("Mul", ConstFloat(0.5), x);
  TensorId cube = Binary("Pow", x, ConstFloat(3.0));
  TensorId inner = Binary("Add", x, Binary("Mul", ConstFloat(0.044715), cube));
  TensorId t = Unary("Tanh", Binary("Mul", ConstFloat(std::sqrt(2.0 / M_PI)), inner));
  return Binary("Mul", half_x, Binary("Add", ConstFloat(1.0), t));
}

TensorId ZooBuilder::Silu(TensorId x) { return Binary("Mul", x, Unary("Sigmoid", x)); }

TensorId ZooBuilder::Conv(TensorId x, const std::string& prefix, const ConvSpec& spec) {
  const Shape in = shape(x);
  HX_CHECK(in.size() == 4 && in[1] % spec.groups == 0);
  std::vector<TensorId> inputs = {
      x, Weight(prefix + ".weight",
                {spec.out_channels, in[1] / spec.groups, spec.kernel[0], spec.kernel[1]})};
  if (spec.bias) inputs.push_back(Weight(prefix + ".bias", {spec.out_channels}));
  Shape out = {in[0], spec.out_channels, 0, 0};
  for (int i = 0; i < 2; ++i) {
    const int64_t eff = spec.dilation * (spec.kernel[i] - 1) + 1;
    out[2 + i] = (in[2 + i] + 2 * spec.pad[i] - eff) / spec.stride[i] + 1;
    HX_CHECK(out[2 + i] > 0);
  }
  Attributes attrs;
  attrs.Set("dilations", std::vector<int64_t>{spec.dilation, spec.dilation});
  attrs.Set("group", spec.groups);
  attrs.Set("kernel_shape", std::vector<int64_t>{spec.kernel[0], spec.kernel[1]});
  attrs.Set("pads", std::vector<int64_t>{spec.pad[0], spec.pad[1], spec.pad[0], spec.pad[1]});
  attrs.Set("strides", std::vector<int64_t>{spec.stride[0], spec.stride[1]});
  return Op("Conv", std::move(inputs), std::move(out), std::move(attrs), dtype_of(x));
}

namespace {
int64_t PoolOut(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode) {
  const int64_t span = in + 2 * p - k;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  // PyTorch: the last window must start inside the input or its left padding.
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}
}  // namespace

TensorId ZooBuilder::MaxPool(TensorId x, int64_t kernel, int64_t stride, int64_t pad,
                             bool ceil_mode) {
  const Shape in = shape(x);
  Shape out = {in[0], in[1], PoolOut(in[2], kernel, stride, pad, ceil_mode),
               PoolOut(in[3], kernel, stride, pad, ceil_mode)};
  Attributes attrs;
  attrs.Set("ceil_mode", static_cast<int64_t>(ceil_mode ? 1 : 0));
  attrs.Set("kernel_shape", std::vector<int64_t>{kernel, kernel});
  attrs.Set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  attrs.Set("strides", std::vector<int64_t>{stride, stride});
  return Op("MaxPool", {x}, std::move(out), std::move(attrs), dtype_of(x));
}

TensorId ZooBuilder::AveragePool(TensorId x, int64_t kernel, int64_t stride, int64_t pad) {
  const Shape in = shape(x);
  Shape out = {in[0], in[1], PoolOut(in[2], kernel, stride, pad, false),
               PoolOut(in[3], kernel, stride, pad, false)};
  Attributes attrs;
  attrs.Set("kernel_shape", std::vector<int64_t>{kernel, kernel});
  attrs.Set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  attrs.Set("strides", std::vector<int64_t>{stride, stride});
  return Op("AveragePool", {x}, std::move(out), std::move(attrs), dtype_of(x));
}

TensorId ZooBuilder::GlobalAveragePool(TensorId x) {
  const Shape in = shape(x);
  return Op("GlobalAveragePool", {x}, {in[0], in[1], 1, 1}, {}, dtype_of(x));
}

TensorId ZooBuilder::Flatten(TensorId x, int64_t axis) {
  const Shape in = shape(x);
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < in.size(); ++i) (static_cast<int64_t>(i) < axis ? outer : inner) *= in[i];
  Attributes attrs;
  attrs.Set("axis", axis);
  return Op("Flatten", {x}, {outer, inner}, std::move(attrs), dtype_of(x));
}

}  // namespace hx::graph::zoo_internal
