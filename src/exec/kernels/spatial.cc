// N-D spatial ops as plain loops in double: ConvTranspose (any rank, groups, dilations, output
// padding), Resize (nearest/linear/cubic, every coordinate transformation mode of opset 11-13),
// and N-D max/average pooling for ranks the 2-D kernel does not cover (3-D).

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>

#include "exec/kernel_context.h"

namespace hx::exec::internal {
namespace {

// Begin pads of a ConvTranspose: the attribute, or derived from the output size (auto_pad or
// output_shape) as ONNX's spec says.
std::vector<int64_t> TransposePadsBegin(const Ctx& c, const Shape& x, const Shape& y,
                                        const Shape& k, const std::vector<int64_t>& s,
                                        const std::vector<int64_t>& d,
                                        const std::vector<int64_t>& op) {
  const size_t r = k.size();
  std::vector<int64_t> pads = c.op.attrs.GetInts("pads");
  const std::string auto_pad = c.op.attrs.GetString("auto_pad", "NOTSET");
  if (pads.size() == 2 * r && auto_pad == "NOTSET") return {pads.begin(), pads.begin() + r};
  if (auto_pad == "VALID") return std::vector<int64_t>(r, 0);
  std::vector<int64_t> begin(r, 0);
  for (size_t i = 0; i < r; ++i) {
    const int64_t total = s[i] * (x[i + 2] - 1) + op[i] + (k[i] - 1) * d[i] + 1 - y[i + 2];
    begin[i] = auto_pad == "SAME_LOWER" ? total - total / 2 : total / 2;
  }
  return begin;
}

Status ConvTransposeKernel(const Ctx& c) {
  const Shape& x = *c.in[0].shape;
  const Shape& w = *c.in[1].shape;
  const Shape& y = *c.out[0].shape;
  if (x.size() < 3 || w.size() != x.size() || y.size() != x.size())
    return c.Error("X, W and Y must have the same rank (at least 3)");
  const size_t r = x.size() - 2;
  const int64_t group = c.op.attrs.GetInt("group", 1);
  const int64_t C = x[1], cg = C / group, mg = w[1], M = y[1];
  if (group < 1 || C % group != 0 || w[0] != C || M != mg * group)
    return c.Error("channels do not match the weight and group");
  const Shape k(w.begin() + 2, w.end());
  const auto s = c.op.attrs.GetInts("strides", std::vector<int64_t>(r, 1));
  const auto d = c.op.attrs.GetInts("dilations", std::vector<int64_t>(r, 1));
  const auto op = c.op.attrs.GetInts("output_padding", std::vector<int64_t>(r, 0));
  if (s.size() != r || d.size() != r || op.size() != r)
    return c.Error("strides, dilations or output_padding have the wrong length");
  const std::vector<int64_t> pb = TransposePadsBegin(c, x, y, k, s, d, op);
  const std::vector<int64_t> ys = Strides(y);
  for (int64_t i = 0; i < c.out[0].NumElements(); ++i)
    Store(c.out[0], i, c.Has(2) ? Load(c.in[2], (i / ys[1]) % M) : 0.0);
  std::vector<int64_t> xi, ki;
  const Shape xsp(x.begin() + 2, x.end());
  for (int64_t n = 0; n < x[0]; ++n)
    for (int64_t ci = 0; ci < C; ++ci)
      for (int64_t xp = 0; xp < graph::NumElements(xsp); ++xp) {
        const double xv = Load(c.in[0], (n * C + ci) * graph::NumElements(xsp) + xp);
        Unflatten(xp, xsp, &xi);
        for (int64_t kp = 0; kp < graph::NumElements(k); ++kp) {
          Unflatten(kp, k, &ki);
          int64_t off = 0;
          bool inside = true;
          for (size_t a = 0; a < r && inside; ++a) {
            const int64_t o = xi[a] * s[a] - pb[a] + ki[a] * d[a];
            inside = o >= 0 && o < y[a + 2];
            off += o * ys[a + 2];
          }
          if (!inside) continue;
          const int64_t gr = ci / cg;
          for (int64_t m = 0; m < mg; ++m) {
            const int64_t yo = n * ys[0] + (gr * mg + m) * ys[1] + off;
            const double wv = Load(c.in[1], (ci * mg + m) * graph::NumElements(k) + kp);
            Store(c.out[0], yo, Load(c.out[0], yo) + xv * wv);
          }
        }
      }
  return Status::Ok();
}

// ---- Resize.

struct Tap {
  int64_t index;  // -1: outside (tf_crop_and_resize extrapolation)
  double weight;
};

struct ResizeSpec {
  std::string mode, coord, nearest;
  double cubic_a = -0.75, extrapolation = 0.0;
  bool exclude_outside = false;
};

// `out` is the input length times the scale, unrounded (as ONNX's reference computes it).
double OriginalCoordinate(const ResizeSpec& sp, int64_t xr, int64_t in, double out, double scale,
                          double roi_start, double roi_end) {
  const double x = static_cast<double>(xr);
  if (sp.coord == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (sp.coord == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (sp.coord == "align_corners")
    return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / (out - 1);
  if (sp.coord == "tf_half_pixel_for_nearest" || sp.coord == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  if (sp.coord == "tf_crop_and_resize")
    return out > 1 ? roi_start * static_cast<double>(in - 1) +
                         x * (roi_end - roi_start) * static_cast<double>(in - 1) / (out - 1)
                   : 0.5 * (roi_start + roi_end) * static_cast<double>(in - 1);
  return x / scale;  // asymmetric
}

int64_t NearestIndex(const std::string& mode, double x) {
  const double f = std::floor(x);
  if (mode == "floor") return static_cast<int64_t>(f);
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (x - f == 0.5) return static_cast<int64_t>(mode == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

std::vector<Tap> Taps(const ResizeSpec& sp, double xo, int64_t in) {
  auto clamp = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  if (sp.coord == "tf_crop_and_resize" && (xo < 0 || xo > static_cast<double>(in - 1)))
    return {{-1, 1.0}};
  if (sp.mode == "nearest") return {{clamp(NearestIndex(sp.nearest, xo)), 1.0}};
  const int64_t i0 = static_cast<int64_t>(std::floor(xo));
  const double r = xo - static_cast<double>(i0);
  if (sp.mode == "linear") return {{clamp(i0), 1 - r}, {clamp(i0 + 1), r}};
  const double A = sp.cubic_a;
  const double w[4] = {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
                       ((A + 2) * r - (A + 3)) * r * r + 1,
                       ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1,
                       ((A * (2 - r) - 5 * A) * (2 - r) + 8 * A) * (2 - r) - 4 * A};
  std::vector<Tap> taps;
  double sum = 0.0;
  for (int64_t k = 0; k < 4; ++k) {
    const int64_t i = i0 - 1 + k;
    const bool outside = i < 0 || i >= in;
    if (outside && sp.exclude_outside) continue;
    taps.push_back({clamp(i), w[k]});
    sum += w[k];
  }
  if (sp.exclude_outside)
    for (Tap& t : taps) t.weight /= sum;
  return taps;
}

StatusOr<ResizeSpec> ReadResizeSpec(const Ctx& c) {
  ResizeSpec sp;
  const auto& a = c.op.attrs;
  sp.mode = a.GetString("mode", "nearest");
  sp.coord = a.GetString("coordinate_transformation_mode", "half_pixel");
  sp.nearest = a.GetString("nearest_mode", "round_prefer_floor");
  sp.cubic_a = a.GetFloat("cubic_coeff_a", -0.75);
  sp.exclude_outside = a.GetInt("exclude_outside", 0) != 0;
  sp.extrapolation = a.GetFloat("extrapolation_value", 0.0);
  if (sp.mode != "nearest" && sp.mode != "linear" && sp.mode != "cubic")
    return c.Error("unknown mode '" + sp.mode + "'");
  // ONNX 1.12's node tests spell tf_half_pixel_for_nearest "tf_half_pixel_for_nn".
  const std::set<std::string> coords = {
      "half_pixel",         "pytorch_half_pixel",        "align_corners",       "asymmetric",
      "tf_crop_and_resize", "tf_half_pixel_for_nearest", "tf_half_pixel_for_nn"};
  if (!coords.count(sp.coord))
    return c.Error("unknown coordinate_transformation_mode '" + sp.coord + "'");
  const std::set<std::string> nearest = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                         "ceil"};
  if (!nearest.count(sp.nearest)) return c.Error("unknown nearest_mode '" + sp.nearest + "'");
  if (a.GetInt("antialias", 0) != 0) return c.Error("attribute antialias is unsupported");
  if (a.Has("axes")) return c.Error("attribute axes is unsupported");
  if (a.GetString("keep_aspect_ratio_policy", "stretch") != "stretch")
    return c.Error("attribute keep_aspect_ratio_policy is unsupported");
  return sp;
}

Status ResizeKernel(const Ctx& c) {
  HX_ASSIGN_OR_RETURN(ResizeSpec sp, ReadResizeSpec(c));
  const Shape& x = *c.in[0].shape;
  const Shape& y = *c.out[0].shape;
  const size_t r = x.size();
  if (y.size() != r) return c.Error("output rank differs from the input's");
  std::vector<double> scales(r), roi(2 * r);
  for (size_t d = 0; d < r; ++d) {
    scales[d] = static_cast<double>(y[d]) / static_cast<double>(x[d]);
    roi[d] = 0.0, roi[r + d] = 1.0;
  }
  if (c.Has(2) && c.in[2].NumElements() == static_cast<int64_t>(r))
    for (size_t d = 0; d < r; ++d) scales[d] = Load(c.in[2], static_cast<int64_t>(d));
  if (c.Has(1) && c.in[1].NumElements() == static_cast<int64_t>(2 * r))
    for (size_t d = 0; d < 2 * r; ++d) roi[d] = Load(c.in[1], static_cast<int64_t>(d));
  // Per dim and output position: the input taps.
  std::vector<std::vector<std::vector<Tap>>> taps(r);
  for (size_t d = 0; d < r; ++d)
    for (int64_t o = 0; o < y[d]; ++o)
      taps[d].push_back(Taps(sp,
                             OriginalCoordinate(sp, o, x[d], static_cast<double>(x[d]) * scales[d],
                                                scales[d], roi[d], roi[r + d]),
                             x[d]));
  const std::vector<int64_t> xs = Strides(x);
  std::vector<int64_t> yi, pick(r);
  for (int64_t i = 0; i < c.out[0].NumElements(); ++i) {
    Unflatten(i, y, &yi);
    double acc = 0.0;
    bool outside = false;
    std::fill(pick.begin(), pick.end(), 0);
    while (true) {  // every combination of one tap per dim
      double w = 1.0;
      int64_t off = 0;
      for (size_t d = 0; d < r; ++d) {
        const Tap& t = taps[d][static_cast<size_t>(yi[d])][static_cast<size_t>(pick[d])];
        if (t.index < 0) outside = true;
        w *= t.weight;
        off += t.index * xs[d];
      }
      if (!outside) acc += w * Load(c.in[0], off);
      size_t d = r;
      while (d-- > 0) {
        if (++pick[d] < static_cast<int64_t>(taps[d][static_cast<size_t>(yi[d])].size())) break;
        pick[d] = 0;
      }
      if (d == static_cast<size_t>(-1) || outside) break;
    }
    Store(c.out[0], i, outside ? sp.extrapolation : acc);
  }
  return Status::Ok();
}

// ---- N-D pooling (ranks and dtypes the fp32 2-D kernel does not take: 3-D, uint8, ...).

struct PoolGeom {
  Shape in, out, k;
  std::vector<int64_t> s, d, pb, pe;
};

StatusOr<PoolGeom> PoolGeometry(const Ctx& c) {
  PoolGeom g;
  const Shape& x = *c.in[0].shape;
  const Shape& y = *c.out[0].shape;
  const size_t r = x.size() - 2;
  g.in = Shape(x.begin() + 2, x.end());
  g.out = Shape(y.begin() + 2, y.end());
  g.k = c.op.attrs.GetInts("kernel_shape");
  g.s = c.op.attrs.GetInts("strides", std::vector<int64_t>(r, 1));
  g.d = c.op.attrs.GetInts("dilations", std::vector<int64_t>(r, 1));
  std::vector<int64_t> pads = c.op.attrs.GetInts("pads", std::vector<int64_t>(2 * r, 0));
  if (g.k.size() != r || g.s.size() != r || g.d.size() != r || pads.size() != 2 * r)
    return c.Error("kernel_shape, strides, dilations or pads have the wrong length");
  const std::string auto_pad = c.op.attrs.GetString("auto_pad", "NOTSET");
  for (size_t i = 0; i < r; ++i) {
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t total =
          std::max<int64_t>(0, (g.out[i] - 1) * g.s[i] + (g.k[i] - 1) * g.d[i] + 1 - g.in[i]);
      pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[r + i] = total - pads[i];
    } else if (auto_pad == "VALID") {
      pads[i] = pads[r + i] = 0;
    }
    g.pb.push_back(pads[i]);
    g.pe.push_back(pads[r + i]);
  }
  return g;
}

Status PoolNd(const Ctx& c, bool max) {
  const Shape& x = *c.in[0].shape;
  if (x.size() < 3 || c.out[0].shape->size() != x.size()) return c.Error("input must be N-D");
  HX_ASSIGN_OR_RETURN(PoolGeom g, PoolGeometry(c));
  const bool count_pad = c.op.attrs.GetInt("count_include_pad", 0) != 0;
  if (c.HasOut(1) && c.op.attrs.GetInt("storage_order", 0) != 0)
    return c.Error("storage_order=1 is supported for 2-D MaxPool only");
  const int64_t nc = x[0] * x[1], in_n = graph::NumElements(g.in),
                out_n = graph::NumElements(g.out);
  const std::vector<int64_t> st = Strides(g.in);
  std::vector<int64_t> oi, ki;
  for (int64_t o = 0; o < out_n; ++o) {
    Unflatten(o, g.out, &oi);
    for (int64_t b = 0; b < nc; ++b) {
      double best = -std::numeric_limits<double>::infinity(), sum = 0.0;
      int64_t count = 0, padded = 0, arg = 0;
      for (int64_t kp = 0; kp < graph::NumElements(g.k); ++kp) {
        Unflatten(kp, g.k, &ki);
        bool real = true, in_pad = true;
        int64_t off = 0;
        for (size_t a = 0; a < g.k.size(); ++a) {
          const int64_t p = oi[a] * g.s[a] - g.pb[a] + ki[a] * g.d[a];
          in_pad = in_pad && p >= -g.pb[a] && p < g.in[a] + g.pe[a];
          real = real && p >= 0 && p < g.in[a];
          off += p * st[a];
        }
        padded += in_pad ? 1 : 0;
        if (!real) continue;
        const double v = Load(c.in[0], b * in_n + off);
        if (v > best || count == 0) arg = b * in_n + off;
        best = std::max(best, v);
        sum += v;
        ++count;
      }
      const int64_t div = count_pad ? padded : count;
      Store(c.out[0], b * out_n + o, max ? best : div > 0 ? sum / static_cast<double>(div) : 0.0);
      if (c.HasOut(1)) c.out[1].as<int64_t>()[b * out_n + o] = arg;
    }
  }
  return Status::Ok();
}

// ---- N-D integer convolutions: ConvInteger and QLinearConv, in double.

struct ConvInputs {
  size_t x, w, bias, x_zp, w_zp;  // input positions; SIZE_MAX: absent
};

Status ConvNd(const Ctx& c, const ConvInputs& at, const std::function<double(double)>& finish) {
  const Shape& x = *c.in[at.x].shape;
  const Shape& w = *c.in[at.w].shape;
  const Shape& y = *c.out[0].shape;
  if (x.size() < 3 || w.size() != x.size() || y.size() != x.size())
    return c.Error("X, W and Y must have the same rank (at least 3)");
  const size_t r = x.size() - 2;
  const int64_t group = c.op.attrs.GetInt("group", 1), C = x[1], M = y[1];
  if (group < 1 || C % group != 0 || M % group != 0 || w[1] != C / group || w[0] != M)
    return c.Error("channels do not match the weight and group");
  PoolGeom g;  // the same window arithmetic as pooling, with the weight's spatial dims
  {
    graph::Attributes attrs = c.op.attrs;
    attrs.Set("kernel_shape", std::vector<int64_t>(w.begin() + 2, w.end()));
    graph::Node node = c.op;
    node.attrs = attrs;
    std::vector<TensorRef> ins = {c.in[at.x]};
    Ctx sub{node, ins, c.out, c.options};
    HX_ASSIGN_OR_RETURN(g, PoolGeometry(sub));
  }
  auto zp = [&](size_t i, int64_t k) {
    if (i == SIZE_MAX || !c.Has(i)) return 0.0;
    return Load(c.in[i], c.in[i].NumElements() == 1 ? 0 : k);
  };
  const int64_t cg = C / group, mg = M / group, in_n = graph::NumElements(g.in);
  const int64_t out_n = graph::NumElements(g.out), k_n = graph::NumElements(g.k);
  const std::vector<int64_t> st = Strides(g.in);
  std::vector<int64_t> oi, ki;
  for (int64_t n = 0; n < x[0]; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t o = 0; o < out_n; ++o) {
        Unflatten(o, g.out, &oi);
        double acc = at.bias != SIZE_MAX && c.Has(at.bias) ? Load(c.in[at.bias], m) : 0.0;
        for (int64_t kp = 0; kp < k_n; ++kp) {
          Unflatten(kp, g.k, &ki);
          int64_t off = 0;
          bool real = true;
          for (size_t a = 0; a < r && real; ++a) {
            const int64_t p = oi[a] * g.s[a] - g.pb[a] + ki[a] * g.d[a];
            real = p >= 0 && p < g.in[a];
            off += p * st[a];
          }
          if (!real) continue;
          for (int64_t ci = 0; ci < cg; ++ci) {
            const int64_t ch = (m / mg) * cg + ci;
            acc += (Load(c.in[at.x], (n * C + ch) * in_n + off) - zp(at.x_zp, 0)) *
                   (Load(c.in[at.w], (m * cg + ci) * k_n + kp) - zp(at.w_zp, m));
          }
        }
        Store(c.out[0], (n * M + m) * out_n + o, finish(acc));
      }
  return Status::Ok();
}

Status ConvIntegerKernel(const Ctx& c) {
  return ConvNd(c, {0, 1, SIZE_MAX, 2, 3}, [](double v) { return v; });
}

Status QLinearConvKernel(const Ctx& c) {
  for (size_t i = 0; i < 8; ++i)
    if (!c.Has(i)) return c.Error("needs x, w and their scales and zero points");
  if (c.in[1].NumElements() != 1 || c.in[6].NumElements() != 1)
    return c.Error("per-axis x or y scales are unsupported");
  const double xs = Load(c.in[1], 0), ys = Load(c.in[6], 0), yzp = Load(c.in[7], 0);
  const bool u8 = c.out[0].dtype == DType::kU8;
  if (c.in[4].NumElements() != 1) return c.Error("per-channel w_scale is unsupported");
  const double scale = xs * Load(c.in[4], 0) / ys;
  return ConvNd(c, {0, 3, 8, 2, 5}, [scale, yzp, u8](double v) {
    return std::clamp(std::nearbyint(v * scale) + yzp, u8 ? 0.0 : -128.0, u8 ? 255.0 : 127.0);
  });
}

// ---- RoiAlign (as ONNX Runtime and ONNX's reference compute it).

struct RoiSample {
  double value = 0.0, max = 0.0;
};

RoiSample Bilinear(const TensorRef& t, int64_t base, int64_t H, int64_t W, double y, double x) {
  if (y < -1.0 || y > static_cast<double>(H) || x < -1.0 || x > static_cast<double>(W)) return {};
  y = std::max(y, 0.0), x = std::max(x, 0.0);
  int64_t yl = static_cast<int64_t>(y), xl = static_cast<int64_t>(x), yh, xh;
  if (yl >= H - 1)
    yh = yl = H - 1, y = static_cast<double>(yl);
  else
    yh = yl + 1;
  if (xl >= W - 1)
    xh = xl = W - 1, x = static_cast<double>(xl);
  else
    xh = xl + 1;
  const double ly = y - static_cast<double>(yl), lx = x - static_cast<double>(xl);
  const double w[4] = {(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx};
  const double v[4] = {Load(t, base + yl * W + xl), Load(t, base + yl * W + xh),
                       Load(t, base + yh * W + xl), Load(t, base + yh * W + xh)};
  RoiSample s;
  s.max = -std::numeric_limits<double>::infinity();
  for (int k = 0; k < 4; ++k) s.value += w[k] * v[k], s.max = std::max(s.max, w[k] * v[k]);
  return s;
}

Status RoiAlignKernel(const Ctx& c) {
  const Shape& x = *c.in[0].shape;
  const Shape& y = *c.out[0].shape;
  if (x.size() != 4 || y.size() != 4) return c.Error("X must be NCHW");
  const std::string mode = c.op.attrs.GetString("mode", "avg");
  const std::string coord = c.op.attrs.GetString("coordinate_transformation_mode", "half_pixel");
  if (mode != "avg" && mode != "max") return c.Error("unknown mode '" + mode + "'");
  if (coord != "half_pixel" && coord != "output_half_pixel")
    return c.Error("unknown coordinate_transformation_mode '" + coord + "'");
  const double scale = c.op.attrs.GetFloat("spatial_scale", 1.0);
  const int64_t ratio = c.op.attrs.GetInt("sampling_ratio", 0);
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> batch, IntsOf(c, 2));
  const int64_t C = x[1], H = x[2], W = x[3], R = y[0], OH = y[2], OW = y[3];
  const double off = coord == "half_pixel" ? 0.5 : 0.0;
  for (int64_t r = 0; r < R; ++r) {
    auto roi = [&](int64_t k) { return Load(c.in[1], r * 4 + k) * scale - off; };
    const double x0 = roi(0), y0 = roi(1);
    double rw = roi(2) - x0, rh = roi(3) - y0;
    if (off == 0.0) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    const double bh = rh / static_cast<double>(OH), bw = rw / static_cast<double>(OW);
    const int64_t gh =
        ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / static_cast<double>(OH)));
    const int64_t gw =
        ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / static_cast<double>(OW)));
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    const int64_t b = batch[static_cast<size_t>(r)];
    if (b < 0 || b >= x[0]) return c.Error("batch index out of range");
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t ph = 0; ph < OH; ++ph)
        for (int64_t pw = 0; pw < OW; ++pw) {
          double acc = 0.0, mx = -std::numeric_limits<double>::infinity();
          for (int64_t iy = 0; iy < gh; ++iy)
            for (int64_t ix = 0; ix < gw; ++ix) {
              const double sy = y0 + static_cast<double>(ph) * bh +
                                (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
              const double sx = x0 + static_cast<double>(pw) * bw +
                                (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
              const RoiSample s = Bilinear(c.in[0], (b * C + ch) * H * W, H, W, sy, sx);
              acc += s.value, mx = std::max(mx, s.max);
            }
          Store(c.out[0], ((r * C + ch) * OH + ph) * OW + pw, mode == "avg" ? acc / count : mx);
        }
  }
  return Status::Ok();
}

// ---- GridSample (4-D), following PyTorch's grid_sampler, which ONNX's tests come from.

struct GridSpec {
  std::string mode, padding;
  bool align = false;
};

double Reflect(double v, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0.0;
  const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  v = std::abs(v - lo);
  const double extra = std::fmod(v, span);
  const int64_t flips = static_cast<int64_t>(std::floor(v / span));
  return flips % 2 == 0 ? extra + lo : span - extra + lo;
}

// Unnormalised, padded source coordinate along a dim of `size`.
double SourceCoordinate(const GridSpec& g, double v, int64_t size, bool pad) {
  const double n = static_cast<double>(size);
  double x = g.align ? (v + 1) / 2 * (n - 1) : ((v + 1) * n - 1) / 2;
  if (!pad) return x;
  if (g.padding == "border") x = std::clamp(x, 0.0, n - 1);
  if (g.padding == "reflection") {
    x = g.align ? Reflect(x, 0, 2 * (n - 1)) : Reflect(x, -1, 2 * n - 1);
    x = std::clamp(x, 0.0, n - 1);
  }
  return x;
}

// The pixel at integer (y, x) of one channel plane; outside: 0, or (bicubic) the padded pixel.
double Pixel(const GridSpec& g, const TensorRef& t, int64_t base, int64_t H, int64_t W, int64_t y,
             int64_t x, bool pad) {
  if (pad && g.padding != "zeros") {
    auto fix = [&](int64_t i, int64_t n) {
      double v = static_cast<double>(i);
      if (g.padding == "border") v = std::clamp(v, 0.0, static_cast<double>(n - 1));
      if (g.padding == "reflection") {
        const double dn = static_cast<double>(n);
        v = g.align ? Reflect(v, 0, 2 * (dn - 1)) : Reflect(v, -1, 2 * dn - 1);
        v = std::clamp(v, 0.0, dn - 1);
      }
      return static_cast<int64_t>(v);
    };
    y = fix(y, H), x = fix(x, W);
  }
  if (y < 0 || y >= H || x < 0 || x >= W) return 0.0;
  return Load(t, base + y * W + x);
}

double Cubic(double t, int64_t k) {  // weight of neighbour k (0..3) at fraction t, A = -0.75
  const double A = -0.75;
  const double d = std::abs(t - static_cast<double>(k - 1));
  if (d <= 1) return ((A + 2) * d - (A + 3)) * d * d + 1;
  if (d < 2) return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A;
  return 0.0;
}

double Sample(const GridSpec& g, const TensorRef& t, int64_t base, int64_t H, int64_t W, double gx,
              double gy) {
  if (g.mode == "bicubic") {
    const double x = SourceCoordinate(g, gx, W, false), y = SourceCoordinate(g, gy, H, false);
    const double x0 = std::floor(x), y0 = std::floor(y);
    double acc = 0.0;
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 4; ++j)
        acc += Cubic(y - y0, i) * Cubic(x - x0, j) *
               Pixel(g, t, base, H, W, static_cast<int64_t>(y0) - 1 + i,
                     static_cast<int64_t>(x0) - 1 + j, true);
    return acc;
  }
  const double x = SourceCoordinate(g, gx, W, true), y = SourceCoordinate(g, gy, H, true);
  if (g.mode == "nearest")
    return Pixel(g, t, base, H, W, static_cast<int64_t>(std::nearbyint(y)),
                 static_cast<int64_t>(std::nearbyint(x)), false);
  const double x0 = std::floor(x), y0 = std::floor(y), fx = x - x0, fy = y - y0;
  const int64_t xi = static_cast<int64_t>(x0), yi = static_cast<int64_t>(y0);
  return (1 - fy) * ((1 - fx) * Pixel(g, t, base, H, W, yi, xi, false) +
                     fx * Pixel(g, t, base, H, W, yi, xi + 1, false)) +
         fy * ((1 - fx) * Pixel(g, t, base, H, W, yi + 1, xi, false) +
               fx * Pixel(g, t, base, H, W, yi + 1, xi + 1, false));
}

Status GridSampleKernel(const Ctx& c) {
  GridSpec g{c.op.attrs.GetString("mode", "bilinear"),
             c.op.attrs.GetString("padding_mode", "zeros"),
             c.op.attrs.GetInt("align_corners", 0) != 0};
  if (g.mode != "bilinear" && g.mode != "nearest" && g.mode != "bicubic")
    return c.Error("unknown mode '" + g.mode + "'");
  if (g.padding != "zeros" && g.padding != "border" && g.padding != "reflection")
    return c.Error("unknown padding_mode '" + g.padding + "'");
  const Shape& x = *c.in[0].shape;
  const Shape& grid = *c.in[1].shape;
  if (x.size() != 4 || grid.size() != 4 || grid[3] != 2) return c.Error("only 4-D inputs");
  const int64_t N = x[0], C = x[1], H = x[2], W = x[3], Ho = grid[1], Wo = grid[2];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t i = 0; i < Ho * Wo; ++i) {
        const int64_t gi = (n * Ho * Wo + i) * 2;
        Store(c.out[0], (n * C + ch) * Ho * Wo + i,
              Sample(g, c.in[0], (n * C + ch) * H * W, H, W, Load(c.in[1], gi),
                     Load(c.in[1], gi + 1)));
      }
  return Status::Ok();
}

}  // namespace

