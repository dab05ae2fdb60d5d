#pragma once
// SortingHat (Namkoong et al., ICS'25; docs/placement.md "SortingHat"): the model is cut at the
// dominators of its output (§3.1) into submodels; each submodel is scheduled by a MILP (§3.3) over
// k GPUs x q subgraph slots (odd slots run with direct host access), carrying the previous
// submodels' state (PrevM, PrevDTFin per PCIe bus, PrevSGFin per GPU, FixedNodes) and with the
// §3.4 adjusted constants; the schedules are merged into one plan with per-GPU subgraph queues and
// per-bus parameter copy queues in MILP order (`--algo sortinghat`).

#include <string>
#include <vector>

#include "hexplan/core/id.h"
#include "hexplan/core/status.h"
#include "hexplan/graph/graph.h"
#include "hexplan/place/plan_status.h"
#include "hexplan/place/planner.h"

namespace hx::place {

// §3.1: the sink's dominators cut the model. Submodel s holds the ops after the (s*ndom)-th
// dominator up to and including the ((s+1)*ndom)-th (the ops before the first dominator go with
// the first submodel, so Fig. 6 gives {A, B, C, D} and {E, F, G}). Ops that no graph input reaches
// (constants and what is computed from weights alone) go with their first consumer; a weight
// belongs to the submodel of its first reader.
struct SortingHatPartition {
  std::vector<NodeId> dominators;              // the sink's dominators, topological order
  std::vector<std::vector<NodeId>> submodels;  // ops of each submodel, topological order
  std::vector<int> submodel_of;                // per node: its submodel (ops, weights), else -1
};
StatusOr<SortingHatPartition> PartitionByDominators(const graph::Graph& graph,
                                                    int dominators_per_submodel);

// One submodel's MILP, for reports and the bench.
struct SortingHatSubmodelStats {
  int units = 0;    // MILP nodes after folding constants and contracting chains
  int weights = 0;  // parameter nodes decided in this submodel
  size_t variables = 0;
  size_t constraints = 0;
  PlanStatus status = PlanStatus::kWarmStart;  // warm_start when the MILP was skipped
  std::string warm_start;                      // which warm start seeded it
  double warm_objective_s = 0.0;
  double objective_s = 0.0;  // TotalLatency of the kept solution
  double bound_s = 0.0;
  double solve_time_s = 0.0;
};

// `--ablation`: SortingHat with one of its ideas taken out (§5.4), returning its own plan.
enum class SortingHatAblation {
  kNone,
  kNoContention,  // "no-contention": parameter copies queue per GPU, not per PCIe bus
  kNoTopology,    // "no-topology": copies between GPUs priced without the topology
  kIndependent,   // "independent": each GPU scheduled on its own
};
const char* SortingHatAblationName(SortingHatAblation ablation);  // "" for kNone

// The options SortingHat owns (--q, --ndom, --submodel-time-limit, --ablation), typed.
struct SortingHatSettings {
  int subgraphs_per_gpu = 6;         // q
  int dominators_per_submodel = 1;   // ndom
  double submodel_time_limit_s = 0;  // per-submodel MILP limit; 0: the time limit split evenly
  SortingHatAblation ablation = SortingHatAblation::kNone;
};

struct SortingHatReport {
  std::vector<SortingHatSubmodelStats> submodels;
  double milp_estimate_s = 0.0;  // TotalLatency of the last submodel (the merged plan's estimate)
  double merged_sim_s = 0.0;     // the merged plan, simulated (0 when it was not valid)
  bool kept_milp = true;         // the merged MILP plan was returned
  std::string kept_warm_start;   // else: the warm-start planner whose plan was returned
  int out_of_time = 0;  // submodels not solved because the time limit was spent (warm start kept)
};

// The planner's work (the registry's `sortinghat`), with its report. Reads the planner options q,
// ndom, submodel-time-limit (0: the time limit split over the submodels) and ablation from
// request.planner_options, and threads, seed and gap from request.options.
StatusOr<PlanResult> PlanSortingHat(const PlanRequest& request, SortingHatReport* report = nullptr);

}  // namespace hx::place
