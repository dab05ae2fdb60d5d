#include "onnx_constant_folding.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

namespace hx::graph::onnx_internal {
namespace {

using onnx::AttributeProto;
using onnx::NodeProto;
using FoldResult = StatusOr<std::optional<std::vector<ConstValue>>>;

const std::optional<std::vector<ConstValue>> kNotFolded;

FoldResult One(ConstValue v) { return std::optional<std::vector<ConstValue>>({std::move(v)}); }

const AttributeProto* FindAttr(const NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t IntAttr(const NodeProto& node, const std::string& name, int64_t fallback) {
  const AttributeProto* a = FindAttr(node, name);
  return a && a->type() == AttributeProto::INT ? a->i() : fallback;
}

std::optional<std::vector<int64_t>> IntsAttr(const NodeProto& node, const std::string& name) {
  const AttributeProto* a = FindAttr(node, name);
  if (!a || a->type() != AttributeProto::INTS) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

StatusOr<int64_t> SafeToInt(double x) {
  if (!std::isfinite(x) || x >= 9.2233720368547758e18 || x < -9.2233720368547758e18) {
    return InvalidArgument("value " + std::to_string(x) + " does not fit an integer");
  }
  return static_cast<int64_t>(x);
}

int64_t NormalizeInt(DType dtype, int64_t v) {
  switch (dtype) {
    case DType::kI32:
      return static_cast<int32_t>(v);
    case DType::kI16:
      return static_cast<int16_t>(v);
    case DType::kI8:
      return static_cast<int8_t>(v);
    case DType::kU8:
      return static_cast<uint8_t>(v);
    case DType::kBool:
      return v != 0;
    default:
      return v;
  }
}

StatusOr<int64_t> NormAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return InvalidArgument("axis " + std::to_string(axis) + " out of range for rank " +
                           std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

int64_t Prod(const Shape& dims, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to && i < dims.size(); ++i) n *= dims[i];
  return n;
}

// Element count of `dims` when it is at most kMaxFoldElements, else nullopt; error when negative.
StatusOr<std::optional<int64_t>> SmallCount(const Shape& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgument("negative dimension in " + ShapeToString(dims));
  }
  for (int64_t d : dims) {
    if (d == 0) return std::optional<int64_t>(0);
  }
  for (int64_t d : dims) {
    if (d > kMaxFoldElements || n * d > kMaxFoldElements) return std::optional<int64_t>();
    n *= d;
  }
  return std::optional<int64_t>(n);
}

ConstValue EmptyLike(DType dtype, Shape dims, int64_t n) {
  ConstValue v;
  v.dtype = dtype;
  v.dims = std::move(dims);
  if (v.is_float())
    v.floats.resize(n);
  else
    v.ints.resize(n);
  return v;
}

// Copies element `from` of `src` to element `to` of `dst` (same dtype family).
void CopyElem(const ConstValue& src, int64_t from, ConstValue* dst, int64_t to) {
  if (dst->is_float())
    dst->floats[to] = src.floats[from];
  else
    dst->ints[to] = src.ints[from];
}

std::vector<int64_t> Strides(const Shape& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

StatusOr<Shape> BroadcastShape(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return InvalidArgument("shapes " + ShapeToString(a) + " and " + ShapeToString(b) +
                             " do not broadcast");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// For each element of `out`, the index of the broadcast element of `in`.
std::vector<int64_t> BroadcastIndex(const Shape& in, const Shape& out, int64_t n) {
  std::vector<int64_t> idx(n);
  const size_t rank = out.size();
  const size_t offset = rank - in.size();
  const std::vector<int64_t> in_strides = Strides(in);
  std::vector<int64_t> pos(rank, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t j = 0;
    for (size_t d = offset; d < rank; ++d) {
      if (in[d - offset] != 1) j += pos[d] * in_strides[d - offset];
    }
    idx[k] = j;
    for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
      if (++pos[d] < out[d]) break;
      pos[d] = 0;
    }
  }
  return idx;
}

uint64_t U(int64_t x) { return static_cast<uint64_t>(x); }
int64_t S(uint64_t x) { return static_cast<int64_t>(x); }

StatusOr<int64_t> IntBinary(const std::string& op, int64_t a, int64_t b, int64_t fmod) {
  if (op == "Add") return S(U(a) + U(b));
  if (op == "Sub") return S(U(a) - U(b));
  if (op == "Mul") return S(U(a) * U(b));
  if (op == "Div" || op == "Mod") {
    if (b == 0) return InvalidArgument("integer division by zero");
    if (b == -1) return op == "Div" ? S(U(0) - U(a)) : int64_t{0};
    if (op == "Div") return a / b;
    int64_t r = a % b;
    if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
  if (op == "Min") return std::min(a, b);
  if (op == "Max") return std::max(a, b);
  if (op == "Equal") return a == b;
  if (op == "Less") return a < b;
  if (op == "Greater") return a > b;
  if (op == "LessOrEqual") return a <= b;
  if (op == "GreaterOrEqual") return a >= b;
  if (op == "And") return (a != 0) && (b != 0);
  if (op == "Or") return (a != 0) || (b != 0);
  if (op == "Pow") return SafeToInt(std::pow(static_cast<double>(a), static_cast<double>(b)));
  return Internal("unknown binary op " + op);
}

double FloatBinary(const std::string& op, double a, double b, int64_t fmod) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Div") return a / b;
  if (op == "Mod") {
    double r = std::fmod(a, b);
    if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
  if (op == "Min") return std::min(a, b);
  if (op == "Max") return std::max(a, b);
  if (op == "Equal") return a == b;
  if (op == "Less") return a < b;
  if (op == "Greater") return a > b;
  if (op == "LessOrEqual") return a <= b;
  if (op == "GreaterOrEqual") return a >= b;
  if (op == "Pow") return std::pow(a, b);
  return 0.0;
}

bool IsComparison(const std::string& op) {
  return op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
         op == "GreaterOrEqual" || op == "And" || op == "Or";
}

FoldResult Binary(const std::string& op, const ConstValue& a, const ConstValue& b, int64_t fmod) {
  if (op != "Pow" && a.is_float() != b.is_float()) return kNotFolded;
  HX_ASSIGN_OR_RETURN(Shape out_dims, BroadcastShape(a.dims, b.dims));
  HX_ASSIGN_OR_RETURN(std::optional<int64_t> n, SmallCount(out_dims));
  if (!n) return kNotFolded;
  const DType out_type = IsComparison(op) ? DType::kBool : a.dtype;
  ConstValue out = EmptyLike(out_type, out_dims, *n);
  const std::vector<int64_t> ia = BroadcastIndex(a.dims, out_dims, *n);
  const std::vector<int64_t> ib = BroadcastIndex(b.dims, out_dims, *n);
  const bool float_math = a.is_float() || b.is_float();
  for (int64_t k = 0; k < *n; ++k) {
    if (float_math) {
      double r = FloatBinary(op, a.AsDouble(ia[k]), b.AsDouble(ib[k]), fmod);
      if (out.is_float()) {
        out.floats[k] = r;
      } else {
        HX_ASSIGN_OR_RETURN(int64_t ri, SafeToInt(r));
        out.ints[k] = NormalizeInt(out_type, ri);
      }
    } else {
      HX_ASSIGN_OR_RETURN(int64_t r, IntBinary(op, a.ints[ia[k]], b.ints[ib[k]], fmod));
      out.ints[k] = NormalizeInt(out_type, r);
    }
  }
  return One(std::move(out));
}

FoldResult Unary(const std::string& op, const ConstValue& a) {
  ConstValue out = a;
  if (op == "Identity") return One(std::move(out));
  if (op == "Not") {
    if (a.dtype != DType::kBool) return kNotFolded;
    for (auto& x : out.ints) x = !x;
    return One(std::move(out));
  }
  if (a.is_float()) {
    for (auto& x : out.floats) {
      if (op == "Neg")
        x = -x;
      else if (op == "Abs")
        x = std::fabs(x);
      else if (op == "Sqrt")
        x = std::sqrt(x);
      else if (op == "Floor")
        x = std::floor(x);
      else if (op == "Ceil")
        x = std::ceil(x);
      else if (op == "Reciprocal")
        x = 1.0 / x;
      else
        return kNotFolded;
    }
  } else {
    for (auto& x : out.ints) {
      if (op == "Neg")
        x = NormalizeInt(a.dtype, S(U(0) - U(x)));
      else if (op == "Abs")
        x = NormalizeInt(a.dtype, x < 0 ? S(U(0) - U(x)) : x);
      else if (op == "Floor" || op == "Ceil")
        continue;
      else
        return kNotFolded;
    }
  }
  return One(std::move(out));
}

FoldResult Cast(const NodeProto& node, const ConstValue& a) {
  std::optional<DType> to = DTypeFromOnnx(static_cast<int32_t>(IntAttr(node, "to", 0)));
  if (!to) return kNotFolded;
  ConstValue out = EmptyLike(*to, a.dims, a.size());
  for (int64_t k = 0; k < a.size(); ++k) {
    if (out.is_float()) {
      out.floats[k] = a.AsDouble(k);
    } else if (a.is_float()) {
      if (*to == DType::kBool) {
        out.ints[k] = a.floats[k] != 0.0;
      } else {
        HX_ASSIGN_OR_RETURN(int64_t v, SafeToInt(a.floats[k]));
        out.ints[k] = NormalizeInt(*to, v);
      }
    } else {
      out.ints[k] = NormalizeInt(*to, a.ints[k]);
    }
  }
  return One(std::move(out));
}

FoldResult ShapeOp(const NodeProto& node, const Shape& dims) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t start = IntAttr(node, "start", 0);
  int64_t end = IntAttr(node, "end", rank);
  if (start < 0) start = std::max<int64_t>(0, start + rank);
  if (end < 0) end = std::max<int64_t>(0, end + rank);
  start = std::min(start, rank);
  end = std::min(end, rank);
  ConstValue out;
  out.dtype = DType::kI64;
  for (int64_t i = start; i < end; ++i) out.ints.push_back(dims[i]);
  out.dims = {static_cast<int64_t>(out.ints.size())};
  return One(std::move(out));
}

FoldResult Gather(const NodeProto& node, const ConstValue& data, const ConstValue& indices) {
  if (indices.is_float()) return InvalidArgument("Gather indices must be integers");
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  if (rank == 0) return InvalidArgument("Gather data must have rank >= 1");
  HX_ASSIGN_OR_RETURN(int64_t axis, NormAxis(IntAttr(node, "axis", 0), rank));
  Shape out_dims(data.dims.begin(), data.dims.begin() + axis);
  out_dims.insert(out_dims.end(), indices.dims.begin(), indices.dims.end());
  out_dims.insert(out_dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  HX_ASSIGN_OR_RETURN(std::optional<int64_t> n, SmallCount(out_dims));
  if (!n) return kNotFolded;
  ConstValue out = EmptyLike(data.dtype, out_dims, *n);
  if (*n == 0) return One(std::move(out));  // (the loop bounds below could overflow)
  const int64_t outer = Prod(data.dims, 0, axis);
  const int64_t axis_dim = data.dims[axis];
  const int64_t inner = Prod(data.dims, axis + 1, data.dims.size());
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t idx : indices.ints) {
      if (idx < -axis_dim || idx >= axis_dim) {
        return InvalidArgument("Gather index " + std::to_string(idx) +
                               " out of range for a dimension of size " + std::to_string(axis_dim));
      }
      if (idx < 0) idx += axis_dim;
      for (int64_t i = 0; i < inner; ++i)
        CopyElem(data, (o * axis_dim + idx) * inner + i, &out, k++);
    }
  }
  return One(std::move(out));
}

StatusOr<std::optional<std::vector<int64_t>>> AxesFrom(const NodeProto& node, int opset,
                                                       int since_input_opset,
                                                       const std::vector<FoldInput>& inputs,
                                                       bool* missing) {
  *missing = false;
  if (opset < since_input_opset) {
    auto axes = IntsAttr(node, "axes");
    if (!axes) *missing = true;
    return std::optional<std::vector<int64_t>>(axes.value_or(std::vector<int64_t>{}));
  }
  if (inputs.size() < 2 || inputs[1].value == nullptr) {
    if (node.input_size() >= 2 && !node.input(1).empty())
      return std::optional<std::vector<int64_t>>();
    *missing = true;
    return std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
  }
  if (inputs[1].value->is_float()) return InvalidArgument("axes must be integers");
  return std::optional<std::vector<int64_t>>(inputs[1].value->ints);
}

FoldResult Unsqueeze(const NodeProto& node, int opset, const std::vector<FoldInput>& inputs) {
  bool missing = false;
  HX_ASSIGN_OR_RETURN(auto axes, AxesFrom(node, opset, 13, inputs, &missing));
  if (!axes) return kNotFolded;
  if (missing) return InvalidArgument("Unsqueeze needs axes");
  const ConstValue& data = *inputs[0].value;
  const int64_t out_rank = static_cast<int64_t>(data.dims.size() + axes->size());
  std::set<int64_t> norm;
  for (int64_t a : *axes) {
    HX_ASSIGN_OR_RETURN(int64_t n, NormAxis(a, out_rank));
    if (!norm.insert(n).second) return InvalidArgument("Unsqueeze axes repeat");
  }
  ConstValue out = data;
  out.dims.clear();
  size_t j = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (norm.count(i))
      out.dims.push_back(1);
    else
      out.dims.push_back(data.dims[j++]);
  }
  return One(std::move(out));
}

FoldResult Squeeze(const NodeProto& node, int opset, const std::vector<FoldInput>& inputs) {
  bool missing = false;
  HX_ASSIGN_OR_RETURN(auto axes, AxesFrom(node, opset, 13, inputs, &missing));
  if (!axes) return kNotFolded;
  const ConstValue& data = *inputs[0].value;
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  std::set<int64_t> norm;
  if (missing) {
    for (int64_t i = 0; i < rank; ++i)
      if (data.dims[i] == 1) norm.insert(i);
  }
  for (int64_t a : *axes) {
    HX_ASSIGN_OR_RETURN(int64_t n, NormAxis(a, rank));
    if (data.dims[n] != 1) return InvalidArgument("Squeeze of a dimension that is not 1");
    norm.insert(n);
  }
  ConstValue out = data;
  out.dims.clear();
  for (int64_t i = 0; i < rank; ++i)
    if (!norm.count(i)) out.dims.push_back(data.dims[i]);
  return One(std::move(out));
}

FoldResult Concat(const NodeProto& node, const std::vector<FoldInput>& inputs) {
  const ConstValue& first = *inputs[0].value;
  const int64_t rank = static_cast<int64_t>(first.dims.size());
  if (rank == 0) return InvalidArgument("Concat of scalars");
  HX_ASSIGN_OR_RETURN(int64_t axis, NormAxis(IntAttr(node, "axis", 0), rank));
  Shape out_dims = first.dims;
  out_dims[axis] = 0;
  for (const FoldInput& in : inputs) {
    const ConstValue& v = *in.value;
    if (v.dtype != first.dtype) return kNotFolded;
    if (static_cast<int64_t>(v.dims.size()) != rank) {
      return InvalidArgument("Concat inputs of different ranks");
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && v.dims[d] != first.dims[d]) {
        return InvalidArgument("Concat inputs of incompatible shapes " + ShapeToString(first.dims) +
                               " and " + ShapeToString(v.dims));
      }
    }
    out_dims[axis] += v.dims[axis];
  }
  HX_ASSIGN_OR_RETURN(std::optional<int64_t> n, SmallCount(out_dims));
  if (!n) return kNotFolded;
  ConstValue out = EmptyLike(first.dtype, out_dims, *n);
  if (*n == 0) return One(std::move(out));
  const int64_t outer = Prod(first.dims, 0, axis);
  const int64_t inner = Prod(first.dims, axis + 1, first.dims.size());
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const FoldInput& in : inputs) {
      const int64_t block = in.value->dims[axis] * inner;
      for (int64_t i = 0; i < block; ++i) CopyElem(*in.value, o * block + i, &out, k++);
    }
  }
  return One(std::move(out));
}

