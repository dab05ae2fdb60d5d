#include "hexplan/cost/op_class.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <string>
#include <utility>

namespace hx::cost {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Lower-case op types (ONNX, zoo, PipeDream module classes) by class, space-separated; the rest is
// kOther.
constexpr std::pair<OpClass, const char*> kTypes[] = {
    {OpClass::kGemm,
     "matmul gemm matmulinteger qlinearmatmul einsum linear bilinear fusedmatmul fullyconnected"},
    {OpClass::kConvolution,
     "conv convtranspose convinteger qlinearconv conv1d conv2d conv3d convtranspose1d "
     "convtranspose2d convtranspose3d fusedconv deformconv"},
    {OpClass::kAttention,
     "attention multiheadattention scaleddotproductattention groupqueryattention"},
    {OpClass::kElementwise,
     "add sub mul div pow sqrt exp log neg abs relu relu6 leakyrelu prelu elu selu celu gelu silu "
     "mish sigmoid hardsigmoid hardswish tanh erf sin cos tan sinh clip cast where min max mean "
     "sum "
     "reciprocal sign round floor ceil softplus softsign thresholdedrelu shrink not and or xor "
     "equal less greater mod identity transpose concat split slice pad tile expand copy "
     "upsample resize spacetodepth depthtospace quantizelinear dequantizelinear zeropad2d "
     "threshold hardtanh"},
    {OpClass::kNormalization,
     "batchnormalization layernormalization skiplayernormalization instancenormalization "
     "groupnormalization lpnormalization "
     "meanvariancenormalization lrn reducemean reducesum reducemax reducemin "
     "reduceprod reducel1 reducel2 reducelogsum reducelogsumexp reducesumsquare batchnorm1d "
     "batchnorm2d batchnorm3d layernorm groupnorm instancenorm2d localresponsenorm crossmaplrn2d"},
    {OpClass::kSoftmax, "softmax logsoftmax softmax2d"},
    {OpClass::kRmsNormalization, "rmsnormalization simplifiedlayernormalization rmsnorm"},
    {OpClass::kFusedElementwise, "rotaryembedding siluandmul geluandmul swiglu geglu reglu"},
    {OpClass::kRecurrent, "lstm gru rnn lstmcell grucell rnncell"},
    {OpClass::kPooling,
     "maxpool averagepool globalaveragepool globalmaxpool lppool globallppool maxpool1d maxpool2d "
     "maxpool3d avgpool1d avgpool2d avgpool3d adaptiveavgpool1d adaptiveavgpool2d "
     "adaptiveavgpool3d adaptivemaxpool2d"},
    {OpClass::kDropout, "dropout dropout2d"},
};

const std::map<std::string, OpClass>& Table() {
  static const std::map<std::string, OpClass> table = [] {
    std::map<std::string, OpClass> t;
    for (const auto& [cls, names] : kTypes) {
      std::istringstream words(names);
      for (std::string w; words >> w;) t.emplace(w, cls);
    }
    return t;
  }();
  return table;
}

bool HasWeightInput(const graph::Graph& graph, const graph::Node& node) {
  for (TensorId t : node.inputs) {
    if (!t.valid()) continue;
    const graph::Tensor& tensor = graph.tensor(t);
    if (tensor.producer.valid() && graph.node(tensor.producer).kind == graph::NodeKind::kWeight) {
      return true;
    }
  }
  return false;
}

// A Conv node's class from its attributes and weight (ConvolutionClass).
OpClass ConvNodeClass(const graph::Graph& graph, const graph::Node& node) {
  std::vector<int64_t> kernel = node.attrs.GetInts("kernel_shape");
  double channels_per_group = 0;  // unknown: not an image convolution, not grouped
  if (node.inputs.size() >= 2 && node.inputs[1].valid()) {
    const graph::Shape& w = graph.tensor(node.inputs[1]).shape;
    if (w.size() == 4 && kernel.empty()) kernel = {w[2], w[3]};
    if (w.size() >= 2) channels_per_group = static_cast<double>(w[1]);
  }
  std::vector<int64_t> strides = node.attrs.GetInts("strides", {1, 1});
  if (kernel.size() != 2 || strides.size() != 2) kernel = {0, 0}, strides = {1, 1};
  int64_t dilation = 1;
  for (int64_t d : node.attrs.GetInts("dilations", {1, 1})) dilation = std::max(dilation, d);
  return ConvolutionClass(static_cast<double>(kernel[0]), static_cast<double>(kernel[1]),
                          static_cast<double>(strides[0]), static_cast<double>(strides[1]),
                          static_cast<double>(dilation),
                          static_cast<double>(node.attrs.GetInt("group", 1)), channels_per_group);
}

}  // namespace

bool IsWinogradConvolution(double kernel_h, double kernel_w, double stride_h, double stride_w,
                           double dilation, double groups) {
  return kernel_h == 3 && kernel_w == 3 && stride_h == 1 && stride_w == 1 && dilation == 1 &&
         groups == 1;
}

OpClass ConvolutionClass(double kernel_h, double kernel_w, double stride_h, double stride_w,
                         double dilation, double groups, double in_channels_per_group) {
  if (IsWinogradConvolution(kernel_h, kernel_w, stride_h, stride_w, dilation, groups))
    return OpClass::kWinogradConvolution;
  if (groups > 1)
    return in_channels_per_group > 1 ? OpClass::kGroupedConvolution : OpClass::kConvolution;
  if (in_channels_per_group > 0 && in_channels_per_group <= kImageConvolutionChannels)
    return OpClass::kImageConvolution;
  return OpClass::kConvolution;
}

OpClass ClassifyOpType(std::string_view op_type) {
  auto it = Table().find(Lower(op_type));
  return it != Table().end() ? it->second : OpClass::kOther;
}

OpClass ClassifyOp(const graph::Graph& graph, NodeId op) {
  const graph::Node& node = graph.node(op);
  if (!node.is_op()) return OpClass::kOther;
  OpClass c = ClassifyOpType(node.op_type);
  std::string type = Lower(node.op_type);
  if (c == OpClass::kGemm && (type == "matmul" || type == "einsum") && node.inputs.size() >= 2 &&
      !HasWeightInput(graph, node)) {
    bool batched = true;
    for (size_t i = 0; i < 2; ++i) {
      batched = batched && node.inputs[i].valid() && graph.tensor(node.inputs[i]).shape.size() >= 3;
    }
    if (batched) return OpClass::kAttention;
  }
  if (c == OpClass::kConvolution && (type == "conv" || type == "fusedconv" || type == "conv2d"))
    return ConvNodeClass(graph, node);
  return c;
}

double LayerNormExtraBytes(double row_elements, double input_bytes) {
  return row_elements > kLayerNormRowElements ? 2.0 * input_bytes : 0.0;
}

double LayerNormExtraBytes(const graph::Graph& graph, NodeId op) {
  const graph::Node& node = graph.node(op);
  if (!node.is_op() || node.inputs.empty() || !node.inputs[0].valid()) return 0.0;
  const std::string type = Lower(node.op_type);
  if (type != "layernormalization" && type != "layernorm") return 0.0;
  const graph::Tensor& x = graph.tensor(node.inputs[0]);
  if (x.shape.empty() || x.shape.back() <= 0) return 0.0;
  return LayerNormExtraBytes(static_cast<double>(x.shape.back()), static_cast<double>(x.Bytes()));
}

}  // namespace hx::cost
