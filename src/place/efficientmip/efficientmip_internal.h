#pragma once
// Pieces shared by the EfficientMIP files (instance, evaluator, greedy, solver); not a public API.

#include <string>
#include <vector>

#include "hexplan/place/efficientmip/efficientmip.h"

namespace hx::place::efficientmip_internal {

// Inseparable blocks (the greedy's makeBlocks): colour classes, fused when they lie on a cycle of
// the class graph, in a topological order of the contracted graph. The order is the greedy's: a
// stack of ready blocks (last pushed first), sources pushed so that the first in node order is
// taken first, a block's successors pushed in file edge order, one push per edge (this reproduces
// the released greedy.cpp's splits on all eight latency inputs).
struct Blocks {
  std::vector<std::vector<int>> nodes;  // per block (in topological order), its nodes ascending
  std::vector<int> block_of;            // per node
  std::vector<int64_t> size_bytes;      // per block
  std::vector<std::vector<int>> successors;  // block DAG, deduplicated
  std::vector<std::vector<int>> predecessors;
};
Blocks ComputeBlocks(const EfficientMipInstance& instance);

// Another topological order of the same blocks (a permutation of 0..B-1, each block after its
// predecessors): kind 0 = smallest index first (breadth-like), 1 = greedy stack order (identity),
// 2 = longest remaining path first, >= 3 = random ready block (seeded).
std::vector<int> BlockOrder(const Blocks& blocks, const EfficientMipInstance& instance, int kind,
                            uint64_t seed);

// Whether the nodes with in_set[v] form a contiguous set (no path leaves and re-enters it). `mark`
// is scratch of size n.
bool IsContiguous(const EfficientMipInstance& instance, const std::vector<char>& in_set,
                  std::vector<char>& mark);

// The exact latency of a split (seconds), or +infinity with `*error` (may be null) saying why the
// split is invalid. EfficientMipLatency wraps it.
struct SplitTimes {
  std::vector<double> node_finish;      // per node
  std::vector<double> subgraph_start;   // per subgraph
  std::vector<double> subgraph_finish;  // per subgraph
  std::vector<int> node_rank;  // per node: its unit's position in a topological order of the units
};
double SplitLatency(const EfficientMipInstance& instance, const EfficientMipSplit& split,
                    const EfficientMipEvalOptions& options, std::string* error,
                    SplitTimes* times = nullptr);

// A split from a device per node (-1 CPU, else accelerator): each accelerator's nodes cut into
// contiguous pieces run in order (piece of v = how many times a path to v enters the set).
EfficientMipSplit SplitFromDevices(const EfficientMipInstance& instance,
                                   const std::vector<int>& device);

// Nodes in a topological order (Kahn, smallest index first among the ready ones).
std::vector<int> NodeOrder(const EfficientMipInstance& instance);

// Fills successors, predecessors, items_produced and items_read from `items` (readers
// deduplicated).
void FinishAdjacency(EfficientMipInstance& instance);

// Drops empty subgraphs and renumbers (keeping each device's order).
EfficientMipSplit Compact(const EfficientMipSplit& split);

}  // namespace hx::place::efficientmip_internal
