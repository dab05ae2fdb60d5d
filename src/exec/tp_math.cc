#include "exec/tp_math.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>

namespace hx::exec::internal {

void TpGemm(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
            int64_t ldb, float* C, int64_t ldc, bool accumulate) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    if (!accumulate)
      for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, 0.0f);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(M), static_cast<int>(N),
              static_cast<int>(K), 1.0f, A, static_cast<int>(lda), B, static_cast<int>(ldb),
              accumulate ? 1.0f : 0.0f, C, static_cast<int>(ldc));
}

std::vector<float> TpLayerNorm(const std::vector<float>& x, int64_t width,
                               const std::vector<float>& scale, const std::vector<float>& shift) {
  std::vector<float> y(x.size());
  const int64_t rows = width > 0 ? static_cast<int64_t>(x.size()) / width : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x.data() + r * width;
    double mean = 0.0, var = 0.0;
    for (int64_t i = 0; i < width; ++i) mean += in[i];
    mean /= static_cast<double>(width);
    for (int64_t i = 0; i < width; ++i) var += (in[i] - mean) * (in[i] - mean);
    var /= static_cast<double>(width);
    const double inv = 1.0 / std::sqrt(var + 1e-5);
    float* out = y.data() + r * width;
    for (int64_t i = 0; i < width; ++i)
      out[i] = static_cast<float>((in[i] - mean) * inv * scale[i] + shift[i]);
  }
  return y;
}

void TpGeluTanh(std::vector<float>& x) {
  const double c = std::sqrt(2.0 / M_PI);
  for (float& v : x) {
    const double u = v;
    v = static_cast<float>(0.5 * u * (1.0 + std::tanh(c * (u + 0.044715 * u * u * u))));
  }
}

void TpAddBias(std::vector<float>& x, int64_t width, const float* bias) {
  if (width == 0) return;
  for (size_t i = 0; i < x.size(); ++i) x[i] += bias[static_cast<int64_t>(i) % width];
}

std::vector<float> TpCausalAttention(const std::vector<float>& qkv, int64_t qkv_width,
                                     const TpQkvLayout& layout, int64_t sequences, int64_t seq,
                                     int64_t heads, int64_t head_dim) {
  std::vector<float> ctx(static_cast<size_t>(sequences * seq * heads * head_dim), 0.0f);
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  std::vector<double> weight(static_cast<size_t>(seq));
  for (int64_t b = 0; b < sequences; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t off = h * layout.head_stride;
      for (int64_t i = 0; i < seq; ++i) {
        const float* q = qkv.data() + (b * seq + i) * qkv_width + off + layout.q_base;
        double top = -1e300, total = 0.0;
        for (int64_t j = 0; j <= i; ++j) {
          const float* k = qkv.data() + (b * seq + j) * qkv_width + off + layout.k_base;
          double dot = 0.0;
          for (int64_t d = 0; d < head_dim; ++d) dot += double(q[d]) * k[d];
          weight[static_cast<size_t>(j)] = dot * scale;
          top = std::max(top, dot * scale);
        }
        for (int64_t j = 0; j <= i; ++j) {
          weight[static_cast<size_t>(j)] = std::exp(weight[static_cast<size_t>(j)] - top);
          total += weight[static_cast<size_t>(j)];
        }
        float* out = ctx.data() + (b * seq + i) * heads * head_dim + h * head_dim;
        for (int64_t d = 0; d < head_dim; ++d) {
          double acc = 0.0;
          for (int64_t j = 0; j <= i; ++j)
            acc += weight[static_cast<size_t>(j)] *
                   qkv[static_cast<size_t>((b * seq + j) * qkv_width + off + layout.v_base + d)];
          out[d] = static_cast<float>(acc / total);
        }
      }
    }
  return ctx;
}

}  // namespace hx::exec::internal
