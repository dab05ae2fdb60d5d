// SortingHat §3.1: partitioning the model at the dominators of its output node.

#include <algorithm>
#include <map>

#include "hexplan/graph/analysis.h"
#include "hexplan/place/sortinghat/sortinghat.h"

namespace hx::place {

StatusOr<SortingHatPartition> PartitionByDominators(const graph::Graph& graph,
                                                    int dominators_per_submodel) {
  if (dominators_per_submodel < 1)
    return InvalidArgument("--ndom: must be >= 1, got " + std::to_string(dominators_per_submodel));
  HX_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph::TopologicalOrder(graph));
  graph::DominatorOptions options;
  options.main_input_only = true;  // position ids and masks sit beside the flow, like weights
  HX_ASSIGN_OR_RETURN(graph::DominatorTree tree, graph::Dominators(graph, options));
  HX_ASSIGN_OR_RETURN(std::vector<NodeId> doms, graph::SinkDominators(graph, options));
  const size_t n = graph.num_nodes();
  std::vector<char> is_dom(n, 0);
  for (NodeId d : doms) is_dom[d.index()] = 1;

  // below[v]: sink dominators that dominate v, v included (idom comes first in topological order).
  std::vector<int> below(n, 0);
  for (NodeId v : order) {
    const NodeId up = tree.idom[v.index()];
    below[v.index()] = (up.valid() ? below[up.index()] : 0) + is_dom[v.index()];
  }
  // block[v]: sink dominators strictly dominating v.
  std::vector<int> block(n, 0);
  for (NodeId v : order) block[v.index()] = below[v.index()] - is_dom[v.index()];

  // Ops no graph input reaches go with their first consumer (reverse topological order).
  const std::vector<NodeId> inputs = graph.Inputs();
  if (!inputs.empty()) {
    std::vector<char> reached(n, 0);
    for (NodeId v : order) {
      if (graph.node(v).kind == graph::NodeKind::kInput) reached[v.index()] = 1;
      if (!reached[v.index()]) continue;
      for (NodeId s : graph.successors(v)) reached[s.index()] = 1;
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const NodeId v = *it;
      if (reached[v.index()] || !graph.node(v).is_op()) continue;
      int best = -1;
      for (NodeId s : graph.successors(v))
        if (graph.node(s).is_op() && (best < 0 || block[s.index()] < best)) best = block[s.index()];
      if (best >= 0) block[v.index()] = best;
    }
  }

  auto submodel_of_block = [&](int b) { return b <= 0 ? 0 : (b - 1) / dominators_per_submodel; };
  std::map<int, std::vector<NodeId>> by_submodel;
  for (NodeId v : order)
    if (graph.node(v).is_op()) by_submodel[submodel_of_block(block[v.index()])].push_back(v);

  SortingHatPartition out;
  out.dominators = doms;
  out.submodel_of.assign(n, -1);
  for (auto& [s, ops] : by_submodel) {
    const int index = static_cast<int>(out.submodels.size());
    for (NodeId op : ops) out.submodel_of[op.index()] = index;
    out.submodels.push_back(std::move(ops));
  }
  // A weight belongs to the submodel of its first reader.
  for (NodeId w : graph.Weights()) {
    int first = -1;
    for (NodeId s : graph.successors(w)) {
      const int sm = out.submodel_of[s.index()];
      if (graph.node(s).is_op() && sm >= 0 && (first < 0 || sm < first)) first = sm;
    }
    out.submodel_of[w.index()] = first;
  }
  return out;
}

}  // namespace hx::place