// Steps a row-major multi-index over `dims` to the next element.
void NextIndex(const Shape& dims, std::vector<int64_t>* pos) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++(*pos)[d] < dims[d]) return;
    (*pos)[d] = 0;
  }
}

FoldResult Slice(const std::vector<FoldInput>& inputs) {
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i].value && inputs[i].value->is_float()) {
      return InvalidArgument("Slice parameters must be integers");
    }
  }
  if (inputs.size() < 3 || !inputs[1].value || !inputs[2].value) return kNotFolded;
  const ConstValue& data = *inputs[0].value;
  const std::vector<int64_t>& starts = inputs[1].value->ints;
  const std::vector<int64_t>& ends = inputs[2].value->ints;
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  std::vector<int64_t> axes;
  if (inputs.size() > 3 && inputs[3].value) {
    axes = inputs[3].value->ints;
  } else {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> steps(starts.size(), 1);
  if (inputs.size() > 4 && inputs[4].value) steps = inputs[4].value->ints;
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return InvalidArgument("Slice starts, ends, axes and steps differ in length");
  }
  std::vector<int64_t> first(rank, 0), step(rank, 1);
  Shape out_dims = data.dims;
  std::set<int64_t> seen;
  for (size_t i = 0; i < starts.size(); ++i) {
    HX_ASSIGN_OR_RETURN(int64_t axis, NormAxis(axes[i], rank));
    if (!seen.insert(axis).second) return InvalidArgument("Slice axes repeat");
    const int64_t dim = data.dims[axis];
    int64_t s = steps[i];
    if (s == 0) return InvalidArgument("Slice step is 0");
    if (s == std::numeric_limits<int64_t>::min()) s = -std::numeric_limits<int64_t>::max();
    int64_t b = starts[i], e = ends[i];
    if (b < 0) b = b < -dim ? -1 - dim : b;  // keep b + dim from overflowing
    if (e < 0) e = e < -dim ? -1 - dim : e;
    if (b < 0) b += dim;
    if (e < 0) e += dim;
    int64_t count;
    if (s > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count = e > b ? (e - b + s - 1) / s : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      count = b > e ? (b - e + (-s) - 1) / (-s) : 0;
    }
    first[axis] = b;
    step[axis] = s;
    out_dims[axis] = count;
  }
  HX_ASSIGN_OR_RETURN(std::optional<int64_t> n, SmallCount(out_dims));
  if (!n) return kNotFolded;
  ConstValue out = EmptyLike(data.dtype, out_dims, *n);
  const std::vector<int64_t> strides = Strides(data.dims);
  std::vector<int64_t> pos(rank, 0);
  for (int64_t k = 0; k < *n; ++k) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d) src += (first[d] + pos[d] * step[d]) * strides[d];
    CopyElem(data, src, &out, k);
    NextIndex(out_dims, &pos);
  }
  return One(std::move(out));
}

