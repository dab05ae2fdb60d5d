#include "hexplan/graph/graph.h"

#include <algorithm>
#include <sstream>

#include "hexplan/graph/analysis.h"

namespace hx::graph {

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeToString(const Shape& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? "," : "") << shape[i];
  os << ']';
  return os.str();
}

int64_t Attributes::GetInt(const std::string& name, int64_t fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<int64_t>(&it->second)) return *v;
  if (auto* v = std::get_if<double>(&it->second)) return static_cast<int64_t>(*v);
  return fallback;
}

double Attributes::GetFloat(const std::string& name, double fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<double>(&it->second)) return *v;
  if (auto* v = std::get_if<int64_t>(&it->second)) return static_cast<double>(*v);
  return fallback;
}

std::string Attributes::GetString(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<std::string>(&it->second)) return *v;
  return fallback;
}

std::vector<int64_t> Attributes::GetInts(const std::string& name,
                                         std::vector<int64_t> fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  return fallback;
}

std::vector<double> Attributes::GetFloats(const std::string& name,
                                          std::vector<double> fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<std::vector<double>>(&it->second)) return *v;
  return fallback;
}

const char* NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kOp:
      return "op";
    case NodeKind::kWeight:
      return "weight";
    case NodeKind::kInput:
      return "input";
    case NodeKind::kOutput:
      return "output";
  }
  return "?";
}

TensorId Graph::AddTensor(const std::string& name, DType dtype, Shape shape) {
  TensorId id(tensors_.size());
  if (!tensor_by_name_.emplace(name, id).second)
    duplicate_names_.push_back("tensor '" + name + "'");
  tensors_.push_back(Tensor{name, dtype, std::move(shape), NodeId::Invalid(), {}});
  return id;
}

NodeId Graph::AddInput(const std::string& name, DType dtype, Shape shape) {
  TensorId t = AddTensor(name, dtype, std::move(shape));
  Node n;
  n.kind = NodeKind::kInput;
  n.name = name;
  n.outputs = {t};
  NodeId id(nodes_.size());
  if (!node_by_name_.emplace(name, id).second) duplicate_names_.push_back("node '" + name + "'");
  nodes_.push_back(std::move(n));
  succ_.emplace_back();
  pred_.emplace_back();
  tensors_[t.index()].producer = id;
  return id;
}

NodeId Graph::AddWeight(const std::string& name, DType dtype, Shape shape,
                        std::shared_ptr<const std::string> data) {
  NodeId id = AddInput(name, dtype, std::move(shape));
  nodes_[id.index()].kind = NodeKind::kWeight;
  nodes_[id.index()].data = std::move(data);
  return id;
}

NodeId Graph::AddOp(const std::string& op_type, const std::string& name,
                    std::vector<TensorId> inputs, std::vector<TensorId> outputs, Attributes attrs) {
  NodeId id(nodes_.size());
  Node n;
  n.kind = NodeKind::kOp;
  n.name = name;
  n.op_type = op_type;
  n.attrs = std::move(attrs);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  if (!node_by_name_.emplace(name, id).second) duplicate_names_.push_back("node '" + name + "'");
  nodes_.push_back(std::move(n));
  succ_.emplace_back();
  pred_.emplace_back();
  const Node& added = nodes_.back();
  for (TensorId t : added.inputs) {
    if (!t.valid()) continue;
    HX_CHECK(t.index() < tensors_.size());
    tensors_[t.index()].consumers.push_back(id);
    if (tensors_[t.index()].producer.valid()) LinkEdge(tensors_[t.index()].producer, id);
  }
  for (TensorId t : added.outputs) {
    HX_CHECK(t.valid() && t.index() < tensors_.size());
    Tensor& tensor = tensors_[t.index()];
    if (tensor.producer.valid()) {
      duplicate_names_.push_back("tensor '" + tensor.name + "' produced twice");
      continue;
    }
    tensor.producer = id;
    for (NodeId c : tensor.consumers) LinkEdge(id, c);
  }
  return id;
}

NodeId Graph::AddOpWithOutputs(const std::string& op_type, const std::string& name,
                               std::vector<TensorId> inputs, const std::vector<TensorSpec>& outputs,
                               Attributes attrs) {
  std::vector<TensorId> out_ids;
  out_ids.reserve(outputs.size());
  for (const auto& spec : outputs) out_ids.push_back(AddTensor(spec.name, spec.dtype, spec.shape));
  return AddOp(op_type, name, std::move(inputs), std::move(out_ids), std::move(attrs));
}

NodeId Graph::AddOutput(TensorId tensor) {
  HX_CHECK(tensor.valid() && tensor.index() < tensors_.size());
  std::string name = tensors_[tensor.index()].name;
  if (node_by_name_.count(name)) name += ":output";
  NodeId id(nodes_.size());
  Node n;
  n.kind = NodeKind::kOutput;
  n.name = name;
  n.inputs = {tensor};
  if (!node_by_name_.emplace(name, id).second) duplicate_names_.push_back("node '" + name + "'");
  nodes_.push_back(std::move(n));
  succ_.emplace_back();
  pred_.emplace_back();
  tensors_[tensor.index()].consumers.push_back(id);
  if (tensors_[tensor.index()].producer.valid()) LinkEdge(tensors_[tensor.index()].producer, id);
  return id;
}

