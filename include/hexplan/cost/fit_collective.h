#pragma once
// Fitting the alpha-beta collective model to measured NCCL all-reduce times (vidur's profiles in
// ../shared/data/tp/microsoft-vidur) and reporting the error per message size.
//
// A ring all-reduce of S bytes on n GPUs takes 2(n-1) steps of S/n bytes:
//   t = 2(n-1) * alpha + 2(n-1)/n * S / busbw.
// NCCL switches protocol (LL, LL128, Simple) and channel count with the size, each with its own
// latency and bandwidth, and takes the fastest; so the fitted model is the minimum over up to three
// such (alpha, busbw) lines. With one line it is the plain alpha-beta model.

#include <cstdint>
#include <string>
#include <vector>

#include "hexplan/core/status.h"

namespace hx::cost {

struct CollectiveSample {
  double bytes = 0.0;
  double seconds = 0.0;
};

// Reads vidur's all_reduce.csv rows with the given num_workers and devices_per_node (median time).
StatusOr<std::vector<CollectiveSample>> ReadVidurAllReduce(const std::string& path, int num_workers,
                                                           int devices_per_node);

struct AlphaBetaLine {
  double alpha_s = 0.0;          // per ring step
  double bus_bytes_per_s = 0.0;  // bus bandwidth
  // Time of an all-reduce of `bytes` on `gpus` GPUs along this line.
  double AllReduceSeconds(double bytes, int gpus) const;
};

struct AllReduceModel {
  int gpus = 2;
  std::vector<AlphaBetaLine> lines;  // the model takes the fastest line
  double AllReduceSeconds(double bytes) const;
};

struct AllReduceFitOptions {
  int max_lines = 3;  // 1 = plain alpha-beta
  int max_iterations = 100;
  Status Validate() const;
};

// Least squares on the relative error (each sample weighted by 1/t^2); lines are refitted on the
// samples they predict best until the assignment is stable.
StatusOr<AllReduceModel> FitAllReduce(const std::vector<CollectiveSample>& samples, int gpus,
                                      const AllReduceFitOptions& options = {});

struct SizeBucketError {
  double min_bytes = 0.0;  // bucket [min, max)
  double max_bytes = 0.0;
  int samples = 0;
  double geomean_rel_error = 0.0;  // geometric mean of |pred - meas| / meas
  double mean_rel_error = 0.0;
};

struct AllReduceFitReport {
  int samples = 0;
  double geomean_rel_error = 0.0;
  double mean_rel_error = 0.0;
  double median_rel_error = 0.0;
  std::vector<SizeBucketError> buckets;  // by message size, powers of 8 from 1 KiB
};

// Errors of `model` on `samples` (|rel error| floored at 1e-4 for the geometric mean).
AllReduceFitReport EvaluateFit(const AllReduceModel& model,
                               const std::vector<CollectiveSample>& samples);

// Fits on every other sample (by size) and evaluates on the rest: a held-out check.
StatusOr<AllReduceFitReport> HeldOutFit(const std::vector<CollectiveSample>& samples, int gpus,
                                        const AllReduceFitOptions& options = {});

}  // namespace hx::cost
