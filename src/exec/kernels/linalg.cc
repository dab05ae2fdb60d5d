// Small linear-algebra and signal ops in double: Det, the integer matmuls (MatMulInteger,
// QLinearMatMul), the window generators (Hann, Hamming, Blackman), and the data-dependent
// selections NonZero and Compress (whose output size the graph fixes; a run whose data selects
// another count is an error, not a wrong result).

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numbers>

#include "exec/kernel_context.h"

namespace hx::exec::internal {
namespace {

Status DetKernel(const Ctx& c) {
  const Shape& s = *c.in[0].shape;
  if (s.size() < 2 || s.back() != s[s.size() - 2]) return c.Error("input must be [..., M, M]");
  const int64_t m = s.back(), batch = graph::NumElements(s) / std::max<int64_t>(1, m * m);
  std::vector<double> a(static_cast<size_t>(m * m));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < m * m; ++i) a[static_cast<size_t>(i)] = Load(c.in[0], b * m * m + i);
    double det = 1.0;
    for (int64_t col = 0; col < m; ++col) {
      int64_t piv = col;
      for (int64_t r = col + 1; r < m; ++r)
        if (std::abs(a[static_cast<size_t>(r * m + col)]) >
            std::abs(a[static_cast<size_t>(piv * m + col)]))
          piv = r;
      if (a[static_cast<size_t>(piv * m + col)] == 0.0) {
        det = 0.0;
        break;
      }
      if (piv != col) {
        for (int64_t k = 0; k < m; ++k)
          std::swap(a[static_cast<size_t>(piv * m + k)], a[static_cast<size_t>(col * m + k)]);
        det = -det;
      }
      const double p = a[static_cast<size_t>(col * m + col)];
      det *= p;
      for (int64_t r = col + 1; r < m; ++r) {
        const double f = a[static_cast<size_t>(r * m + col)] / p;
        for (int64_t k = col; k < m; ++k)
          a[static_cast<size_t>(r * m + k)] -= f * a[static_cast<size_t>(col * m + k)];
      }
    }
    Store(c.out[0], b, det);
  }
  return Status::Ok();
}

// A zero point: scalar, or one per row of A (per column of B).
double ZeroPoint(const Ctx& c, size_t i, int64_t index) {
  if (!c.Has(i)) return 0.0;
  return Load(c.in[i], c.in[i].NumElements() == 1 ? 0 : index);
}

// y[b] = (A[b] - a_zp) (B[b] - b_zp) over [batch, M, K] x [batch or 1, K, N], then `finish`.
Status IntegerMatMul(const Ctx& c, size_t a_zp, size_t b_in, size_t b_zp,
                     const std::function<double(double)>& finish) {
  const Shape& a = *c.in[0].shape;
  const Shape& b = *c.in[b_in].shape;
  if (a.size() < 2 || b.size() < 2) return c.Error("A and B must be at least 2-D");
  const int64_t M = a[a.size() - 2], K = a.back(), N = b.back();
  if (b[b.size() - 2] != K) return c.Error("inner dims differ");
  const int64_t ba = graph::NumElements(a) / (M * K), bb = graph::NumElements(b) / (K * N);
  if (bb != 1 && bb != ba) return c.Error("batch dims must match or B must be 2-D");
  if (c.out[0].NumElements() != ba * M * N) return c.Error("output size does not match");
  for (int64_t n = 0; n < ba; ++n)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0.0;
        for (int64_t k = 0; k < K; ++k)
          acc += (Load(c.in[0], (n * M + i) * K + k) - ZeroPoint(c, a_zp, i)) *
                 (Load(c.in[b_in], ((bb == 1 ? 0 : n) * K + k) * N + j) - ZeroPoint(c, b_zp, j));
        Store(c.out[0], (n * M + i) * N + j, finish(acc));
      }
  return Status::Ok();
}

Status MatMulIntegerKernel(const Ctx& c) {
  return IntegerMatMul(c, 2, 1, 3, [](double v) { return v; });
}

