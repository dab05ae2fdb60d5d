// Dominators, post-dominators and the sink's dominators. The graph is a DAG, so one pass of
// Cooper-Harvey-Kennedy's intersection over a topological order is exact: every predecessor's
// immediate dominator is final before the node is visited.

#include <algorithm>

#include "hexplan/graph/analysis.h"

namespace hx::graph {
namespace {

// Walks two dominator-tree fingers up to their common ancestor. `pos` is each node's position in
// the processing order; the virtual root (invalid id) sits before everything.
NodeId Intersect(NodeId a, NodeId b, const std::vector<NodeId>& idom,
                 const std::vector<int64_t>& pos) {
  auto position = [&](NodeId v) { return v.valid() ? pos[v.index()] : int64_t{-1}; };
  while (a != b) {
    while (position(a) > position(b)) a = idom[a.index()];
    while (position(b) > position(a)) b = idom[b.index()];
  }
  return a;
}

// Immediate dominators over `order` (a topological order of the flow considered) where
// preds(v) lists v's predecessors in that flow; nodes without any hang off the virtual root.
template <typename PredsFn>
std::vector<NodeId> ComputeIdoms(size_t n, const std::vector<NodeId>& order, PredsFn preds) {
  std::vector<int64_t> pos(n, 0);
  for (size_t i = 0; i < order.size(); ++i) pos[order[i].index()] = static_cast<int64_t>(i);
  std::vector<NodeId> idom(n, NodeId::Invalid());
  for (NodeId v : order) {
    bool first = true;
    NodeId dom = NodeId::Invalid();
    for (NodeId p : preds(v)) {
      dom = first ? p : Intersect(dom, p, idom, pos);
      first = false;
    }
    idom[v.index()] = dom;  // invalid (the virtual root) when v has no predecessor
  }
  return idom;
}

// Nodes reachable from a graph input (themselves included); empty when there is no input node.
// Nodes reached from `sources` (all graph inputs when empty); empty when nothing is.
std::vector<bool> ReachableFrom(const Graph& graph, const std::vector<NodeId>& order,
                                const std::vector<NodeId>& sources) {
  std::vector<bool> reached(graph.num_nodes(), false);
  for (NodeId s : sources) reached[s.index()] = true;
  bool any = false;
  for (NodeId v : order) {
    if (sources.empty() && graph.node(v).kind == NodeKind::kInput) reached[v.index()] = true;
    if (!reached[v.index()]) continue;
    any = true;
    for (NodeId s : graph.successors(v)) reached[s.index()] = true;
  }
  if (!any) return {};
  return reached;
}

std::vector<bool> ReachableFromInputs(const Graph& graph, const std::vector<NodeId>& order) {
  return ReachableFrom(graph, order, {});
}

}  // namespace

bool DominatorTree::Dominates(NodeId a, NodeId b) const {
  for (NodeId v = b; v.valid(); v = idom[v.index()]) {
    if (v == a) return true;
  }
  return false;
}

namespace {

DominatorTree DominatorsWithFlow(const Graph& graph, const std::vector<NodeId>& order,
                                 const std::vector<bool>& flow) {
  std::vector<NodeId> kept;
  DominatorTree tree;
  tree.idom = ComputeIdoms(graph.num_nodes(), order, [&](NodeId v) -> const std::vector<NodeId>& {
    if (flow.empty() || !flow[v.index()]) return graph.predecessors(v);
    kept.clear();
    for (NodeId p : graph.predecessors(v))
      if (flow[p.index()]) kept.push_back(p);
    return kept;
  });
  return tree;
}

// The dominators of the virtual sink, in topological order.
std::vector<NodeId> SinkChain(const Graph& graph, const std::vector<NodeId>& order,
                              const DominatorTree& tree) {
  std::vector<NodeId> sinks = graph.Outputs();
  if (sinks.empty()) {
    for (NodeId v : order)
      if (graph.successors(v).empty()) sinks.push_back(v);
  }
  if (sinks.empty()) return {};
  std::vector<int64_t> pos(graph.num_nodes(), 0);
  for (size_t i = 0; i < order.size(); ++i) pos[order[i].index()] = static_cast<int64_t>(i);
  NodeId meet = sinks.front();
  for (NodeId s : sinks) meet = Intersect(meet, s, tree.idom, pos);
  // With one sink, the virtual sink's immediate dominator is that sink; with several, their meet.
  std::vector<NodeId> chain;
  for (NodeId v = meet; v.valid(); v = tree.idom[v.index()]) chain.push_back(v);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

}  // namespace

StatusOr<DominatorTree> Dominators(const Graph& graph, const DominatorOptions& options) {
  HX_ASSIGN_OR_RETURN(std::vector<NodeId> order, TopologicalOrder(graph));
  if (!options.ignore_constant_edges) return DominatorsWithFlow(graph, order, {});
  const std::vector<NodeId> inputs = graph.Inputs();
  if (!options.main_input_only || inputs.size() < 2)
    return DominatorsWithFlow(graph, order, ReachableFromInputs(graph, order));
  // The main input: the one whose flow gives the most sink dominators (the first of equals).
  DominatorTree best;
  size_t best_points = 0;
  for (NodeId input : inputs) {
    DominatorTree tree = DominatorsWithFlow(graph, order, ReachableFrom(graph, order, {input}));
    const size_t points = SinkChain(graph, order, tree).size();
    if (best.idom.empty() || points > best_points) best = std::move(tree), best_points = points;
  }
  return best;
}

StatusOr<DominatorTree> PostDominators(const Graph& graph) {
  HX_ASSIGN_OR_RETURN(std::vector<NodeId> order, TopologicalOrder(graph));
  std::reverse(order.begin(), order.end());
  DominatorTree tree;
  tree.idom = ComputeIdoms(graph.num_nodes(), order, [&](NodeId v) -> const std::vector<NodeId>& {
    return graph.successors(v);
  });
  return tree;
}

StatusOr<std::vector<NodeId>> SinkDominators(const Graph& graph, const DominatorOptions& options) {
  HX_ASSIGN_OR_RETURN(DominatorTree tree, Dominators(graph, options));
  HX_ASSIGN_OR_RETURN(std::vector<NodeId> order, TopologicalOrder(graph));
  return SinkChain(graph, order, tree);
}

}  // namespace hx::graph
