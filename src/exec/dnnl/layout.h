#pragma once
// Which 4-D activations the oneDNN kernels keep in oneDNN's channel-blocked layout (nChw8c on AVX2,
// nChw16c on AVX-512) instead of NCHW, so that a chain of convolutions does not reorder every
// activation twice. A tensor is blocked only when every op that produces or reads it either runs
// on oneDNN (`dnnl_ops`) or does not care about the layout (an elementwise op whose layout-relevant
// inputs and output all have the same shape: Relu, Clip, Add of two equal shapes, ...). Graph
// inputs, weights and graph outputs are always NCHW, so what the executor hands in and out is
// unchanged; inside a run the bytes of a blocked tensor are only read by ops that know its layout.

#include <vector>

#include "hexplan/graph/graph.h"

namespace hx::exec::dnnl_impl {

// `dnnl_op[n]`: node n will run on oneDNN (reads and writes any layout). `block`: the channel
// block; a blocked tensor's channel count is a multiple of it (so its bytes equal NCHW's).
// Returns `blocked[t]` for every tensor t.
std::vector<bool> PlanBlockedTensors(const graph::Graph& graph, const std::vector<bool>& dnnl_op,
                                     int64_t block);

// Whether `op` computes each output element from the same-index elements of the inputs that
// `LayoutInputs` lists (so it gives the same answer on any layout).
bool IsLayoutAgnostic(const graph::Graph& graph, const graph::Node& op);

}  // namespace hx::exec::dnnl_impl
