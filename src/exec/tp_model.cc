#include "hexplan/exec/tp_model.h"

#include <cmath>
#include <random>

#include "exec/tp_math.h"

namespace hx::exec {

using internal::TpAddBias;
using internal::TpCausalAttention;
using internal::TpGeluTanh;
using internal::TpGemm;
using internal::TpLayerNorm;
using internal::TpQkvLayout;

namespace {

std::vector<float> TpModelUniform(std::mt19937_64& rng, int64_t n, double center, double spread) {
  std::uniform_real_distribution<double> u(center - spread, center + spread);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(u(rng));
  return v;
}

TpGptLayerWeights TpModelLayer(std::mt19937_64& rng, int64_t d, int64_t a, int64_t f) {
  TpGptLayerWeights w;
  const double sd = 1.0 / std::sqrt(double(d)), sa = 1.0 / std::sqrt(double(a)),
               sf = 1.0 / std::sqrt(double(f));
  w.ln1_scale = TpModelUniform(rng, d, 1.0, 0.1);
  w.ln1_bias = TpModelUniform(rng, d, 0.0, 0.1);
  w.qkv = TpModelUniform(rng, d * 3 * a, 0.0, sd);
  w.qkv_bias = TpModelUniform(rng, 3 * a, 0.0, 0.1);
  w.proj = TpModelUniform(rng, a * d, 0.0, sa);
  w.proj_bias = TpModelUniform(rng, d, 0.0, 0.1);
  w.ln2_scale = TpModelUniform(rng, d, 1.0, 0.1);
  w.ln2_bias = TpModelUniform(rng, d, 0.0, 0.1);
  w.fc1 = TpModelUniform(rng, d * f, 0.0, sd);
  w.fc1_bias = TpModelUniform(rng, f, 0.0, 0.1);
  w.fc2 = TpModelUniform(rng, f * d, 0.0, sf);
  w.fc2_bias = TpModelUniform(rng, d, 0.0, 0.1);
  return w;
}

// x[rows, in] x w[in, out] + bias.
std::vector<float> TpModelLinear(const std::vector<float>& x, int64_t in, int64_t out,
                                 const std::vector<float>& w, const std::vector<float>& bias) {
  const int64_t rows = static_cast<int64_t>(x.size()) / in;
  std::vector<float> y(static_cast<size_t>(rows * out));
  TpGemm(rows, out, in, x.data(), in, w.data(), out, y.data(), out);
  TpAddBias(y, out, bias.data());
  return y;
}

}  // namespace

tp::LlmShape TpGptModel::Shape() const { return tp::ShapeFromConfig(name, config, 4); }

Status ValidateTpGptConfig(const graph::TransformerConfig& c) {
  auto field = [](const char* name, int64_t v, int64_t low) -> Status {
    if (v < low || v > kTpGptMaxWidth)
      return InvalidArgument(std::string("tensor-parallel GPT: ") + name + " must be in " +
                             std::to_string(low) + ".." + std::to_string(kTpGptMaxWidth) +
                             ", got " + std::to_string(v));
    return Status::Ok();
  };
  HX_RETURN_IF_ERROR(field("layers", c.layers, 1));
  HX_RETURN_IF_ERROR(field("hidden", c.hidden, 1));
  HX_RETURN_IF_ERROR(field("heads", c.heads, 1));
  HX_RETURN_IF_ERROR(field("ffn_hidden", c.ffn_hidden, 0));
  if (c.hidden % c.heads != 0)
    return InvalidArgument("tensor-parallel GPT: hidden " + std::to_string(c.hidden) +
                           " is not a multiple of heads " + std::to_string(c.heads));
  if (!c.decoder || c.rmsnorm || c.swiglu || c.rotary || (c.kv_heads != 0 && c.kv_heads != c.heads))
    return InvalidArgument(
        "tensor-parallel GPT: only GPT blocks run (decoder, LayerNorm, GELU MLP, learned "
        "positions, one K/V head per head)");
  return Status::Ok();
}

StatusOr<TpGptModel> MakeSeededGpt(const graph::TransformerConfig& config, uint64_t seed) {
  HX_RETURN_IF_ERROR(ValidateTpGptConfig(config));
  TpGptModel m;
  m.config = config;
  if (m.config.vocab <= 0) m.config.vocab = 256;  // no embedding runs; the planner wants one
  std::mt19937_64 rng(seed);
  const int64_t d = config.hidden;
  for (int64_t l = 0; l < config.layers; ++l) m.layers.push_back(TpModelLayer(rng, d, d, m.Ffn()));
  m.lnf_scale = TpModelUniform(rng, d, 1.0, 0.1);
  m.lnf_bias = TpModelUniform(rng, d, 0.0, 0.1);
  return m;
}

std::vector<float> SeededHiddenStates(int64_t batch, int64_t seq, int64_t hidden, uint64_t seed) {
  std::mt19937_64 rng(seed);
  return TpModelUniform(rng, batch * seq * hidden, 0.0, 1.0);
}

StatusOr<std::vector<float>> ReferenceGptForward(const TpGptModel& model,
                                                 const std::vector<float>& input, int64_t batch,
                                                 int64_t seq) {
  HX_RETURN_IF_ERROR(ValidateTpGptConfig(model.config));
  const int64_t d = model.config.hidden, a = d, f = model.Ffn(), dh = model.HeadDim();
  if (batch < 1 || seq < 1 || static_cast<int64_t>(input.size()) != batch * seq * d)
    return InvalidArgument("reference forward: input has " + std::to_string(input.size()) +
                           " values, batch x seq x hidden is " + std::to_string(batch * seq * d));
  const TpQkvLayout zoo_layout{dh, 0, a, 2 * a};  // Q | K | V, head h at h * head_dim
  std::vector<float> h = input;
  for (const TpGptLayerWeights& w : model.layers) {
    std::vector<float> x = TpLayerNorm(h, d, w.ln1_scale, w.ln1_bias);
    std::vector<float> qkv = TpModelLinear(x, d, 3 * a, w.qkv, w.qkv_bias);
    std::vector<float> ctx =
        TpCausalAttention(qkv, 3 * a, zoo_layout, batch, seq, model.config.heads, dh);
    std::vector<float> attn = TpModelLinear(ctx, a, d, w.proj, w.proj_bias);
    for (size_t i = 0; i < h.size(); ++i) h[i] += attn[i];
    x = TpLayerNorm(h, d, w.ln2_scale, w.ln2_bias);
    std::vector<float> mlp = TpModelLinear(x, d, f, w.fc1, w.fc1_bias);
    TpGeluTanh(mlp);
    mlp = TpModelLinear(mlp, f, d, w.fc2, w.fc2_bias);
    for (size_t i = 0; i < h.size(); ++i) h[i] += mlp[i];
  }
  return TpLayerNorm(h, d, model.lnf_scale, model.lnf_bias);
}

}  // namespace hx::exec
