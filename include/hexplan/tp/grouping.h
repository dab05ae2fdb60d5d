#pragma once
// AsymGroup's capability model and group formation (paper 003, §V-A and §V-C).
//
// Every node n has a capability c_n (its GPUs' summed relative throughput); C = sum c_n. Work and
// data are split in proportion to capability (B_n = B * c_n / C). The nodes are partitioned into k
// groups laid out on a ring; a linear layer costs an intergroup ring all-gather (eqs. 2-3) plus an
// intragroup reduce-scatter (eq. 4); the total is eq. 5. The cost is in units of the activation
// size B: multiply by the activation bytes of a collective to get the bottleneck node's bytes.

#include <cstdint>
#include <string>
#include <vector>

#include "hexplan/core/registry.h"
#include "hexplan/core/status.h"

namespace hx::tp {

// Groups in ring order; each group lists node indices (ascending).
struct Grouping {
  std::vector<std::vector<int>> groups;
  int k() const { return static_cast<int>(groups.size()); }
  std::string ToString() const;  // "{0,1,2} {3,4}"
};

// Checks capabilities are finite and > 0; names the offending node.
Status ValidateCapabilities(const std::vector<double>& capabilities);
// Checks every node is in exactly one group and no group is empty.
Status ValidateGrouping(const Grouping& grouping, int num_nodes);

// Splits `items` into integer shares proportional to `weights` (largest remainder; ties go to the
// lower index). Fig. 4(d): 12 items over [1,1,2] -> [3,3,6].
std::vector<int64_t> ProportionalSplit(int64_t items, const std::vector<double>& weights);
// The real-valued split B_n = B * c_n / C.
std::vector<double> BatchSplit(double batch, const std::vector<double>& capabilities);

struct AsymCost {
  double all_gather = 0.0;      // eq. 3 (sum of eq. 2 over k-1 steps)
  double reduce_scatter = 0.0;  // eq. 4
  double total() const { return all_gather + reduce_scatter; }
  std::vector<double> step_costs;  // eq. 2 per step s = 0..k-2
  int dominant_group = -1;         // the group that sets the larger of the two terms
};

// Eqs. 2-5 for activation size `batch` (1.0 gives the cost as a fraction of the activation).
AsymCost EvaluateAsymCost(const std::vector<double>& capabilities, const Grouping& grouping,
                          double batch = 1.0);
// Eq. 7: the symmetric 2D cost B/g * ((k-1) + (g/k-1)) (also eq. 1 of the paper).
double SymmetricCost(double batch, double g, double k);
// 1D (Megatron) cost of one all-gather or reduce-scatter: B (g-1)/g.
double OneDCost(double batch, double g);

enum class GroupAlgo {
  kGreedy,     // the paper's: sorted contiguous initial assignment + iterative reassignment
  kExact,      // exhaustive over set partitions and ring orders (small N only)
  kOptimized,  // ours: greedy, then moves, swaps and ring reordering from several starts
};

// The grouping algorithms by name (`hexplan tp --group-algo NAME`), listed once in
// src/tp/grouping.cc.
struct GroupAlgoEntry {
  std::string name;
  std::string description;  // one line, for help texts
  GroupAlgo algo = GroupAlgo::kOptimized;
};
// Every grouping algorithm, in the order above.
const std::vector<GroupAlgoEntry>& GroupAlgos();
// The same algorithms by name. Find of an unknown name returns NotFound
// "--group-algo: unknown grouping algorithm 'NAME' (known: ...)".
const Registry<GroupAlgoEntry>& GroupAlgoRegistry();
const char* GroupAlgoName(GroupAlgo algo);
StatusOr<GroupAlgo> ParseGroupAlgo(const std::string& name);  // GroupAlgoRegistry().Find

struct GroupingOptions {
  GroupAlgo algo = GroupAlgo::kOptimized;
  int max_exact_nodes = 8;    // kExact refuses larger N; kOptimized uses it when N <= this
  int max_iterations = 1000;  // reassignment iterations
  Status Validate() const;
};

struct GroupingResult {
  Grouping grouping;
  AsymCost cost;
  int iterations = 0;
  int64_t evaluations = 0;  // cost evaluations done
};

// The paper's initial assignment: nodes sorted by capability, cut into k contiguous runs whose
// capability sums are as close as possible to C/k.
Grouping SortedInitialGrouping(const std::vector<double>& capabilities, int k);

// Partitions the nodes into exactly k groups. Errors: a bad capability, k < 1 or k > N, or kExact
// with N > max_exact_nodes.
StatusOr<GroupingResult> FormGroups(const std::vector<double>& capabilities, int k,
                                    const GroupingOptions& options = {});

// Tries every k in 1..N and keeps the cheapest by `score` (default: eq. 5); ties to the smaller k.
struct AutoGroupingResult {
  GroupingResult best;
  std::vector<double> cost_per_k;  // index k-1: the eq. 5 cost of the k-group result
};
StatusOr<AutoGroupingResult> FormGroupsAutoK(const std::vector<double>& capabilities,
                                             const GroupingOptions& options = {});

}  // namespace hx::tp
