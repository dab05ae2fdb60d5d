#pragma once
// SortingHat's per-submodel MILP (§3.3, constraints (2)-(23)) on abstract constants: units (ops
// folded together), parameter nodes, inputs fixed by earlier submodels, and the carried state of
// Table 1. Internal to the place layer (src/place/sortinghat_*.cc).

#include <string>
#include <vector>

#include "hexplan/core/logger.h"
#include "hexplan/core/status.h"
#include "hexplan/place/exact/exact_planner.h"
#include "hexplan/place/plan_status.h"

namespace hx::place::sortinghat {

// The cluster as the MILP sees it: k GPUs, q slots each; slot s is GPU s / q, position s % q;
// even positions (the paper's odd j) run with direct host access.
struct Topology {
  int k = 0;
  int q = 6;
  std::vector<int> bus_of;              // per GPU: its PCIe bus
  std::vector<std::vector<int>> buses;  // per bus: its GPUs (round-robin order)
  std::vector<double> memory;           // M_i, bytes
  int num_slots() const { return k * q; }
  int gpu_of(int slot) const { return slot / q; }
  int pos_of(int slot) const { return slot % q; }
  bool dha_slot(int slot) const { return slot % q % 2 == 0; }
  // The per-bus order of parameter copies (round-robin preemption, Fig. 7(d)): for each position,
  // the bus's GPUs in turn.
  std::vector<int> BusChain(int bus) const;
};

// An operator node of the MILP: one or more ops that always share a subgraph.
struct Unit {
  std::vector<double> time;      // P^GPU per GPU (+inf: unsupported)
  std::vector<double> time_dha;  // P^DHA per GPU
  double memory = 0.0;           // m_v: activation bytes it writes
  // Time to copy its outputs read by other units from GPU a to GPU b: copy[a][b].
  std::vector<std::vector<double>> copy;
};

// A parameter node decided in this submodel.
struct Weight {
  double bytes = 0.0;
  std::vector<double> load;               // T_{0,i} * m_w: host -> GPU i
  std::vector<std::vector<double>> copy;  // forward GPU a -> GPU b (parallel transmission)
  bool no_dha = false;                    // read again by later submodels: never left in DRAM
  std::vector<int> readers;               // units
};

// A FixedNode: an activation or parameter placed by an earlier submodel.
struct External {
  double ready = 0.0;           // when it is available where it lives
  std::vector<double> copy_to;  // time to make it available on each GPU (0 where it is)
  double bytes = 0.0;
  std::vector<int> readers;  // units
};

struct Carried {
  std::vector<double> prev_sg_fin;  // per GPU
  std::vector<double> prev_dt_fin;  // per bus
  std::vector<double> prev_memory;  // per GPU, bytes
};

struct Problem {
  Topology topo;
  std::vector<Unit> units;
  std::vector<std::pair<int, int>> edges;  // unit -> unit
  std::vector<Weight> weights;
  std::vector<External> externals;
  Carried carried;
  // Independent scheduling (ablation): the bus chains are per GPU instead of per PCIe bus.
  bool per_gpu_chains = false;
};

// A schedule of the submodel: the slot of every unit and weight (weights: -1 = DRAM, DHA).
struct Assignment {
  std::vector<int> unit_slot;
  std::vector<int> weight_slot;
};

// The minimal times an assignment implies (the MILP's values, variable by variable).
struct Timing {
  bool valid = false;
  std::string why;                               // when not valid
  std::vector<double> sg_start, sg_fin, dt_fin;  // per slot
  std::vector<double> unit_fin;                  // per unit
  std::vector<double> memory;                    // per GPU, bytes (PrevM included)
  double total = 0.0;                            // TotalLatency
};
Timing Evaluate(const Problem& p, const Assignment& a);

struct SolveOptions {
  double time_limit_s = 1.0;
  double relative_gap = 1e-4;
  int threads = 1;
  int seed = 1;
  bool contiguity = true;         // constraints (6)-(8)
  bool symmetry_breaking = true;  // order identical GPUs by work
  // Hand the warm start to CBC as a MIP start. Off: CBC 2.10 crashes in
  // CglPreProcess::postProcess with these starts on some submodels. The warm start still bounds
  // every time variable (the horizon), which cuts every schedule slower than it, and is kept when
  // CBC finds nothing better.
  bool mip_start = false;
  // --export-lp, --export-mps and --solution for this submodel's MILP (exact_planner.h; the time,
  // gap, threads and seed above are the ones used).
  MilpSettings files;
};

struct Solution {
  Assignment assignment;
  Timing timing;
  PlanStatus status = PlanStatus::kWarmStart;  // optimal, feasible or warm_start (kept)
  double bound = 0.0;
  size_t variables = 0;
  size_t constraints = 0;
  double solve_time_s = 0.0;
};

// Solves the MILP from the warm start (which must evaluate as valid and within memory).
StatusOr<Solution> Solve(const Problem& p, const Assignment& warm, const SolveOptions& options,
                         Logger* logger);

}  // namespace hx::place::sortinghat
