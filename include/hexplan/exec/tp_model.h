#pragma once
// The GPT that tensor-parallel runs execute: the decoder stack of the zoo generator's BuildGpt
// (src/graph/zoo_transformers.cc: pre-LayerNorm blocks, a fused QKV linear split Q | K | V,
// causal softmax attention scaled by 1/sqrt(head_dim), the output projection, a GELU (tanh) MLP,
// residual adds, the final LayerNorm ln_f) with seeded random fp32 weights, and a one-process
// reference forward of it. Embeddings and the LM head are left out: `hexplan tp` plans the
// decoder layers' linears only, so a run starts from hidden states and ends at ln_f.

#include <cstdint>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/graph/zoo.h"
#include "hexplan/tp/llm_tp.h"

namespace hx::exec {

struct TpGptLayerWeights {
  std::vector<float> ln1_scale, ln1_bias;  // [hidden]
  std::vector<float> qkv, qkv_bias;        // [hidden, 3A], columns Q | K | V as in the zoo
  std::vector<float> proj, proj_bias;      // [A, hidden]
  std::vector<float> ln2_scale, ln2_bias;  // [hidden]
  std::vector<float> fc1, fc1_bias;        // [hidden, ffn]
  std::vector<float> fc2, fc2_bias;        // [ffn, hidden]
};

struct TpGptModel {
  std::string name = "gpt-tp";
  // The zoo's transformer config: layers, hidden, heads, ffn_hidden (0 = 4 x hidden). A GPT:
  // decoder, LayerNorm, no SwiGLU, no rotary, kv_heads 0 or = heads.
  graph::TransformerConfig config;
  std::vector<TpGptLayerWeights> layers;
  std::vector<float> lnf_scale, lnf_bias;

  int64_t HeadDim() const { return config.hidden / config.heads; }
  int64_t Ffn() const { return config.ffn_hidden > 0 ? config.ffn_hidden : 4 * config.hidden; }
  // The shape `hexplan tp` plans this model with (fp32: 4 bytes per element).
  tp::LlmShape Shape() const;
};

// Checks the config is a GPT as above, with hidden divisible by heads and sizes within
// kTpGptMaxWidth; names the field.
Status ValidateTpGptConfig(const graph::TransformerConfig& config);
inline constexpr int64_t kTpGptMaxWidth = 65536;

// Weights drawn from `seed`: linears uniform in +-1/sqrt(fan_in), biases and LayerNorm shifts
// +-0.1, LayerNorm scales 1 +- 0.1.
StatusOr<TpGptModel> MakeSeededGpt(const graph::TransformerConfig& config, uint64_t seed);

// Hidden states [batch, seq, hidden] uniform in +-1 from `seed`: the runs' input.
std::vector<float> SeededHiddenStates(int64_t batch, int64_t seq, int64_t hidden, uint64_t seed);

// The one-process forward: every linear with its full weight, attention over all heads in the
// zoo's Q | K | V layout. `input` and the result are [batch, seq, hidden].
StatusOr<std::vector<float>> ReferenceGptForward(const TpGptModel& model,
                                                 const std::vector<float>& input, int64_t batch,
                                                 int64_t seq);

}  // namespace hx::exec
