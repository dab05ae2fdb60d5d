#include "hexplan/cost/fit_op_class.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace hx::cost {
namespace {

// The canonical form the search moves in: log cmax, log mmax, log a, log b, then the log of each
// harness's constant.
using Point = std::vector<double>;
constexpr double kMinEfficiency = 1e-3;
constexpr double kMinOffset = 1e-12;  // seconds; below this an offset is zero
constexpr double kMaxOffset = 10.0;

// The samples with each one's harness as an index into the point (-1: none).
struct Problem {
  const std::vector<OpSample>* samples = nullptr;
  std::vector<int> harness_index;
  std::vector<std::string> harnesses;
  // Whether the floor (min_s) is searched: not where every sample has a harness, whose constant a
  // floor would stand in for on the smallest samples.
  bool floor_free = true;
  // 1 / the size of the sample's source (the group's first word: "LLMCompass", "vidur"), so that
  // a source of 20 samples weighs as much as one of 4000.
  std::vector<double> weight;
  DevicePeak peak;
};

Problem MakeProblem(const std::vector<OpSample>& samples, const DevicePeak& peak) {
  Problem p;
  p.samples = &samples;
  p.peak = peak;
  auto source = [](const OpSample& s) { return s.group.substr(0, s.group.find(' ')); };
  std::map<std::string, int> source_size;
  for (const OpSample& s : samples) ++source_size[source(s)];
  for (const OpSample& s : samples) p.weight.push_back(1.0 / source_size[source(s)]);
  for (const OpSample& s : samples) {
    if (s.harness.empty()) {
      p.harness_index.push_back(-1);
      continue;
    }
    auto it = std::find(p.harnesses.begin(), p.harnesses.end(), s.harness);
    p.harness_index.push_back(static_cast<int>(it - p.harnesses.begin()));
    if (it == p.harnesses.end()) p.harnesses.push_back(s.harness);
  }
  return p;
}

void Clamp(Point& p) {
  for (size_t k = 0; k < p.size(); ++k) {
    if (k < 2)
      p[k] = std::clamp(p[k], std::log(kMinEfficiency), 0.0);
    else
      p[k] = std::clamp(p[k], std::log(kMinOffset), std::log(kMaxOffset));
  }
}

double CanonicalSeconds(const Point& p, const DevicePeak& peak, double flops, double bytes) {
  double t = 0.0;
  if (flops > 0) t = std::exp(p[2]) + flops / (peak.flops_per_s * std::exp(p[0]));
  if (bytes > 0) t = std::max(t, std::exp(p[3]) + bytes / (peak.bytes_per_s * std::exp(p[1])));
  return std::max(t, std::exp(p[4]));
}

double SquaredLogError(const Point& p, const Problem& pr) {
  double sum = 0.0;
  for (size_t i = 0; i < pr.samples->size(); ++i) {
    const OpSample& x = (*pr.samples)[i];
    double t = CanonicalSeconds(p, pr.peak, x.flops, x.bytes);
    if (pr.harness_index[i] >= 0) t += std::exp(p[5 + pr.harness_index[i]]);
    double e = std::log(t / x.seconds);
    sum += pr.weight[i] * e * e;
  }
  return sum;
}

// Hooke-Jeeves pattern search: poll +-step along each coordinate, halve the step when no move
// helps. Deterministic.
Point PatternSearch(Point p, const Problem& pr, double& best) {
  Clamp(p);
  best = SquaredLogError(p, pr);
  for (double step = 1.0; step > 1e-4;) {
    bool moved = false;
    for (size_t k = 0; k < p.size(); ++k) {
      if (k == 4 && !pr.floor_free) continue;
      for (double dir : {1.0, -1.0}) {
        Point q = p;
        q[k] += dir * step;
        Clamp(q);
        double e = SquaredLogError(q, pr);
        if (e < best) best = e, p = q, moved = true;
      }
    }
    if (!moved) step /= 2;
  }
  return p;
}

double Offset(double log_value) {
  double v = std::exp(log_value);
  return v <= 100 * kMinOffset ? 0.0 : v;  // 0.1 ns: the search's stand-in for none
}

ClassFit FromCanonical(const Point& p, const Problem& pr, bool any_flops, bool any_bytes,
                       bool all_harnessed) {
  double a = Offset(p[2]), b = Offset(p[3]);
  if (!any_flops) a = b;  // the compute line is never seen: no offset of its own
  if (!any_bytes) b = a;
  ClassFit fit;
  fit.compute_max = std::exp(p[0]);
  fit.memory_max = std::exp(p[1]);
  fit.fixed_s = std::min(a, b);
  fit.compute_half_flops = (a - fit.fixed_s) * pr.peak.flops_per_s * fit.compute_max;
  fit.memory_half_bytes = (b - fit.fixed_s) * pr.peak.bytes_per_s * fit.memory_max;
  fit.min_s = Offset(p[4]);
  // A line no sample reaches keeps the header's default efficiency (the search never moved it).
  if (!any_flops) fit.compute_max = ClassFit{}.compute_max;
  if (!any_bytes) fit.memory_max = ClassFit{}.memory_max;
  for (size_t h = 0; h < pr.harnesses.size(); ++h)
    fit.harness_s[pr.harnesses[h]] = Offset(p[5 + h]) + (all_harnessed ? fit.fixed_s : 0.0);
  if (all_harnessed) {
    // max(min_s, fixed_s + t) = fixed_s + max(min_s - fixed_s, t): the constant moves out whole.
    fit.min_s = std::max(0.0, fit.min_s - fit.fixed_s);
    fit.fixed_s = 0.0;
  }
  return fit;
}

double RooflineSeconds(const OpSample& s, const DevicePeak& peak) {
  return std::max(s.flops / peak.flops_per_s, s.bytes / peak.bytes_per_s);
}

Status CheckSamples(const std::vector<OpSample>& samples, const DevicePeak& peak) {
  if (samples.size() < 2) return InvalidArgument("a class fit needs >= 2 samples");
  if (!(peak.flops_per_s > 0) || !(peak.bytes_per_s > 0))
    return InvalidArgument("a class fit needs the device's peak FLOP/s and bandwidth > 0");
  for (const OpSample& s : samples)
    if (!(s.seconds > 0) || s.flops < 0 || s.bytes < 0 || (s.flops == 0 && s.bytes == 0))
      return InvalidArgument("sample '" + s.label + "': time must be > 0 and FLOPs or bytes > 0");
  return Status::Ok();
}

}  // namespace