Status QLinearMatMulKernel(const Ctx& c) {
  for (size_t i = 0; i < 8; ++i)
    if (!c.Has(i)) return c.Error("needs all eight inputs");
  for (size_t i : {1, 4, 6})
    if (c.in[i].NumElements() != 1) return c.Error("per-axis scales are unsupported");
  const double scale = Load(c.in[1], 0) * Load(c.in[4], 0) / Load(c.in[6], 0);
  const double zp = Load(c.in[7], 0);
  const bool u8 = c.out[0].dtype == DType::kU8;
  return IntegerMatMul(c, 2, 3, 5, [scale, zp, u8](double v) {
    return std::clamp(std::nearbyint(v * scale) + zp, u8 ? 0.0 : -128.0, u8 ? 255.0 : 127.0);
  });
}

// Generalised cosine windows: a0 - a1 cos(2 pi n / L) + a2 cos(4 pi n / L).
Kernel Window(double a0, double a1, double a2) {
  return [a0, a1, a2](const Ctx& c) -> Status {
    const int64_t n = c.out[0].NumElements();
    const bool periodic = c.op.attrs.GetInt("periodic", 1) != 0;
    const double len = static_cast<double>(periodic ? n : n - 1);
    for (int64_t i = 0; i < n; ++i) {
      const double t = 2 * std::numbers::pi * static_cast<double>(i) / len;
      Store(c.out[0], i, a0 - a1 * std::cos(t) + a2 * std::cos(2 * t));
    }
    return Status::Ok();
  };
}

Status NonZeroKernel(const Ctx& c) {
  const Shape& s = *c.in[0].shape;
  const Shape& out = *c.out[0].shape;
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < c.in[0].NumElements(); ++i)
    if (Load(c.in[0], i) != 0) hits.push_back(i);
  if (out.size() != 2 || out[0] != static_cast<int64_t>(s.size()) ||
      out[1] != static_cast<int64_t>(hits.size()))
    return c.Error("the data has " + std::to_string(hits.size()) +
                   " non-zero elements, but the graph fixed the output shape to " +
                   graph::ShapeToString(out) + " (data-dependent shapes are not supported)");
  for (size_t h = 0; h < hits.size(); ++h) {
    int64_t i = hits[h];
    for (size_t d = s.size(); d-- > 0;) {
      c.out[0].as<int64_t>()[static_cast<int64_t>(d) * out[1] + static_cast<int64_t>(h)] = i % s[d];
      i /= s[d];
    }
  }
  return Status::Ok();
}

Status CompressKernel(const Ctx& c) {
  if (c.in[0].dtype != c.out[0].dtype) return c.Error("output dtype differs from the input's");
  const Shape& s = *c.in[0].shape;
  const bool flat = !c.op.attrs.Has("axis");
  const int64_t axis = flat ? 0 : NormAxis(c.op.attrs.GetInt("axis", 0), s.size());
  if (axis < 0 || axis >= static_cast<int64_t>(s.size())) return c.Error("axis out of range");
  int64_t outer = 1, inner = 1, n = c.in[0].NumElements();
  if (!flat) AroundAxis(s, axis, &outer, &inner), n = s[static_cast<size_t>(axis)];
  std::vector<int64_t> keep;
  for (int64_t k = 0; k < std::min(n, c.in[1].NumElements()); ++k)
    if (Load(c.in[1], k) != 0) keep.push_back(k);
  const int64_t kn = static_cast<int64_t>(keep.size());
  if (c.out[0].NumElements() != outer * kn * inner)
    return c.Error("the condition selects " + std::to_string(kn) +
                   " slices, but the graph fixed another output size (data-dependent shapes "
                   "are not supported)");
  const int64_t es = graph::DTypeSize(c.out[0].dtype);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < kn; ++k)
      std::memcpy(c.out[0].as<char>() + ((o * kn + k) * inner) * es,
                  c.in[0].as<char>() + ((o * n + keep[static_cast<size_t>(k)]) * inner) * es,
                  static_cast<size_t>(inner * es));
  return Status::Ok();
}

// ---- DFT (opset 17): naive O(n^2) transform along `axis` of a real ([..., 1]) or complex
// ([..., 2]) signal; inverse scales by 1/n; onesided keeps n/2 + 1 bins.

