#pragma once
// Reconfiguration when one service's SLO or rate changes (ParvaGPU §III-F, without draining):
// no re-profiling and the smallest change that serves the new demand. The service keeps its
// segments that still meet the new SLO share and are needed for its new rate (times the headroom
// its plan was verified with); segments no longer needed go, largest first, from the last GPU
// first; the missing capacity is added as new segments (Demand Matching) in the free space (first
// fit, preferred slots, new GPUs only if needed). Every other service's instances stay where they
// are, GPU numbers are kept, and the deployment outputs cover only the GPUs that change
// (DeployScope), since mig-parted cannot add instances to a GPU in use without reconfiguring it.

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

// "ID:rate=R,slo=S" (either key may be left out); ID is a service id (FindServiceById).
StatusOr<ServiceChange> ParseServiceChange(const std::string& text);

// The service `id` names: its unique id (`bert#2`), or a model served by exactly one service. A
// model served several times is ambiguous (InvalidArgument listing their ids); an unknown id is
// NotFound listing the services.
StatusOr<int> FindServiceById(const ShareProblem& problem, const std::string& id);

StatusOr<ReconfigureResult> Reconfigure(const ShareProblem& problem, const SharePlan& plan,
                                        const ShareOptions& options, const ServiceChange& change);

}  // namespace hx::share