double ClassKernelSeconds(const ClassFit& fit, const DevicePeak& peak, double flops, double bytes) {
  double t = 0.0;
  if (flops > 0) t = (flops + fit.compute_half_flops) / (peak.flops_per_s * fit.compute_max);
  if (bytes > 0)
    t = std::max(t, (bytes + fit.memory_half_bytes) / (peak.bytes_per_s * fit.memory_max));
  return std::max(fit.min_s, fit.fixed_s + t);
}

double MeasuredSeconds(const ClassFit& fit, const DevicePeak& peak, const OpSample& sample) {
  double t = ClassKernelSeconds(fit, peak, sample.flops, sample.bytes);
  auto it = fit.harness_s.find(sample.harness);
  return it == fit.harness_s.end() ? t : t + it->second;
}

FitErrors SummariseErrors(std::vector<double> errors) {
  FitErrors out;
  out.samples = static_cast<int>(errors.size());
  if (errors.empty()) return out;
  double log_sum = 0.0;
  for (double e : errors) {
    log_sum += std::log(std::max(e, 1e-4));
    out.max = std::max(out.max, e);
  }
  out.geomean = std::exp(log_sum / errors.size());
  std::sort(errors.begin(), errors.end());
  size_t n = errors.size();
  out.median = n % 2 ? errors[n / 2] : 0.5 * (errors[n / 2 - 1] + errors[n / 2]);
  return out;
}

