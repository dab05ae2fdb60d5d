// Data movement and index ops over any dtype: Tile, Pad (constant/edge/reflect), Shape, Size,
// Range, ConstantOfShape, EyeLike, OneHot, Trilu, GatherElements, GatherND, ScatterElements,
// ScatterND, DepthToSpace, SpaceToDepth, TopK, ReverseSequence and GlobalMaxPool. Output shapes
// are the graph's; kernels check what they rely on.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "exec/kernel_context.h"

namespace hx::exec::internal {
namespace {

void CopyElement(const TensorRef& dst, int64_t di, const TensorRef& src, int64_t si) {
  const int64_t es = graph::DTypeSize(dst.dtype);
  std::memcpy(dst.as<char>() + di * es, src.as<char>() + si * es, static_cast<size_t>(es));
}

Status SameDType(const Ctx& c, size_t in) {
  if (!c.Has(in)) return c.Error("input " + std::to_string(in) + " is missing");
  if (c.in[in].dtype != c.out[0].dtype) return c.Error("output dtype differs from the input's");
  return Status::Ok();
}

Status TileKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(SameDType(c, 0));
  const Shape& in = *c.in[0].shape;
  const Shape& out = *c.out[0].shape;
  if (in.size() != out.size()) return c.Error("output rank differs from the input's");
  const std::vector<int64_t> st = Strides(in);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < c.out[0].NumElements(); ++i) {
    Unflatten(i, out, &idx);
    int64_t off = 0;
    for (size_t d = 0; d < in.size(); ++d) off += (idx[d] % in[d]) * st[d];
    CopyElement(c.out[0], i, c.in[0], off);
  }
  return Status::Ok();
}

// Source index along one dim of a padded output position, or -1 for the constant.
int64_t PadSource(int64_t o, int64_t n, const std::string& mode) {
  if (o >= 0 && o < n) return o;
  if (mode == "constant") return -1;
  if (mode == "edge") return std::clamp<int64_t>(o, 0, n - 1);
  if (n == 1) return 0;  // reflect
  const int64_t period = 2 * (n - 1);
  int64_t r = ((o % period) + period) % period;
  return r < n ? r : period - r;
}

Status PadAnyKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(SameDType(c, 0));
  const std::string mode = c.op.attrs.GetString("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    return c.Error("unknown mode '" + mode + "'");
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> pads, IntsOf(c, 1));
  if (pads.empty()) pads = c.op.attrs.GetInts("pads");
  const Shape& in = *c.in[0].shape;
  const Shape& out = *c.out[0].shape;
  const size_t rank = in.size();
  if (c.Has(3)) return c.Error("the axes input is unsupported");
  if (pads.size() != 2 * rank || out.size() != rank)
    return c.Error("pads must have 2*rank entries");
  double value = c.op.attrs.GetFloat("value", 0.0);
  if (c.Has(2)) value = Load(c.in[2], 0);
  const std::vector<int64_t> st = Strides(in);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < c.out[0].NumElements(); ++i) {
    Unflatten(i, out, &idx);
    int64_t off = 0;
    for (size_t d = 0; d < rank && off >= 0; ++d) {
      const int64_t src = PadSource(idx[d] - pads[d], in[d], mode);
      off = src < 0 ? -1 : off + src * st[d];
    }
    if (off < 0)
      Store(c.out[0], i, value);
    else
      CopyElement(c.out[0], i, c.in[0], off);
  }
  return Status::Ok();
}

Status ShapeKernel(const Ctx& c) {
  const Shape& s = *c.in[0].shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  int64_t start = c.op.attrs.GetInt("start", 0), end = c.op.attrs.GetInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  if (c.out[0].NumElements() != end - start) return c.Error("output size does not match");
  for (int64_t k = start; k < end; ++k)
    c.out[0].as<int64_t>()[k - start] = s[static_cast<size_t>(k)];
  return Status::Ok();
}

Status SizeKernel(const Ctx& c) {
  c.out[0].as<int64_t>()[0] = graph::NumElements(*c.in[0].shape);
  return Status::Ok();
}

Status RangeKernel(const Ctx& c) {
  for (size_t k = 0; k < 3; ++k)
    if (!c.Has(k)) return c.Error("needs start, limit and delta");
  const double start = Load(c.in[0], 0), delta = Load(c.in[2], 0);
  for (int64_t i = 0; i < c.out[0].NumElements(); ++i)
    Store(c.out[0], i, start + static_cast<double>(i) * delta);
  return Status::Ok();
}

