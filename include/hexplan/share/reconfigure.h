#pragma once
// Reconfiguration when one service's SLO or rate changes (ParvaGPU §III-F): no re-profiling; the
// Segment Configurator recomputes that service's segments, the service is removed from the
// deployment map and its new segments are relocated into the free space (first fit, preferred
// slots, new GPUs only if needed). GPU numbers are kept; only GPUs whose segments change are
// touched.

#include <string>
#include <vector>

#include "hexplan/share/plan.h"

namespace hx::share {

struct ServiceChange {
  std::string service;
  double rate = 0;    // <= 0: unchanged
  double slo_ms = 0;  // <= 0: unchanged
};

struct ReconfigureResult {
  ShareProblem problem;       // with the changed service
  SharePlan plan;             // GPUs left empty stay listed (released) so numbers are stable
  std::vector<int> touched;   // GPUs whose segments changed
  std::vector<int> released;  // GPUs left empty
  std::vector<int> added;     // GPUs newly opened
};

// "NAME:rate=R,slo=S" (either key may be left out).
StatusOr<ServiceChange> ParseServiceChange(const std::string& text);

StatusOr<ReconfigureResult> Reconfigure(const ShareProblem& problem, const SharePlan& plan,
                                        const ShareOptions& options, const ServiceChange& change);

}  // namespace hx::share
