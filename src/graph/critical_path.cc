// Longest weighted path through a DAG: one pass over a topological order.

#include <algorithm>
#include <limits>

#include "hexplan/graph/analysis.h"

namespace hx::graph {

StatusOr<CriticalPathResult> CriticalPath(const Graph& graph,
                                          const std::function<double(NodeId)>& node_weight,
                                          const std::function<double(const Edge&)>& edge_weight) {
  HX_CHECK(node_weight != nullptr);
  HX_ASSIGN_OR_RETURN(std::vector<NodeId> order, TopologicalOrder(graph));
  const size_t n = graph.num_nodes();
  // Incoming edges per node (several tensors may join the same pair; each is a candidate).
  std::vector<std::vector<Edge>> incoming(n);
  for (const Edge& e : graph.Edges()) incoming[e.dst.index()].push_back(e);

  // Heaviest path ending at the node, the node included. Every node with a predecessor extends one,
  // so the path traced back always starts at a source.
  std::vector<double> best(n, 0.0);
  std::vector<NodeId> parent(n, NodeId::Invalid());
  for (NodeId v : order) {
    double into = 0.0;
    NodeId from = NodeId::Invalid();
    for (const Edge& e : incoming[v.index()]) {
      const double w = best[e.src.index()] + (edge_weight ? edge_weight(e) : 0.0);
      if (!from.valid() || w > into) {
        into = w;
        from = e.src;
      }
    }
    best[v.index()] = into + node_weight(v);
    parent[v.index()] = from;
  }

  CriticalPathResult result;
  if (n == 0) return result;
  NodeId end = NodeId::Invalid();
  for (NodeId v : order) {
    if (!graph.successors(v).empty()) continue;  // the path ends at a sink
    if (!end.valid() || best[v.index()] > best[end.index()]) end = v;
  }
  result.length = best[end.index()];
  for (NodeId v = end; v.valid(); v = parent[v.index()]) result.nodes.push_back(v);
  std::reverse(result.nodes.begin(), result.nodes.end());
  return result;
}

}  // namespace hx::graph