Status ConstantOfShapeKernel(const Ctx& c) {
  const std::vector<double> v = c.op.attrs.GetFloats("value", {0.0});
  const std::vector<int64_t> vi = c.op.attrs.GetInts("value");
  const double value = !vi.empty() ? static_cast<double>(vi[0]) : v.empty() ? 0.0 : v[0];
  for (int64_t i = 0; i < c.out[0].NumElements(); ++i) Store(c.out[0], i, value);
  return Status::Ok();
}

Status EyeLikeKernel(const Ctx& c) {
  const Shape& s = *c.out[0].shape;
  if (s.size() != 2) return c.Error("input must be 2-D");
  const int64_t k = c.op.attrs.GetInt("k", 0);
  for (int64_t i = 0; i < s[0]; ++i)
    for (int64_t j = 0; j < s[1]; ++j) Store(c.out[0], i * s[1] + j, j - i == k ? 1.0 : 0.0);
  return Status::Ok();
}

Status TriluKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(SameDType(c, 0));
  const Shape& s = *c.in[0].shape;
  if (s.size() < 2) return c.Error("input must be at least 2-D");
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> kv, IntsOf(c, 1));
  const int64_t k = kv.empty() ? 0 : kv[0];
  const bool upper = c.op.attrs.GetInt("upper", 1) != 0;
  const int64_t rows = s[s.size() - 2], cols = s.back();
  const int64_t es = graph::DTypeSize(c.out[0].dtype);
  for (int64_t i = 0; i < c.out[0].NumElements(); ++i) {
    const int64_t col = i % cols, row = (i / cols) % rows;
    const bool keep = upper ? col - row >= k : col - row <= k;
    if (keep)
      CopyElement(c.out[0], i, c.in[0], i);
    else
      std::memset(c.out[0].as<char>() + i * es, 0, static_cast<size_t>(es));
  }
  return Status::Ok();
}

StatusOr<int64_t> CheckIndex(const Ctx& c, int64_t j, int64_t dim) {
  if (j < 0) j += dim;
  if (j < 0 || j >= dim)
    return c.Error("index " + std::to_string(j) + " out of range for a dim of " +
                   std::to_string(dim));
  return j;
}

Status GatherElementsKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(SameDType(c, 0));
  const Shape& data = *c.in[0].shape;
  const Shape& ind = *c.in[1].shape;
  const int64_t axis = NormAxis(c.op.attrs.GetInt("axis", 0), data.size());
  if (axis < 0 || axis >= static_cast<int64_t>(data.size()) || ind.size() != data.size())
    return c.Error("axis out of range or ranks differ");
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> indices, IntsOf(c, 1));
  const std::vector<int64_t> st = Strides(data);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < c.out[0].NumElements(); ++i) {
    Unflatten(i, ind, &idx);
    HX_ASSIGN_OR_RETURN(
        idx[static_cast<size_t>(axis)],
        CheckIndex(c, indices[static_cast<size_t>(i)], data[static_cast<size_t>(axis)]));
    int64_t off = 0;
    for (size_t d = 0; d < data.size(); ++d) off += idx[d] * st[d];
    CopyElement(c.out[0], i, c.in[0], off);
  }
  return Status::Ok();
}

// The scatter ops' `reduction` attribute: none, add or mul (max/min are refused by name).
StatusOr<std::string> ScatterReduction(const Ctx& c) {
  std::string reduction = c.op.attrs.GetString("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul")
    return c.Error("reduction '" + reduction + "' is unsupported");
  return reduction;
}

// ScatterElements (and opset < 11 Scatter): a copy of data with updates written at indices.
Status ScatterElementsKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(SameDType(c, 0));
  HX_ASSIGN_OR_RETURN(const std::string reduction, ScatterReduction(c));
  const Shape& data = *c.in[0].shape;
  const Shape& ind = *c.in[1].shape;
  const int64_t axis = NormAxis(c.op.attrs.GetInt("axis", 0), data.size());
  if (axis < 0 || axis >= static_cast<int64_t>(data.size()) || ind.size() != data.size())
    return c.Error("axis out of range or ranks differ");
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> indices, IntsOf(c, 1));
  std::memcpy(c.out[0].data, c.in[0].data, static_cast<size_t>(c.out[0].Bytes()));
  const std::vector<int64_t> st = Strides(data);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < graph::NumElements(ind); ++i) {
    Unflatten(i, ind, &idx);
    HX_ASSIGN_OR_RETURN(
        idx[static_cast<size_t>(axis)],
        CheckIndex(c, indices[static_cast<size_t>(i)], data[static_cast<size_t>(axis)]));
    int64_t off = 0;
    for (size_t d = 0; d < data.size(); ++d) off += idx[d] * st[d];
    if (reduction == "none")
      CopyElement(c.out[0], off, c.in[2], i);
    else
      Store(c.out[0], off,
            reduction == "add" ? Load(c.out[0], off) + Load(c.in[2], i)
                               : Load(c.out[0], off) * Load(c.in[2], i));
  }
  return Status::Ok();
}

