#include "hexplan/exec/values.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "hexplan/exec/dnnl_ops.h"
#include "hexplan/graph/analysis.h"

namespace hx::exec {

using graph::DType;
using graph::Graph;
using graph::NodeKind;

namespace {

// SplitMix64: a small, fast, portable generator (the same values on every platform).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float Symmetric() {
    return static_cast<float>(static_cast<double>(Next() >> 40) / (1 << 23) - 1.0);
  }

 private:
  uint64_t state_;
};

uint64_t HashName(const std::string& name, uint64_t seed) {
  uint64_t h = 1469598103934665603ULL ^ seed;
  for (unsigned char ch : name) h = (h ^ ch) * 1099511628211ULL;
  return h;
}

// The exclusive upper bound of valid indices for a tensor read as Gather indices (0: none).
int64_t GatherBound(const Graph& graph, TensorId tensor) {
  int64_t bound = 0;
  for (NodeId consumer : graph.tensor(tensor).consumers) {
    const graph::Node& n = graph.node(consumer);
    if (n.op_type != "Gather" || n.inputs.size() < 2 || n.inputs[1] != tensor) continue;
    const graph::Shape& data = graph.tensor(n.inputs[0]).shape;
    int64_t axis = n.attrs.GetInt("axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(data.size());
    if (axis < 0 || axis >= static_cast<int64_t>(data.size())) continue;
    const int64_t dim = data[static_cast<size_t>(axis)];
    bound = bound == 0 ? dim : std::min(bound, dim);
  }
  return bound;
}

// The fan-in of a weight for its scale, from how its first consumer reads it.
int64_t FanIn(const Graph& graph, TensorId tensor) {
  const graph::Shape& s = graph.tensor(tensor).shape;
  if (s.empty()) return 1;
  for (NodeId consumer : graph.tensor(tensor).consumers) {
    const graph::Node& n = graph.node(consumer);
    if (n.op_type == "MatMul" && s.size() >= 2) return s[s.size() - 2];
    if (n.op_type == "Gemm" && s.size() == 2) {
      const bool is_b = n.inputs.size() > 1 && n.inputs[1] == tensor;
      const bool trans = n.attrs.GetInt(is_b ? "transB" : "transA", 0) != 0;
      return is_b ? (trans ? s[1] : s[0]) : (trans ? s[0] : s[1]);
    }
    if (n.op_type == "Conv") return graph::NumElements(s) / std::max<int64_t>(1, s[0]);
    if (n.op_type == "LSTM") return s.back();
    if (n.op_type == "Gather") return 100;  // embeddings: values around +-0.17
  }
  return s.back();
}

void FillRandom(const Graph& graph, NodeId id, uint64_t seed, HostTensor* t) {
  const graph::Node& node = graph.node(id);
  const TensorId tensor = node.outputs.at(0);
  Rng rng(HashName(node.name, seed));
  const int64_t n = t->NumElements();
  switch (t->dtype) {
    case DType::kF32: {
      float* v = t->data<float>();
      if (t->shape.size() <= 1) {
        const std::string& name = node.name;
        const bool gain = name.size() >= 6 && (name.rfind("weight") == name.size() - 6 ||
                                               name.rfind("gamma") == name.size() - 5);
        for (int64_t i = 0; i < n; ++i) v[i] = (gain ? 1.0f : 0.0f) + 0.1f * rng.Symmetric();
      } else {
        const float scale = static_cast<float>(
            std::sqrt(3.0 / static_cast<double>(std::max<int64_t>(1, FanIn(graph, tensor)))));
        for (int64_t i = 0; i < n; ++i) v[i] = scale * rng.Symmetric();
      }
      break;
    }
    case DType::kBool:
    case DType::kU8: {
      uint8_t* v = t->data<uint8_t>();
      const graph::Shape& s = t->shape;
      if (s.size() >= 2 && s[s.size() - 1] == s[s.size() - 2]) {
        const int64_t k = s.back();
        for (int64_t i = 0; i < n; ++i) v[i] = (i % k) <= (i / k) % k;  // causal mask
      } else {
        for (int64_t i = 0; i < n; ++i) v[i] = rng.Next() & 1;
      }
      break;
    }
    case DType::kI64:
    case DType::kI32: {
      const int64_t bound = GatherBound(graph, tensor);
      for (int64_t i = 0; i < n; ++i) {
        int64_t x = bound > 0 ? static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(bound)) : 0;
        if (t->dtype == DType::kI64)
          t->data<int64_t>()[i] = x;
        else
          t->data<int32_t>()[i] = static_cast<int32_t>(x);
      }
      break;
    }
    default:  // other dtypes: small random bit patterns are not meaningful; zeros
      break;
  }
}

}  // namespace