// Transpose: `perm` (default: reversed axes) must be a permutation of the input's axes.
FoldResult Transpose(const NodeProto& node, const ConstValue& data) {
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  std::vector<int64_t> perm(rank);
  for (int64_t d = 0; d < rank; ++d) perm[d] = rank - 1 - d;
  if (auto given = IntsAttr(node, "perm")) perm = *given;
  if (static_cast<int64_t>(perm.size()) != rank) {
    return InvalidArgument("Transpose perm has " + std::to_string(perm.size()) +
                           " entries for rank " + std::to_string(rank));
  }
  std::vector<bool> used(rank, false);
  for (int64_t& p : perm) {
    HX_ASSIGN_OR_RETURN(p, NormAxis(p, rank));
    if (used[p]) return InvalidArgument("Transpose perm repeats an axis");
    used[p] = true;
  }
  Shape out_dims(rank);
  for (int64_t d = 0; d < rank; ++d) out_dims[d] = data.dims[perm[d]];
  HX_ASSIGN_OR_RETURN(std::optional<int64_t> n, SmallCount(out_dims));
  if (!n) return kNotFolded;
  ConstValue out = EmptyLike(data.dtype, out_dims, *n);
  const std::vector<int64_t> in_strides = Strides(data.dims);
  std::vector<int64_t> pos(rank, 0);
  for (int64_t k = 0; k < *n; ++k) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d) src += pos[d] * in_strides[perm[d]];
    CopyElem(data, src, &out, k);
    NextIndex(out_dims, &pos);
  }
  return One(std::move(out));
}