Status DftKernel(const Ctx& c) {
  const Shape& x = *c.in[0].shape;
  const Shape& y = *c.out[0].shape;
  if (x.size() < 3 || y.size() != x.size() || (x.back() != 1 && x.back() != 2) || y.back() != 2)
    return c.Error("input must be [batch, ..., 1 or 2] and the output [..., 2]");
  const int64_t axis = NormAxis(c.op.attrs.GetInt("axis", 1), x.size());
  if (axis < 1 || axis >= static_cast<int64_t>(x.size()) - 1) return c.Error("axis out of range");
  const bool inverse = c.op.attrs.GetInt("inverse", 0) != 0;
  const int64_t cx = x.back(), ni = x[static_cast<size_t>(axis)];
  const int64_t n = c.Has(1) ? static_cast<int64_t>(Load(c.in[1], 0)) : ni;
  const int64_t no = y[static_cast<size_t>(axis)];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d + 1 < x.size(); ++d) inner *= x[d];
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      for (int64_t k = 0; k < no; ++k) {
        double re = 0.0, im = 0.0;
        for (int64_t t = 0; t < std::min(n, ni); ++t) {
          const int64_t at = ((o * ni + t) * inner + i) * cx;
          const double a = Load(c.in[0], at), b = cx == 2 ? Load(c.in[0], at + 1) : 0.0;
          const double ang =
              sign * 2 * std::numbers::pi * static_cast<double>(k * t % n) / static_cast<double>(n);
          re += a * std::cos(ang) - b * std::sin(ang);
          im += a * std::sin(ang) + b * std::cos(ang);
        }
        const double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
        const int64_t at = ((o * no + k) * inner + i) * 2;
        Store(c.out[0], at, re * scale);
        Store(c.out[0], at + 1, im * scale);
      }
  return Status::Ok();
}

// STFT (opset 17): frames of frame_length every frame_step samples, times the window, each
// transformed like DFT; output [batch, frames, bins, 2].
Status StftKernel(const Ctx& c) {
  const Shape& x = *c.in[0].shape;
  const Shape& y = *c.out[0].shape;
  if (x.size() != 3 || y.size() != 4 || y[3] != 2) return c.Error("signal must be [batch, n, 1|2]");
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> step, IntsOf(c, 1));
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> flen, IntsOf(c, 3));
  const int64_t len = !flen.empty() ? flen[0] : c.Has(2) ? c.in[2].NumElements() : 0;
  if (step.size() != 1 || len < 1) return c.Error("needs frame_step and a window or frame_length");
  const int64_t cx = x[2], frames = y[1], bins = y[2];
  if (step[0] < 1 || (frames - 1) * step[0] + len > x[1])
    return c.Error("frames run past the end of the signal");
  for (int64_t b = 0; b < x[0]; ++b)
    for (int64_t f = 0; f < frames; ++f)
      for (int64_t k = 0; k < bins; ++k) {
        double re = 0.0, im = 0.0;
        for (int64_t t = 0; t < len; ++t) {
          const int64_t at = (b * x[1] + f * step[0] + t) * cx;
          const double w = c.Has(2) ? Load(c.in[2], t) : 1.0;
          const double a = Load(c.in[0], at) * w, bb = cx == 2 ? Load(c.in[0], at + 1) * w : 0.0;
          const double ang =
              -2 * std::numbers::pi * static_cast<double>(k * t % len) / static_cast<double>(len);
          re += a * std::cos(ang) - bb * std::sin(ang);
          im += a * std::sin(ang) + bb * std::cos(ang);
        }
        const int64_t at = ((b * frames + f) * bins + k) * 2;
        Store(c.out[0], at, re);
        Store(c.out[0], at + 1, im);
      }
  return Status::Ok();
}