// Offset into data (from dim `first` on) of index tuple `tuple` (its k entries in `ind`).
StatusOr<int64_t> TupleOffset(const Ctx& c, const Shape& data, const std::vector<int64_t>& ind,
                              int64_t tuple, int64_t k, size_t first) {
  const std::vector<int64_t> st = Strides(data);
  int64_t off = 0;
  for (int64_t d = 0; d < k; ++d) {
    const size_t dim = first + static_cast<size_t>(d);
    HX_ASSIGN_OR_RETURN(int64_t j,
                        CheckIndex(c, ind[static_cast<size_t>(tuple * k + d)], data[dim]));
    off += j * st[dim];
  }
  return off;
}

Status GatherNDKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(SameDType(c, 0));
  const int64_t bd = c.op.attrs.GetInt("batch_dims", 0);
  const Shape& data = *c.in[0].shape;
  const Shape& ind = *c.in[1].shape;
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> indices, IntsOf(c, 1));
  const int64_t k = ind.back();
  if (bd < 0 || bd + k > static_cast<int64_t>(data.size()) ||
      bd >= static_cast<int64_t>(ind.size()))
    return c.Error("batch_dims and index tuples exceed the data's rank");
  int64_t batches = 1, slice = 1;
  for (int64_t d = 0; d < bd; ++d) batches *= data[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(bd + k); d < data.size(); ++d) slice *= data[d];
  const int64_t tuples = graph::NumElements(ind) / std::max<int64_t>(k, 1);  // all batches
  const int64_t per_batch = tuples / std::max<int64_t>(batches, 1);
  const int64_t data_batch = graph::NumElements(data) / std::max<int64_t>(batches, 1);
  if (c.out[0].NumElements() != tuples * slice) return c.Error("output size does not match");
  const int64_t es = graph::DTypeSize(c.out[0].dtype);
  for (int64_t t = 0; t < tuples; ++t) {
    HX_ASSIGN_OR_RETURN(int64_t off, TupleOffset(c, data, indices, t, k, static_cast<size_t>(bd)));
    off += (t / std::max<int64_t>(per_batch, 1)) * data_batch;
    std::memcpy(c.out[0].as<char>() + t * slice * es, c.in[0].as<char>() + off * es,
                static_cast<size_t>(slice * es));
  }
  return Status::Ok();
}

// MaxUnpool: zeros with each X value at its index I. Indices are flat positions in the default
// unpooled shape ((in - 1) * stride + kernel - pads); a larger output_shape keeps coordinates.
Status MaxUnpoolKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(SameDType(c, 0));
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> indices, IntsOf(c, 1));
  const Shape& x = *c.in[0].shape;
  const Shape& y = *c.out[0].shape;
  const size_t r = x.size() - 2;
  const auto k = c.op.attrs.GetInts("kernel_shape");
  const auto st = c.op.attrs.GetInts("strides", std::vector<int64_t>(r, 1));
  const auto pads = c.op.attrs.GetInts("pads", std::vector<int64_t>(2 * r, 0));
  if (y.size() != x.size() || k.size() != r || st.size() != r || pads.size() != 2 * r)
    return c.Error("kernel_shape, strides or pads do not match the input rank");
  Shape dflt = {x[0], x[1]};
  for (size_t i = 0; i < r; ++i)
    dflt.push_back((x[i + 2] - 1) * st[i] + k[i] - pads[i] - pads[r + i]);
  const int64_t n = c.out[0].NumElements(), es = graph::DTypeSize(c.out[0].dtype);
  std::memset(c.out[0].data, 0, static_cast<size_t>(n * es));
  const std::vector<int64_t> ys = Strides(y);
  std::vector<int64_t> idx;
  for (size_t i = 0; i < indices.size(); ++i) {
    HX_ASSIGN_OR_RETURN(int64_t j, CheckIndex(c, indices[i], graph::NumElements(dflt)));
    Unflatten(j, dflt, &idx);
    int64_t off = 0;
    for (size_t d = 0; d < y.size(); ++d) {
      if (idx[d] >= y[d]) return c.Error("index outside output_shape");
      off += idx[d] * ys[d];
    }
    CopyElement(c.out[0], off, c.in[0], static_cast<int64_t>(i));
  }
  return Status::Ok();
}