void AddSpatialKernels(KernelMap* map) {
  (*map)["ConvTranspose"] = ConvTransposeKernel;
  (*map)["Resize"] = ResizeKernel;
  (*map)["GridSample"] = GridSampleKernel;
  (*map)["RoiAlign"] = RoiAlignKernel;
  (*map)["ConvInteger"] = ConvIntegerKernel;
  Kernel fast_conv = (*map)["Conv"];  // kernels.cc's fp32 1-D/2-D im2col + BLAS
  (*map)["Conv"] = [fast_conv](const Ctx& c) {
    const size_t rank = c.in[0].shape->size();
    const bool plain = c.in[0].dtype == DType::kF32 && (rank == 3 || rank == 4);
    if (plain && fast_conv) return fast_conv(c);
    return ConvNd(c, {0, 1, 2, SIZE_MAX, SIZE_MAX}, [](double v) { return v; });
  };
  (*map)["QLinearConv"] = QLinearConvKernel;
  for (const char* name : {"MaxPool", "AveragePool"}) {
    const bool max = std::string(name) == "MaxPool";
    Kernel fast = (*map)[name];  // kernels.cc's fp32 1-D/2-D pooling
    (*map)[name] = [fast, max](const Ctx& c) {
      const size_t rank = c.in[0].shape->size();
      const bool plain = c.in[0].dtype == DType::kF32 && (rank == 3 || rank == 4);
      return plain && fast ? fast(c) : PoolNd(c, max);
    };
  }
}

}  // namespace hx::exec::internal
