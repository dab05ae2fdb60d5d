// vidur's A100 decode-attention times (vidur_attention_data.h) and the samples they give.
#include "hexplan/cost/vidur_attention_data.h"

#include <string>

namespace hx::cost {

// backend, tp, kv_cache_size, batch_size, time_stats.attn_decode.median (ms).
const std::vector<VidurDecodeAttention>& VidurA100DecodeAttention() {
  using enum VidurAttentionBackend;
  static const std::vector<VidurDecodeAttention> rows = {
      {kFlashAttentionLlama2, 1, 128, 1, 0.012},   {kFlashAttentionLlama2, 1, 128, 2, 0.012},
      {kFlashAttentionLlama2, 1, 128, 4, 0.017},   {kFlashAttentionLlama2, 1, 128, 8, 0.025},
      {kFlashAttentionLlama2, 1, 128, 16, 0.047},  {kFlashAttentionLlama2, 1, 128, 32, 0.081},
      {kFlashAttentionLlama2, 1, 128, 64, 0.146},  {kFlashAttentionLlama2, 1, 512, 1, 0.014},
      {kFlashAttentionLlama2, 1, 512, 2, 0.02},    {kFlashAttentionLlama2, 1, 512, 4, 0.036},
      {kFlashAttentionLlama2, 1, 512, 8, 0.073},   {kFlashAttentionLlama2, 1, 512, 16, 0.11},
      {kFlashAttentionLlama2, 1, 512, 32, 0.185},  {kFlashAttentionLlama2, 1, 512, 64, 0.329},
      {kFlashAttentionLlama2, 1, 1024, 1, 0.02},   {kFlashAttentionLlama2, 1, 1024, 2, 0.031},
      {kFlashAttentionLlama2, 1, 1024, 4, 0.063},  {kFlashAttentionLlama2, 1, 1024, 8, 0.119},
      {kFlashAttentionLlama2, 1, 1024, 16, 0.187}, {kFlashAttentionLlama2, 1, 1024, 32, 0.324},
      {kFlashAttentionLlama2, 1, 1024, 64, 0.602}, {kFlashAttentionLlama2, 1, 2048, 1, 0.029},
      {kFlashAttentionLlama2, 1, 2048, 2, 0.056},  {kFlashAttentionLlama2, 1, 2048, 4, 0.109},
      {kFlashAttentionLlama2, 1, 2048, 8, 0.215},  {kFlashAttentionLlama2, 1, 2048, 16, 0.341},
      {kFlashAttentionLlama2, 1, 2048, 32, 0.629}, {kFlashAttentionLlama2, 1, 2048, 64, 1.186},
      {kFlashAttentionLlama2, 1, 4032, 1, 0.054},  {kFlashAttentionLlama2, 1, 4032, 2, 0.091},
      {kFlashAttentionLlama2, 1, 4032, 4, 0.195},  {kFlashAttentionLlama2, 1, 4032, 8, 0.407},
      {kFlashAttentionLlama2, 1, 4032, 16, 0.676}, {kFlashAttentionLlama2, 1, 4032, 32, 1.231},
      {kFlashAttentionLlama2, 1, 4032, 64, 2.339}, {kFlashAttentionLlama2, 2, 128, 1, 0.012},
      {kFlashAttentionLlama2, 2, 128, 2, 0.012},   {kFlashAttentionLlama2, 2, 128, 4, 0.012},
      {kFlashAttentionLlama2, 2, 128, 8, 0.017},   {kFlashAttentionLlama2, 2, 128, 16, 0.025},
      {kFlashAttentionLlama2, 2, 128, 32, 0.047},  {kFlashAttentionLlama2, 2, 128, 64, 0.081},
      {kFlashAttentionLlama2, 2, 512, 1, 0.013},   {kFlashAttentionLlama2, 2, 512, 2, 0.014},
      {kFlashAttentionLlama2, 2, 512, 4, 0.02},    {kFlashAttentionLlama2, 2, 512, 8, 0.035},
      {kFlashAttentionLlama2, 2, 512, 16, 0.073},  {kFlashAttentionLlama2, 2, 512, 32, 0.111},
      {kFlashAttentionLlama2, 2, 512, 64, 0.188},  {kFlashAttentionLlama2, 2, 1024, 1, 0.015},
      {kFlashAttentionLlama2, 2, 1024, 2, 0.019},  {kFlashAttentionLlama2, 2, 1024, 4, 0.03},
      {kFlashAttentionLlama2, 2, 1024, 8, 0.065},  {kFlashAttentionLlama2, 2, 1024, 16, 0.123},
      {kFlashAttentionLlama2, 2, 1024, 32, 0.19},  {kFlashAttentionLlama2, 2, 1024, 64, 0.326},
      {kFlashAttentionLlama2, 2, 2048, 1, 0.019},  {kFlashAttentionLlama2, 2, 2048, 2, 0.031},
      {kFlashAttentionLlama2, 2, 2048, 4, 0.058},  {kFlashAttentionLlama2, 2, 2048, 8, 0.112},
      {kFlashAttentionLlama2, 2, 2048, 16, 0.217}, {kFlashAttentionLlama2, 2, 2048, 32, 0.343},
      {kFlashAttentionLlama2, 2, 2048, 64, 0.63},  {kFlashAttentionLlama2, 2, 4032, 1, 0.03},
      {kFlashAttentionLlama2, 2, 4032, 2, 0.056},  {kFlashAttentionLlama2, 2, 4032, 4, 0.096},
      {kFlashAttentionLlama2, 2, 4032, 8, 0.202},  {kFlashAttentionLlama2, 2, 4032, 16, 0.409},
      {kFlashAttentionLlama2, 2, 4032, 32, 0.679}, {kFlashAttentionLlama2, 2, 4032, 64, 1.222},
      {kFlashAttentionLlama2, 4, 128, 1, 0.012},   {kFlashAttentionLlama2, 4, 128, 2, 0.012},
      {kFlashAttentionLlama2, 4, 128, 4, 0.012},   {kFlashAttentionLlama2, 4, 128, 8, 0.012},
      {kFlashAttentionLlama2, 4, 128, 16, 0.017},  {kFlashAttentionLlama2, 4, 128, 32, 0.025},
      {kFlashAttentionLlama2, 4, 128, 64, 0.047},  {kFlashAttentionLlama2, 4, 512, 1, 0.013},
      {kFlashAttentionLlama2, 4, 512, 2, 0.013},   {kFlashAttentionLlama2, 4, 512, 4, 0.014},
      {kFlashAttentionLlama2, 4, 512, 8, 0.019},   {kFlashAttentionLlama2, 4, 512, 16, 0.037},
      {kFlashAttentionLlama2, 4, 512, 32, 0.074},  {kFlashAttentionLlama2, 4, 512, 64, 0.111},
      {kFlashAttentionLlama2, 4, 1024, 1, 0.014},  {kFlashAttentionLlama2, 4, 1024, 2, 0.015},
      {kFlashAttentionLlama2, 4, 1024, 4, 0.02},   {kFlashAttentionLlama2, 4, 1024, 8, 0.035},
      {kFlashAttentionLlama2, 4, 1024, 16, 0.065}, {kFlashAttentionLlama2, 4, 1024, 32, 0.122},
      {kFlashAttentionLlama2, 4, 1024, 64, 0.187}, {kFlashAttentionLlama2, 4, 2048, 1, 0.016},
      {kFlashAttentionLlama2, 4, 2048, 2, 0.018},  {kFlashAttentionLlama2, 4, 2048, 4, 0.031},
      {kFlashAttentionLlama2, 4, 2048, 8, 0.058},  {kFlashAttentionLlama2, 4, 2048, 16, 0.112},
      {kFlashAttentionLlama2, 4, 2048, 32, 0.218}, {kFlashAttentionLlama2, 4, 2048, 64, 0.345},
      {kFlashAttentionLlama2, 4, 4032, 1, 0.02},   {kFlashAttentionLlama2, 4, 4032, 2, 0.032},
      {kFlashAttentionLlama2, 4, 4032, 4, 0.059},  {kFlashAttentionLlama2, 4, 4032, 8, 0.097},
      {kFlashAttentionLlama2, 4, 4032, 16, 0.199}, {kFlashAttentionLlama2, 4, 4032, 32, 0.413},
      {kFlashAttentionLlama2, 4, 4032, 64, 0.675}, {kFlashAttentionLlama2, 8, 1024, 1, 0.013},
      {kFlashAttentionLlama2, 8, 1024, 2, 0.014},  {kFlashAttentionLlama2, 8, 1024, 4, 0.015},
      {kFlashAttentionLlama2, 8, 1024, 8, 0.02},   {kFlashAttentionLlama2, 8, 1024, 16, 0.031},
      {kFlashAttentionLlama2, 8, 1024, 32, 0.063}, {kFlashAttentionLlama2, 8, 1024, 64, 0.122},
      {kFlashAttentionLlama2, 8, 4032, 1, 0.018},  {kFlashAttentionLlama2, 8, 4032, 2, 0.019},
      {kFlashAttentionLlama2, 8, 4032, 4, 0.03},   {kFlashAttentionLlama2, 8, 4032, 8, 0.056},
      {kFlashAttentionLlama2, 8, 4032, 16, 0.093}, {kFlashAttentionLlama2, 8, 4032, 32, 0.199},
      {kFlashAttentionLlama2, 8, 4032, 64, 0.41},  {kFlashInferLlama3, 1, 128, 1, 0.01},
      {kFlashInferLlama3, 1, 128, 2, 0.011},       {kFlashInferLlama3, 1, 128, 4, 0.011},
      {kFlashInferLlama3, 1, 128, 8, 0.012},       {kFlashInferLlama3, 1, 128, 16, 0.017},
      {kFlashInferLlama3, 1, 128, 32, 0.022},      {kFlashInferLlama3, 1, 128, 64, 0.041},
      {kFlashInferLlama3, 1, 512, 1, 0.024},       {kFlashInferLlama3, 1, 512, 2, 0.024},
      {kFlashInferLlama3, 1, 512, 4, 0.026},       {kFlashInferLlama3, 1, 512, 8, 0.034},
      {kFlashInferLlama3, 1, 512, 16, 0.038},      {kFlashInferLlama3, 1, 512, 32, 0.06},
      {kFlashInferLlama3, 1, 512, 64, 0.104},      {kFlashInferLlama3, 1, 1024, 1, 0.024},
      {kFlashInferLlama3, 1, 1024, 2, 0.025},      {kFlashInferLlama3, 1, 1024, 4, 0.026},
      {kFlashInferLlama3, 1, 1024, 8, 0.039},      {kFlashInferLlama3, 1, 1024, 16, 0.064},
      {kFlashInferLlama3, 1, 1024, 32, 0.099},     {kFlashInferLlama3, 1, 1024, 64, 0.181},
      {kFlashInferLlama3, 1, 2048, 1, 0.025},      {kFlashInferLlama3, 1, 2048, 2, 0.025},
      {kFlashInferLlama3, 1, 2048, 4, 0.038},      {kFlashInferLlama3, 1, 2048, 8, 0.059},
      {kFlashInferLlama3, 1, 2048, 16, 0.111},     {kFlashInferLlama3, 1, 2048, 32, 0.177},
      {kFlashInferLlama3, 1, 2048, 64, 0.339},     {kFlashInferLlama3, 1, 4096, 1, 0.026},
      {kFlashInferLlama3, 1, 4096, 2, 0.037},      {kFlashInferLlama3, 1, 4096, 4, 0.058},
      {kFlashInferLlama3, 1, 4096, 8, 0.098},      {kFlashInferLlama3, 1, 4096, 16, 0.207},
      {kFlashInferLlama3, 1, 4096, 32, 0.338},     {kFlashInferLlama3, 1, 4096, 64, 0.684},
      {kFlashInferLlama3, 4, 128, 1, 0.01},        {kFlashInferLlama3, 4, 128, 2, 0.011},
      {kFlashInferLlama3, 4, 128, 4, 0.011},       {kFlashInferLlama3, 4, 128, 8, 0.011},
      {kFlashInferLlama3, 4, 128, 16, 0.011},      {kFlashInferLlama3, 4, 128, 32, 0.012},
      {kFlashInferLlama3, 4, 128, 64, 0.016},      {kFlashInferLlama3, 4, 512, 1, 0.024},
      {kFlashInferLlama3, 4, 512, 2, 0.024},       {kFlashInferLlama3, 4, 512, 4, 0.024},
      {kFlashInferLlama3, 4, 512, 8, 0.025},       {kFlashInferLlama3, 4, 512, 16, 0.026},
      {kFlashInferLlama3, 4, 512, 32, 0.035},      {kFlashInferLlama3, 4, 512, 64, 0.036},
      {kFlashInferLlama3, 4, 1024, 1, 0.024},      {kFlashInferLlama3, 4, 1024, 2, 0.024},
      {kFlashInferLlama3, 4, 1024, 4, 0.024},      {kFlashInferLlama3, 4, 1024, 8, 0.025},
      {kFlashInferLlama3, 4, 1024, 16, 0.026},     {kFlashInferLlama3, 4, 1024, 32, 0.038},
      {kFlashInferLlama3, 4, 1024, 64, 0.064},     {kFlashInferLlama3, 4, 2048, 1, 0.024},
      {kFlashInferLlama3, 4, 2048, 2, 0.024},      {kFlashInferLlama3, 4, 2048, 4, 0.025},
      {kFlashInferLlama3, 4, 2048, 8, 0.025},      {kFlashInferLlama3, 4, 2048, 16, 0.037},
      {kFlashInferLlama3, 4, 2048, 32, 0.059},     {kFlashInferLlama3, 4, 2048, 64, 0.111},
      {kFlashInferLlama3, 4, 4096, 1, 0.024},      {kFlashInferLlama3, 4, 4096, 2, 0.024},
      {kFlashInferLlama3, 4, 4096, 4, 0.025},      {kFlashInferLlama3, 4, 4096, 8, 0.035},
      {kFlashInferLlama3, 4, 4096, 16, 0.058},     {kFlashInferLlama3, 4, 4096, 32, 0.097},
      {kFlashInferLlama3, 4, 4096, 64, 0.206},
  };
  return rows;
}

namespace {

// What each backend's file measured: the kernel's name and the model's heads (of 128 dimensions).
struct BackendModel {
  const char* kernel;
  double query_heads, kv_heads;
};

BackendModel ModelOf(VidurAttentionBackend backend) {
  switch (backend) {
    case VidurAttentionBackend::kFlashAttentionLlama2:
      return {"FlashAttention", 32, 32};  // Llama-2-7B
    case VidurAttentionBackend::kFlashInferLlama3:
      return {"FlashInfer", 32, 8};  // Llama-3-8B, grouped-query attention
  }
  return {"?", 1, 1};
}

}  // namespace

std::vector<OpSample> VidurA100DecodeAttentionSamples(VidurAttentionBackend backend) {
  constexpr double kFp16 = 2.0, kHeadDim = 128.0;
  const BackendModel model = ModelOf(backend);
  std::vector<OpSample> out;
  for (const VidurDecodeAttention& r : VidurA100DecodeAttention()) {
    if (r.backend != backend) continue;
    const double hq = model.query_heads / r.tp, hkv = model.kv_heads / r.tp;
    const double b = r.batch, kv = r.kv_tokens;
    OpSample s;
    s.op_class = OpClass::kDecodeAttention;
    s.label = std::string("attn_decode ") + model.kernel;
    s.group = std::string("vidur decode attention ") + model.kernel;
    // Fitted on its bytes only: at 1 FLOP per byte (MHA; 4 with Llama-3's grouped heads) decode
    // attention sits two orders of magnitude below the A100's ridge point (153 FLOP/byte), so the
    // data cannot tell a compute line, and a searched one only bends the memory line's small end.
    s.flops = 0.0;
    s.bytes = kFp16 * (2.0 * b * kv * hkv * kHeadDim + 2.0 * b * hq * kHeadDim);
    s.seconds = r.ms * 1e-3;
    out.push_back(s);
  }
  return out;
}

}  // namespace hx::cost
