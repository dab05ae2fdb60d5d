#pragma once
// Shared graph builders for tests: chains, diamonds, fork-joins and seeded random DAGs. Ops are
// MatMuls with weights so that every op has FLOPs and parameters.

#include <cstdint>
#include <string>

#include "hexplan/graph/graph.h"

namespace hx::testing {

// input -> op0 -> op1 -> ... -> op{n-1} -> output; each op a MatMul [rows,width]x[width,width].
graph::Graph MakeChain(int n, int64_t width = 64, int64_t rows = 8);
// input -> a -> {b, c} -> d (Add) -> output.
graph::Graph MakeDiamond(int64_t width = 64);
// input -> fork -> `branches` parallel chains of `depth` MatMuls -> Sum -> output.
graph::Graph MakeForkJoin(int branches, int depth, int64_t width = 64);
// A random DAG of `n` ops (each reads 1..3 earlier tensors, Add/MatMul mix), deterministic per
// seed.
graph::Graph MakeRandomDag(int n, uint64_t seed, int64_t width = 32);
// SortingHat's Fig. 6(a): input A -> {B, C} -> D -> {E, F} -> G (output), Relu ops on [4] floats.
graph::Graph MakeSortingHatFig6();
// The zoo's unrolled LSTM (Chrion's Table 6 graph) at `layers`, sequence `seq` and `batch`, io 64.
graph::Graph MakeZooLstm(int64_t layers, int64_t seq, int64_t batch);
// Adds an op of `type` named `name` reading `inputs`, with one [4]-float output "<name>.y"; returns
// that output (small hand-drawn graphs for the graph analyses).
TensorId AddVectorOp(graph::Graph& g, const std::string& type, const std::string& name,
                     std::vector<TensorId> inputs);

}  // namespace hx::testing
