// Loss ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (reduction none/sum/mean,
// class weights, ignore_index), in double.

#include <cmath>
#include <limits>

#include "exec/kernel_context.h"

namespace hx::exec::internal {
namespace {

// NLL over log-probabilities laid out [N, C, D] (D: the product of the extra dims).
Status NllLoss(const Ctx& c, const std::vector<double>& logp, int64_t N, int64_t C, int64_t D) {
  const std::string reduction = c.op.attrs.GetString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return c.Error("unknown reduction '" + reduction + "'");
  const bool has_ignore = c.op.attrs.Has("ignore_index");
  const int64_t ignore = c.op.attrs.GetInt("ignore_index", 0);
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> target, IntsOf(c, 1));
  if (static_cast<int64_t>(target.size()) != N * D) return c.Error("target size does not match");
  const bool weighted = c.Has(2);
  std::vector<double> loss(static_cast<size_t>(N * D), 0.0);
  double total = 0.0, weight_sum = 0.0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      const int64_t t = target[static_cast<size_t>(n * D + d)];
      if (has_ignore && t == ignore) continue;
      if (t < 0 || t >= C) return c.Error("target " + std::to_string(t) + " out of range");
      const double w = weighted ? Load(c.in[2], t) : 1.0;
      const double l = -logp[static_cast<size_t>((n * C + t) * D + d)] * w;
      loss[static_cast<size_t>(n * D + d)] = l;
      total += l;
      weight_sum += w;
    }
  if (reduction == "none") {
    if (c.out[0].NumElements() != N * D) return c.Error("output size does not match");
    for (int64_t i = 0; i < N * D; ++i) Store(c.out[0], i, loss[static_cast<size_t>(i)]);
  } else {
    Store(c.out[0], 0, reduction == "sum" ? total : weight_sum == 0 ? 0.0 : total / weight_sum);
  }
  return Status::Ok();
}

Status Dims(const Ctx& c, int64_t* N, int64_t* C, int64_t* D) {
  const Shape& s = *c.in[0].shape;
  if (s.size() < 2) return c.Error("input must be at least 2-D [N, C, ...]");
  *N = s[0], *C = s[1];
  *D = graph::NumElements(s) / std::max<int64_t>(1, *N * *C);
  return Status::Ok();
}

Status NllKernel(const Ctx& c) {
  int64_t N, C, D;
  HX_RETURN_IF_ERROR(Dims(c, &N, &C, &D));
  std::vector<double> logp(static_cast<size_t>(N * C * D));
  for (size_t i = 0; i < logp.size(); ++i) logp[i] = Load(c.in[0], static_cast<int64_t>(i));
  return NllLoss(c, logp, N, C, D);
}

Status SoftmaxCrossEntropyKernel(const Ctx& c) {
  int64_t N, C, D;
  HX_RETURN_IF_ERROR(Dims(c, &N, &C, &D));
  std::vector<double> logp(static_cast<size_t>(N * C * D));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      double mx = -std::numeric_limits<double>::infinity(), sum = 0.0;
      for (int64_t k = 0; k < C; ++k) mx = std::max(mx, Load(c.in[0], (n * C + k) * D + d));
      for (int64_t k = 0; k < C; ++k) sum += std::exp(Load(c.in[0], (n * C + k) * D + d) - mx);
      for (int64_t k = 0; k < C; ++k) {
        const int64_t at = (n * C + k) * D + d;
        logp[static_cast<size_t>(at)] = Load(c.in[0], at) - mx - std::log(sum);
      }
    }
  if (c.HasOut(1))
    for (size_t i = 0; i < logp.size(); ++i) Store(c.out[1], static_cast<int64_t>(i), logp[i]);
  return NllLoss(c, logp, N, C, D);
}

}  // namespace

void AddLossKernels(KernelMap* map) {
  (*map)["NegativeLogLikelihoodLoss"] = NllKernel;
  (*map)["SoftmaxCrossEntropyLoss"] = SoftmaxCrossEntropyKernel;
}

}  // namespace hx::exec::internal
