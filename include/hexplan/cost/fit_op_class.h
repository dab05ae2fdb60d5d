#pragma once
// Fitting one operator class's efficiency curve (ClassFit in device_calibration.h) to measured
// kernel times: LLMCompass's and vidur's operator times, PipeDream's per-layer times
// (calibration_data.h reads them), or `hexplan profile`'s own measurements.
//
// The curve t = max(min_s, fixed_s + max((F + Fh) / (P cmax), (B + Bh) / (W mmax))) is a maximum
// of two lines plus a constant, above a floor; a fixed cost and the two half points cannot be told
// apart where one line dominates, so the fit searches the canonical form
// t = max(floor, a + F / (P cmax), b + B / (W mmax)) and writes fixed_s = min(a, b),
// Fh = (a - fixed_s) P cmax, Bh = (b - fixed_s) W mmax, min_s = floor.

#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/cost/device_calibration.h"

namespace hx::cost {

// One measured kernel: its class, FLOPs, bytes moved and time.
struct OpSample {
  OpClass op_class = OpClass::kOther;
  std::string label;    // the source's operator name ("matmul", "mlp_up_proj", "Conv2d", ...)
  std::string group;    // what the error is summarised by besides the class (a model, a source)
  std::string harness;  // the measurement harness, when it adds its own constant (ClassFit)
  double flops = 0.0;
  double bytes = 0.0;
  double seconds = 0.0;
};

// The peak rates the efficiencies are fractions of (hw::DeviceSpec's, at the data's dtype).
struct DevicePeak {
  double flops_per_s = 0.0;
  double bytes_per_s = 0.0;
};

// The curve's time for a kernel of `flops` and `bytes` (device_calibration.h's formula; a term
// with zero FLOPs or bytes does not count).
double ClassKernelSeconds(const ClassFit& fit, const DevicePeak& peak, double flops, double bytes);
// What the sample's source would report: the kernel's time plus its harness's constant.
double MeasuredSeconds(const ClassFit& fit, const DevicePeak& peak, const OpSample& sample);

struct FitErrors {
  int samples = 0;
  double geomean = 0.0;  // geometric mean of |predicted / measured - 1| (each floored at 1e-4)
  double median = 0.0;   // median of the same
  double max = 0.0;
};
// The summary of a list of |relative errors|.
FitErrors SummariseErrors(std::vector<double> relative_errors);
FitErrors EvaluateClassFit(const ClassFit& fit, const DevicePeak& peak,
                           const std::vector<OpSample>& samples);

// Least squares on log(predicted / measured) over `samples` by a deterministic pattern search
// from 16 fixed starting points (efficiencies kept in [0.001, 1]), each source (a sample group's
// first word) weighing the same whatever its size, with one constant per
// named harness besides the curve. Where every sample has a harness the constant goes to the
// harnesses, not fixed_s. Fills the curve, harness_s and `samples` / `fit_error`; not `source`
// or `held_out_error`.
StatusOr<ClassFit> FitClassCurve(const std::vector<OpSample>& samples, const DevicePeak& peak);

// Orders the distinct shapes (class, FLOPs, bytes) of the samples by their roofline time and fits
// on the samples of every other shape (the 1st, 3rd, ...), reporting the error on those
// (fit_error) and on the samples of the other shapes (held_out_error): a hold-out of shapes, not
// of repeated measurements of one shape. `source` is copied into the fit. Needs >= 4 samples.
StatusOr<ClassFit> FitClassWithHeldOut(const std::vector<OpSample>& samples, const DevicePeak& peak,
                                       const std::string& source);

// The two halves FitClassWithHeldOut uses: the samples of the shapes at even positions of the
// roofline-time order (fitted) and those at odd ones (held out); every sample of a shape goes to
// one half.
void SplitByRooflineTime(const std::vector<OpSample>& samples, const DevicePeak& peak,
                         std::vector<OpSample>& fitted, std::vector<OpSample>& held_out);

}  // namespace hx::cost
