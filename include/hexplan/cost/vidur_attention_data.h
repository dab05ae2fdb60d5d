#pragma once
// vidur's measured decode-attention kernel times on an A100 80GB (FP16, paged KV cache of 16-token
// blocks): microsoft/vidur's profiling output `data/profiling/compute/a100/<model>/attention.csv`,
// read from the copy at github.com/sw5sh/cs378-assignment3, commit 7ac2fe9f, same paths (the
// upstream files: vidur commits bee57da and 2bb7a08; MIT). vidur's harness (sarathi-serve's
// profiler) times one layer's attention call, 2 warm-ups then 5 timed runs, as the sum of the
// CUDA kernel times inside its `attn_decode` timer (kineto), median reported. Two backends:
// FlashAttention on Llama-2-7B's shape (32 query and 32 K/V heads of 128) and FlashInfer on
// Llama-3-8B's (32 query, 8 K/V heads); tensor parallelism divides the heads. None of
// ../shared/data has them; the rows are a grid taken from the files by hand (docs/cost-model.md,
// "Decode attention"): TP 1, 2, 4 (and 8 at two lengths) of FlashAttention, TP 1 and 4 of
// FlashInfer (its file has no TP 2), KV lengths 128 to 4032/4096, batch 1 to 64.

#include <cstdint>
#include <vector>

#include "hexplan/cost/fit_op_class.h"

namespace hx::cost {

enum class VidurAttentionBackend : uint8_t {
  kFlashAttentionLlama2,  // AttentionBackend.FLASH_ATTENTION, Llama-2-7b-hf (32/32 heads)
  kFlashInferLlama3,      // AttentionBackend.FLASHINFER, Meta-Llama-3-8B (32/8 heads)
};

struct VidurDecodeAttention {
  VidurAttentionBackend backend;
  int tp = 1;         // num_tensor_parallel_workers: the heads per GPU are the model's / tp
  int kv_tokens = 0;  // kv_cache_size: the keys each sequence attends over
  int batch = 0;      // batch_size: sequences, one new token each
  double ms = 0.0;    // time_stats.attn_decode.median
};

const std::vector<VidurDecodeAttention>& VidurA100DecodeAttention();

// One backend's rows as kDecodeAttention samples (group "vidur decode attention FlashAttention"
// or "... FlashInfer", no harness), per GPU: bytes = the K/V cache read (2 b L Hkv d) plus the
// query read and the output written (2 b Hq d), FP16; no FLOPs (memory-bound: the .cc says why).
std::vector<OpSample> VidurA100DecodeAttentionSamples(VidurAttentionBackend backend);

}  // namespace hx::cost
