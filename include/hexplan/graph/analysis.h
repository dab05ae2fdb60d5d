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
StatusOr<CriticalPathResult> CriticalPath(const Graph& graph,
                                          const std::function<double(NodeId)>& node_weight,
                                          const std::function<double(const Edge&)>& edge_weight =
                                              nullptr);

// Immediate dominators. Several sources (inputs, weights) are joined by a virtual source, so every
// node is reachable. idom[v] is the immediate dominator of v, or an invalid id when it is the virtual
// source (v is a source itself, or only the virtual source dominates it).
struct DominatorTree {
  std::vector<NodeId> idom;  // indexed by NodeId
  // True when a dominates b (reflexive).
  bool Dominates(NodeId a, NodeId b) const;
};
StatusOr<DominatorTree> Dominators(const Graph& graph);
// Post-dominators: the same on the reversed graph, with several sinks joined by a virtual sink.
StatusOr<DominatorTree> PostDominators(const Graph& graph);

// The nodes that dominate the graph's sink (every output, through the virtual sink), in topological
// order: SortingHat's partition points.
StatusOr<std::vector<NodeId>> SinkDominators(const Graph& graph);

// A standalone graph of `nodes`. Tensors entering from outside become graph inputs (weights stay
// weights when their producer is a weight node outside the set); tensors read outside the set, or
// that were graph outputs, become outputs. `node_map[i]` gives the new id of nodes[i].
struct Subgraph {
  Graph graph;
  std::vector<NodeId> original_of;  // indexed by new NodeId: the original node (invalid if added)
};
StatusOr<Subgraph> ExtractSubgraph(const Graph& graph, const std::vector<NodeId>& nodes);

}  // namespace hx::graph