FoldResult Reshape(const NodeProto& node, const ConstValue& data, const ConstValue& shape) {
  if (shape.is_float()) return InvalidArgument("Reshape shape must be integers");
  const bool allow_zero = IntAttr(node, "allowzero", 0) != 0;
  Shape out_dims;
  int64_t infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.ints.size(); ++i) {
    int64_t d = shape.ints[i];
    if (d == 0 && !allow_zero) {
      if (i >= data.dims.size())
        return InvalidArgument("Reshape copies a dimension that is absent");
      d = data.dims[i];
    }
    if (d == -1) {
      if (infer_at >= 0) return InvalidArgument("Reshape shape has more than one -1");
      infer_at = static_cast<int64_t>(i);
      out_dims.push_back(1);
      continue;
    }
    if (d < 0) return InvalidArgument("Reshape shape has negative dimension " + std::to_string(d));
    if (d > kMaxFoldElements) return kNotFolded;
    known *= d;
    if (known > kMaxFoldElements) return kNotFolded;
    out_dims.push_back(d);
  }
  const int64_t n = data.size();
  if (infer_at >= 0) {
    if (known == 0 || n % known != 0) {
      return InvalidArgument("Reshape cannot infer -1 for " + std::to_string(n) + " elements");
    }
    out_dims[infer_at] = n / known;
  } else if (known != n) {
    return InvalidArgument("Reshape of " + std::to_string(n) + " elements to " +
                           ShapeToString(out_dims));
  }
  ConstValue out = data;
  out.dims = out_dims;
  return One(std::move(out));
}