FitErrors EvaluateClassFit(const ClassFit& fit, const DevicePeak& peak,
                           const std::vector<OpSample>& samples) {
  std::vector<double> errors;
  for (const OpSample& s : samples)
    errors.push_back(std::abs(MeasuredSeconds(fit, peak, s) / s.seconds - 1.0));
  return SummariseErrors(std::move(errors));
}

StatusOr<ClassFit> FitClassCurve(const std::vector<OpSample>& samples, const DevicePeak& peak) {
  HX_RETURN_IF_ERROR(CheckSamples(samples, peak));
  Problem pr = MakeProblem(samples, peak);
  bool any_flops = false, any_bytes = false, all_harnessed = true;
  double t_small = std::numeric_limits<double>::infinity();
  for (const OpSample& s : samples) {
    any_flops |= s.flops > 0;
    any_bytes |= s.bytes > 0;
    all_harnessed &= !s.harness.empty();
    t_small = std::min(t_small, s.seconds);
  }
  pr.floor_free = !all_harnessed;
  Point best_point;
  double best = std::numeric_limits<double>::infinity();
  for (double eff : {0.3, 0.8})
    for (double mem : {0.3, 0.8})
      for (double offset : {kMinOffset * 10, 0.5 * t_small})
        for (double floor : {kMinOffset * 10, t_small}) {
          if (!pr.floor_free && floor > kMinOffset * 10) continue;
          Point start(5 + pr.harnesses.size(), std::log(offset));
          start[0] = std::log(eff);
          start[1] = std::log(mem);
          start[4] = std::log(floor);
          double err;
          Point p = PatternSearch(start, pr, err);
          if (err < best) best = err, best_point = p;
        }
  ClassFit fit = FromCanonical(best_point, pr, any_flops, any_bytes, all_harnessed);
  fit.samples = static_cast<int>(samples.size());
  fit.fit_error = EvaluateClassFit(fit, peak, samples).geomean;
  return fit;
}

void SplitByRooflineTime(const std::vector<OpSample>& samples, const DevicePeak& peak,
                         std::vector<OpSample>& fitted, std::vector<OpSample>& held_out) {
  // A shape is what the curve sees of a kernel: its class, FLOPs and bytes. Samples of one shape
  // (the same layer in two models, a layer's two RMSNorms, two TP degrees of an unsharded add) all
  // go to the same half, so the held-out half is shapes the fit never saw.
  using ShapeKey = std::tuple<double, OpClass, double, double>;
  auto key = [&](const OpSample& s) {
    return ShapeKey{RooflineSeconds(s, peak), s.op_class, s.flops, s.bytes};
  };
  std::map<ShapeKey, std::vector<const OpSample*>> by_shape;  // ordered by roofline time
  for (const OpSample& s : samples) by_shape[key(s)].push_back(&s);
  fitted.clear();
  held_out.clear();
  size_t i = 0;
  for (const auto& [shape, of_shape] : by_shape) {
    for (const OpSample* s : of_shape) (i % 2 ? held_out : fitted).push_back(*s);
    ++i;
  }
}

StatusOr<ClassFit> FitClassWithHeldOut(const std::vector<OpSample>& samples, const DevicePeak& peak,
                                       const std::string& source) {
  if (samples.size() < 4)
    return InvalidArgument("a class fit with a held-out half needs >= 4 samples, got " +
                           std::to_string(samples.size()));
  std::vector<OpSample> fitted, held_out;
  SplitByRooflineTime(samples, peak, fitted, held_out);
  HX_ASSIGN_OR_RETURN(ClassFit fit, FitClassCurve(fitted, peak));
  fit.held_out_error = EvaluateClassFit(fit, peak, held_out).geomean;
  fit.source = source;
  return fit;
}

}  // namespace hx::cost
