// Swin Transformer V2 (Liu et al., CVPR 2022) following torchvision's swin_v2 modules: patch
// embedding, shifted-window blocks with scaled cosine attention and the log-spaced continuous
// relative position bias (cpb_mlp), res-post-norm, patch merging (reduce then norm), and the
// classification head. Windows shrink to the feature map when it is smaller (and then do not
// shift), and feature maps are padded to a multiple of the window, as in the reference
// implementation.

#include <cmath>

#include "zoo_builder.h"

namespace hx::graph::zoo_internal {
namespace {

// torch.roll along `axis` by `shift` (positive: towards higher indices): two Slices and a Concat.
TensorId Roll(ZooBuilder& b, TensorId x, int64_t axis, int64_t shift) {
  const int64_t n = b.shape(x)[static_cast<size_t>(axis)];
  const int64_t s = ((shift % n) + n) % n;
  if (s == 0) return x;
  return b.Concat({b.Slice(x, axis, n - s, n), b.Slice(x, axis, 0, n - s)}, axis);
}

TensorId ScalarIndex(ZooBuilder& b, int64_t i) {
  Attributes attrs;
  attrs.Set("value_int", i);
  return b.Op("Constant", {}, {}, std::move(attrs), DType::kI64);
}

TensorId WindowAttention(ZooBuilder& b, TensorId x, const std::string& p, int64_t heads,
                         int64_t window, bool shifted) {
  const Shape s = b.shape(x);  // [B, H, W, C]
  const int64_t B = s[0], H = s[1], W = s[2], C = s[3];
  const int64_t ws = std::min({window, H, W});
  const int64_t pad_h = (ws - H % ws) % ws, pad_w = (ws - W % ws) % ws;
  const int64_t Hp = H + pad_h, Wp = W + pad_w;
  const int64_t shift = (shifted && ws < std::min(Hp, Wp)) ? ws / 2 : 0;
  const int64_t N = ws * ws, nw_h = Hp / ws, nw_w = Wp / ws, nW = nw_h * nw_w;
  const int64_t dh = C / heads;
  TensorId y = x;
  if (pad_h > 0 || pad_w > 0) y = b.Pad(y, {0, 0, 0, 0, 0, pad_h, pad_w, 0});
  if (shift > 0) y = Roll(b, Roll(b, y, 1, -shift), 2, -shift);
  y = b.Reshape(y, {B, nw_h, ws, nw_w, ws, C});
  y = b.Reshape(b.Transpose(y, {0, 1, 3, 2, 4, 5}), {B * nW, N, C});
  TensorId qkv = b.Linear(y, p + ".qkv", 3 * C);
  qkv = b.Transpose(b.Reshape(qkv, {B * nW, N, 3, heads, dh}), {2, 0, 3, 1, 4});
  TensorId q = b.Gather(qkv, ScalarIndex(b, 0));
  TensorId k = b.Gather(qkv, ScalarIndex(b, 1));
  TensorId v = b.Gather(qkv, ScalarIndex(b, 2));
  Attributes l2;
  l2.Set("axis", int64_t{-1});
  l2.Set("p", int64_t{2});
  q = b.Unary("LpNormalization", q, l2);
  k = b.Unary("LpNormalization", k, l2);
  TensorId attn = b.MatMul(q, b.Transpose(k, {0, 1, 3, 2}));  // [B*nW, heads, N, N]
  TensorId logit_scale = b.Weight(p + ".logit_scale", {heads, 1, 1});
  TensorId scale = b.Op("Clip", {logit_scale, TensorId::Invalid(), b.ConstFloat(std::log(100.0))},
                        b.shape(logit_scale));
  attn = b.Binary("Mul", attn, b.Unary("Exp", scale));
  // Continuous relative position bias: an MLP over the log-spaced coordinate table.
  // The log-spaced coordinate table is a registered buffer; torch.onnx exports it as a float
  // initializer, so it is a weight node here too ((2w-1)^2 * 2 values per block, docs/models.md).
  TensorId table = b.Weight(p + ".relative_coords_table", {1, 2 * ws - 1, 2 * ws - 1, 2});
  TensorId bias = b.Unary("Relu", b.Linear(table, p + ".cpb_mlp.0", 512));
  bias = b.Linear(bias, p + ".cpb_mlp.2", heads, false);
  bias = b.Reshape(bias, {(2 * ws - 1) * (2 * ws - 1), heads});
  TensorId index = b.TypedWeight(p + ".relative_position_index", DType::kI64, {N * N});
  bias = b.Reshape(b.Gather(bias, index), {N, N, heads});
  bias = b.Unary("Sigmoid", b.Transpose(bias, {2, 0, 1}));
  bias = b.Unsqueeze(b.Binary("Mul", bias, b.ConstFloat(16.0)), {0});
  attn = b.Binary("Add", attn, bias);
  if (shift > 0) {
    // The shifted-window mask (a bool buffer): pairs from different regions get -100.
    TensorId mask = b.TypedWeight(p + ".attn_mask", DType::kBool, {nW, 1, N, N});
    attn = b.Reshape(attn, {B, nW, heads, N, N});
    attn = b.Where(mask, attn, b.ConstFloat(-100.0));
    attn = b.Reshape(attn, {B * nW, heads, N, N});
  }
  TensorId o = b.MatMul(b.Softmax(attn), v);  // [B*nW, heads, N, dh]
  o = b.Reshape(b.Transpose(o, {0, 2, 1, 3}), {B * nW, N, C});
  o = b.Linear(o, p + ".proj", C);
  o = b.Reshape(o, {B, nw_h, nw_w, ws, ws, C});
  o = b.Reshape(b.Transpose(o, {0, 1, 3, 2, 4, 5}), {B, Hp, Wp, C});
  if (shift > 0) o = Roll(b, Roll(b, o, 1, shift), 2, shift);
  if (pad_h > 0) o = b.Slice(o, 1, 0, H);
  if (pad_w > 0) o = b.Slice(o, 2, 0, W);
  return o;
}

}  // namespace

Graph BuildSwinV2(const std::string& name, const SwinSpec& spec, const ZooOptions& o) {
  ZooBuilder b(name, o.dtype);
  TensorId x = b.Input("input", o.dtype, {o.batch, 3, o.image_size, o.image_size});
  b.SetScope("features.0");
  ZooBuilder::ConvSpec patch;
  patch.out_channels = spec.embed_dim;
  patch.kernel = {4, 4};
  patch.stride = {4, 4};
  patch.bias = true;
  x = b.Transpose(b.Conv(x, "features.0.0", patch), {0, 2, 3, 1});
  x = b.LayerNorm(x, "features.0.2");
  int64_t dim = spec.embed_dim;
  for (int stage = 0; stage < 4; ++stage) {
    const std::string sp = "features." + std::to_string(2 * stage + 1);
    for (int64_t i = 0; i < spec.depths[stage]; ++i) {
      const std::string p = sp + "." + std::to_string(i);
      b.SetScope(p + "/attn");
      TensorId attn =
          WindowAttention(b, x, p + ".attn", spec.heads[stage], spec.window, i % 2 == 1);
      b.SetScope(p);
      x = b.Binary("Add", x, b.LayerNorm(attn, p + ".norm1"));
      b.SetScope(p + "/mlp");
      TensorId y = b.GeluErf(b.Linear(x, p + ".mlp.0", 4 * dim));
      y = b.Linear(y, p + ".mlp.3", dim);
      b.SetScope(p);
      x = b.Binary("Add", x, b.LayerNorm(y, p + ".norm2"));
    }
    if (stage < 3) {
      const std::string mp = "features." + std::to_string(2 * stage + 2);
      b.SetScope(mp);
      Shape s = b.shape(x);
      if (s[1] % 2 != 0 || s[2] % 2 != 0) {
        x = b.Pad(x, {0, 0, 0, 0, 0, s[1] % 2, s[2] % 2, 0});
        s = b.shape(x);
      }
      x = b.Reshape(x, {s[0], s[1] / 2, 2, s[2] / 2, 2, s[3]});
      x = b.Reshape(b.Transpose(x, {0, 1, 3, 4, 2, 5}), {s[0], s[1] / 2, s[2] / 2, 4 * s[3]});
      x = b.LayerNorm(b.Linear(x, mp + ".reduction", 2 * dim, false), mp + ".norm");
      dim *= 2;
    }
  }
  b.SetScope("norm");
  x = b.LayerNorm(x, "norm");
  b.SetScope("head");
  x = b.Flatten(b.GlobalAveragePool(b.Transpose(x, {0, 3, 1, 2})));
  b.Output(b.Gemm(x, "head", spec.num_classes));
  return b.Finish();
}

}  // namespace hx::graph::zoo_internal
