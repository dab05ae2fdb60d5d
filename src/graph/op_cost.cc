#include "hexplan/graph/op_cost.h"

#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>

namespace hx::graph {
namespace {

// How an op type's FLOPs are counted. The rules are documented in docs/flops.md.
enum class Rule {
  kZero,       // data movement, shape arithmetic: 0 FLOPs
  kPerOutput,  // `factor` FLOPs per output element
  kPerInput,   // `factor` FLOPs per element of the first input
  kVariadic,   // (inputs - 1) FLOPs per output element (Sum, Mean, Max, Min)
  kMatMul,
  kGemm,
  kConv,
  kConvTranspose,
  kPool,           // MaxPool, AveragePool, LpPool: window size per output element
  kGlobalPool,     // one FLOP per input element (+1 per output for the average)
  kNormalization,  // LayerNormalization & co.: factor per element, +1 scale, +1 bias
  kReduce,         // factor per input element (+1 per output for means)
  kLstm,
  kGru,
  kRnn,
  kEinsum,
  kResize,
};

struct RuleSpec {
  Rule rule;
  double factor = 1.0;
};

const std::unordered_map<std::string, RuleSpec>& Rules() {
  static const auto* rules = new std::unordered_map<std::string, RuleSpec>{
      // Linear algebra.
      {"MatMul", {Rule::kMatMul}},
      {"MatMulInteger", {Rule::kMatMul}},
      {"Gemm", {Rule::kGemm}},
      {"Conv", {Rule::kConv}},
      {"ConvInteger", {Rule::kConv}},
      {"ConvTranspose", {Rule::kConvTranspose}},
      {"Einsum", {Rule::kEinsum}},
      // Pools.
      {"MaxPool", {Rule::kPool}},
      {"AveragePool", {Rule::kPool}},
      {"LpPool", {Rule::kPool, 2.0}},
      {"GlobalAveragePool", {Rule::kGlobalPool, 1.0}},
      {"GlobalMaxPool", {Rule::kGlobalPool, 0.0}},
      {"GlobalLpPool", {Rule::kGlobalPool, 1.0}},
      // Normalizations (per element of the input).
      {"BatchNormalization", {Rule::kPerOutput, 2.0}},  // inference: x * s + b per channel
      {"LayerNormalization", {Rule::kNormalization, 5.0}},
      {"InstanceNormalization", {Rule::kNormalization, 5.0}},
      {"GroupNormalization", {Rule::kNormalization, 5.0}},
      {"SimplifiedLayerNormalization", {Rule::kNormalization, 3.0}},  // RMSNorm
      {"RMSNormalization", {Rule::kNormalization, 3.0}},
      {"LpNormalization", {Rule::kPerOutput, 3.0}},
      {"MeanVarianceNormalization", {Rule::kPerOutput, 5.0}},
      {"Softmax", {Rule::kPerOutput, 5.0}},
      {"LogSoftmax", {Rule::kPerOutput, 6.0}},
      {"Hardmax", {Rule::kPerOutput, 1.0}},
      // Elementwise binary (broadcast: per output element).
      {"Add", {Rule::kPerOutput}},
      {"Sub", {Rule::kPerOutput}},
      {"Mul", {Rule::kPerOutput}},
      {"Div", {Rule::kPerOutput}},
      {"Pow", {Rule::kPerOutput}},
      {"Mod", {Rule::kPerOutput}},
      {"PRelu", {Rule::kPerOutput}},
      {"Equal", {Rule::kPerOutput}},
      {"Less", {Rule::kPerOutput}},
      {"LessOrEqual", {Rule::kPerOutput}},
      {"Greater", {Rule::kPerOutput}},
      {"GreaterOrEqual", {Rule::kPerOutput}},
      {"And", {Rule::kPerOutput}},
      {"Or", {Rule::kPerOutput}},
      {"Xor", {Rule::kPerOutput}},
      {"BitShift", {Rule::kPerOutput}},
      {"Where", {Rule::kPerOutput}},
      {"Sum", {Rule::kVariadic}},
      {"Mean", {Rule::kVariadic, 2.0}},
      {"Max", {Rule::kVariadic}},
      {"Min", {Rule::kVariadic}},
      // Elementwise unary: one FLOP per element, compound activations per their decomposition.
      {"Relu", {Rule::kPerOutput}},
      {"LeakyRelu", {Rule::kPerOutput, 2.0}},
      {"Clip", {Rule::kPerOutput}},
      {"Neg", {Rule::kPerOutput}},
      {"Abs", {Rule::kPerOutput}},
      {"Sign", {Rule::kPerOutput}},
      {"Not", {Rule::kPerOutput}},
      {"Floor", {Rule::kPerOutput}},
      {"Ceil", {Rule::kPerOutput}},
      {"Round", {Rule::kPerOutput}},
      {"Sqrt", {Rule::kPerOutput}},
      {"Reciprocal", {Rule::kPerOutput}},
      {"Exp", {Rule::kPerOutput}},
      {"Log", {Rule::kPerOutput}},
      {"Erf", {Rule::kPerOutput}},
      {"Tanh", {Rule::kPerOutput}},
      {"Sigmoid", {Rule::kPerOutput}},
      {"Sin", {Rule::kPerOutput}},
      {"Cos", {Rule::kPerOutput}},
      {"Tan", {Rule::kPerOutput}},
      {"Asin", {Rule::kPerOutput}},
      {"Acos", {Rule::kPerOutput}},
      {"Atan", {Rule::kPerOutput}},
      {"Sinh", {Rule::kPerOutput}},
      {"Cosh", {Rule::kPerOutput}},
      {"IsNaN", {Rule::kPerOutput}},
      {"IsInf", {Rule::kPerOutput}},
      {"Softsign", {Rule::kPerOutput, 3.0}},
      {"Softplus", {Rule::kPerOutput, 3.0}},
      {"Elu", {Rule::kPerOutput, 3.0}},
      {"Selu", {Rule::kPerOutput, 4.0}},
      {"Celu", {Rule::kPerOutput, 4.0}},
      {"HardSigmoid", {Rule::kPerOutput, 3.0}},
      {"HardSwish", {Rule::kPerOutput, 4.0}},
      {"ThresholdedRelu", {Rule::kPerOutput}},
      {"Shrink", {Rule::kPerOutput, 2.0}},
      {"Mish", {Rule::kPerOutput, 5.0}},
      {"Gelu", {Rule::kPerOutput, 5.0}},  // 8 with approximate="tanh" (see ComputeFlops)
      {"FastGelu", {Rule::kPerOutput, 8.0}},
      {"QuantizeLinear", {Rule::kPerOutput, 2.0}},
      {"DequantizeLinear", {Rule::kPerOutput, 2.0}},
      {"CumSum", {Rule::kPerOutput}},
      // Reductions (per input element).
      {"ReduceSum", {Rule::kReduce, 1.0}},
      {"ReduceMean", {Rule::kReduce, 1.0}},
      {"ReduceMax", {Rule::kReduce, 1.0}},
      {"ReduceMin", {Rule::kReduce, 1.0}},
      {"ReduceProd", {Rule::kReduce, 1.0}},
      {"ReduceL1", {Rule::kReduce, 2.0}},
      {"ReduceL2", {Rule::kReduce, 2.0}},
      {"ReduceSumSquare", {Rule::kReduce, 2.0}},
      {"ReduceLogSum", {Rule::kReduce, 1.0}},
      {"ReduceLogSumExp", {Rule::kReduce, 2.0}},
      {"ArgMax", {Rule::kPerInput, 1.0}},
      {"ArgMin", {Rule::kPerInput, 1.0}},
      {"TopK", {Rule::kPerInput, 1.0}},
      // Recurrent layers.
      {"LSTM", {Rule::kLstm}},
      {"GRU", {Rule::kGru}},
      {"RNN", {Rule::kRnn}},
      {"Resize", {Rule::kResize}},
      {"Upsample", {Rule::kResize}},
      // Data movement and shape arithmetic: no arithmetic.
      {"Reshape", {Rule::kZero}},
      {"Transpose", {Rule::kZero}},
      {"Flatten", {Rule::kZero}},
      {"Squeeze", {Rule::kZero}},
      {"Unsqueeze", {Rule::kZero}},
      {"Identity", {Rule::kZero}},
      {"Dropout", {Rule::kZero}},
      {"Constant", {Rule::kZero}},
      {"ConstantOfShape", {Rule::kZero}},
      {"Shape", {Rule::kZero}},
      {"Size", {Rule::kZero}},
      {"Range", {Rule::kZero}},
      {"Cast", {Rule::kZero}},
      {"CastLike", {Rule::kZero}},
      {"Gather", {Rule::kZero}},
      {"GatherElements", {Rule::kZero}},
      {"GatherND", {Rule::kZero}},
      {"Scatter", {Rule::kZero}},
      {"ScatterElements", {Rule::kZero}},
      {"ScatterND", {Rule::kZero}},
      {"Concat", {Rule::kZero}},
      {"Split", {Rule::kZero}},
      {"Slice", {Rule::kZero}},
      {"Expand", {Rule::kZero}},
      {"Tile", {Rule::kZero}},
      {"Pad", {Rule::kZero}},
      {"DepthToSpace", {Rule::kZero}},
      {"SpaceToDepth", {Rule::kZero}},
      {"Trilu", {Rule::kZero}},
      {"NonZero", {Rule::kZero}},
      {"OneHot", {Rule::kZero}},
      {"EyeLike", {Rule::kZero}},
  };
  return *rules;
}

double Elements(const Graph& graph, TensorId id) {
  if (!id.valid()) return 0.0;
  return static_cast<double>(graph.tensor(id).NumElements());
}

const Shape* InputShape(const Graph& graph, const Node& node, size_t i) {
  if (i >= node.inputs.size() || !node.inputs[i].valid()) return nullptr;
  return &graph.tensor(node.inputs[i]).shape;
}

bool HasInput(const Node& node, size_t i) {
  return i < node.inputs.size() && node.inputs[i].valid();
}

double OutputElements(const Graph& graph, const Node& node) {
  return node.outputs.empty() ? 0.0 : Elements(graph, node.outputs[0]);
}

double MatMulFlops(const Graph& graph, const Node& node) {
  const Shape* a = InputShape(graph, node, 0);
  if (a == nullptr || a->empty()) return 0.0;
  const double k = static_cast<double>(a->back());
  return 2.0 * OutputElements(graph, node) * k;
}

double GemmFlops(const Graph& graph, const Node& node) {
  const Shape* a = InputShape(graph, node, 0);
  if (a == nullptr || a->size() != 2) return 0.0;
  const bool trans_a = node.attrs.GetInt("transA", 0) != 0;
  const double k = static_cast<double>(trans_a ? (*a)[0] : (*a)[1]);
  const double out = OutputElements(graph, node);
  return 2.0 * out * k + (HasInput(node, 2) ? out : 0.0);
}

double ConvFlops(const Graph& graph, const Node& node) {
  const Shape* w = InputShape(graph, node, 1);
  if (w == nullptr || w->size() < 2) return 0.0;
  // W is [C_out, C_in / group, k...]: each output element is a dot product of that many MACs.
  double macs_per_output = 1.0;
  for (size_t i = 1; i < w->size(); ++i) macs_per_output *= static_cast<double>((*w)[i]);
  const double out = OutputElements(graph, node);
  return 2.0 * out * macs_per_output + (HasInput(node, 2) ? out : 0.0);
}

double ConvTransposeFlops(const Graph& graph, const Node& node) {
  const Shape* w = InputShape(graph, node, 1);
  if (w == nullptr || w->size() < 2) return 0.0;
  // W is [C_in, C_out / group, k...]: every input element scatters into that many outputs.
  double macs_per_input = 1.0;
  for (size_t i = 1; i < w->size(); ++i) macs_per_input *= static_cast<double>((*w)[i]);
  const double in = HasInput(node, 0) ? Elements(graph, node.inputs[0]) : 0.0;
  return 2.0 * in * macs_per_input + (HasInput(node, 2) ? OutputElements(graph, node) : 0.0);
}

double PoolFlops(const Graph& graph, const Node& node, double factor) {
  double window = 1.0;
  for (int64_t k : node.attrs.GetInts("kernel_shape")) window *= static_cast<double>(k);
  return factor * OutputElements(graph, node) * window;
}

double ReduceFlops(const Graph& graph, const Node& node, double factor) {
  const double in = HasInput(node, 0) ? Elements(graph, node.inputs[0]) : 0.0;
  double flops = factor * in;
  if (node.op_type == "ReduceMean") flops += OutputElements(graph, node);  // the divide
  return flops;
}

// X [seq, batch, input] (layout 0) or [batch, seq, input]; W [dirs, gates*H, input].
double RecurrentFlops(const Graph& graph, const Node& node, int gates, double per_hidden) {
  const Shape* x = InputShape(graph, node, 0);
  const Shape* w = InputShape(graph, node, 1);
  if (x == nullptr || w == nullptr || x->size() != 3 || w->size() != 3) return 0.0;
  const double steps = static_cast<double>((*x)[0] * (*x)[1]);
  const double dirs = static_cast<double>((*w)[0]);
  const double hidden = static_cast<double>((*w)[1]) / gates;
  const double input = static_cast<double>((*w)[2]);
  const double matmuls = 2.0 * gates * hidden * (input + hidden);
  const double biases = HasInput(node, 3) ? 2.0 * gates * hidden : 0.0;
  return dirs * steps * (matmuls + biases + per_hidden * hidden);
}

double EinsumFlops(const Graph& graph, const Node& node) {
  const std::string eq = node.attrs.GetString("equation", "");
  const size_t arrow = eq.find("->");
  if (eq.empty() || arrow == std::string::npos) return 0.0;
  std::unordered_map<char, int64_t> dims;
  size_t operand = 0;
  size_t pos = 0;
  const std::string lhs = eq.substr(0, arrow);
  while (pos <= lhs.size() && operand < node.inputs.size()) {
    size_t comma = lhs.find(',', pos);
    if (comma == std::string::npos) comma = lhs.size();
    std::string term;
    for (size_t i = pos; i < comma; ++i)
      if (lhs[i] != ' ') term += lhs[i];
    const Shape* shape = InputShape(graph, node, operand);
    if (shape != nullptr && term.find("...") == std::string::npos && term.size() == shape->size()) {
      for (size_t i = 0; i < term.size(); ++i) dims[term[i]] = (*shape)[i];
    } else if (shape != nullptr) {
      // Ellipsis: label the explicit letters from the two ends.
      const size_t ell = term.find("...");
      if (ell != std::string::npos) {
        for (size_t i = 0; i < ell && i < shape->size(); ++i) dims[term[i]] = (*shape)[i];
        const std::string tail = term.substr(ell + 3);
        for (size_t i = 0; i < tail.size() && i < shape->size(); ++i)
          dims[tail[tail.size() - 1 - i]] = (*shape)[shape->size() - 1 - i];
      }
    }
    ++operand;
    pos = comma + 1;
  }
  const std::string rhs = eq.substr(arrow + 2);
  double contracted = 1.0;
  for (const auto& [letter, size] : dims)
    if (rhs.find(letter) == std::string::npos) contracted *= static_cast<double>(size);
  const double per_output = node.inputs.size() > 1 ? 2.0 : 1.0;
  return per_output * OutputElements(graph, node) * contracted;
}

double ComputeFlops(const Graph& graph, const Node& node, const RuleSpec& spec) {
  switch (spec.rule) {
    case Rule::kZero:
      return 0.0;
    case Rule::kPerOutput: {
      double factor = spec.factor;
      if (node.op_type == "Gelu" && node.attrs.GetString("approximate", "none") == "tanh")
        factor = 8.0;
      return factor * OutputElements(graph, node);
    }
    case Rule::kPerInput:
      return spec.factor * (HasInput(node, 0) ? Elements(graph, node.inputs[0]) : 0.0);
    case Rule::kVariadic: {
      const double n = static_cast<double>(node.inputs.size());
      return std::max(0.0, n - 1.0) * OutputElements(graph, node) +
             (spec.factor > 1.0 ? OutputElements(graph, node) : 0.0);
    }
    case Rule::kMatMul:
      return MatMulFlops(graph, node);
    case Rule::kGemm:
      return GemmFlops(graph, node);
    case Rule::kConv:
      return ConvFlops(graph, node);
    case Rule::kConvTranspose:
      return ConvTransposeFlops(graph, node);
    case Rule::kPool:
      return PoolFlops(graph, node, spec.factor);
    case Rule::kGlobalPool: {
      const double in = HasInput(node, 0) ? Elements(graph, node.inputs[0]) : 0.0;
      return in + spec.factor * OutputElements(graph, node);
    }
    case Rule::kNormalization: {
      const double n = OutputElements(graph, node);
      return n * (spec.factor + (HasInput(node, 1) ? 1.0 : 0.0) + (HasInput(node, 2) ? 1.0 : 0.0));
    }
    case Rule::kReduce:
      return ReduceFlops(graph, node, spec.factor);
    // Per step: gate MatMuls, bias adds, activations and the cell/hidden updates.
    case Rule::kLstm:
      return RecurrentFlops(graph, node, 4, 9.0);
    case Rule::kGru:
      return RecurrentFlops(graph, node, 3, 8.0);
    case Rule::kRnn:
      return RecurrentFlops(graph, node, 1, 1.0);
    case Rule::kEinsum:
      return EinsumFlops(graph, node);
    case Rule::kResize: {
      const std::string mode = node.attrs.GetString("mode", "nearest");
      if (mode == "nearest") return 0.0;
      const Shape* x = InputShape(graph, node, 0);
      int64_t spatial = 0;
      if (x != nullptr && !node.outputs.empty()) {
        const Shape& y = graph.tensor(node.outputs[0]).shape;
        for (size_t i = 0; i < x->size() && i < y.size(); ++i)
          if ((*x)[i] != y[i]) ++spatial;
      }
      const double per_axis = mode == "cubic" ? 8.0 : 3.0;
      return per_axis * static_cast<double>(spatial) * OutputElements(graph, node);
    }
  }
  return 0.0;
}

}  // namespace

bool HasFlopRule(std::string_view op_type) { return Rules().count(std::string(op_type)) > 0; }

OpCost ComputeOpCost(const Graph& graph, NodeId id) {
  OpCost cost;
  const Node& node = graph.node(id);
  if (!node.is_op()) return cost;
  // Bytes: each distinct tensor once, split by whether a weight node produces it.
  std::vector<TensorId> seen;
  for (TensorId t : node.inputs) {
    if (!t.valid() || std::find(seen.begin(), seen.end(), t) != seen.end()) continue;
    seen.push_back(t);
    const Tensor& tensor = graph.tensor(t);
    const bool is_weight =
        tensor.producer.valid() && graph.node(tensor.producer).kind == NodeKind::kWeight;
    (is_weight ? cost.weight_bytes : cost.input_bytes) += tensor.Bytes();
  }
  for (TensorId t : node.outputs)
    if (t.valid()) cost.output_bytes += graph.tensor(t).Bytes();
  auto it = Rules().find(node.op_type);
  if (it == Rules().end()) {
    cost.has_rule = false;
    return cost;
  }
  cost.flops = ComputeFlops(graph, node, it->second);
  return cost;
}

double TotalFlops(const Graph& graph) {
  double total = 0.0;
  for (NodeId id : graph.Ops()) total += ComputeOpCost(graph, id).flops;
  return total;
}

std::vector<std::string> OpTypesWithoutFlopRule(const Graph& graph) {
  std::set<std::string> missing;
  for (NodeId id : graph.Ops()) {
    const Node& node = graph.node(id);
    if (!HasFlopRule(node.op_type)) missing.insert(node.op_type);
  }
  return {missing.begin(), missing.end()};
}

}  // namespace hx::graph
