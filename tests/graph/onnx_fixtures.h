#pragma once
// ONNX models built in code, shaped the way torch.onnx.export writes them (node names like
// "/h.0/attn/MatMul", tensors "/h.0/attn/MatMul_output_0", dynamic axes as dim_params, shape
// arithmetic as Shape -> Gather -> Unsqueeze -> Concat -> Reshape, scalars as Constant nodes).
// Header-only so that any test binary can use it; no downloads.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "onnx/onnx-ml.pb.h"

namespace hx::testing {

// A dim: a fixed size or a symbolic name.
using OnnxDim = std::variant<int64_t, std::string>;

class OnnxModelBuilder {
 public:
  explicit OnnxModelBuilder(int opset, int64_t ir_version = 8) : opset_(opset) {
    model_.set_ir_version(ir_version);
    model_.set_producer_name("pytorch");
    model_.set_producer_version("2.1.0");
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("main_graph");
  }

  int opset() const { return opset_; }
  onnx::ModelProto& model() { return model_; }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }
  std::string Serialize() const { return model_.SerializeAsString(); }

  static void SetType(onnx::ValueInfoProto* v, const std::string& name, int32_t elem,
                      const std::vector<OnnxDim>& dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (const auto& d : dims) {
      if (const auto* i = std::get_if<int64_t>(&d))
        shape->add_dim()->set_dim_value(*i);
      else
        shape->add_dim()->set_dim_param(std::get<std::string>(d));
    }
  }
  std::string Input(const std::string& name, int32_t elem, const std::vector<OnnxDim>& dims) {
    SetType(graph().add_input(), name, elem, dims);
    return name;
  }
  void Output(const std::string& name, int32_t elem, const std::vector<OnnxDim>& dims) {
    SetType(graph().add_output(), name, elem, dims);
  }

  // A float initializer filled with a deterministic ramp (so payloads are checkable).
  std::string Weight(const std::string& name, const std::vector<int64_t>& dims) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    std::string raw(static_cast<size_t>(n) * 4, '\0');
    for (int64_t i = 0; i < n; ++i) {
      float v = static_cast<float>(i % 17) * 0.01f;
      std::memcpy(&raw[static_cast<size_t>(i) * 4], &v, 4);
    }
    t->set_raw_data(raw);
    return name;
  }
  std::string IntInitializer(const std::string& name, const std::vector<int64_t>& values) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return name;
  }

  onnx::NodeProto* Node(const std::string& op, const std::string& name,
                        const std::vector<std::string>& inputs, int num_outputs = 1) {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& in : inputs) n->add_input(in);
    for (int k = 0; k < num_outputs; ++k) {
      n->add_output(name + "_output_" + std::to_string(k));
    }
    return n;
  }
  // One-output op; returns the output tensor name.
  std::string Op(const std::string& op, const std::string& name,
                 const std::vector<std::string>& inputs) {
    return Node(op, name, inputs)->output(0);
  }

  static void AttrInt(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void AttrFloat(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void AttrInts(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }

  // torch-style Constant with a tensor attribute: int64 1-D (or scalar when `scalar`).
  std::string ConstInts(const std::string& name, const std::vector<int64_t>& values,
                        bool scalar = false) {
    auto* n = Node("Constant", name, {});
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return n->output(0);
  }
  std::string ConstFloat(const std::string& name, float value) {
    auto* n = Node("Constant", name, {});
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::FLOAT);
    std::string raw(4, '\0');
    std::memcpy(raw.data(), &value, 4);
    t->set_raw_data(raw);
    return n->output(0);
  }

  // Unsqueeze with the opset's form of axes (attribute before 13, input from 13).
  std::string Unsqueeze(const std::string& name, const std::string& x,
                        const std::vector<int64_t>& axes) {
    if (opset_ < 13) {
      auto* n = Node("Unsqueeze", name, {x});
      AttrInts(n, "axes", axes);
      return n->output(0);
    }
    return Op("Unsqueeze", name, {x, ConstInts(name + "_axes", axes)});
  }

 private:
  int opset_;
  onnx::ModelProto model_;
};

