// CheckGraphWithOnnx: one set of op checks for every graph format. Rather than restating ONNX's
// schemas and shape rules, a graph from another format goes through the ONNX writer and reader,
// and the shapes the reader infers must equal the graph's own.

#include "hexplan/graph/onnx_io.h"

namespace hx::graph {
namespace {

// ONNX's messages may end in blank lines.
std::string TrimEnd(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// "tensor 'y' (output 0 of node 'mm' (MatMul))".
std::string DescribeTensor(const Graph& g, const Tensor& t) {
  std::string what = "tensor '" + t.name + "'";
  if (!t.producer.valid()) return what;
  const Node& n = g.node(t.producer);
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    if (n.outputs[k].valid() && g.tensor(n.outputs[k]).name == t.name) {
      what += " (output " + std::to_string(k) + " of node '" + n.name + "' (" + n.op_type + "))";
    }
  }
  return what;
}

// Every tensor the ONNX reader kept under its name must have the graph's shape. (Dtypes are not
// compared: ONNX import maps unsigned types to signed ones of the same width.)
Status CompareTensors(const Graph& graph, const Graph& back, const std::string& source_name) {
  for (size_t i = 0; i < graph.num_tensors(); ++i) {
    const Tensor& t = graph.tensor(TensorId(i));
    auto other = back.FindTensor(t.name);
    if (!other) continue;  // folded into a constant
    const Tensor& o = back.tensor(*other);
    if (o.shape != t.shape) {
      return InvalidArgument(source_name + ": " + DescribeTensor(graph, t) + " has shape " +
                             ShapeToString(t.shape) + ", but its op computes " +
                             ShapeToString(o.shape) + " (ONNX shape inference)");
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckGraphWithOnnx(const Graph& graph, const std::string& source_name) {
  auto bytes = WriteOnnxBytes(graph);
  if (!bytes.ok()) return InvalidArgument(source_name + ": " + TrimEnd(bytes.status().message()));
  OnnxReadOptions options;
  options.keep_weight_data = false;
  auto back = ReadOnnxBytes(*bytes, source_name, options);
  if (!back.ok()) return InvalidArgument(TrimEnd(back.status().message()));
  return CompareTensors(graph, *back, source_name);
}

}  // namespace hx::graph