Status ScatterNDKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(SameDType(c, 0));
  HX_ASSIGN_OR_RETURN(const std::string reduction, ScatterReduction(c));
  const Shape& data = *c.in[0].shape;
  const Shape& ind = *c.in[1].shape;
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> indices, IntsOf(c, 1));
  const int64_t k = ind.back();
  int64_t slice = 1;
  for (size_t d = static_cast<size_t>(k); d < data.size(); ++d) slice *= data[d];
  const int64_t tuples = graph::NumElements(ind) / std::max<int64_t>(k, 1);
  std::memcpy(c.out[0].data, c.in[0].data, static_cast<size_t>(c.out[0].Bytes()));
  for (int64_t t = 0; t < tuples; ++t) {
    HX_ASSIGN_OR_RETURN(int64_t off, TupleOffset(c, data, indices, t, k, 0));
    for (int64_t e = 0; e < slice; ++e) {
      const double u = Load(c.in[2], t * slice + e), o = Load(c.out[0], off + e);
      if (reduction == "none")
        CopyElement(c.out[0], off + e, c.in[2], t * slice + e);
      else
        Store(c.out[0], off + e, reduction == "add" ? o + u : o * u);
    }
  }
  return Status::Ok();
}

// DepthToSpace (DCR or CRD) and SpaceToDepth on NCHW.
Status SpaceDepthKernel(const Ctx& c, bool to_space) {
  HX_RETURN_IF_ERROR(SameDType(c, 0));
  const Shape& x = *c.in[0].shape;
  const Shape& y = *c.out[0].shape;
  if (x.size() != 4 || y.size() != 4) return c.Error("input must be NCHW");
  const int64_t b = c.op.attrs.GetInt("blocksize", 0);
  if (b < 1) return c.Error("blocksize must be positive");
  const bool crd = c.op.attrs.GetString("mode", "DCR") == "CRD";
  // Index the large-channel side [N, C*b*b, H, W] against the space side [N, C, H*b, W*b].
  const Shape& deep = to_space ? x : y;
  const Shape& wide = to_space ? y : x;
  const int64_t C = wide[1], H = deep[2], W = deep[3];
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < graph::NumElements(wide); ++i) {
    Unflatten(i, wide, &idx);
    const int64_t h = idx[2] / b, bh = idx[2] % b, w = idx[3] / b, bw = idx[3] % b;
    const int64_t ch = crd ? (idx[1] * b + bh) * b + bw : (bh * b + bw) * C + idx[1];
    const int64_t d = ((idx[0] * C * b * b + ch) * H + h) * W + w;
    if (to_space)
      CopyElement(c.out[0], i, c.in[0], d);
    else
      CopyElement(c.out[0], d, c.in[0], i);
  }
  return Status::Ok();
}

Status TopKKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(SameDType(c, 0));
  const Shape& s = *c.in[0].shape;
  const int64_t axis = NormAxis(c.op.attrs.GetInt("axis", -1), s.size());
  if (axis < 0 || axis >= static_cast<int64_t>(s.size())) return c.Error("axis out of range");
  const bool largest = c.op.attrs.GetInt("largest", 1) != 0;
  int64_t outer, inner;
  AroundAxis(s, axis, &outer, &inner);
  const int64_t n = s[static_cast<size_t>(axis)];
  const int64_t k = (*c.out[0].shape)[static_cast<size_t>(axis)];
  if (k > n) return c.Error("k is larger than the axis");
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return Load(c.in[0], (o * n + j) * inner + i); };
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return largest ? at(a) > at(b) : at(a) < at(b);
      });
      for (int64_t j = 0; j < k; ++j) {
        const int64_t dst = (o * k + j) * inner + i;
        CopyElement(c.out[0], dst, c.in[0], (o * n + order[static_cast<size_t>(j)]) * inner + i);
        if (c.HasOut(1)) c.out[1].as<int64_t>()[dst] = order[static_cast<size_t>(j)];
      }
    }
  return Status::Ok();
}