// ---- (a) A torchvision-style CNN: Conv/BN/Relu/MaxPool, a residual block, GlobalAveragePool,
// Flatten, Gemm. Input [batch_size, 3, 32, 32] with a symbolic batch.
inline constexpr int64_t kCnnParams = 432 + 64 + 2304 + 64 + 2304 + 64 + 160 + 10;

inline OnnxModelBuilder TorchCnn(int opset, bool weights_as_inputs = false) {
  OnnxModelBuilder b(opset, weights_as_inputs ? 6 : 8);
  using T = onnx::TensorProto;
  std::string x = b.Input("input", T::FLOAT, {std::string("batch_size"), 3, 32, 32});
  auto conv_bn_relu = [&](const std::string& scope, const std::string& in, int64_t cin,
                          int64_t cout, bool relu) {
    std::string w = b.Weight(scope + ".conv.weight", {cout, cin, 3, 3});
    auto* conv = b.Node("Conv", "/" + scope + "/conv/Conv", {in, w});
    OnnxModelBuilder::AttrInts(conv, "kernel_shape", {3, 3});
    OnnxModelBuilder::AttrInts(conv, "pads", {1, 1, 1, 1});
    OnnxModelBuilder::AttrInts(conv, "strides", {1, 1});
    std::vector<std::string> bn_in = {conv->output(0)};
    for (const char* p : {"weight", "bias", "running_mean", "running_var"}) {
      bn_in.push_back(b.Weight(scope + ".bn." + p, {cout}));
    }
    auto* bn = b.Node("BatchNormalization", "/" + scope + "/bn/BatchNormalization", bn_in);
    OnnxModelBuilder::AttrFloat(bn, "epsilon", 1e-5f);
    OnnxModelBuilder::AttrFloat(bn, "momentum", 0.9f);
    return relu ? b.Op("Relu", "/" + scope + "/relu/Relu", {bn->output(0)}) : bn->output(0);
  };
  std::string h = conv_bn_relu("stem", x, 3, 16, true);
  auto* pool = b.Node("MaxPool", "/maxpool/MaxPool", {h});
  OnnxModelBuilder::AttrInts(pool, "kernel_shape", {2, 2});
  OnnxModelBuilder::AttrInts(pool, "strides", {2, 2});
  h = pool->output(0);
  std::string r = conv_bn_relu("layer1.0.a", h, 16, 16, true);
  r = conv_bn_relu("layer1.0.b", r, 16, 16, false);
  h = b.Op("Add", "/layer1.0/Add", {r, h});
  h = b.Op("Relu", "/layer1.0/relu/Relu", {h});
  h = b.Op("GlobalAveragePool", "/avgpool/GlobalAveragePool", {h});
  auto* flat = b.Node("Flatten", "/Flatten", {h});
  OnnxModelBuilder::AttrInt(flat, "axis", 1);
  auto* gemm =
      b.Node("Gemm", "/fc/Gemm",
             {flat->output(0), b.Weight("fc.weight", {10, 16}), b.Weight("fc.bias", {10})});
  OnnxModelBuilder::AttrFloat(gemm, "alpha", 1.0f);
  OnnxModelBuilder::AttrFloat(gemm, "beta", 1.0f);
  OnnxModelBuilder::AttrInt(gemm, "transB", 1);
  gemm->set_output(0, "output");
  b.Output("output", T::FLOAT, {std::string("batch_size"), 10});
  if (weights_as_inputs) {  // exporters before IR 4 listed every initializer as a graph input
    for (const auto& init : b.graph().initializer()) {
      std::vector<OnnxDim> dims(init.dims().begin(), init.dims().end());
      b.Input(init.name(), T::FLOAT, dims);
    }
  }
  return b;
}

// ---- (b) A GPT-style decoder (token + learned position embeddings, `layers` pre-LN blocks, final
// LayerNorm, lm_head) with torch's dynamic reshape chains. Input input_ids [batch, sequence].
struct GptFixtureConfig {
  int64_t vocab = 100;
  int64_t max_pos = 64;
  int64_t hidden = 32;
  int64_t heads = 4;
  int64_t layers = 2;
  bool layer_norm_op = true;  // LayerNormalization (opset 17) or the ReduceMean/Sub/Pow/... form
};