FoldResult Flatten(const NodeProto& node, const ConstValue& data) {
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  int64_t axis = IntAttr(node, "axis", 1);
  if (axis < -rank || axis > rank) return InvalidArgument("Flatten axis out of range");
  if (axis < 0) axis += rank;
  ConstValue out = data;
  out.dims = {Prod(data.dims, 0, axis), Prod(data.dims, axis, data.dims.size())};
  return One(std::move(out));
}

FoldResult Range(const ConstValue& start, const ConstValue& limit, const ConstValue& delta) {
  if (start.size() != 1 || limit.size() != 1 || delta.size() != 1) {
    return InvalidArgument("Range inputs must be scalars");
  }
  ConstValue out;
  out.dtype = start.dtype;
  if (start.is_float()) {
    const double s = start.AsDouble(0), l = limit.AsDouble(0), d = delta.AsDouble(0);
    const double count = std::ceil((l - s) / d);
    if (d == 0.0 || !std::isfinite(count)) return InvalidArgument("Range has no finite length");
    if (count > kMaxFoldElements) return kNotFolded;
    for (int64_t i = 0; i < count; ++i) out.floats.push_back(s + static_cast<double>(i) * d);
  } else {
    if (limit.is_float() || delta.is_float()) return kNotFolded;
    const __int128 s = start.ints[0], l = limit.ints[0], d = delta.ints[0];
    if (d == 0) return InvalidArgument("Range delta is 0");
    __int128 count = 0;
    if (d > 0 && l > s) count = (l - s + d - 1) / d;
    if (d < 0 && l < s) count = (s - l - d - 1) / (-d);
    if (count > kMaxFoldElements) return kNotFolded;
    for (__int128 i = 0; i < count; ++i) out.ints.push_back(static_cast<int64_t>(s + i * d));
  }
  out.dims = {out.size()};
  return One(std::move(out));
}