void Graph::LinkEdge(NodeId src, NodeId dst) {
  auto& s = succ_[src.index()];
  if (std::find(s.begin(), s.end(), dst) == s.end()) s.push_back(dst);
  auto& p = pred_[dst.index()];
  if (std::find(p.begin(), p.end(), src) == p.end()) p.push_back(src);
}

const Node& Graph::node(NodeId id) const {
  HX_CHECK(id.valid() && id.index() < nodes_.size());
  return nodes_[id.index()];
}
Node& Graph::mutable_node(NodeId id) {
  HX_CHECK(id.valid() && id.index() < nodes_.size());
  return nodes_[id.index()];
}
const Tensor& Graph::tensor(TensorId id) const {
  HX_CHECK(id.valid() && id.index() < tensors_.size());
  return tensors_[id.index()];
}
Tensor& Graph::mutable_tensor(TensorId id) {
  HX_CHECK(id.valid() && id.index() < tensors_.size());
  return tensors_[id.index()];
}

std::optional<NodeId> Graph::FindNode(const std::string& name) const {
  auto it = node_by_name_.find(name);
  if (it == node_by_name_.end()) return std::nullopt;
  return it->second;
}
std::optional<TensorId> Graph::FindTensor(const std::string& name) const {
  auto it = tensor_by_name_.find(name);
  if (it == tensor_by_name_.end()) return std::nullopt;
  return it->second;
}

std::vector<NodeId> Graph::NodeIds() const {
  std::vector<NodeId> ids;
  ids.reserve(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) ids.emplace_back(i);
  return ids;
}

std::vector<NodeId> Graph::NodesOfKind(NodeKind kind) const {
  std::vector<NodeId> ids;
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].kind == kind) ids.emplace_back(i);
  return ids;
}

const std::vector<NodeId>& Graph::successors(NodeId id) const {
  HX_CHECK(id.valid() && id.index() < succ_.size());
  return succ_[id.index()];
}
const std::vector<NodeId>& Graph::predecessors(NodeId id) const {
  HX_CHECK(id.valid() && id.index() < pred_.size());
  return pred_[id.index()];
}

std::vector<Edge> Graph::Edges() const {
  std::vector<Edge> edges;
  for (size_t t = 0; t < tensors_.size(); ++t) {
    const Tensor& tensor = tensors_[t];
    if (!tensor.producer.valid()) continue;
    NodeId last = NodeId::Invalid();
    for (NodeId c : tensor.consumers) {
      if (c == last) continue;  // a node reading one tensor twice is one edge
      edges.push_back(Edge{tensor.producer, c, TensorId(t)});
      last = c;
    }
  }
  return edges;
}

size_t Graph::num_edges() const { return Edges().size(); }

int64_t Graph::NumParameters() const {
  int64_t n = 0;
  for (const Node& node : nodes_) {
    if (node.kind != NodeKind::kWeight) continue;
    const Tensor& t = tensors_[node.outputs[0].index()];
    if (IsFloatingPoint(t.dtype)) n += t.NumElements();
  }
  return n;
}

int64_t Graph::ParameterBytes() const {
  int64_t n = 0;
  for (const Node& node : nodes_) {
    if (node.kind != NodeKind::kWeight) continue;
    const Tensor& t = tensors_[node.outputs[0].index()];
    if (IsFloatingPoint(t.dtype)) n += t.Bytes();
  }
  return n;
}

Status Graph::Validate() const {
  std::string where = name_.empty() ? "graph" : "graph '" + name_ + "'";
  if (!duplicate_names_.empty()) {
    return InvalidArgument(where + ": duplicate name: " + duplicate_names_.front());
  }
  for (const Tensor& t : tensors_) {
    for (int64_t d : t.shape) {
      if (d < 0) {
        return InvalidArgument(where + ": tensor '" + t.name + "' has a negative dimension " +
                               ShapeToString(t.shape));
      }
    }
    if (!t.producer.valid() && !t.consumers.empty()) {
      return InvalidArgument(where + ": tensor '" + t.name + "' read by node '" +
                             nodes_[t.consumers.front().index()].name +
                             "' has no producer (dangling edge)");
    }
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    if (n.kind == NodeKind::kOutput && n.inputs.size() != 1)
      return InvalidArgument(where + ": output node '" + n.name + "' must read one tensor");
    if ((n.kind == NodeKind::kWeight || n.kind == NodeKind::kInput) && n.outputs.size() != 1)
      return InvalidArgument(where + ": node '" + n.name + "' must produce one tensor");
  }
  if (auto cycle = FindCycle(*this); !cycle.empty()) {
    std::string names;
    for (NodeId id : cycle) names += nodes_[id.index()].name + " -> ";
    names += nodes_[cycle.front().index()].name;
    return InvalidArgument(where + ": the graph has a cycle: " + names);
  }
  return Status::Ok();
}

}  // namespace hx::graph