Status OneHotKernel(const Ctx& c) {
  const Shape& ind = *c.in[0].shape;
  const Shape& out = *c.out[0].shape;
  const int64_t axis = NormAxis(c.op.attrs.GetInt("axis", -1), out.size());
  if (axis < 0 || axis >= static_cast<int64_t>(out.size())) return c.Error("axis out of range");
  const int64_t depth = out[static_cast<size_t>(axis)];
  const double off = Load(c.in[2], 0), on = Load(c.in[2], 1);
  int64_t outer, inner;
  AroundAxis(out, axis, &outer, &inner);
  (void)ind;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t j = static_cast<int64_t>(Load(c.in[0], o * inner + i));
      if (j < 0) j += depth;
      for (int64_t d = 0; d < depth; ++d)
        Store(c.out[0], (o * depth + d) * inner + i, d == j ? on : off);
    }
  return Status::Ok();
}

Status ReverseSequenceKernel(const Ctx& c) {
  HX_RETURN_IF_ERROR(SameDType(c, 0));
  const Shape& s = *c.in[0].shape;
  const int64_t batch_axis = c.op.attrs.GetInt("batch_axis", 1);
  const int64_t time_axis = c.op.attrs.GetInt("time_axis", 0);
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> lens, IntsOf(c, 1));
  std::vector<int64_t> idx;
  const std::vector<int64_t> st = Strides(s);
  for (int64_t i = 0; i < c.out[0].NumElements(); ++i) {
    Unflatten(i, s, &idx);
    const int64_t b = idx[static_cast<size_t>(batch_axis)];
    int64_t& t = idx[static_cast<size_t>(time_axis)];
    if (t < lens[static_cast<size_t>(b)]) t = lens[static_cast<size_t>(b)] - 1 - t;
    int64_t off = 0;
    for (size_t d = 0; d < s.size(); ++d) off += idx[d] * st[d];
    CopyElement(c.out[0], i, c.in[0], off);
  }
  return Status::Ok();
}

Status GlobalMaxPoolKernel(const Ctx& c) {
  const Shape& s = *c.in[0].shape;
  if (s.size() < 3) return c.Error("input must be at least 3-D");
  const int64_t inner = graph::NumElements(s) / (s[0] * s[1]);
  for (int64_t nc = 0; nc < s[0] * s[1]; ++nc) {
    double best = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < inner; ++i) best = std::max(best, Load(c.in[0], nc * inner + i));
    Store(c.out[0], nc, best);
  }
  return Status::Ok();
}

}  // namespace

void AddTensorKernels(KernelMap* map) {
  KernelMap& m = *map;
  m["Tile"] = TileKernel;
  Kernel constant_pad = m["Pad"];  // kernels.cc's constant-mode Pad, which copies faster
  m["Pad"] = [constant_pad](const Ctx& c) {
    const bool plain = c.op.attrs.GetString("mode", "constant") == "constant" && !c.Has(3) &&
                       !c.op.attrs.Has("value");
    return plain && constant_pad ? constant_pad(c) : PadAnyKernel(c);
  };
  m["Shape"] = ShapeKernel;
  m["Size"] = SizeKernel;
  m["Range"] = RangeKernel;
  m["ConstantOfShape"] = ConstantOfShapeKernel;
  m["EyeLike"] = EyeLikeKernel;
  m["Trilu"] = TriluKernel;
  m["GatherElements"] = GatherElementsKernel;
  m["ScatterElements"] = ScatterElementsKernel;
  m["Scatter"] = ScatterElementsKernel;
  m["GatherND"] = GatherNDKernel;
  m["MaxUnpool"] = MaxUnpoolKernel;
  m["ScatterND"] = ScatterNDKernel;
  m["DepthToSpace"] = [](const Ctx& c) { return SpaceDepthKernel(c, true); };
  m["SpaceToDepth"] = [](const Ctx& c) { return SpaceDepthKernel(c, false); };
  m["TopK"] = TopKKernel;
  m["OneHot"] = OneHotKernel;
  m["ReverseSequence"] = ReverseSequenceKernel;
  m["GlobalMaxPool"] = GlobalMaxPoolKernel;
  m["CastLike"] = m["Cast"];  // Cast's kernel reads the target dtype from the output
}

}  // namespace hx::exec::internal
