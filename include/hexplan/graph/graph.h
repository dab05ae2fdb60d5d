#pragma once
// The operator graph: a copyable value type holding nodes (operators, weights, graph inputs and
// outputs) and the tensors that flow between them. Edges are derived: a tensor's producer feeds
// each of its consumers. Op types and attributes follow ONNX names (MatMul, Conv,
// LayerNormalization, ...) so that zoo graphs export to ONNX and run on the executor unchanged.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "hexplan/core/id.h"
#include "hexplan/core/status.h"
#include "hexplan/graph/dtype.h"

namespace hx::graph {

using Shape = std::vector<int64_t>;

// Product of the dims (1 for a scalar). Dims must be non-negative.
int64_t NumElements(const Shape& shape);
std::string ShapeToString(const Shape& shape);  // "[1,1024,1600]"

using AttributeValue =
    std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

// Named operator attributes (ONNX style). Ordered so that output is deterministic.
class Attributes {
 public:
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  void Set(const std::string& name, AttributeValue value) { values_[name] = std::move(value); }
  int64_t GetInt(const std::string& name, int64_t fallback) const;
  double GetFloat(const std::string& name, double fallback) const;
  std::string GetString(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> GetInts(const std::string& name, std::vector<int64_t> fallback = {}) const;
  std::vector<double> GetFloats(const std::string& name, std::vector<double> fallback = {}) const;
  const std::map<std::string, AttributeValue>& values() const { return values_; }
  bool operator==(const Attributes& other) const { return values_ == other.values_; }

 private:
  std::map<std::string, AttributeValue> values_;
};

enum class NodeKind : uint8_t {
  kOp,      // an operator
  kWeight,  // a parameter tensor (an ONNX initializer; SortingHat's parameter node)
  kInput,   // a graph input
  kOutput,  // a graph output (consumes the tensor it exports)
};
const char* NodeKindName(NodeKind kind);

struct Tensor {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  NodeId producer;                // invalid until a node produces it
  std::vector<NodeId> consumers;  // in insertion order, may repeat if a node reads it twice

  int64_t NumElements() const { return graph::NumElements(shape); }
  int64_t Bytes() const { return NumElements() * DTypeSize(dtype); }
};

struct Node {
  NodeKind kind = NodeKind::kOp;
  std::string name;     // unique among nodes
  std::string op_type;  // ONNX op type for kOp; empty otherwise
  std::string domain;   // ONNX domain; empty for the default domain
  Attributes attrs;
  std::vector<TensorId> inputs;   // ordered; an invalid id marks an omitted optional input
  std::vector<TensorId> outputs;  // ordered
  // Raw little-endian contents of a weight (or a constant), shared so copies stay cheap. Null when
  // the graph carries shapes only (zoo models, stripped or external ONNX weights).
  std::shared_ptr<const std::string> data;

  bool is_op() const { return kind == NodeKind::kOp; }
};

// A derived edge: `tensor` produced by `src` and consumed by `dst`.
struct Edge {
  NodeId src;
  NodeId dst;
  TensorId tensor;
};

class Graph {
 public:
  explicit Graph(std::string name = "") : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // ---- Building. Names must be unique (nodes among nodes, tensors among tensors); a duplicate is
  // a bad-input error, reported by Validate() and by the Add* calls that return StatusOr. A new
  // tensor with no producer yet.
  TensorId AddTensor(const std::string& name, DType dtype, Shape shape);
  // A graph input node producing a tensor of the same name.
  NodeId AddInput(const std::string& name, DType dtype, Shape shape);
  // A weight node producing a tensor of the same name.
  NodeId AddWeight(const std::string& name, DType dtype, Shape shape,
                   std::shared_ptr<const std::string> data = nullptr);
  // An operator reading `inputs` and producing `outputs` (tensors already added).
  NodeId AddOp(const std::string& op_type, const std::string& name, std::vector<TensorId> inputs,
               std::vector<TensorId> outputs, Attributes attrs = {});
  // Convenience: adds the output tensors too ({name, dtype, shape} each) and returns the op.
  struct TensorSpec {
    std::string name;
    DType dtype;
    Shape shape;
  };
  NodeId AddOpWithOutputs(const std::string& op_type, const std::string& name,
                          std::vector<TensorId> inputs, const std::vector<TensorSpec>& outputs,
                          Attributes attrs = {});
  // Marks `tensor` as a graph output through a kOutput node (named after the tensor, or
  // "<tensor>:output" when that name is taken).
  NodeId AddOutput(TensorId tensor);

  // ---- Access.
  size_t num_nodes() const { return nodes_.size(); }
  size_t num_tensors() const { return tensors_.size(); }
  const Node& node(NodeId id) const;
  Node& mutable_node(NodeId id);
  const Tensor& tensor(TensorId id) const;
  Tensor& mutable_tensor(TensorId id);
  std::optional<NodeId> FindNode(const std::string& name) const;
  std::optional<TensorId> FindTensor(const std::string& name) const;

  std::vector<NodeId> NodeIds() const;  // 0..n-1
  std::vector<NodeId> NodesOfKind(NodeKind kind) const;
  std::vector<NodeId> Ops() const { return NodesOfKind(NodeKind::kOp); }
  std::vector<NodeId> Weights() const { return NodesOfKind(NodeKind::kWeight); }
  std::vector<NodeId> Inputs() const { return NodesOfKind(NodeKind::kInput); }
  std::vector<NodeId> Outputs() const { return NodesOfKind(NodeKind::kOutput); }

  // Distinct successor / predecessor nodes, in the order the edges were made.
  const std::vector<NodeId>& successors(NodeId id) const;
  const std::vector<NodeId>& predecessors(NodeId id) const;
  // Every producer->consumer edge (one per tensor and consumer).
  std::vector<Edge> Edges() const;
  size_t num_edges() const;

  // Parameters: elements of floating-point weight tensors; their bytes.
  int64_t NumParameters() const;
  int64_t ParameterBytes() const;

  // Structural checks: unique names, every consumed tensor has a producer, dims non-negative, the
  // producer/consumer records agree, and no cycle (the error names the nodes on it).
  Status Validate() const;

 private:
  void LinkEdge(NodeId src, NodeId dst);

  std::string name_;
  std::vector<Node> nodes_;
  std::vector<Tensor> tensors_;
  std::vector<std::vector<NodeId>> succ_;
  std::vector<std::vector<NodeId>> pred_;
  std::unordered_map<std::string, NodeId> node_by_name_;
  std::unordered_map<std::string, TensorId> tensor_by_name_;
  std::vector<std::string> duplicate_names_;  // reported by Validate()
};

}  // namespace hx::graph
