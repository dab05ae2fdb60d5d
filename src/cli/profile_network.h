#pragma once
// `mpirun -np N hexplan profile ... --network FILE`: point-to-point and all-reduce times between
// the ranks, fitted to the alpha-beta model with the cost layer's collective fitter
// (cost/fit_collective.h; the one fit for NCCL's data and for ours). docs/runtime.md, "Across
// machines".

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/cost/fit_collective.h"
#include "hexplan/exec/communicator.h"

namespace hx::cli {

struct NetworkProfileOptions {
  int64_t min_bytes = int64_t{4} << 10;   // 4 KiB
  int64_t max_bytes = int64_t{64} << 20;  // 64 MiB
  int step = 4;                           // sizes go up by this factor (2..16)
  int repeats = 5;                        // timed round trips / all-reduces per size (median)
  // Idle time before each timed message or collective (both ranks), so that a link's token bucket
  // refills and every repetition sees the link as an isolated message does.
  int gap_us = 0;
  Status Validate() const;  // at least three sizes
};

// The fits of an earlier run (its --network file), to check on this run's samples.
struct NetworkFits {
  std::vector<cost::AllReduceModel> p2p;  // per peer rank, index 0 unused
  cost::AllReduceModel all_reduce;
  int ranks = 0;
};
StatusOr<NetworkFits> ReadNetworkFits(const std::string& path);

// The fit's options: size regimes (up to three, a further one must halve the squared error).
cost::AllReduceFitOptions NetworkFitOptions();

struct NetworkProfile {
  int ranks = 0;
  // Per peer rank 1..N-1 (index 0 unused): one-way times between rank 0 and it (half a round
  // trip) and their fit: latency = 2 * alpha_s of a two-rank "ring" (t = 2 alpha + S / bw).
  // Every fit is made on every other size (the first, third, ...); the sizes between are held
  // out and checked.
  std::vector<std::vector<cost::CollectiveSample>> p2p;
  std::vector<cost::AllReduceModel> p2p_fit;
  std::vector<cost::CollectiveSample> all_reduce;  // over every rank
  cost::AllReduceModel all_reduce_fit;
  std::string all_reduce_algorithm;  // the transport's (Communicator::all_reduce_algorithm)
  // Measured, not fitted (the fitter models a ring all-reduce); bytes: the gathered result, the
  // reduced input.
  std::vector<cost::CollectiveSample> all_gather, reduce_scatter;
  // With each fit's errors on its samples, on the held-out sizes and, given `prior` (an earlier
  // run's fits, same ranks), the prior fit's error on this run's samples.
  nlohmann::json ToJson(const NetworkFits* prior = nullptr) const;
};

// Every rank calls it (collective). Times are rank 0's; the result is complete on rank 0 only.
// The collectives' results are checked (Internal when a transport returns wrong values).
StatusOr<NetworkProfile> MeasureNetwork(exec::Communicator& comm,
                                        const NetworkProfileOptions& options);

}  // namespace hx::cli
