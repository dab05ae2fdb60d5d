#include <algorithm>
#include <queue>

#include "hexplan/graph/analysis.h"

namespace hx::graph {

StatusOr<std::vector<NodeId>> TopologicalOrder(const Graph& graph) {
  const size_t n = graph.num_nodes();
  std::vector<size_t> indegree(n, 0);
  for (size_t i = 0; i < n; ++i) indegree[i] = graph.predecessors(NodeId(i)).size();
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i)
    if (indegree[i] == 0) ready.push(static_cast<uint32_t>(i));
  std::vector<NodeId> order;
  order.reserve(n);
  while (!ready.empty()) {
    NodeId id(ready.top());
    ready.pop();
    order.push_back(id);
    for (NodeId s : graph.successors(id))
      if (--indegree[s.index()] == 0) ready.push(s.value());
  }
  if (order.size() != n) {
    std::vector<NodeId> cycle = FindCycle(graph);
    std::string names;
    for (NodeId id : cycle) names += graph.node(id).name + " -> ";
    if (!cycle.empty()) names += graph.node(cycle.front()).name;
    return InvalidArgument("graph '" + graph.name() + "' has a cycle: " + names);
  }
  return order;
}

std::vector<NodeId> FindCycle(const Graph& graph) {
  const size_t n = graph.num_nodes();
  // Iterative DFS with colours: 0 new, 1 on stack, 2 done.
  std::vector<uint8_t> colour(n, 0);
  std::vector<NodeId> parent(n);
  for (size_t root = 0; root < n; ++root) {
    if (colour[root]) continue;
    std::vector<std::pair<NodeId, size_t>> stack{{NodeId(root), 0}};
    colour[root] = 1;
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      const auto& succ = graph.successors(v);
      if (next < succ.size()) {
        NodeId w = succ[next++];
        if (colour[w.index()] == 0) {
          colour[w.index()] = 1;
          parent[w.index()] = v;
          stack.push_back({w, 0});
        } else if (colour[w.index()] == 1) {
          // Back edge v -> w: the cycle is w ... v.
          std::vector<NodeId> cycle;
          for (NodeId x = v; x != w; x = parent[x.index()]) cycle.push_back(x);
          cycle.push_back(w);
          std::reverse(cycle.begin(), cycle.end());
          return cycle;
        }
      } else {
        colour[v.index()] = 2;
        stack.pop_back();
      }
    }
  }
  return {};
}

}  // namespace hx::graph
