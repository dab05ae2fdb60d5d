#pragma once
// Request-level latency under load (`hexplan tp MODEL --cluster C --rate R`): requests of the
// workload's prompt and output lengths arrive as a Poisson process of R per second and are served
// with continuous batching (iteration-level scheduling, Orca, OSDI 2022): before every decode
// iteration the waiting requests are admitted up to the batch limit and prefilled together (their
// first token); then one decode step advances every running request by a token. Iteration times
// come from the tensor-parallel step model at each batch size (PlanTensorParallel).

#include <cstdint>

#include "hexplan/core/status.h"
#include "hexplan/tp/llm_tp.h"

namespace hx::tp {

// The slowest arrival rate served (requests per second; docs/formats.md "Caps").
inline constexpr double kMinServingRate = 1e-6;

struct ServingOptions {
  double rate = 1.0;   // requests per second (> 0)
  int requests = 200;  // simulated requests (1..100000)
  int max_batch = 0;   // running requests at most; 0 = the workload's batch
  uint64_t seed = 1;   // the arrival times' random stream
  Status Validate() const;
};

struct Percentiles {
  double p50 = 0.0, p99 = 0.0;
};

struct ServingResult {
  int requests = 0;
  Percentiles ttft_s;         // arrival -> first token (queueing + prefill)
  Percentiles tpot_s;         // first token -> last, per further token
  Percentiles latency_s;      // arrival -> last token
  double mean_running = 0.0;  // running requests per decode iteration
  double makespan_s = 0.0;
};

StatusOr<ServingResult> SimulateServing(const TpSystem& system, const LlmShape& shape,
                                        const LlmWorkload& workload, const TpOptions& options,
                                        const ServingOptions& serving);

}  // namespace hx::tp
