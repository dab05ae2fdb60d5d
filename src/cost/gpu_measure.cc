// The fits of `hexplan calibrate --measure` (gpu_measure.h); the measurements themselves are in
// src/cost_cuda/gpu_measure_cuda.cc, compiled only with the CUDA toolkit.
#include "hexplan/cost/gpu_measure.h"

#include <algorithm>
#include <cmath>

namespace hx::cost {

Status GpuMeasureOptions::Validate() const {
  if (device < 0) return InvalidArgument("--device must be >= 0, got " + std::to_string(device));
  if (repeats < 1 || repeats > 1000)
    return InvalidArgument("--repeats must be in 1..1000, got " + std::to_string(repeats));
  if (!(link_bytes_per_s > 0)) return InvalidArgument("--link-gbps must be > 0");
  return Status::Ok();
}

#ifndef HX_HAVE_CUDA
bool GpuMeasureAvailable() { return false; }

StatusOr<GpuMeasurements> MeasureGpu(const GpuMeasureOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  return Unimplemented(
      "this hexplan was built without the CUDA toolkit, so it cannot measure a GPU: rebuild "
      "where CMake finds it (find_package(CUDAToolkit), e.g. /usr/local/cuda)");
}
#endif

StatusOr<CopyFit> FitCopy(const std::vector<CopySample>& samples, double link_bytes_per_s,
                          const std::string& source) {
  if (samples.size() < 2) return InvalidArgument("a copy fit needs >= 2 samples");
  // t = a + b S, minimising sum ((a + b S - t) / t)^2: the 2x2 normal equations.
  double s11 = 0, s12 = 0, s22 = 0, r1 = 0, r2 = 0;
  for (const CopySample& c : samples) {
    if (!(c.seconds > 0) || !(c.bytes > 0))
      return InvalidArgument("a copy sample needs bytes and time > 0");
    const double x1 = 1.0 / c.seconds, x2 = c.bytes / c.seconds;
    s11 += x1 * x1, s12 += x1 * x2, s22 += x2 * x2, r1 += x1, r2 += x2;
  }
  const double det = s11 * s22 - s12 * s12;
  double a = det != 0 ? (r1 * s22 - r2 * s12) / det : 0.0;
  double b = det != 0 ? (s11 * r2 - s12 * r1) / det : r2 / s22;
  if (a < 0 || !(b > 0)) a = 0, b = r2 / s22;  // the pure-bandwidth line
  CopyFit fit;
  fit.fixed_s = a;
  fit.fraction = 1.0 / (b * link_bytes_per_s);
  fit.source = source;
  return fit;
}

StatusOr<DeviceCalibration> CalibrationFromMeasurements(const GpuMeasurements& m,
                                                        const std::string& model,
                                                        const DevicePeak& peak,
                                                        double link_bytes_per_s) {
  DeviceCalibration c;
  c.model = model;
  c.measured_on = m.device_name + " (hexplan calibrate --measure)";
  c.kernel_launch_s = m.launch_s;
  const std::string source = "measured: " + m.device_name;
  HX_ASSIGN_OR_RETURN(c.copy.h2d_pinned, FitCopy(m.h2d_pinned, link_bytes_per_s, source));
  HX_ASSIGN_OR_RETURN(c.copy.h2d_pageable, FitCopy(m.h2d_pageable, link_bytes_per_s, source));
  HX_ASSIGN_OR_RETURN(c.copy.d2h_pinned, FitCopy(m.d2h_pinned, link_bytes_per_s, source));
  HX_ASSIGN_OR_RETURN(c.copy.d2h_pageable, FitCopy(m.d2h_pageable, link_bytes_per_s, source));
  HX_ASSIGN_OR_RETURN(c.classes[OpClass::kGemm],
                      FitClassWithHeldOut(m.gemm, peak, source + ", cuBLAS fp16 GEMM sweep"));
  HX_ASSIGN_OR_RETURN(c.classes[OpClass::kElementwise],
                      FitClassWithHeldOut(m.memory, peak, source + ", device-to-device copies"));
  c.notes.push_back("copy fractions are of --link-gbps " + std::to_string(link_bytes_per_s / 1e9) +
                    " GB/s");
  return c;
}

}  // namespace hx::cost
