#include "exec/dnnl/layout.h"

#include <numeric>
#include <set>
#include <string>

namespace hx::exec::dnnl_impl {
namespace {

const std::set<std::string>& UnaryAgnostic() {
  static const std::set<std::string> ops = {"Relu", "Clip",     "Sigmoid", "Tanh",
                                            "Exp",  "Neg",      "Abs",     "Sqrt",
                                            "Erf",  "Identity", "SiLU",    "HardSwish"};
  return ops;
}
const std::set<std::string>& NaryAgnostic() {
  static const std::set<std::string> ops = {"Add", "Sub", "Mul", "Div", "Sum", "Max", "Min"};
  return ops;
}

// The inputs whose layout must match the output's (input 0 for unary ops, all for n-ary ones).
size_t LayoutInputCount(const graph::Node& op) {
  return UnaryAgnostic().count(op.op_type) > 0 ? 1 : op.inputs.size();
}

struct UnionFind {
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), size_t{0}); }
  size_t Find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void Join(size_t a, size_t b) { parent[Find(a)] = Find(b); }
  std::vector<size_t> parent;
};

bool Blockable(const graph::Tensor& t, int64_t block) {
  return t.dtype == graph::DType::kF32 && t.shape.size() == 4 && t.shape[1] % block == 0;
}

}  // namespace

bool IsLayoutAgnostic(const graph::Graph& graph, const graph::Node& op) {
  if (!op.is_op() || op.outputs.size() != 1 || !(op.domain.empty() || op.domain == "ai.onnx"))
    return false;
  if (UnaryAgnostic().count(op.op_type) == 0 && NaryAgnostic().count(op.op_type) == 0) return false;
  const graph::Shape& out = graph.tensor(op.outputs[0]).shape;
  for (size_t i = 0; i < LayoutInputCount(op); ++i)
    if (i >= op.inputs.size() || !op.inputs[i].valid() || graph.tensor(op.inputs[i]).shape != out)
      return false;
  return true;
}

std::vector<bool> PlanBlockedTensors(const graph::Graph& graph, const std::vector<bool>& dnnl_op,
                                     int64_t block) {
  const size_t nt = graph.num_tensors();
  UnionFind classes(nt);
  std::vector<bool> agnostic(graph.num_nodes(), false);
  for (NodeId id : graph.Ops()) {
    const graph::Node& op = graph.node(id);
    if (dnnl_op[id.value()] || !IsLayoutAgnostic(graph, op)) continue;
    agnostic[id.value()] = true;
    for (size_t i = 0; i < LayoutInputCount(op); ++i)
      classes.Join(op.inputs[i].value(), op.outputs[0].value());
  }
  // A class is blocked unless one of its tensors cannot be: a shape that does not block, a
  // producer or reader that needs NCHW (graph inputs, weights, outputs, other kernels).
  std::vector<bool> ok(nt, true);
  for (size_t t = 0; t < nt; ++t) {
    const graph::Tensor& tensor = graph.tensor(hx::TensorId(t));
    bool fine = Blockable(tensor, block) && tensor.producer.valid();
    if (fine) {
      const size_t p = tensor.producer.value();
      fine = graph.node(tensor.producer).is_op() && (dnnl_op[p] || agnostic[p]);
    }
    for (NodeId c : tensor.consumers) {
      const graph::Node& reader = graph.node(c);
      const bool layout_input = agnostic[c.value()] && [&] {
        for (size_t i = 0; i < LayoutInputCount(reader); ++i)
          if (reader.inputs[i].value() == t) return true;
        return false;
      }();
      if (!(dnnl_op[c.value()] && reader.inputs[0].value() == t) && !layout_input) fine = false;
    }
    if (!fine) ok[classes.Find(t)] = false;
  }
  std::vector<bool> blocked(nt, false);
  for (size_t t = 0; t < nt; ++t) blocked[t] = ok[classes.Find(t)];
  return blocked;
}

}  // namespace hx::exec::dnnl_impl