// MelWeightMatrix (opset 17), as ONNX's reference builds it: triangular filters between mel-spaced
// bin edges, [dft_length / 2 + 1, num_mel_bins].
Status MelWeightMatrixKernel(const Ctx& c) {
  for (size_t i = 0; i < 5; ++i)
    if (!c.Has(i)) return c.Error("needs all five inputs");
  const int64_t mels = static_cast<int64_t>(Load(c.in[0], 0));
  const int64_t dft = static_cast<int64_t>(Load(c.in[1], 0));
  const double rate = Load(c.in[2], 0), lo = Load(c.in[3], 0), hi = Load(c.in[4], 0);
  const int64_t bins = dft / 2 + 1;
  if (mels < 1 || c.out[0].NumElements() != bins * mels)
    return c.Error("output size does not match");
  const double lo_mel = 2595 * std::log10(1 + lo / 700), hi_mel = 2595 * std::log10(1 + hi / 700);
  const double step = (hi_mel - lo_mel) / static_cast<double>(mels + 2);
  std::vector<int64_t> edge(static_cast<size_t>(mels + 2));
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + lo_mel) / 2595) - 1);
    edge[static_cast<size_t>(i)] =
        static_cast<int64_t>(std::floor(static_cast<double>(dft + 1) * hz / rate));
  }
  for (int64_t i = 0; i < bins * mels; ++i) Store(c.out[0], i, 0.0);
  for (int64_t m = 0; m < mels; ++m) {
    const int64_t l = edge[static_cast<size_t>(m)], ctr = edge[static_cast<size_t>(m + 1)],
                  r = edge[static_cast<size_t>(m + 2)];
    if (l < 0 || r >= bins || l > ctr || ctr > r) return c.Error("filter edges out of range");
    if (ctr == l) Store(c.out[0], ctr * mels + m, 1.0);
    for (int64_t j = l; j <= ctr && ctr > l; ++j)
      Store(c.out[0], j * mels + m, static_cast<double>(j - l) / static_cast<double>(ctr - l));
    for (int64_t j = ctr; j < r; ++j)
      Store(c.out[0], j * mels + m, static_cast<double>(r - j) / static_cast<double>(r - ctr));
  }
  return Status::Ok();
}

// ---- TfIdfVectorizer over integer input (as ONNX Runtime counts: unigrams once per position,
// longer n-grams once per skip distance).

struct NgramPool {
  std::map<std::vector<int64_t>, int64_t> index;  // n-gram -> output column
};

StatusOr<NgramPool> ReadPool(const Ctx& c) {
  const auto counts = c.op.attrs.GetInts("ngram_counts");
  const auto indexes = c.op.attrs.GetInts("ngram_indexes");
  const auto pool = c.op.attrs.GetInts("pool_int64s");
  if (c.op.attrs.Has("pool_strings")) return c.Error("attribute pool_strings is unsupported");
  NgramPool p;
  size_t next = 0;
  for (size_t n = 0; n < counts.size(); ++n) {
    const int64_t begin = counts[n];
    const int64_t end = n + 1 < counts.size() ? counts[n + 1] : static_cast<int64_t>(pool.size());
    const int64_t len = static_cast<int64_t>(n) + 1;
    for (int64_t at = begin; at + len <= end; at += len) {
      if (next >= indexes.size()) return c.Error("ngram_indexes is shorter than the pool");
      p.index[std::vector<int64_t>(pool.begin() + at, pool.begin() + at + len)] = indexes[next++];
    }
  }
  return p;
}

Status TfIdfKernel(const Ctx& c) {
  HX_ASSIGN_OR_RETURN(NgramPool pool, ReadPool(c));
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> x, IntsOf(c, 0));
  const Shape& s = *c.in[0].shape;
  const int64_t rows = s.size() == 2 ? s[0] : 1, len = s.back();
  const int64_t min_n = c.op.attrs.GetInt("min_gram_length", 1);
  const int64_t max_n = c.op.attrs.GetInt("max_gram_length", 1);
  const int64_t max_skip = c.op.attrs.GetInt("max_skip_count", 0);
  const std::string mode = c.op.attrs.GetString("mode", "TF");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return c.Error("unknown mode '" + mode + "'");
  const std::vector<double> weights = c.op.attrs.GetFloats("weights");
  const int64_t cols = c.out[0].NumElements() / rows;
  std::vector<double> count(static_cast<size_t>(cols * rows), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < len; ++i)
      for (int64_t skip = 0; skip <= max_skip; ++skip)
        for (int64_t n = std::max<int64_t>(min_n, skip == 0 ? 1 : 2); n <= max_n; ++n) {
          if (i + (n - 1) * (skip + 1) >= len) break;
          std::vector<int64_t> gram;
          for (int64_t k = 0; k < n; ++k)
            gram.push_back(x[static_cast<size_t>(r * len + i + k * (skip + 1))]);
          auto it = pool.index.find(gram);
          if (it != pool.index.end() && it->second < cols)
            count[static_cast<size_t>(r * cols + it->second)] += 1;
        }
  for (int64_t i = 0; i < rows * cols; ++i) {
    const double w = weights.empty() ? 1.0 : weights[static_cast<size_t>(i % cols)];
    const double n = count[static_cast<size_t>(i)];
    Store(c.out[0], i, mode == "TF" ? n : mode == "IDF" ? (n > 0 ? w : 0.0) : n * w);
  }
  return Status::Ok();
}

