#pragma once
// Measuring the user's own NVIDIA GPU for its calibration file (`hexplan calibrate --measure`):
// host-device copies by size and host memory kind, the cost of one small kernel launch, a cuBLAS
// GEMM sweep and device-to-device copies, then the same fits as the published data get
// (fit_op_class.h). Written against the CUDA runtime and cuBLAS; built only where CMake finds the
// CUDA toolkit (GpuMeasureAvailable()). No CUDA type appears here.

#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/cost/device_calibration.h"
#include "hexplan/cost/fit_op_class.h"

namespace hx::cost {

struct GpuMeasureOptions {
  int device = 0;                     // CUDA device ordinal
  int repeats = 10;                   // timed runs per point (after one warm-up); the median counts
  double link_bytes_per_s = 15.75e9;  // the host link's nominal rate (PCIe gen3 x16 by default)
  Status Validate() const;
};

struct CopySample {
  double bytes = 0.0;
  double seconds = 0.0;
};

struct GpuMeasurements {
  std::string device_name;  // as the driver reports it ("Tesla V100-SXM2-32GB")
  std::vector<CopySample> h2d_pinned, h2d_pageable, d2h_pinned, d2h_pageable;
  double launch_s = 0.0;         // one small kernel, launched and synchronised
  std::vector<OpSample> gemm;    // cuBLAS fp16 GEMMs (tensor cores), kGemm
  std::vector<OpSample> memory;  // device-to-device copies, kElementwise
};

// Whether this build has the CUDA measurements.
bool GpuMeasureAvailable();

// Runs the measurements on `options.device`. Without the CUDA toolkit at build time: an
// InvalidArgument saying so (exit 2). A CUDA error names the call.
StatusOr<GpuMeasurements> MeasureGpu(const GpuMeasureOptions& options);

// A copy kind's line t = fixed_s + S / (L * fraction), least squares on the relative error.
StatusOr<CopyFit> FitCopy(const std::vector<CopySample>& samples, double link_bytes_per_s,
                          const std::string& source);

// The calibration the measurements give: copies, kernel_launch_s, and the gemm and elementwise
// classes (fitted with a held-out half) against `peak`; `model` names the file.
StatusOr<DeviceCalibration> CalibrationFromMeasurements(const GpuMeasurements& measurements,
                                                        const std::string& model,
                                                        const DevicePeak& peak,
                                                        double link_bytes_per_s);

}  // namespace hx::cost