StatusOr<std::vector<HostTensor>> MaterializeWeights(const Graph& graph, uint64_t seed) {
  return MaterializeWeights(graph, seed, std::vector<uint8_t>(graph.num_nodes(), 1));
}

StatusOr<std::vector<HostTensor>> MaterializeWeights(const Graph& graph, uint64_t seed,
                                                     const std::vector<uint8_t>& only) {
  std::vector<HostTensor> weights(graph.num_nodes());
  for (NodeId id : graph.Weights()) {
    if (id.value() >= only.size() || !only[id.value()]) continue;
    const graph::Node& node = graph.node(id);
    if (node.outputs.empty()) return InvalidArgument("weight '" + node.name + "' has no tensor");
    const graph::Tensor& t = graph.tensor(node.outputs[0]);
    HostTensor value(t.dtype, t.shape);
    if (node.data) {
      if (node.data->size() != value.bytes.size())
        return InvalidArgument("weight '" + node.name + "': payload has " +
                               std::to_string(node.data->size()) + " bytes, its shape " +
                               graph::ShapeToString(t.shape) + " " + graph::DTypeName(t.dtype) +
                               " needs " + std::to_string(value.bytes.size()));
      std::memcpy(value.bytes.data(), node.data->data(), node.data->size());
    } else {
      if (t.dtype == DType::kF16 || t.dtype == DType::kBF16)
        return Unimplemented("weight '" + node.name + "': random " + graph::DTypeName(t.dtype) +
                             " values are unsupported (the CPU backend runs fp32 models)");
      FillRandom(graph, id, seed, &value);
    }
    weights[id.value()] = std::move(value);
  }
  return weights;
}

std::map<std::string, HostTensor> RandomInputs(const Graph& graph, uint64_t seed) {
  std::map<std::string, HostTensor> inputs;
  for (NodeId id : graph.Inputs()) {
    const graph::Node& node = graph.node(id);
    const graph::Tensor& t = graph.tensor(node.outputs.at(0));
    HostTensor value(t.dtype, t.shape);
    Rng rng(HashName(node.name, seed));
    const int64_t n = value.NumElements();
    if (t.dtype == DType::kF32) {
      for (int64_t i = 0; i < n; ++i) value.data<float>()[i] = rng.Symmetric();
    } else if (t.dtype == DType::kI64 || t.dtype == DType::kI32) {
      int64_t bound = GatherBound(graph, node.outputs[0]);
      if (bound == 0) bound = 2;
      for (int64_t i = 0; i < n; ++i) {
        int64_t x = static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(bound));
        if (t.dtype == DType::kI64)
          value.data<int64_t>()[i] = x;
        else
          value.data<int32_t>()[i] = static_cast<int32_t>(x);
      }
    } else if (t.dtype == DType::kBool || t.dtype == DType::kU8) {
      for (int64_t i = 0; i < n; ++i) value.data<uint8_t>()[i] = rng.Next() & 1;
    }
    inputs.emplace(node.name, std::move(value));
  }
  return inputs;
}

namespace {

// The first graph input, in graph.Inputs() order, without a value of its dtype and shape.
InputCheck DiagnoseGraphInputs(const Graph& graph,
                               const std::map<std::string, HostTensor>& inputs) {
  for (NodeId id : graph.Inputs()) {
    const graph::Node& node = graph.node(id);
    const graph::Tensor& t = graph.tensor(node.outputs.at(0));
    auto it = inputs.find(node.name);
    if (it == inputs.end())
      return {InputProblem::kMissing,
              InvalidArgument("graph input '" + node.name + "' (" + graph::DTypeName(t.dtype) +
                              " " + graph::ShapeToString(t.shape) + ") has no value")};
    if (it->second.dtype != t.dtype || it->second.shape != t.shape)
      return {InputProblem::kWrongType,
              InvalidArgument("graph input '" + node.name + "': expected " +
                              graph::DTypeName(t.dtype) + " " + graph::ShapeToString(t.shape) +
                              ", got " + graph::DTypeName(it->second.dtype) + " " +
                              graph::ShapeToString(it->second.shape))};
  }
  return {};
}

}  // namespace