inline int64_t GptFixtureParams(const GptFixtureConfig& c) {
  const int64_t h = c.hidden;
  const int64_t block =
      2 * h + (h * 3 * h + 3 * h) + (h * h + h) + 2 * h + (h * 4 * h + 4 * h) + (4 * h * h + h);
  return c.vocab * h + c.max_pos * h + c.layers * block + 2 * h + h * c.vocab;
}

inline OnnxModelBuilder TorchGpt(int opset, const GptFixtureConfig& c = {}) {
  using T = onnx::TensorProto;
  OnnxModelBuilder b(opset);
  const int64_t h = c.hidden, head_dim = c.hidden / c.heads;
  std::string ids = b.Input("input_ids", T::INT64, {std::string("batch"), std::string("sequence")});
  // Dynamic batch and sequence sizes, as torch traces x.size(0), x.size(1).
  auto dyn_dim = [&](const std::string& scope, const std::string& x, int64_t index) {
    std::string shape = b.Op("Shape", scope + "/Shape_" + std::to_string(index), {x});
    std::string idx = b.ConstInts(scope + "/Constant_idx_" + std::to_string(index), {index}, true);
    std::string g = b.Op("Gather", scope + "/Gather_" + std::to_string(index), {shape, idx});
    return b.Unsqueeze(scope + "/Unsqueeze_" + std::to_string(index), g, {0});
  };
  auto linear = [&](const std::string& scope, const std::string& x, const std::string& prefix,
                    int64_t in, int64_t out, bool bias = true) {
    std::string y = b.Op("MatMul", scope + "/MatMul", {x, b.Weight(prefix + ".weight", {in, out})});
    if (bias) y = b.Op("Add", scope + "/Add", {b.Weight(prefix + ".bias", {out}), y});
    return y;
  };
  auto layer_norm = [&](const std::string& scope, const std::string& x, const std::string& prefix) {
    std::string w = b.Weight(prefix + ".weight", {h});
    std::string bias = b.Weight(prefix + ".bias", {h});
    if (c.layer_norm_op) {
      auto* ln = b.Node("LayerNormalization", scope + "/LayerNormalization", {x, w, bias});
      OnnxModelBuilder::AttrInt(ln, "axis", -1);
      OnnxModelBuilder::AttrFloat(ln, "epsilon", 1e-5f);
      return ln->output(0);
    }
    auto* mean = b.Node("ReduceMean", scope + "/ReduceMean", {x});
    OnnxModelBuilder::AttrInts(mean, "axes", {-1});
    std::string d = b.Op("Sub", scope + "/Sub", {x, mean->output(0)});
    std::string sq = b.Op("Pow", scope + "/Pow", {d, b.ConstFloat(scope + "/Constant", 2.0f)});
    auto* var = b.Node("ReduceMean", scope + "/ReduceMean_1", {sq});
    OnnxModelBuilder::AttrInts(var, "axes", {-1});
    std::string eps =
        b.Op("Add", scope + "/Add", {var->output(0), b.ConstFloat(scope + "/Constant_1", 1e-5f)});
    std::string norm = b.Op("Div", scope + "/Div", {d, b.Op("Sqrt", scope + "/Sqrt", {eps})});
    std::string scaled = b.Op("Mul", scope + "/Mul", {norm, w});
    return b.Op("Add", scope + "/Add_1", {scaled, bias});
  };

  // Embeddings: wte[input_ids] + wpe[arange(seq)].
  std::string tok = b.Op("Gather", "/wte/Gather", {b.Weight("wte.weight", {c.vocab, h}), ids});
  std::string seq_shape = b.Op("Shape", "/Shape", {ids});
  std::string seq =
      b.Op("Gather", "/Gather", {seq_shape, b.ConstInts("/Constant", {1}, /*scalar=*/true)});
  std::string pos =
      b.Op("Range", "/Range",
           {b.ConstInts("/Constant_1", {0}, true), seq, b.ConstInts("/Constant_2", {1}, true)});
  std::string pe = b.Op("Gather", "/wpe/Gather", {b.Weight("wpe.weight", {c.max_pos, h}), pos});
  std::string x = b.Op("Add", "/Add", {tok, pe});

  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string s = "/h." + std::to_string(l);
    const std::string p = "h." + std::to_string(l);
    std::string ln1 = layer_norm(s + "/ln_1", x, p + ".ln_1");
    std::string qkv = linear(s + "/attn/c_attn", ln1, p + ".attn.c_attn", h, 3 * h);
    onnx::NodeProto* split;
    if (opset < 13) {
      split = b.Node("Split", s + "/attn/Split", {qkv}, 3);
      OnnxModelBuilder::AttrInts(split, "split", {h, h, h});
    } else {
      split = b.Node("Split", s + "/attn/Split",
                     {qkv, b.ConstInts(s + "/attn/Constant_split", {h, h, h})}, 3);
    }
    OnnxModelBuilder::AttrInt(split, "axis", 2);
    std::vector<std::string> heads(3);
    for (int k = 0; k < 3; ++k) {
      const std::string hs = s + "/attn/heads" + std::to_string(k);
      std::string bb = dyn_dim(hs, split->output(k), 0);
      std::string tt = dyn_dim(hs, split->output(k), 1);
      auto* cat = b.Node("Concat", hs + "/Concat",
                         {bb, tt, b.ConstInts(hs + "/Constant_h", {c.heads}),
                          b.ConstInts(hs + "/Constant_d", {head_dim})});
      OnnxModelBuilder::AttrInt(cat, "axis", 0);
      std::string r = b.Op("Reshape", hs + "/Reshape", {split->output(k), cat->output(0)});
      auto* tr = b.Node("Transpose", hs + "/Transpose", {r});
      OnnxModelBuilder::AttrInts(
          tr, "perm", k == 1 ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
      heads[k] = tr->output(0);
    }
    std::string att = b.Op("MatMul", s + "/attn/MatMul", {heads[0], heads[1]});
    att = b.Op("Div", s + "/attn/Div",
               {att, b.ConstFloat(s + "/attn/Constant", std::sqrt(static_cast<float>(head_dim)))});
    auto* sm = b.Node("Softmax", s + "/attn/Softmax", {att});
    OnnxModelBuilder::AttrInt(sm, "axis", -1);
    std::string y = b.Op("MatMul", s + "/attn/MatMul_1", {sm->output(0), heads[2]});
    auto* tr = b.Node("Transpose", s + "/attn/Transpose", {y});
    OnnxModelBuilder::AttrInts(tr, "perm", {0, 2, 1, 3});
    std::string bb = dyn_dim(s + "/attn/merge", tr->output(0), 0);
    std::string tt = dyn_dim(s + "/attn/merge", tr->output(0), 1);
    auto* cat =
        b.Node("Concat", s + "/attn/Concat", {bb, tt, b.ConstInts(s + "/attn/Constant_c", {h})});
    OnnxModelBuilder::AttrInt(cat, "axis", 0);
    y = b.Op("Reshape", s + "/attn/Reshape", {tr->output(0), cat->output(0)});
    y = linear(s + "/attn/c_proj", y, p + ".attn.c_proj", h, h);
    x = b.Op("Add", s + "/Add", {x, y});
    std::string ln2 = layer_norm(s + "/ln_2", x, p + ".ln_2");
    std::string m = linear(s + "/mlp/c_fc", ln2, p + ".mlp.c_fc", h, 4 * h);
    // nn.GELU(): x * 0.5 * (1 + erf(x / sqrt(2)))
    std::string e = b.Op(
        "Erf", s + "/mlp/act/Erf",
        {b.Op("Div", s + "/mlp/act/Div", {m, b.ConstFloat(s + "/mlp/act/Constant", 1.4142135f)})});
    e = b.Op("Add", s + "/mlp/act/Add", {e, b.ConstFloat(s + "/mlp/act/Constant_1", 1.0f)});
    e = b.Op("Mul", s + "/mlp/act/Mul", {m, e});
    e = b.Op("Mul", s + "/mlp/act/Mul_1", {e, b.ConstFloat(s + "/mlp/act/Constant_2", 0.5f)});
    m = linear(s + "/mlp/c_proj", e, p + ".mlp.c_proj", 4 * h, h);
    x = b.Op("Add", s + "/Add_1", {x, m});
  }
  x = layer_norm("/ln_f", x, "ln_f");
  std::string logits = linear("/lm_head", x, "lm_head", h, c.vocab, /*bias=*/false);
  b.graph().mutable_node(b.graph().node_size() - 1)->set_output(0, "logits");
  b.Output("logits", T::FLOAT, {std::string("batch"), std::string("sequence"), c.vocab});
  return b;
}

