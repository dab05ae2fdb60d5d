#pragma once
// Private to the zoo: a small layer library on top of hx::graph::Graph that names nodes and tensors
// the way torch.onnx.export does ("/h.0/attn/MatMul", "/h.0/attn/MatMul_output_0") and infers
// output shapes, plus the per-family generators that zoo.cc dispatches to.

#include <array>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/graph/graph.h"
#include "hexplan/graph/zoo.h"

namespace hx::graph::zoo_internal {

// numpy-style broadcast of two shapes (HX_CHECKs that they are compatible).
Shape BroadcastShapes(const Shape& a, const Shape& b);

class ZooBuilder {
 public:
  ZooBuilder(const std::string& name, DType dtype);

  Graph Finish() { return std::move(graph_); }
  Graph& graph() { return graph_; }
  DType dtype() const { return dtype_; }
  // CNNs: whether ConvBn keeps a BatchNormalization op (ZooOptions::separate_batchnorm).
  void set_separate_batchnorm(bool separate) { separate_batchnorm_ = separate; }
  bool separate_batchnorm() const { return separate_batchnorm_; }
  const Shape& shape(TensorId t) const { return graph_.tensor(t).shape; }
  DType dtype_of(TensorId t) const { return graph_.tensor(t).dtype; }

  // Op names are "/<scope>/<OpType>" (with "_<n>" on repeats); constants are cached per scope.
  void SetScope(const std::string& scope);
  const std::string& scope() const { return scope_; }

  TensorId Input(const std::string& name, DType dtype, Shape shape);
  void Output(TensorId t) { graph_.AddOutput(t); }
  // A parameter tensor in the model's dtype (or `dtype` for integer/bool buffers).
  TensorId Weight(const std::string& name, Shape shape);
  TensorId TypedWeight(const std::string& name, DType dtype, Shape shape);

  // Constant ops (ONNX Constant with value_float / value_floats / value_ints): not parameters.
  TensorId ConstFloat(double value);
  TensorId ConstFloats(const std::vector<double>& values);
  TensorId ConstInts(const std::vector<int64_t>& values);

  // A generic op with one output of `shape`; its dtype is `dtype` or else that of the first
  // floating-point input, or else the model's.
  TensorId Op(const std::string& type, std::vector<TensorId> inputs, Shape shape,
              Attributes attrs = {}, std::optional<DType> dtype = std::nullopt);
  std::vector<TensorId> OpN(const std::string& type, std::vector<TensorId> inputs,
                            const std::vector<Shape>& shapes, Attributes attrs = {});

  // ---- Elementwise and tensor ops (output dtype follows the first input).
  TensorId Unary(const std::string& type, TensorId x, Attributes attrs = {});
  TensorId Binary(const std::string& type, TensorId a, TensorId b);
  TensorId Where(TensorId cond, TensorId a, TensorId b);
  TensorId MatMul(TensorId a, TensorId b);
  TensorId Reshape(TensorId x, const Shape& shape);
  TensorId Transpose(TensorId x, const std::vector<int64_t>& perm);
  TensorId Unsqueeze(TensorId x, const std::vector<int64_t>& axes);
  TensorId Concat(const std::vector<TensorId>& xs, int64_t axis);
  std::vector<TensorId> Split(TensorId x, int64_t axis, const std::vector<int64_t>& sizes);
  TensorId Slice(TensorId x, int64_t axis, int64_t start, int64_t end);
  TensorId Gather(TensorId data, TensorId indices, int64_t axis = 0);
  TensorId Softmax(TensorId x, int64_t axis = -1);
  TensorId ReduceMean(TensorId x, const std::vector<int64_t>& axes, bool keepdims = true);
  TensorId Pad(TensorId x, const std::vector<int64_t>& pads);  // ONNX order: begins then ends