FoldResult ConstantOfShape(const NodeProto& node, const ConstValue& shape) {
  if (shape.is_float()) return InvalidArgument("ConstantOfShape shape must be integers");
  ConstValue fill;
  fill.dtype = DType::kF32;
  fill.floats = {0.0};
  if (const AttributeProto* a = FindAttr(node, "value"); a && a->has_t()) {
    HX_ASSIGN_OR_RETURN(RawConst raw, TensorProtoToRaw(a->t()));
    if (!raw.raw) return kNotFolded;
    HX_ASSIGN_OR_RETURN(fill, DecodeConst(raw.dtype, raw.dims, *raw.raw));
    if (fill.size() != 1) return InvalidArgument("ConstantOfShape value must have one element");
  }
  Shape dims(shape.ints.begin(), shape.ints.end());
  HX_ASSIGN_OR_RETURN(std::optional<int64_t> n, SmallCount(dims));
  if (!n) return kNotFolded;
  ConstValue out = EmptyLike(fill.dtype, dims, *n);
  for (int64_t k = 0; k < *n; ++k) CopyElem(fill, 0, &out, k);
  return One(std::move(out));
}

FoldResult Expand(const ConstValue& data, const ConstValue& shape) {
  if (shape.is_float()) return InvalidArgument("Expand shape must be integers");
  Shape target(shape.ints.begin(), shape.ints.end());
  for (int64_t d : target) {
    if (d < 0) return InvalidArgument("Expand shape has a negative dimension");
  }
  HX_ASSIGN_OR_RETURN(Shape out_dims, BroadcastShape(data.dims, target));
  HX_ASSIGN_OR_RETURN(std::optional<int64_t> n, SmallCount(out_dims));
  if (!n) return kNotFolded;
  ConstValue out = EmptyLike(data.dtype, out_dims, *n);
  const std::vector<int64_t> idx = BroadcastIndex(data.dims, out_dims, *n);
  for (int64_t k = 0; k < *n; ++k) CopyElem(data, idx[k], &out, k);
  return One(std::move(out));
}

