#pragma once
// Private to src/exec: the dense pieces the tensor-parallel runner and its reference forward share
// (row-major fp32 throughout).

#include <cstdint>
#include <vector>

namespace hx::exec::internal {

// C[M,N] = A[M,K] (leading dimension lda) x B[K,N] (ldb) (+ C when accumulate), via BLAS.
void TpGemm(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
            int64_t ldb, float* C, int64_t ldc, bool accumulate = false);

// Each of `rows` rows of x[rows, width] normalised (eps 1e-5) then scaled and shifted.
std::vector<float> TpLayerNorm(const std::vector<float>& x, int64_t width,
                               const std::vector<float>& scale, const std::vector<float>& shift);

// GELU with the tanh approximation (the zoo's GeluTanh), in place.
void TpGeluTanh(std::vector<float>& x);

// Adds bias[0..width) to every row of x[rows, width].
void TpAddBias(std::vector<float>& x, int64_t width, const float* bias);

// Where head h's Q, K and V start in a row of the QKV activation: base + h * head_stride.
struct TpQkvLayout {
  int64_t head_stride = 0;
  int64_t q_base = 0, k_base = 0, v_base = 0;
};

// Causal softmax attention of `heads` heads over `sequences` sequences of `seq` tokens:
// qkv[sequences * seq, qkv_width] in `layout`; returns ctx[sequences * seq, heads * head_dim]
// (head h in columns h * head_dim ..).
std::vector<float> TpCausalAttention(const std::vector<float>& qkv, int64_t qkv_width,
                                     const TpQkvLayout& layout, int64_t sequences, int64_t seq,
                                     int64_t heads, int64_t head_dim);

}  // namespace hx::exec::internal