  // ---- Layers (weights named "<prefix>.weight" / "<prefix>.bias", as in the PyTorch module).
  // nn.Linear as torch.onnx exports it for N-d inputs: MatMul with a [in, out] weight, then Add.
  TensorId Linear(TensorId x, const std::string& prefix, int64_t out, bool bias = true);
  // nn.Linear on a 2-D input: Gemm(x, W[out, in], b, transB=1).
  TensorId Gemm(TensorId x, const std::string& prefix, int64_t out, bool bias = true);
  TensorId LayerNorm(TensorId x, const std::string& prefix, double eps = 1e-5, bool bias = true);
  // RMSNorm as exported from LLaMA: Pow, ReduceMean, Add eps, Sqrt, Div, Mul weight.
  TensorId RmsNorm(TensorId x, const std::string& prefix, double eps = 1e-6);
  TensorId GeluErf(TensorId x);   // nn.GELU(): Div, Erf, Add, Mul, Mul
  TensorId GeluTanh(TensorId x);  // GPT-2's gelu_new: Mul, Pow, Mul, Add, Mul, Tanh, Add, Mul
  TensorId Silu(TensorId x);      // Sigmoid, Mul

  // ---- NCHW convolution layers.
  struct ConvSpec {
    int64_t out_channels;
    std::array<int64_t, 2> kernel{1, 1};
    std::array<int64_t, 2> stride{1, 1};
    std::array<int64_t, 2> pad{0, 0};
    int64_t groups = 1;
    bool bias = false;
    int64_t dilation = 1;
  };
  TensorId Conv(TensorId x, const std::string& prefix, const ConvSpec& spec);
  TensorId MaxPool(TensorId x, int64_t kernel, int64_t stride, int64_t pad, bool ceil_mode = false);
  TensorId AveragePool(TensorId x, int64_t kernel, int64_t stride, int64_t pad);
  TensorId GlobalAveragePool(TensorId x);
  TensorId Flatten(TensorId x, int64_t axis = 1);

 private:
  std::string UniqueOpName(const std::string& type);

  Graph graph_;
  bool separate_batchnorm_ = false;
  DType dtype_;
  std::string scope_;
  std::unordered_map<std::string, int> name_counts_;
  std::unordered_map<std::string, TensorId> const_cache_;
};

// ---- Family generators (options already validated, seq/image defaults resolved).
struct GptSpec {  // GPT-2 / GPT-3 / MT-NLG: pre-LN decoder, learned positions, tied LM head
  int64_t layers, hidden, heads, head_dim, ffn, vocab, max_positions;
};
Graph BuildGpt(const std::string& name, const GptSpec& spec, const ZooOptions& options);

struct BertSpec {
  int64_t layers, hidden, heads, ffn, vocab, max_positions, type_vocab;
};
Graph BuildBert(const std::string& name, const BertSpec& spec, const ZooOptions& options);

struct LlamaSpec {
  int64_t layers, hidden, heads, ffn, vocab, max_positions;
  int64_t kv_heads = 0;         // grouped-query attention: K/V heads (0: one per query head)
  double rope_theta = 10000.0;  // the rotary base (Llama 3: 500000)
};
Graph BuildLlama(const std::string& name, const LlamaSpec& spec, const ZooOptions& options);

struct SwinSpec {  // Swin Transformer V2
  int64_t embed_dim;
  std::array<int64_t, 4> depths;
  std::array<int64_t, 4> heads;
  int64_t window;
  int64_t num_classes;
};
Graph BuildSwinV2(const std::string& name, const SwinSpec& spec, const ZooOptions& options);

struct EvoformerSpec {  // AlphaFold2's Evoformer stack; heads = width / head_dim
  int64_t blocks, c_m, c_z, head_dim, opm_dim, msa_depth;
};
Graph BuildAlphaFold2(const std::string& name, const EvoformerSpec& spec,
                      const ZooOptions& options);

// torchvision CNNs by name: resnet50/101/152, vgg16/19, densenet121/169/201, inception_v3,
// mobilenet_v2.
Graph BuildCnn(const std::string& name, const ZooOptions& options);

Graph BuildLstm(const ZooOptions& options);

}  // namespace hx::graph::zoo_internal
