#pragma once
// FLOPs and bytes moved per operator: enough for a roofline estimate. The counting rules per op
// type are documented in docs/flops.md. A multiply-add counts 2 FLOPs.

#include <string>
#include <string_view>
#include <vector>

#include "hexplan/graph/graph.h"

namespace hx::graph {

struct OpCost {
  double flops = 0.0;
  int64_t input_bytes = 0;   // activations read (tensors not produced by weight nodes)
  int64_t weight_bytes = 0;  // weights read (tensors produced by weight nodes)
  int64_t output_bytes = 0;  // tensors written
  bool has_rule = true;      // false: unknown op type, flops = 0 and cost comes from bytes alone

  int64_t bytes_moved() const { return input_bytes + weight_bytes + output_bytes; }
};

// The cost of one node. Non-op nodes (weights, inputs, outputs) cost nothing.
OpCost ComputeOpCost(const Graph& graph, NodeId node);

// True when ComputeOpCost knows the op type.
bool HasFlopRule(std::string_view op_type);

// Sum of FLOPs over every op.
double TotalFlops(const Graph& graph);

// Op types present in the graph that have no FLOP rule (sorted, unique).
std::vector<std::string> OpTypesWithoutFlopRule(const Graph& graph);

}  // namespace hx::graph
