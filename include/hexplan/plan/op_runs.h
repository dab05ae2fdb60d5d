#pragma once
// Names for stretches of operators that a person reads: consecutive ops of one device collapsed
// into runs named after the layer they belong to.
//
// An op's scope is its name without the last part: "/transformer/h.3/attn/MatMul" (a path, as
// ONNX exporters and the zoo name ops) gives transformer/h.3/attn; "h3.attn.qkv" (a dotted name)
// gives h3.attn. Its block is the scope up to the first part with a number ("transformer/h.3",
// "model/layers.12", "layer3.1", "features.5.11", "lstm/step47", "op12"); a scope without a number
// is its own, unnumbered, block ("transformer", "lm_head").
//
// Consecutive ops of numbered blocks with the same text before the number ("transformer/h.") form
// one run when the run holds each of its blocks whole ("transformer/h.0-5"), or the same parts of
// each ("lstm/step0-95/cell0-5": cells 0-5 of every step); a block held in part otherwise gets a
// run of its own, named by its ops' common scope ("transformer/h.3/attn"). Consecutive ops of
// unnumbered blocks form one run, "first .. last" ("transformer/ln_f .. lm_head"), so names
// without any structure (an imported workload's) still collapse.

#include <cstddef>
#include <string>
#include <vector>

#include "hexplan/core/id.h"
#include "hexplan/graph/graph.h"

namespace hx::plan {

struct OpRun {
  std::string label;  // "transformer/h.0-5", "transformer/h.3/attn", "conv1 .. maxpool"
  NodeId first;       // the run's first and last op, in the order given
  NodeId last;
  std::vector<NodeId> ops;  // in the order given
  bool numbered = false;    // its blocks are numbered layers (h.0, h.1, ...)
  size_t blocks = 0;        // distinct blocks its ops belong to
  size_t block_ops = 0;     // ops of those blocks in the whole graph (== ops.size(): held whole)
};

// Collapses `ops` (one device's order) into runs. Every op lands in exactly one run, in order.
std::vector<OpRun> CollapseOpRuns(const std::vector<NodeId>& ops, const graph::Graph& graph);

}  // namespace hx::plan
