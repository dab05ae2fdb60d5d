// AlphaFold2's Evoformer stack (Jumper et al. 2021, supplementary Algorithm 6) on the embedded MSA
// representation m [B, N_seq, N_res, c_m] and pair representation z [B, N_res, N_res, c_z]:
//   m += MSARowAttentionWithPairBias(m, z); m += MSAColumnAttention(m); m += MSATransition(m)
//   z += OuterProductMean(m); z += TriangleMultiplication{Outgoing,Incoming}(z)
//   z += TriangleAttention{StartingNode,EndingNode}(z); z += PairTransition(z)
// Module and weight names follow OpenFold. Seq is N_res; the MSA depth is part of the spec (128).

#include <cmath>

#include "zoo_builder.h"

namespace hx::graph::zoo_internal {
namespace {

// Gated multi-head self-attention along axis 2 of x [B, X, Y, c] (already layer-normed), with an
// optional per-head bias computed from `bias_src` [B, Y, Y, c_b] (Algorithms 7, 8, 13, 14).
TensorId GatedAttention(ZooBuilder& b, TensorId x, TensorId bias_src, const std::string& p,
                        int64_t heads, int64_t head_dim) {
  const Shape s = b.shape(x);
  const int64_t B = s[0], X = s[1], Y = s[2], c = s[3], A = heads * head_dim;
  auto heads_of = [&](TensorId t, bool transposed) {
    TensorId r = b.Reshape(t, {B, X, Y, heads, head_dim});
    return b.Transpose(
        r, transposed ? std::vector<int64_t>{0, 1, 3, 4, 2} : std::vector<int64_t>{0, 1, 3, 2, 4});
  };
  TensorId q = b.Binary("Mul", b.Linear(x, p + ".linear_q", A, false),
                        b.ConstFloat(1.0 / std::sqrt(double(head_dim))));
  q = heads_of(q, false);
  TensorId k = heads_of(b.Linear(x, p + ".linear_k", A, false), true);
  TensorId v = heads_of(b.Linear(x, p + ".linear_v", A, false), false);
  TensorId logits = b.MatMul(q, k);  // [B, X, H, Y, Y]
  if (bias_src.valid()) {
    TensorId bias = b.Linear(bias_src, p + ".linear_b", heads, false);  // [B, Y, Y, H]
    bias = b.Unsqueeze(b.Transpose(bias, {0, 3, 1, 2}), {1});           // [B, 1, H, Y, Y]
    logits = b.Binary("Add", logits, bias);
  }
  TensorId o = b.MatMul(b.Softmax(logits), v);  // [B, X, H, Y, dh]
  o = b.Reshape(b.Transpose(o, {0, 1, 3, 2, 4}), {B, X, Y, A});
  TensorId gate = b.Unary("Sigmoid", b.Linear(x, p + ".linear_g", A));
  return b.Linear(b.Binary("Mul", gate, o), p + ".linear_o", c);
}

TensorId Transition(ZooBuilder& b, TensorId x, const std::string& p) {
  const int64_t c = b.shape(x).back();
  TensorId y = b.LayerNorm(x, p + ".layer_norm");
  y = b.Unary("Relu", b.Linear(y, p + ".linear_1", 4 * c));
  return b.Linear(y, p + ".linear_2", c);
}

TensorId TriangleMultiplication(ZooBuilder& b, TensorId z, const std::string& p, bool outgoing) {
  const int64_t c = b.shape(z).back();
  TensorId zn = b.LayerNorm(z, p + ".layer_norm_in");
  auto gated = [&](const std::string& name) {
    TensorId gate = b.Unary("Sigmoid", b.Linear(zn, p + ".linear_" + name + "_g", c));
    return b.Binary("Mul", gate, b.Linear(zn, p + ".linear_" + name + "_p", c));
  };
  TensorId a = gated("a");
  TensorId bb = gated("b");
  const Shape s = b.shape(z);
  Attributes attrs;
  attrs.Set("equation", std::string(outgoing ? "bikc,bjkc->bijc" : "bkic,bkjc->bijc"));
  TensorId x = b.Op("Einsum", {a, bb}, s, std::move(attrs));
  x = b.Linear(b.LayerNorm(x, p + ".layer_norm_out"), p + ".linear_z", c);
  TensorId g = b.Unary("Sigmoid", b.Linear(zn, p + ".linear_g", c));
  return b.Binary("Mul", g, x);
}

TensorId OuterProductMean(ZooBuilder& b, TensorId m, const std::string& p, int64_t c, int64_t c_z) {
  const Shape s = b.shape(m);  // [B, S, R, c_m]
  TensorId mn = b.LayerNorm(m, p + ".layer_norm");
  TensorId a = b.Linear(mn, p + ".linear_1", c);
  TensorId bb = b.Linear(mn, p + ".linear_2", c);
  Attributes attrs;
  attrs.Set("equation", std::string("bsic,bsje->bijce"));
  TensorId outer = b.Op("Einsum", {a, bb}, {s[0], s[2], s[2], c, c}, std::move(attrs));
  outer = b.Reshape(outer, {s[0], s[2], s[2], c * c});
  outer = b.Binary("Div", outer, b.ConstFloat(double(s[1])));
  return b.Linear(outer, p + ".linear_out", c_z);
}

}  // namespace

Graph BuildAlphaFold2(const std::string& name, const EvoformerSpec& spec, const ZooOptions& o) {
  ZooBuilder b(name, o.dtype);
  const int64_t B = o.batch, S = spec.msa_depth, R = o.seq, hd = spec.head_dim;
  const int64_t msa_heads = spec.c_m / hd, pair_heads = spec.c_z / hd;
  TensorId m = b.Input("msa", o.dtype, {B, S, R, spec.c_m});
  TensorId z = b.Input("pair", o.dtype, {B, R, R, spec.c_z});
  for (int64_t i = 0; i < spec.blocks; ++i) {
    const std::string p = "evoformer.blocks." + std::to_string(i);
    const std::string sc = "evoformer/blocks." + std::to_string(i);
    // MSA row attention with pair bias.
    b.SetScope(sc + "/msa_att_row");
    {
      const std::string q = p + ".msa_att_row";
      TensorId mn = b.LayerNorm(m, q + ".layer_norm_m");
      TensorId zn = b.LayerNorm(z, q + ".layer_norm_z");
      m = b.Binary("Add", m, GatedAttention(b, mn, zn, q + ".mha", msa_heads, hd));
    }
    // MSA column attention: attend over sequences for each residue.
    b.SetScope(sc + "/msa_att_col");
    {
      const std::string q = p + ".msa_att_col";
      TensorId mt = b.LayerNorm(b.Transpose(m, {0, 2, 1, 3}), q + ".layer_norm_m");
      TensorId upd = GatedAttention(b, mt, TensorId::Invalid(), q + ".mha", msa_heads, hd);
      m = b.Binary("Add", m, b.Transpose(upd, {0, 2, 1, 3}));
    }
    b.SetScope(sc + "/msa_transition");
    m = b.Binary("Add", m, Transition(b, m, p + ".msa_transition"));
    b.SetScope(sc + "/outer_product_mean");
    z = b.Binary("Add", z,
                 OuterProductMean(b, m, p + ".outer_product_mean", spec.opm_dim, spec.c_z));
    b.SetScope(sc + "/tri_mul_out");
    z = b.Binary("Add", z, TriangleMultiplication(b, z, p + ".tri_mul_out", true));
    b.SetScope(sc + "/tri_mul_in");
    z = b.Binary("Add", z, TriangleMultiplication(b, z, p + ".tri_mul_in", false));
    b.SetScope(sc + "/tri_att_start");
    {
      TensorId zn = b.LayerNorm(z, p + ".tri_att_start.layer_norm");
      z = b.Binary("Add", z, GatedAttention(b, zn, zn, p + ".tri_att_start.mha", pair_heads, hd));
    }
    b.SetScope(sc + "/tri_att_end");
    {
      TensorId zt = b.LayerNorm(b.Transpose(z, {0, 2, 1, 3}), p + ".tri_att_end.layer_norm");
      TensorId upd = GatedAttention(b, zt, zt, p + ".tri_att_end.mha", pair_heads, hd);
      z = b.Binary("Add", z, b.Transpose(upd, {0, 2, 1, 3}));
    }
    b.SetScope(sc + "/pair_transition");
    z = b.Binary("Add", z, Transition(b, z, p + ".pair_transition"));
  }
  b.Output(m);
  b.Output(z);
  return b.Finish();
}

}  // namespace hx::graph::zoo_internal
