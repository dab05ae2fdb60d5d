#pragma once
// Graph analyses every planner needs: topological order, cycles, critical paths, dominators,
// subgraph extraction. All take the graph read-only.

#include <functional>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/graph/graph.h"

namespace hx::graph {

// Kahn's algorithm; among ready nodes the smallest id goes first, so the order is deterministic.
// Fails with the nodes of a cycle named when there is one.
StatusOr<std::vector<NodeId>> TopologicalOrder(const Graph& graph);

// The nodes of one directed cycle in order (empty when the graph is acyclic).
std::vector<NodeId> FindCycle(const Graph& graph);

// Longest path where each node weighs `node_weight(id)` and each edge `edge_weight(edge)` (may be
// null for zero). `length` is the path's total weight; `nodes` the path from a source to a sink.
struct CriticalPathResult {
  double length = 0.0;
  std::vector<NodeId> nodes;
};
StatusOr<CriticalPathResult> CriticalPath(
    const Graph& graph, const std::function<double(NodeId)>& node_weight,
    const std::function<double(const Edge&)>& edge_weight = nullptr);

// Immediate dominators (Cooper-Harvey-Kennedy on a topological order). Several sources are joined
// by a virtual source, so every node is reachable. idom[v] is the immediate dominator of v, or an
// invalid id when it is the virtual source (v is a source itself, or only the virtual source
// dominates it).
struct DominatorTree {
  std::vector<NodeId> idom;  // indexed by NodeId
  // True when a dominates b (reflexive).
  bool Dominates(NodeId a, NodeId b) const;
};
struct DominatorOptions {
  // Weights are parameters that sit beside the data flow, not a second way into it. When true (the
  // default) and the graph has graph inputs, an edge from a node that no graph input reaches
  // (weights, constants and what is computed from them alone) into a node that a graph input
  // reaches is left out, so a MatMul reading the activations and a weight is dominated through its
  // activation input. Graphs without input nodes (EfficientMIP, PipeDream) keep every edge.
  bool ignore_constant_edges = true;
  // With ignore_constant_edges and several graph inputs: one input is the data flow's entry, the
  // one whose flow gives the output the most dominators; what only the other inputs reach
  // (position ids, masks, the rotary cos/sin tables made from them) sits beside the flow like a
  // weight. Counting every input, a table that every layer reads is a way around every layer
  // boundary and nothing dominates the output.
  bool main_input_only = false;
};
StatusOr<DominatorTree> Dominators(const Graph& graph, const DominatorOptions& options = {});
// Post-dominators: the same on the reversed graph (every edge kept), with the sinks joined by a
// virtual sink. idom[v] is then v's immediate post-dominator.
StatusOr<DominatorTree> PostDominators(const Graph& graph);

// The nodes that dominate the graph's sink, in topological order: SortingHat's partition points.
// The sink is a virtual node fed by every output node (by every node without successors when the
// graph has no output nodes). For a chain of transformer blocks these are the residual-stream
// joins; for SortingHat's Fig. 6 (A -> {B, C} -> D -> {E, F} -> G) they are A, D and G.
StatusOr<std::vector<NodeId>> SinkDominators(const Graph& graph,
                                             const DominatorOptions& options = {});

// A standalone graph of `nodes` (any order, no repeats). Tensors entering from outside become graph
// inputs (weights stay weights, payload shared, when their producer is a weight node outside the
// set); tensors read outside the set, or that were graph outputs, become outputs. Operators keep
// their names, types, domains and attributes; the result passes Validate().
struct Subgraph {
  Graph graph;
  // Indexed by new NodeId: the original node it stands for (a node of the set, the weight or graph
  // input a placeholder copies, the graph output it re-exports), or invalid for placeholders of
  // operator outputs and for outputs made because a tensor is read outside the set.
  std::vector<NodeId> original_of;
  std::vector<NodeId> node_map;  // node_map[i]: the new id of nodes[i]
};
StatusOr<Subgraph> ExtractSubgraph(const Graph& graph, const std::vector<NodeId>& nodes);

}  // namespace hx::graph
