#pragma once
// Every fit of the calibrated GPU cost model (issue 21) from the measured data in
// ../shared/data, with its error against the bound the issue sets: operator classes per device
// model (LLMCompass and vidur on A100, vidur on H100, PipeDream on V100), PipeDream's per-layer
// error per model, and NCCL all-reduce lines per system. `hexplan calibrate --report` prints it;
// ApplyFits puts the fitted values into a DeviceCalibration. docs/cost-model.md "Fits".

#include <map>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/cost/device_calibration.h"
#include "hexplan/cost/fit_op_class.h"

namespace hx::cost {

// The errors of one class fit on the samples of one group (a source and its model).
struct GroupErrors {
  std::string group;
  FitErrors fitted;    // on the group's samples the fit saw
  FitErrors held_out;  // on the rest
};

struct ClassFitResult {
  OpClass op_class = OpClass::kOther;
  ClassFit fit;
  double bound = 0.0;  // geomean bound on fit and held-out error per group; 0: none (see models)
  std::vector<GroupErrors> groups;
  std::vector<GroupErrors> operators;  // by the sources' operator names; not held to the bound
  bool pass = true;
};

// PipeDream's number: the median |relative error| of a model's layers. Its profiles name no GPU,
// and issue 21 says to use them "for per-layer shape, not absolute speed, if the assumption is
// weak": beside the absolute error, the shape error, after one speed factor per model (the
// geometric mean of measured / predicted over the model's layers in the fitted half, applied to
// both halves, so the held-out layers are predicted with a factor they did not set).
struct ModelErrors {
  std::string model;
  FitErrors all;              // every layer
  FitErrors held_out;         // the layers no class fit saw
  double speed_factor = 1.0;  // measured / predicted, geomean over the fitted half (1: none there)
  FitErrors shape_all;        // every layer, predicted x speed_factor
  FitErrors shape_fitted;     // the fitted half, likewise
  FitErrors shape_held_out;   // the held-out half, with the fitted half's factor
  double bound = 0.15;
  bool pass = true;  // the shape medians (all layers, held out) within the bound
};

// The errors of each model (OpSample::group) under `fits` (a layer whose class has no fit is left
// out): `fitted` are the layers the class fits saw, `held_out` the rest.
std::vector<ModelErrors> PerModelErrors(const std::map<OpClass, ClassFit>& fits,
                                        const DevicePeak& peak, const std::vector<OpSample>& fitted,
                                        const std::vector<OpSample>& held_out);

struct CollectiveFitResult {
  std::string system;  // vidur's folder ("a100_dgx")
  CollectiveCalibration calibration;
  double bound = 0.10;            // geomean, fit and held-out
  double nccl_latency_s = 0.0;    // NCCL's Ring/LL model latency for the same ring
  double fitted_latency_s = 0.0;  // the fit's time of a 0-byte all-reduce
  bool written = false;           // whether it belongs in the model's calibration file
  bool pass = true;
};

// A fitted class curve against kernels of a named device that no fit saw (DeepBench's V100
// kernels against the V100 curves, which PipeDream's profiles of an assumed V100 set): the
// kernel's time alone (ClassKernelSeconds: no harness constant, no launch), so the ratio says how
// far the file's absolute speed is from that device's library kernels. Reported, not bounded.
struct KernelCheck {
  OpClass op_class = OpClass::kOther;
  std::string source;
  int samples = 0;
  double ratio = 1.0;  // predicted / measured, geometric mean
  FitErrors errors;    // |predicted / measured - 1|
};

// The checks of `samples` by class against `fits` (a class without a fit is left out).
std::vector<KernelCheck> CheckKernels(const std::map<OpClass, ClassFit>& fits,
                                      const DevicePeak& peak, const std::vector<OpSample>& samples,
                                      const std::string& source);

struct DeviceFits {
  std::string model;        // hw::DeviceSpec model the fits are for
  std::string measured_on;  // the sources' devices
  std::string dtype;        // the peak the efficiencies are fractions of ("fp16", "fp32")
  DevicePeak peak;
  std::vector<ClassFitResult> classes;
  std::vector<ModelErrors> models;  // PipeDream only
  std::vector<CollectiveFitResult> collectives;
  std::vector<KernelCheck> kernel_checks;  // not fitted: V100 DeepBench's, A100 vidur's FlashInfer
  bool pass() const;
};

struct CalibrationFits {
  std::vector<DeviceFits> devices;
  bool pass() const;
};

// The device models fitted here: A100-SXM4-80GB, H100-SXM5-80GB, V100-SXM2-32GB.
// The measured operator samples of one of them (every class), as RunCalibrationFits reads them.
StatusOr<std::vector<OpSample>> ReadCalibrationSamples(const std::string& data_dir,
                                                       const std::string& model);
// The peak its efficiencies are fractions of: fp16 tensor-core FLOP/s for A100 and H100 (the
// LLMCompass and vidur data are fp16), fp32 for V100 (PipeDream trained in fp32).
StatusOr<DevicePeak> CalibrationPeak(const std::string& model);

// Runs every fit on the data under `data_dir` (the layout of ../shared/data). A missing file is
// NotFound naming it.
StatusOr<CalibrationFits> RunCalibrationFits(const std::string& data_dir);

// The all-reduce fits of vidur's <gpu>_dgx (NVSwitch; written to the calibration) and
// <gpu>_pairwise_nvlink (PCIe boards with NVLink bridges; reported only) profiles, each GPU count
// on one node, fitted on every other size and held out on the rest, beside NCCL's own latency
// model (tp/NVIDIA-nccl); then the custom all-reduce fits of the same GPU (CustomCollectiveFits).
StatusOr<std::vector<CollectiveFitResult>> VidurCollectiveFits(const std::string& data_dir,
                                                               const std::string& gpu);

// A custom all-reduce (library "custom") per GPU count from the published kernel timings
// (custom_all_reduce_data.h), up to two lines (one-shot, two-shot), fitted on every size, with
// each size held out in turn (leave-one-out: six or seven sizes a set); max_bytes is the largest
// size measured (larger messages go to NCCL).
struct PublishedAllReduceSet;
StatusOr<CollectiveFitResult> FitCustomAllReduce(const PublishedAllReduceSet& set);
StatusOr<std::vector<CollectiveFitResult>> CustomCollectiveFits(const std::string& gpu);

// Puts the fitted classes and the written collectives into `calibration`, replacing those of the
// same class / collective, fabric and GPU count and keeping everything else; sets measured_on
// where the file has none, and adds the fits' sources to it where it names others. A parent class
// with no data of its own (normalization on H100, where vidur has only RMSNorm) takes its fitted
// kind's curve as an assumption (samples 0, the source says so).
void ApplyFits(const DeviceFits& fits, DeviceCalibration& calibration);

}  // namespace hx::cost
