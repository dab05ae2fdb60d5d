#include "hexplan/cost/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace hx::cost {
namespace {

// One profiled (op, device) sample: t ~ max(a * x, b * y) with x = 1/ec, y = 1/em, where a and b
// are the compute and memory times at efficiency 1 (already divided by the clock scale) and t is
// the profiled time less the launch overhead.
struct Sample {
  double a = 0.0;
  double b = 0.0;
  double t = 0.0;
};

struct Fit {
  double x = 1.0;
  double y = 1.0;
  double sse = std::numeric_limits<double>::infinity();  // sum of squared relative errors
};

double Sse(const std::vector<Sample>& samples, double x, double y) {
  double sse = 0.0;
  for (const Sample& s : samples) {
    double r = (std::max(s.a * x, s.b * y) - s.t) / s.t;
    sse += r * r;
  }
  return sse;
}

// Alternates: classify each sample by the term that dominates, then refit each term by weighted
// least squares (weights 1/t^2: relative errors) on its samples. Stops when the split is stable.
Fit AlternatingFit(const std::vector<Sample>& samples, double x, double y, int max_iterations) {
  std::vector<char> compute_bound(samples.size(), 2);
  for (int iter = 0; iter < max_iterations; ++iter) {
    bool changed = false;
    double num_x = 0, den_x = 0, num_y = 0, den_y = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
      const Sample& s = samples[i];
      char c = s.a * x >= s.b * y ? 1 : 0;
      if (c != compute_bound[i]) changed = true;
      compute_bound[i] = c;
      double w = 1.0 / (s.t * s.t);
      if (c) {
        num_x += w * s.a * s.t;
        den_x += w * s.a * s.a;
      } else {
        num_y += w * s.b * s.t;
        den_y += w * s.b * s.b;
      }
    }
    if (den_x > 0) x = num_x / den_x;
    if (den_y > 0) y = num_y / den_y;
    if (!changed && iter > 0) break;
  }
  return Fit{x, y, Sse(samples, x, y)};
}

}  // namespace

Status CalibrationOptions::Validate() const {
  if (max_iterations < 1) {
    return InvalidArgument("calibration option max_iterations: expected >= 1, got " +
                           std::to_string(max_iterations));
  }
  return Status::Ok();
}

StatusOr<std::vector<ModelCalibration>> Calibrate(const graph::Graph& graph,
                                                  const hw::Cluster& cluster,
                                                  const Profile& profile, CostModelOptions* options,
                                                  const CalibrationOptions& calibration) {
  HX_CHECK(options != nullptr);
  HX_RETURN_IF_ERROR(options->Validate());
  HX_RETURN_IF_ERROR(calibration.Validate());
  CostModel model(graph, cluster, *options, nullptr);

  std::map<std::string, std::vector<Sample>> samples_by_model;
  std::map<std::string, DeviceId> example_device;
  for (DeviceId d : cluster.DeviceIds()) {
    const hw::Device& dev = cluster.device(d);
    example_device.emplace(dev.spec.model, d);
    double clock = dev.clock_scale > 0 ? dev.clock_scale : 1.0;
    for (NodeId op : graph.Ops()) {
      auto hit =
          profile.FindOpTime(graph, op, dev.name, dev.spec.model, hw::DeviceKindName(dev.kind));
      if (!hit || !std::isfinite(hit->seconds)) continue;
      bool by_kind = hit->matched_by == ProfileMatch::kDeviceKind ||
                     hit->matched_by == ProfileMatch::kAnyDevice;
      if (by_kind && !calibration.use_kind_entries) continue;
      // Per-name entries were measured on this device (its clock applies); the others at the
      // nominal clock.
      double scale = hit->matched_by == ProfileMatch::kDeviceName ? clock : 1.0;
      const graph::OpCost& cost = model.op_cost(op);
      double peak = model.PeakFlopsFor(op, d);
      double bw = dev.spec.memory_bandwidth_bytes_per_s;
      Sample s;
      s.a = cost.flops > 0 && peak > 0 ? cost.flops / peak / scale : 0.0;
      s.b = cost.bytes_moved() > 0 && bw > 0 ? static_cast<double>(cost.bytes_moved()) / bw / scale
                                             : 0.0;
      s.t = hit->seconds - dev.spec.launch_overhead_s;
      if (s.t <= 0 || (s.a <= 0 && s.b <= 0)) continue;
      samples_by_model[dev.spec.model].push_back(s);
    }
  }

  std::vector<ModelCalibration> results;
  for (const auto& [model_name, samples] : samples_by_model) {
    Efficiency start = model.EfficiencyFor(example_device.at(model_name));
    double x0 = 1.0 / start.compute;
    double y0 = 1.0 / start.memory;
    // Several starting points (the current factors, and each side fitted on every sample) guard
    // against the local minima the max() creates; the lowest error wins.
    double num_x = 0, den_x = 0, num_y = 0, den_y = 0;
    for (const Sample& s : samples) {
      double w = 1.0 / (s.t * s.t);
      num_x += w * s.a * s.t;
      den_x += w * s.a * s.a;
      num_y += w * s.b * s.t;
      den_y += w * s.b * s.b;
    }
    double x_all = den_x > 0 ? num_x / den_x : x0;
    double y_all = den_y > 0 ? num_y / den_y : y0;
    Fit best;
    for (auto [x, y] :
         {std::pair{x0, y0}, std::pair{x_all, y0}, std::pair{x0, y_all}, std::pair{x_all, y_all},
          std::pair{x_all * 1e-3, y_all}, std::pair{x_all, y_all * 1e-3}}) {
      Fit fit = AlternatingFit(samples, x, y, calibration.max_iterations);
      if (fit.sse < best.sse) best = fit;
    }
    ModelCalibration result;
    result.model = model_name;
    result.num_ops = static_cast<int>(samples.size());
    for (const Sample& s : samples) {
      if (s.a * best.x >= s.b * best.y) {
        ++result.compute_bound_ops;
      } else {
        ++result.memory_bound_ops;
      }
    }
    result.efficiency.compute = result.compute_bound_ops > 0 ? 1.0 / best.x : start.compute;
    result.efficiency.memory = result.memory_bound_ops > 0 ? 1.0 / best.y : start.memory;
    result.rms_relative_error = std::sqrt(best.sse / static_cast<double>(samples.size()));
    options->model_efficiency[model_name] = result.efficiency;
    results.push_back(result);
  }
  return results;
}

}  // namespace hx::cost