// ---- (c) An LSTM as torch exports nn.LSTM(8, 16) + nn.Linear(16, 4): h0/c0 built from the input's
// dynamic batch (Shape -> Gather -> Unsqueeze -> Concat -> ConstantOfShape), then LSTM, Squeeze,
// MatMul, Add. Input [sequence, batch, 8].
inline constexpr int64_t kLstmParams = 4 * 16 * 8 + 4 * 16 * 16 + 8 * 16 + 16 * 4 + 4;

inline OnnxModelBuilder TorchLstm(int opset = 14) {
  using T = onnx::TensorProto;
  OnnxModelBuilder b(opset);
  std::string x = b.Input("input", T::FLOAT, {std::string("sequence"), std::string("batch"), 8});
  std::string shape = b.Op("Shape", "/lstm/Shape", {x});
  std::string batch =
      b.Op("Gather", "/lstm/Gather", {shape, b.ConstInts("/lstm/Constant", {1}, /*scalar=*/true)});
  batch = b.Unsqueeze("/lstm/Unsqueeze", batch, {0});
  auto* cat =
      b.Node("Concat", "/lstm/Concat",
             {b.ConstInts("/lstm/Constant_1", {1}), batch, b.ConstInts("/lstm/Constant_2", {16})});
  OnnxModelBuilder::AttrInt(cat, "axis", 0);
  std::string h0 = b.Op("ConstantOfShape", "/lstm/ConstantOfShape", {cat->output(0)});
  std::string c0 = b.Op("ConstantOfShape", "/lstm/ConstantOfShape_1", {cat->output(0)});
  auto* lstm =
      b.Node("LSTM", "/lstm/LSTM",
             {x, b.Weight("onnx::LSTM_W", {1, 64, 8}), b.Weight("onnx::LSTM_R", {1, 64, 16}),
              b.Weight("onnx::LSTM_B", {1, 128}), "", h0, c0},
             3);
  OnnxModelBuilder::AttrInt(lstm, "hidden_size", 16);
  std::string y;
  if (opset < 13) {
    auto* sq = b.Node("Squeeze", "/lstm/Squeeze", {lstm->output(0)});
    OnnxModelBuilder::AttrInts(sq, "axes", {1});
    y = sq->output(0);
  } else {
    y = b.Op("Squeeze", "/lstm/Squeeze", {lstm->output(0), b.ConstInts("/lstm/Constant_3", {1})});
  }
  y = b.Op("MatMul", "/fc/MatMul", {y, b.Weight("fc.weight", {16, 4})});
  y = b.Op("Add", "/fc/Add", {b.Weight("fc.bias", {4}), y});
  b.graph().mutable_node(b.graph().node_size() - 1)->set_output(0, "output");
  b.Output("output", T::FLOAT, {std::string("sequence"), std::string("batch"), 4});
  b.Output(lstm->output(1), T::FLOAT, {1, std::string("batch"), 16});
  return b;
}

// ---- (d) Weights whose payload is not in the file.
// Marks every float initializer as stored in "weights.bin" (ONNX external data), no payload.
inline void MakeWeightsExternal(onnx::ModelProto* model) {
  int64_t offset = 0;
  for (auto& t : *model->mutable_graph()->mutable_initializer()) {
    if (t.data_type() != onnx::TensorProto::FLOAT) continue;
    const int64_t length = static_cast<int64_t>(t.raw_data().size());
    t.clear_raw_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const std::string& k, const std::string& v) {
      auto* e = t.add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", "weights.bin");
    add("offset", std::to_string(offset));
    add("length", std::to_string(length));
    offset += length;
  }
}
// Drops every float initializer's payload, keeping dims (as model-zoo "shape only" files do).
inline void StripWeights(onnx::ModelProto* model) {
  for (auto& t : *model->mutable_graph()->mutable_initializer()) {
    if (t.data_type() != onnx::TensorProto::FLOAT) continue;
    t.clear_raw_data();
    t.clear_float_data();
  }
}

}  // namespace hx::testing
