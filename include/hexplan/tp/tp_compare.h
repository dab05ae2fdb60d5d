#pragma once
// `hexplan tp --compare`: every method on the same cluster and workload, side by side, with the
// request-level figures serving engineers reason in (time to first token, time per output token),
// the total, the largest GPU's memory and the communication volume; the fastest marked.

#include <optional>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/tp/llm_tp.h"
#include "hexplan/tp/serving.h"

namespace hx::tp {

struct TpComparison {
  std::vector<TpMethod> methods;            // megatron, autoddl, asymgroup, ideal
  std::vector<StatusOr<TpResult>> results;  // one per method; an error where it has no plan
  int winner = -1;                          // index of the lowest total time, -1 if none planned
  double rate = 0.0;                        // AddServing's arrival rate
  std::vector<std::optional<ServingResult>> serving;  // per method, after AddServing
};

// Plans every method with `options` (its method ignored). A method that fails (memory, a grid
// that does not divide the nodes) keeps its error; ideal is a volume bound with no times.
TpComparison CompareMethods(const TpSystem& system, const LlmShape& shape,
                            const LlmWorkload& workload, const TpOptions& options);

// `--rate`: simulates serving with every method that planned (ServingResult per method).
Status AddServing(TpComparison& comparison, const TpSystem& system, const LlmShape& shape,
                  const LlmWorkload& workload, const TpOptions& options,
                  const ServingOptions& serving);

// The side-by-side table for a terminal.
std::string ComparisonTable(const TpComparison& comparison);

}  // namespace hx::tp