InputCheck DiagnoseInputs(const Graph& graph, const std::map<std::string, HostTensor>& inputs) {
  InputCheck check = DiagnoseGraphInputs(graph, inputs);
  if (check.problem != InputProblem::kNone) return check;
  for (const auto& [name, value] : inputs) {
    auto node = graph.FindNode(name);
    if (!node || graph.node(*node).kind != NodeKind::kInput)
      return {InputProblem::kNotAnInput, InvalidArgument("'" + name + "' is not a graph input")};
  }
  return {};
}

Status CheckGraphInputsGiven(const Graph& graph, const std::map<std::string, HostTensor>& inputs) {
  return DiagnoseGraphInputs(graph, inputs).status;
}

Status CheckInputs(const Graph& graph, const std::map<std::string, HostTensor>& inputs) {
  return DiagnoseInputs(graph, inputs).status;
}

StatusOr<std::vector<HostTensor>> RunReference(const Graph& graph,
                                               const std::vector<HostTensor>& weights,
                                               const std::map<std::string, HostTensor>& inputs,
                                               const KernelOptions& options) {
  HX_RETURN_IF_ERROR(CheckInputs(graph, inputs));
  HX_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph::TopologicalOrder(graph));
  // Op outputs live in `values`; inputs and weights are read where they are.
  std::vector<HostTensor> values(graph.num_tensors());
  std::vector<const uint8_t*> where(graph.num_tensors(), nullptr);
  // The fast kernels are the CPU backend's: oneDNN's where it runs the op, on one thread.
  std::unique_ptr<DnnlOps> dnnl = options.naive ? nullptr : std::make_unique<DnnlOps>();
  if (dnnl != nullptr) dnnl->Prepare(graph);
  const DnnlOps::ScopedTeamSize one_thread(1);
  auto ref = [&](TensorId t) {
    TensorRef r;
    if (!t.valid()) return r;
    r.dtype = graph.tensor(t).dtype;
    r.shape = &graph.tensor(t).shape;
    r.data = const_cast<uint8_t*>(where[t.value()]);  // kernels only read inputs
    return r;
  };
  for (NodeId id : order) {
    const graph::Node& node = graph.node(id);
    switch (node.kind) {
      case NodeKind::kInput:
        where[node.outputs[0].value()] = inputs.at(node.name).bytes.data();
        break;
      case NodeKind::kWeight:
        if (id.value() >= weights.size() ||
            weights[id.value()].bytes.size() !=
                static_cast<size_t>(graph.tensor(node.outputs[0]).Bytes()))
          return InvalidArgument("weight '" + node.name + "' has no value");
        where[node.outputs[0].value()] = weights[id.value()].bytes.data();
        break;
      case NodeKind::kOutput:
        break;
      case NodeKind::kOp: {
        std::vector<TensorRef> in, out;
        for (TensorId t : node.inputs) in.push_back(ref(t));
        for (TensorId t : node.outputs) {
          if (t.valid()) {
            values[t.value()] = HostTensor(graph.tensor(t).dtype, graph.tensor(t).shape);
            where[t.value()] = values[t.value()].bytes.data();
          }
          out.push_back(ref(t));
        }
        if (dnnl != nullptr) {
          HX_ASSIGN_OR_RETURN(const bool ran, dnnl->Run(node, in, out));
          if (ran) break;
        }
        HX_RETURN_IF_ERROR(RunCpuKernel(node, in, out, options));
        break;
      }
    }
  }
  std::vector<HostTensor> outputs;
  for (NodeId id : graph.Outputs()) {
    const TensorId t = graph.node(id).inputs.at(0);
    const NodeId producer = graph.tensor(t).producer;
    const graph::Node& p = graph.node(producer);
    outputs.push_back(p.kind == NodeKind::kInput    ? inputs.at(p.name)
                      : p.kind == NodeKind::kWeight ? weights[producer.value()]
                                                    : values[t.value()]);
  }
  return outputs;
}

}  // namespace hx::exec
