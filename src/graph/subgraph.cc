// Subgraph extraction: a standalone graph of a node set, with placeholders where tensors cross the
// boundary.

#include <algorithm>
#include <unordered_map>

#include "hexplan/graph/analysis.h"

namespace hx::graph {

StatusOr<Subgraph> ExtractSubgraph(const Graph& graph, const std::vector<NodeId>& nodes) {
  const size_t n = graph.num_nodes();
  std::vector<bool> in_set(n, false);
  std::vector<NodeId> sorted;
  sorted.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeId v = nodes[i];
    if (!v.valid() || v.index() >= n) {
      return InvalidArgument("ExtractSubgraph: nodes[" + std::to_string(i) +
                             "] is not a node of graph '" + graph.name() + "'");
    }
    if (in_set[v.index()]) {
      return InvalidArgument("ExtractSubgraph: node '" + graph.node(v).name + "' is listed twice");
    }
    in_set[v.index()] = true;
    sorted.push_back(v);
  }
  std::sort(sorted.begin(), sorted.end());

  Subgraph sub;
  sub.graph.set_name(graph.name());
  Graph& g = sub.graph;
  std::unordered_map<uint32_t, TensorId> tensor_map;  // original tensor -> new tensor
  auto record = [&](NodeId added, NodeId original) {
    if (sub.original_of.size() <= added.index()) sub.original_of.resize(added.index() + 1);
    sub.original_of[added.index()] = original;
  };

  // 1. Sources in the set, and the outputs of the set's operators (so operators can be added in
  // any order).
  for (NodeId v : sorted) {
    const Node& node = graph.node(v);
    if (node.kind == NodeKind::kInput || node.kind == NodeKind::kWeight) {
      const Tensor& t = graph.tensor(node.outputs.at(0));
      NodeId added = node.kind == NodeKind::kInput
                         ? g.AddInput(t.name, t.dtype, t.shape)
                         : g.AddWeight(t.name, t.dtype, t.shape, node.data);
      record(added, v);
      tensor_map[node.outputs[0].value()] = g.node(added).outputs[0];
    } else if (node.kind == NodeKind::kOp) {
      for (TensorId out : node.outputs) {
        const Tensor& t = graph.tensor(out);
        tensor_map[out.value()] = g.AddTensor(t.name, t.dtype, t.shape);
      }
    }
  }
  // A tensor entering from outside becomes a weight (its producer is a weight) or a graph input.
  auto map_input = [&](TensorId t) -> TensorId {
    if (!t.valid()) return t;
    if (auto it = tensor_map.find(t.value()); it != tensor_map.end()) return it->second;
    const Tensor& tensor = graph.tensor(t);
    NodeId producer = tensor.producer;
    const bool is_weight = producer.valid() && graph.node(producer).kind == NodeKind::kWeight;
    const bool is_input = producer.valid() && graph.node(producer).kind == NodeKind::kInput;
    NodeId added =
        is_weight ? g.AddWeight(tensor.name, tensor.dtype, tensor.shape, graph.node(producer).data)
                  : g.AddInput(tensor.name, tensor.dtype, tensor.shape);
    record(added, (is_weight || is_input) ? producer : NodeId::Invalid());
    TensorId mapped = g.node(added).outputs[0];
    tensor_map[t.value()] = mapped;
    return mapped;
  };

  // 2. Operators and output nodes, in the original id order.
  for (NodeId v : sorted) {
    const Node& node = graph.node(v);
    if (node.kind == NodeKind::kOp) {
      std::vector<TensorId> inputs;
      for (TensorId t : node.inputs) inputs.push_back(map_input(t));
      std::vector<TensorId> outputs;
      for (TensorId t : node.outputs) outputs.push_back(tensor_map.at(t.value()));
      NodeId added =
          g.AddOp(node.op_type, node.name, std::move(inputs), std::move(outputs), node.attrs);
      g.mutable_node(added).domain = node.domain;
      g.mutable_node(added).data = node.data;
      record(added, v);
    } else if (node.kind == NodeKind::kOutput) {
      record(g.AddOutput(map_input(node.inputs.at(0))), v);
    }
  }

  // 3. Tensors made inside and read outside (or exported by an output node outside) become outputs.
  for (NodeId v : sorted) {
    const Node& node = graph.node(v);
    if (node.kind == NodeKind::kOutput) continue;
    for (TensorId t : node.outputs) {
      const Tensor& tensor = graph.tensor(t);
      NodeId outside_reader = NodeId::Invalid();
      bool exported_inside = false;
      for (NodeId c : tensor.consumers) {
        if (!in_set[c.index()]) {
          if (!outside_reader.valid() || graph.node(c).kind == NodeKind::kOutput)
            outside_reader = c;
        } else if (graph.node(c).kind == NodeKind::kOutput) {
          exported_inside = true;
        }
      }
      if (!outside_reader.valid() || exported_inside) continue;
      // An original output node keeps its identity; an output made for an outside reader is new.
      NodeId original =
          graph.node(outside_reader).kind == NodeKind::kOutput ? outside_reader : NodeId::Invalid();
      record(g.AddOutput(tensor_map.at(t.value())), original);
    }
  }
  sub.original_of.resize(g.num_nodes(), NodeId::Invalid());
  std::unordered_map<uint32_t, NodeId> new_of;
  for (size_t i = 0; i < sub.original_of.size(); ++i) {
    NodeId original = sub.original_of[i];
    if (original.valid() && in_set[original.index()]) new_of.emplace(original.value(), NodeId(i));
  }
  for (NodeId v : nodes) sub.node_map.push_back(new_of.at(v.value()));
  Status valid = g.Validate();
  if (!valid.ok()) return valid.WithContext("ExtractSubgraph");
  return sub;
}

}  // namespace hx::graph
