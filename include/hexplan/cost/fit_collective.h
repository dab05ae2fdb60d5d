#pragma once
// Fitting the alpha-beta collective model to measured NCCL all-reduce times (vidur's profiles in
// ../shared/data/tp/microsoft-vidur) and reporting the error per message size.
//
// A ring all-reduce of S bytes on n GPUs takes 2(n-1) steps of S/n bytes:
//   t = 2(n-1) * alpha + 2(n-1)/n * S / busbw.
// NCCL switches protocol (LL, LL128, Simple) and channel count with the size, each with its own
// latency and bandwidth, and takes the fastest; so the fitted model is the minimum over up to three
// such (alpha, busbw) lines. With one line it is the plain alpha-beta model.
//
// A network between machines has size regimes instead (a token bucket's burst sends small messages
// at line rate and large ones at the shaped rate; MPI switches from eager to rendezvous): the
// `kSizeRegimes` shape fits consecutive size ranges, each with its own line, the breakpoints chosen
// by the fit (docs/runtime.md, "Across machines").

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
  // Empty regime_upper_bytes: the model takes the fastest line. Otherwise size regimes: line k
  // covers sizes up to regime_upper_bytes[k] (one bound fewer than lines; the last line covers
  // everything above).
  std::vector<AlphaBetaLine> lines;
  std::vector<double> regime_upper_bytes;
  double AllReduceSeconds(double bytes) const;
  const AlphaBetaLine& LineFor(double bytes) const;  // the line that prices `bytes`
};

enum class FitShape : uint8_t {
  kFastestLine,  // the minimum over up to max_lines lines (NCCL's protocols)
  kSizeRegimes,  // up to max_lines consecutive size ranges, a line each
};

struct AllReduceFitOptions {
  int max_lines = 3;  // 1 = plain alpha-beta
  int max_iterations = 100;
  FitShape shape = FitShape::kFastestLine;
  // A further line is kept only when it brings the squared error under this share of the best
  // with fewer lines.
  double keep_line_below = 0.99;
  int min_regime_sizes = 3;  // kSizeRegimes: distinct message sizes per regime, at least
  Status Validate() const;
};

// Least squares on the relative error (each sample weighted by 1/t^2). kFastestLine: lines are
// refitted on the samples they predict best until the assignment is stable. kSizeRegimes: every
// split of the distinct sizes into consecutive regimes is tried (dynamic programming); the bound
// between two regimes is where their lines cross, when that lies between the regimes' sizes,
// else the geometric mean of the two sizes.
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

// Each sample predicted by the fit of all the others (leave-one-out): the geometric mean of
// |pred - meas| / meas (floored at 1e-4), for sets too small to halve (six or seven sizes).
StatusOr<double> LeaveOneOutError(const std::vector<CollectiveSample>& samples, int gpus,
                                  const AllReduceFitOptions& options = {});

// Fits on every other sample (by size) and evaluates on the rest: a held-out check.
StatusOr<AllReduceFitReport> HeldOutFit(const std::vector<CollectiveSample>& samples, int gpus,
                                        const AllReduceFitOptions& options = {});

}  // namespace hx::cost