FoldResult Where(const ConstValue& c, const ConstValue& x, const ConstValue& y) {
  if (x.dtype != y.dtype) return kNotFolded;
  HX_ASSIGN_OR_RETURN(Shape xy, BroadcastShape(x.dims, y.dims));
  HX_ASSIGN_OR_RETURN(Shape out_dims, BroadcastShape(c.dims, xy));
  HX_ASSIGN_OR_RETURN(std::optional<int64_t> n, SmallCount(out_dims));
  if (!n) return kNotFolded;
  ConstValue out = EmptyLike(x.dtype, out_dims, *n);
  const auto ic = BroadcastIndex(c.dims, out_dims, *n);
  const auto ix = BroadcastIndex(x.dims, out_dims, *n);
  const auto iy = BroadcastIndex(y.dims, out_dims, *n);
  for (int64_t k = 0; k < *n; ++k) {
    if (c.AsDouble(ic[k]) != 0.0)
      CopyElem(x, ix[k], &out, k);
    else
      CopyElem(y, iy[k], &out, k);
  }
  return One(std::move(out));
}

const std::set<std::string>& FoldableOps() {
  static const std::set<std::string> ops = {"Identity",
                                            "Shape",
                                            "Size",
                                            "Cast",
                                            "Gather",
                                            "Unsqueeze",
                                            "Squeeze",
                                            "Concat",
                                            "Slice",
                                            "Reshape",
                                            "Flatten",
                                            "Transpose",
                                            "Range",
                                            "ConstantOfShape",
                                            "Expand",
                                            "Where",
                                            "Add",
                                            "Sub",
                                            "Mul",
                                            "Div",
                                            "Mod",
                                            "Pow",
                                            "Min",
                                            "Max",
                                            "Equal",
                                            "Less",
                                            "Greater",
                                            "LessOrEqual",
                                            "GreaterOrEqual",
                                            "And",
                                            "Or",
                                            "Not",
                                            "Neg",
                                            "Abs",
                                            "Sqrt",
                                            "Floor",
                                            "Ceil",
                                            "Reciprocal"};
  return ops;
}

}  // namespace

bool IsFoldableOp(const std::string& op_type) { return FoldableOps().count(op_type) > 0; }

StatusOr<RawConst> TensorProtoToRaw(const onnx::TensorProto& tensor) {
  std::optional<DType> dtype = DTypeFromOnnx(tensor.data_type());
  if (!dtype) {
    return Unimplemented("tensor '" + tensor.name() + "' has element type " +
                         OnnxTypeName(tensor.data_type()) + ", which hexplan does not support");
  }
  RawConst out;
  out.dtype = *dtype;
  out.dims.assign(tensor.dims().begin(), tensor.dims().end());
  HX_ASSIGN_OR_RETURN(int64_t n, CheckedNumElements(out.dims, "tensor '" + tensor.name() + "'"));
  HX_ASSIGN_OR_RETURN(out.raw, TensorPayload(tensor, *dtype, n));
  return out;
}

