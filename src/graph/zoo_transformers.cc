// Language transformers of the zoo: GPT-2 / GPT-3 / MT-NLG decoders, BERT-large, OpenLLaMA.
// Each follows the Hugging Face module structure and the op sequence torch.onnx.export emits for it
// (opset 13-17 forms: Split and Unsqueeze read their sizes/axes from Constant inputs).

#include <cmath>
#include <limits>

#include "zoo_builder.h"

namespace hx::graph::zoo_internal {
namespace {

// The most negative finite value of a dtype: what Hugging Face fills masked scores with.
double MaskValue(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return -65504.0;
    case DType::kBF16:
      return -3.3895313892515355e38;
    default:
      return -3.4028234663852886e38;
  }
}

int64_t OnnxTypeEnum(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return 10;
    case DType::kBF16:
      return 16;
    default:
      return 1;
  }
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

// [B, S, heads*dh] -> [B, heads, S, dh] (perm 0,2,1,3) or [B, heads, dh, S] (perm 0,2,3,1).
TensorId SplitHeads(ZooBuilder& b, TensorId x, int64_t heads, int64_t head_dim, bool transposed) {
  const Shape s = b.shape(x);
  TensorId r = b.Reshape(x, {s[0], s[1], heads, head_dim});
  return b.Transpose(
      r, transposed ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
}

// [B, heads, S, dh] -> [B, S, heads*dh].
TensorId MergeHeads(ZooBuilder& b, TensorId x) {
  const Shape s = b.shape(x);
  TensorId t = b.Transpose(x, {0, 2, 1, 3});
  return b.Reshape(t, {s[0], s[2], s[1] * s[3]});
}

// Grouped-query attention: [B, kv, S, dh] -> [B, heads, S, dh], each K/V head read by heads / kv
// query heads in turn (Hugging Face's repeat_kv: Unsqueeze, Expand, Reshape). Unchanged when
// kv == heads.
TensorId RepeatKvHeads(ZooBuilder& b, TensorId x, int64_t heads) {
  const Shape s = b.shape(x);
  const int64_t batch = s[0], kv = s[1], seq = s[2], dh = s[3];
  if (kv == heads) return x;
  const Shape expanded = {batch, kv, heads / kv, seq, dh};
  TensorId e = b.Op("Expand", {b.Unsqueeze(x, {2}), b.ConstInts(expanded)}, expanded);
  return b.Reshape(e, {batch, heads, seq, dh});
}

}  // namespace

Graph BuildGpt(const std::string& name, const GptSpec& spec, const ZooOptions& options) {
  ZooBuilder b(name, options.dtype);
  const int64_t B = options.batch, S = options.seq, D = spec.hidden, H = spec.heads;
  const int64_t dh = spec.head_dim, A = H * dh;
  TensorId ids = b.Input("input_ids", DType::kI64, {B, S});
  TensorId wte = b.Weight("transformer.wte.weight", {spec.vocab, D});
  TensorId wpe = b.Weight("transformer.wpe.weight", {spec.max_positions, D});
  // The causal-mask buffer (bool, not a parameter), shared by every block.
  TensorId mask = b.TypedWeight("transformer.causal_mask", DType::kBool, {1, 1, S, S});
  b.SetScope("transformer");
  TensorId h = b.Binary("Add", b.Gather(wte, ids), b.Gather(wpe, b.ConstInts(Iota(S))));
  for (int64_t l = 0; l < spec.layers; ++l) {
    const std::string p = "transformer.h." + std::to_string(l);
    const std::string s = "transformer/h." + std::to_string(l);
    b.SetScope(s + "/ln_1");
    TensorId x = b.LayerNorm(h, p + ".ln_1");
    b.SetScope(s + "/attn");
    TensorId qkv = b.Linear(x, p + ".attn.c_attn", 3 * A);
    std::vector<TensorId> parts = b.Split(qkv, 2, {A, A, A});
    TensorId q = SplitHeads(b, parts[0], H, dh, false);
    TensorId k = SplitHeads(b, parts[1], H, dh, true);
    TensorId v = SplitHeads(b, parts[2], H, dh, false);
    TensorId scores = b.Binary("Div", b.MatMul(q, k), b.ConstFloat(std::sqrt(double(dh))));
    scores = b.Where(mask, scores, b.ConstFloat(MaskValue(options.dtype)));
    TensorId ctx = MergeHeads(b, b.MatMul(b.Softmax(scores), v));
    TensorId attn = b.Linear(ctx, p + ".attn.c_proj", D);
    b.SetScope(s);
    h = b.Binary("Add", attn, h);
    b.SetScope(s + "/ln_2");
    x = b.LayerNorm(h, p + ".ln_2");
    b.SetScope(s + "/mlp");
    x = b.GeluTanh(b.Linear(x, p + ".mlp.c_fc", spec.ffn));
    x = b.Linear(x, p + ".mlp.c_proj", D);
    b.SetScope(s);
    h = b.Binary("Add", h, x);
  }
  b.SetScope("transformer/ln_f");
  h = b.LayerNorm(h, "transformer.ln_f");
  // Tied LM head: reads the token embedding through a Transpose, so it is counted once.
  b.SetScope("lm_head");
  TensorId logits = b.MatMul(h, b.Transpose(wte, {1, 0}));
  b.Output(logits);
  return b.Finish();
}

Graph BuildBert(const std::string& name, const BertSpec& spec, const ZooOptions& options) {
  ZooBuilder b(name, options.dtype);
  const int64_t B = options.batch, S = options.seq, D = spec.hidden, H = spec.heads;
  const int64_t dh = D / H;
  const double eps = 1e-12;
  TensorId ids = b.Input("input_ids", DType::kI64, {B, S});
  TensorId types = b.Input("token_type_ids", DType::kI64, {B, S});
  TensorId attn_mask = b.Input("attention_mask", DType::kI64, {B, S});
  b.SetScope("bert/embeddings");
  TensorId words =
      b.Gather(b.Weight("bert.embeddings.word_embeddings.weight", {spec.vocab, D}), ids);
  TensorId type_emb = b.Gather(
      b.Weight("bert.embeddings.token_type_embeddings.weight", {spec.type_vocab, D}), types);
  TensorId pos_emb =
      b.Gather(b.Weight("bert.embeddings.position_embeddings.weight", {spec.max_positions, D}),
               b.ConstInts(Iota(S)));
  TensorId h = b.Binary("Add", b.Binary("Add", words, type_emb), pos_emb);
  h = b.LayerNorm(h, "bert.embeddings.LayerNorm", eps);
  // The extended attention mask: (1 - mask) * min, broadcast over heads and query positions.
  b.SetScope("bert");
  Attributes cast;
  cast.Set("to", OnnxTypeEnum(options.dtype));
  TensorId m = b.Op("Cast", {b.Unsqueeze(attn_mask, {1, 2})}, {B, 1, 1, S}, cast, options.dtype);
  m = b.Binary("Mul", b.Binary("Sub", b.ConstFloat(1.0), m),
               b.ConstFloat(MaskValue(options.dtype)));
  for (int64_t l = 0; l < spec.layers; ++l) {
    const std::string p = "bert.encoder.layer." + std::to_string(l);
    const std::string s = "bert/encoder/layer." + std::to_string(l);
    b.SetScope(s + "/attention/self");
    TensorId q = SplitHeads(b, b.Linear(h, p + ".attention.self.query", D), H, dh, false);
    TensorId k = SplitHeads(b, b.Linear(h, p + ".attention.self.key", D), H, dh, true);
    TensorId v = SplitHeads(b, b.Linear(h, p + ".attention.self.value", D), H, dh, false);
    TensorId scores = b.Binary("Div", b.MatMul(q, k), b.ConstFloat(std::sqrt(double(dh))));
    scores = b.Binary("Add", scores, m);
    TensorId ctx = MergeHeads(b, b.MatMul(b.Softmax(scores), v));
    b.SetScope(s + "/attention/output");
    TensorId x = b.Linear(ctx, p + ".attention.output.dense", D);
    h = b.LayerNorm(b.Binary("Add", x, h), p + ".attention.output.LayerNorm", eps);
    b.SetScope(s + "/intermediate");
    x = b.GeluErf(b.Linear(h, p + ".intermediate.dense", spec.ffn));
    b.SetScope(s + "/output");
    x = b.Linear(x, p + ".output.dense", D);
    h = b.LayerNorm(b.Binary("Add", x, h), p + ".output.LayerNorm", eps);
  }
  b.Output(h);
  // Pooler: the first token through a dense layer and tanh.
  b.SetScope("bert/pooler");
  Attributes zero;
  zero.Set("value_int", static_cast<int64_t>(0));
  TensorId index = b.Op("Constant", {}, {}, zero, DType::kI64);
  TensorId first = b.Gather(h, index, 1);
  TensorId pooled = b.Unary("Tanh", b.Gemm(first, "bert.pooler.dense", D));
  b.Output(pooled);
  return b.Finish();
}

Graph BuildLlama(const std::string& name, const LlamaSpec& spec, const ZooOptions& options) {
  ZooBuilder b(name, options.dtype);
  const int64_t B = options.batch, S = options.seq, D = spec.hidden, H = spec.heads;
  const int64_t dh = D / H, KvH = spec.kv_heads > 0 ? spec.kv_heads : H;
  TensorId ids = b.Input("input_ids", DType::kI64, {B, S});
  TensorId position_ids = b.Input("position_ids", DType::kI64, {B, S});
  TensorId mask = b.TypedWeight("model.causal_mask", DType::kBool, {1, 1, S, S});
  b.SetScope("model/embed_tokens");
  TensorId h = b.Gather(b.Weight("model.embed_tokens.weight", {spec.vocab, D}), ids);
  // The additive causal mask and the rotary cos/sin tables (from the position_ids input, as Hugging
  // Face exports it), computed once and read by every layer.
  b.SetScope("model");
  TensorId add_mask = b.Where(mask, b.ConstFloat(0.0), b.ConstFloat(MaskValue(options.dtype)));
  b.SetScope("model/rotary_emb");
  std::vector<double> inv_freq;
  for (int64_t i = 0; i < dh / 2; ++i)
    inv_freq.push_back(1.0 / std::pow(spec.rope_theta, 2.0 * double(i) / double(dh)));
  Attributes cast;
  cast.Set("to", OnnxTypeEnum(options.dtype));
  TensorId pos = b.Op("Cast", {b.Unsqueeze(position_ids, {2})}, {B, S, 1}, cast, options.dtype);
  TensorId freqs = b.Binary("Mul", pos, b.ConstFloats(inv_freq));  // [B, S, dh/2]
  TensorId emb = b.Concat({freqs, freqs}, -1);
  TensorId cos = b.Unsqueeze(b.Unary("Cos", emb), {1});  // [B, 1, S, dh]
  TensorId sin = b.Unsqueeze(b.Unary("Sin", emb), {1});
  auto rotary = [&](TensorId x) {
    TensorId x1 = b.Slice(x, -1, 0, dh / 2);
    TensorId x2 = b.Slice(x, -1, dh / 2, dh);
    TensorId rotated = b.Concat({b.Unary("Neg", x2), x1}, -1);
    return b.Binary("Add", b.Binary("Mul", x, cos), b.Binary("Mul", rotated, sin));
  };
  for (int64_t l = 0; l < spec.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l);
    const std::string s = "model/layers." + std::to_string(l);
    b.SetScope(s + "/input_layernorm");
    TensorId x = b.RmsNorm(h, p + ".input_layernorm");
    b.SetScope(s + "/self_attn");
    TensorId q = SplitHeads(b, b.Linear(x, p + ".self_attn.q_proj", D, false), H, dh, false);
    TensorId k =
        SplitHeads(b, b.Linear(x, p + ".self_attn.k_proj", KvH * dh, false), KvH, dh, false);
    TensorId v =
        SplitHeads(b, b.Linear(x, p + ".self_attn.v_proj", KvH * dh, false), KvH, dh, false);
    q = rotary(q);
    k = b.Transpose(RepeatKvHeads(b, rotary(k), H), {0, 1, 3, 2});
    v = RepeatKvHeads(b, v, H);
    TensorId scores = b.Binary("Div", b.MatMul(q, k), b.ConstFloat(std::sqrt(double(dh))));
    scores = b.Binary("Add", scores, add_mask);
    TensorId ctx = MergeHeads(b, b.MatMul(b.Softmax(scores), v));
    TensorId attn = b.Linear(ctx, p + ".self_attn.o_proj", D, false);
    b.SetScope(s);
    h = b.Binary("Add", h, attn);
    b.SetScope(s + "/post_attention_layernorm");
    x = b.RmsNorm(h, p + ".post_attention_layernorm");
    b.SetScope(s + "/mlp");
    TensorId gate = b.Silu(b.Linear(x, p + ".mlp.gate_proj", spec.ffn, false));
    TensorId up = b.Linear(x, p + ".mlp.up_proj", spec.ffn, false);
    x = b.Linear(b.Binary("Mul", gate, up), p + ".mlp.down_proj", D, false);
    b.SetScope(s);
    h = b.Binary("Add", h, x);
  }
  b.SetScope("model/norm");
  h = b.RmsNorm(h, "model.norm");
  b.SetScope("lm_head");
  b.Output(b.Linear(h, "lm_head", spec.vocab, false));  // untied
  return b.Finish();
}

}  // namespace hx::graph::zoo_internal