// ---- NonMaxSuppression (greedy, per batch and class, as ONNX Runtime does it).

struct Box {
  double y1, x1, y2, x2;
};

Box ReadBox(const TensorRef& t, int64_t at, bool center) {
  const double a = Load(t, at), b = Load(t, at + 1), c = Load(t, at + 2), d = Load(t, at + 3);
  if (center) return {b - d / 2, a - c / 2, b + d / 2, a + c / 2};  // [x_c, y_c, w, h]
  return {std::min(a, c), std::min(b, d), std::max(a, c), std::max(b, d)};
}

double Iou(const Box& p, const Box& q) {
  const double h = std::max(0.0, std::min(p.y2, q.y2) - std::max(p.y1, q.y1));
  const double w = std::max(0.0, std::min(p.x2, q.x2) - std::max(p.x1, q.x1));
  const double inter = h * w;
  const double uni = (p.y2 - p.y1) * (p.x2 - p.x1) + (q.y2 - q.y1) * (q.x2 - q.x1) - inter;
  return uni <= 0 ? 0.0 : inter / uni;
}

Status NmsKernel(const Ctx& c) {
  const Shape& bs = *c.in[0].shape;
  const Shape& ss = *c.in[1].shape;
  if (bs.size() != 3 || ss.size() != 3 || bs[2] != 4 || bs[0] != ss[0] || bs[1] != ss[2])
    return c.Error("boxes must be [batch, boxes, 4] and scores [batch, classes, boxes]");
  const int64_t max_out = c.Has(2) ? static_cast<int64_t>(Load(c.in[2], 0)) : 0;
  const double iou_max = c.Has(3) ? Load(c.in[3], 0) : 0.0;
  const bool thresholded = c.Has(4);
  const double score_min = thresholded ? Load(c.in[4], 0) : 0.0;
  const bool center = c.op.attrs.GetInt("center_point_box", 0) != 0;
  const int64_t B = bs[0], n = bs[1], C = ss[1];
  std::vector<int64_t> selected;  // triples
  for (int64_t b = 0; b < B; ++b)
    for (int64_t k = 0; k < C; ++k) {
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < n; ++i)
        if (!thresholded || Load(c.in[1], (b * C + k) * n + i) > score_min) cand.push_back(i);
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t p, int64_t q) {
        return Load(c.in[1], (b * C + k) * n + p) > Load(c.in[1], (b * C + k) * n + q);
      });
      std::vector<Box> kept;
      for (int64_t i : cand) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        const Box box = ReadBox(c.in[0], (b * n + i) * 4, center);
        bool keep = true;
        for (const Box& q : kept) keep = keep && Iou(box, q) <= iou_max;
        if (!keep) continue;
        kept.push_back(box);
        selected.insert(selected.end(), {b, k, i});
      }
    }
  const int64_t count = static_cast<int64_t>(selected.size()) / 3;
  if (*c.out[0].shape != Shape{count, 3})
    return c.Error(
        "selected " + std::to_string(count) + " boxes, but the graph fixed the output shape to " +
        graph::ShapeToString(*c.out[0].shape) + " (data-dependent shapes are not supported)");
  for (size_t i = 0; i < selected.size(); ++i) c.out[0].as<int64_t>()[i] = selected[i];
  return Status::Ok();
}