StatusOr<RawConst> ConstantNodeTensor(const onnx::NodeProto& node) {
  for (const auto& a : node.attribute()) {
    RawConst out;
    if (a.name() == "value" && a.type() == AttributeProto::TENSOR) {
      return TensorProtoToRaw(a.t());
    }
    ConstValue v;
    if (a.name() == "value_float") {
      v.dtype = DType::kF32;
      v.floats = {a.f()};
    } else if (a.name() == "value_floats") {
      v.dtype = DType::kF32;
      v.floats.assign(a.floats().begin(), a.floats().end());
      v.dims = {static_cast<int64_t>(v.floats.size())};
    } else if (a.name() == "value_int") {
      v.dtype = DType::kI64;
      v.ints = {a.i()};
    } else if (a.name() == "value_ints") {
      v.dtype = DType::kI64;
      v.ints.assign(a.ints().begin(), a.ints().end());
      v.dims = {static_cast<int64_t>(v.ints.size())};
    } else {
      continue;
    }
    out.dtype = v.dtype;
    out.dims = v.dims;
    out.raw = EncodeConst(v);
    return out;
  }
  return Unimplemented(
      "Constant has no numeric value attribute (value, value_float(s), value_int(s))");
}

FoldResult FoldNode(const NodeProto& node, int opset, const std::vector<FoldInput>& inputs) {
  const std::string& op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx") return kNotFolded;
  if (!IsFoldableOp(op) || inputs.empty()) return kNotFolded;
  if (op == "Shape" || op == "Size") {
    const Shape* dims = inputs[0].value ? &inputs[0].value->dims : inputs[0].shape;
    if (!dims) return kNotFolded;
    if (op == "Shape") return ShapeOp(node, *dims);
    HX_ASSIGN_OR_RETURN(int64_t n, CheckedNumElements(*dims, "Size input"));
    ConstValue out;
    out.dtype = DType::kI64;
    out.ints = {n};
    return One(std::move(out));
  }
  // Every other op needs its first input's value; the rest are checked where used.
  if (!inputs[0].value) return kNotFolded;
  const ConstValue& a = *inputs[0].value;
  auto need = [&](size_t i) -> const ConstValue* {
    return i < inputs.size() ? inputs[i].value : nullptr;
  };
  if (op == "Unsqueeze") return Unsqueeze(node, opset, inputs);
  if (op == "Squeeze") return Squeeze(node, opset, inputs);
  if (op == "Concat") {
    for (const FoldInput& in : inputs)
      if (!in.value) return kNotFolded;
    return Concat(node, inputs);
  }
  if (op == "Slice") {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].value && i < static_cast<size_t>(node.input_size()) && !node.input(i).empty())
        return kNotFolded;
    }
    return Slice(inputs);
  }
  if (op == "Cast") return Cast(node, a);
  if (op == "Flatten") return Flatten(node, a);
  if (op == "Transpose") return Transpose(node, a);
  if (op == "ConstantOfShape") return ConstantOfShape(node, a);
  if (op == "Gather" || op == "Reshape" || op == "Expand") {
    const ConstValue* b = need(1);
    if (!b) return kNotFolded;
    if (op == "Gather") return Gather(node, a, *b);
    if (op == "Reshape") return Reshape(node, a, *b);
    return Expand(a, *b);
  }
  if (op == "Range" || op == "Where") {
    const ConstValue* b = need(1);
    const ConstValue* c = need(2);
    if (!b || !c) return kNotFolded;
    return op == "Range" ? Range(a, *b, *c) : Where(a, *b, *c);
  }
  if (op == "Identity" || op == "Not" || op == "Neg" || op == "Abs" || op == "Sqrt" ||
      op == "Floor" || op == "Ceil" || op == "Reciprocal") {
    return Unary(op, a);
  }
  // Binary and variadic (Min, Max) elementwise ops.
  const int64_t fmod = IntAttr(node, "fmod", 0);
  ConstValue acc = a;
  if (inputs.size() < 2) return (op == "Min" || op == "Max") ? One(std::move(acc)) : kNotFolded;
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (!inputs[i].value) return kNotFolded;
    HX_ASSIGN_OR_RETURN(auto r, Binary(op, acc, *inputs[i].value, fmod));
    if (!r) return kNotFolded;
    acc = std::move((*r)[0]);
  }
  return One(std::move(acc));
}

}  // namespace hx::graph::onnx_internal