// ---- Unique (flattened, or of slices along `axis`; sorted or in order of first occurrence).

Status UniqueKernel(const Ctx& c) {
  if (c.in[0].dtype != c.out[0].dtype) return c.Error("output dtype differs from the input's");
  const Shape& s = *c.in[0].shape;
  const bool flat = !c.op.attrs.Has("axis");
  const int64_t axis = flat ? 0 : NormAxis(c.op.attrs.GetInt("axis", 0), s.size());
  if (axis < 0 || axis >= static_cast<int64_t>(std::max<size_t>(s.size(), 1)))
    return c.Error("axis out of range");
  int64_t outer = 1, inner = 1, n = c.in[0].NumElements();
  if (!flat) AroundAxis(s, axis, &outer, &inner), n = s[static_cast<size_t>(axis)];
  std::vector<std::vector<double>> slices(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < inner; ++k)
        slices[static_cast<size_t>(i)].push_back(Load(c.in[0], (o * n + i) * inner + k));
  std::vector<int64_t> first;  // index of each unique slice's first occurrence
  std::vector<int64_t> inverse(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    size_t u = 0;
    while (u < first.size() &&
           slices[static_cast<size_t>(first[u])] != slices[static_cast<size_t>(i)])
      ++u;
    if (u == first.size()) first.push_back(i);
  }
  if (c.op.attrs.GetInt("sorted", 1) != 0)
    std::sort(first.begin(), first.end(), [&](int64_t a, int64_t b) {
      return slices[static_cast<size_t>(a)] < slices[static_cast<size_t>(b)];
    });
  const int64_t u = static_cast<int64_t>(first.size());
  if (c.out[0].NumElements() != outer * u * inner)
    return c.Error("found " + std::to_string(u) +
                   " unique values, but the graph fixed another "
                   "output size (data-dependent shapes are not supported)");
  std::vector<int64_t> counts(first.size(), 0);
  for (int64_t i = 0; i < n; ++i)
    for (size_t q = 0; q < first.size(); ++q)
      if (slices[static_cast<size_t>(first[q])] == slices[static_cast<size_t>(i)]) {
        inverse[static_cast<size_t>(i)] = static_cast<int64_t>(q);
        ++counts[q];
      }
  const int64_t es = graph::DTypeSize(c.out[0].dtype);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t q = 0; q < u; ++q)
      std::memcpy(c.out[0].as<char>() + (o * u + q) * inner * es,
                  c.in[0].as<char>() + (o * n + first[static_cast<size_t>(q)]) * inner * es,
                  static_cast<size_t>(inner * es));
  const std::vector<int64_t>* extra[3] = {&first, &inverse, &counts};
  for (size_t k = 0; k < 3; ++k)
    if (c.HasOut(k + 1)) {
      if (c.out[k + 1].NumElements() != static_cast<int64_t>(extra[k]->size()))
        return c.Error("output " + std::to_string(k + 1) + " size does not match");
      std::memcpy(c.out[k + 1].data, extra[k]->data(), extra[k]->size() * sizeof(int64_t));
    }
  return Status::Ok();
}

}  // namespace

void AddLinalgKernels(KernelMap* map) {
  KernelMap& m = *map;
  m["Det"] = DetKernel;
  m["MatMulInteger"] = MatMulIntegerKernel;
  m["QLinearMatMul"] = QLinearMatMulKernel;
  m["HannWindow"] = Window(0.5, 0.5, 0.0);
  m["HammingWindow"] = Window(25.0 / 46.0, 21.0 / 46.0, 0.0);
  m["BlackmanWindow"] = Window(0.42, 0.5, 0.08);
  m["NonZero"] = NonZeroKernel;
  m["Compress"] = CompressKernel;
  m["NonMaxSuppression"] = NmsKernel;
  m["Unique"] = UniqueKernel;
  m["DFT"] = DftKernel;
  m["STFT"] = StftKernel;
  m["MelWeightMatrix"] = MelWeightMatrixKernel;
  m["TfIdfVectorizer"] = TfIdfKernel;
}

}  // namespace hx::exec::internal
