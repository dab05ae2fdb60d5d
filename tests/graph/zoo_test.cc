#include "hexplan/graph/zoo.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "hexplan/graph/op_cost.h"
#include "hexplan/graph/zoo_attention.h"

namespace hx::graph {
namespace {

std::map<std::string, int> OpCounts(const Graph& g) {
  std::map<std::string, int> counts;
  for (NodeId id : g.Ops()) ++counts[g.node(id).op_type];
  return counts;
}

Graph Build(const std::string& name, ZooOptions options = {}) {
  auto g = BuildZooModel(name, options);
  HX_CHECK(g.ok());
  return std::move(g).value();
}

class ZooModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooModelTest, BuildsValidatesAndMatchesThePublishedParameterCount) {
  const ZooModelInfo* info = FindZooModel(GetParam());
  ASSERT_NE(info, nullptr);
  // Default options, except a short unrolled LSTM (the parameter count does not depend on seq).
  ZooOptions options;
  if (info->family == "lstm") options.seq = 4;
  auto g = BuildZooModel(GetParam(), options);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_TRUE(g->Validate().ok()) << g->Validate().ToString();
  EXPECT_EQ(g->name(), GetParam());
  const double params = static_cast<double>(g->NumParameters());
  EXPECT_NEAR(params / info->published_params, 1.0, info->params_tolerance)
      << GetParam() << ": " << params << " parameters vs published " << info->published_params;
  EXPECT_LE(info->params_tolerance, 0.02);
  EXPECT_FALSE(info->source.empty());
  EXPECT_FALSE(info->description.empty());
  // Every op the zoo emits has a FLOP rule, and the model computes something.
  EXPECT_TRUE(OpTypesWithoutFlopRule(*g).empty());
  EXPECT_GT(TotalFlops(*g), params);
  EXPECT_FALSE(g->Outputs().empty());
  EXPECT_FALSE(g->Inputs().empty());
  // Every op output is consumed or is a graph output (no dead branches).
  for (NodeId id : g->Ops()) {
    for (TensorId t : g->node(id).outputs) {
      EXPECT_FALSE(g->tensor(t).consumers.empty()) << GetParam() << ": " << g->tensor(t).name;
    }
  }
}

std::vector<std::string> AllModelNames() {
  std::vector<std::string> names;
  for (const auto& m : ZooModels()) names.push_back(m.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllModels, ZooModelTest, ::testing::ValuesIn(AllModelNames()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(ZooTest, ListsEveryModelTheIssueNames) {
  const std::vector<std::string> expected = {
      "gpt2",           "gpt2-medium",     "gpt2-large",      "gpt2-xl",         "openllama-3b",
      "openllama-7b",   "llama2-13b",      "llama2-70b",      "llama3-8b",       "bert-large",
      "gpt3-350m",      "gpt3-1.3b",       "gpt3-2.7b",       "gpt3-6.7b",       "gpt3-13b",
      "gpt3-175b",      "mt-nlg-530b",     "swin-1.8b",       "swin-6.6b",       "swin-13b",
      "alphafold2-87m", "alphafold2-930m", "alphafold2-2.4b", "alphafold2-3.2b", "resnet50",
      "resnet101",      "resnet152",       "vgg16",           "vgg19",           "densenet121",
      "densenet169",    "densenet201",     "inception_v3",    "mobilenet_v2",    "lstm"};
  EXPECT_EQ(AllModelNames(), expected);
}

TEST(ZooTest, KeyParameterCountsFromTheIssue) {
  EXPECT_NEAR(Build("gpt2-xl").NumParameters() / 1.558e9, 1.0, 0.01);
  EXPECT_EQ(Build("gpt2").NumParameters(), 124439808);           // Hugging Face gpt2
  EXPECT_EQ(Build("bert-large").NumParameters(), 335141888);     // bert-large-uncased BertModel
  EXPECT_EQ(Build("openllama-7b").NumParameters(), 6738415616);  // LLaMA-7B
  EXPECT_EQ(Build("vgg16").NumParameters(), 138357544);          // torchvision, no BN
  EXPECT_NEAR(Build("gpt3-175b").NumParameters() / 175e9, 1.0, 0.01);
  EXPECT_NEAR(Build("resnet50").NumParameters() / 25.56e6, 1.0, 0.01);
  EXPECT_NEAR(Build("densenet121").NumParameters() / 7.98e6, 1.0, 0.01);
  EXPECT_NEAR(Build("mobilenet_v2").NumParameters() / 3.50e6, 1.0, 0.01);
}

// Grouped-query attention as the checkpoints have it: Llama 2 70B's K and V projections have 8
// heads of 128 outputs, each read by 8 query heads (Expand to 64), and the attention shape says so.
TEST(ZooTest, LlamaGroupedQueryAttentionHasNarrowKvProjections) {
  ZooOptions o;
  o.seq = 8;
  StatusOr<Graph> g = BuildZooModel("llama2-70b", o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  for (const char* name :
       {"model.layers.0.self_attn.k_proj.weight", "model.layers.0.self_attn.v_proj.weight"}) {
    std::optional<TensorId> w = g->FindTensor(name);
    ASSERT_TRUE(w.has_value()) << name;
    EXPECT_EQ(g->tensor(*w).NumElements(), 8192 * 1024) << name;
  }
  std::optional<TensorId> q = g->FindTensor("model.layers.0.self_attn.q_proj.weight");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(g->tensor(*q).NumElements(), 8192 * 8192);
  int expands = 0;
  for (NodeId id : g->Ops())
    if (g->node(id).op_type == "Expand") {
      ++expands;
      EXPECT_EQ(g->tensor(g->node(id).outputs[0]).shape[2], 8);  // [B, 8, 8, S, 128]
    }
  EXPECT_EQ(expands, 2 * 80);  // K and V in every layer
  std::optional<ZooAttentionShape> a = ZooAttention("llama2-70b");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->heads, 64);
  EXPECT_EQ(a->kv_heads, 8);
  EXPECT_EQ(a->head_dim, 128);
  // Multi-head Llamas keep one K/V head per query head, and no Expand.
  StatusOr<Graph> mha = BuildZooModel("llama2-13b", o);
  ASSERT_TRUE(mha.ok());
  for (NodeId id : mha->Ops()) EXPECT_NE(mha->node(id).op_type, "Expand");
  EXPECT_EQ(ZooAttention("llama2-13b")->kv_heads, 40);
}

TEST(ZooTest, BatchNormLayoutNamesRoundTrip) {
  for (bool separate : {false, true})
    EXPECT_EQ(ParseBatchNormLayout(BatchNormLayoutName(separate)), separate);
  EXPECT_EQ(ParseBatchNormLayout("Separate"), std::nullopt);
  EXPECT_EQ(ParseBatchNormLayout(""), std::nullopt);
}

TEST(ZooTest, SeparateBatchNormIsTorchvisionsLayout) {
  ZooOptions separate;
  separate.separate_batchnorm = true;
  for (const char* name : {"resnet50", "densenet121", "mobilenet_v2", "inception_v3"}) {
    const Graph folded = Build(name), kept = Build(name, separate);
    ASSERT_TRUE(kept.Validate().ok()) << name;
    std::map<std::string, int> ops = OpCounts(kept);
    EXPECT_EQ(OpCounts(folded).count("BatchNormalization"), 0u) << name;
    EXPECT_GT(ops["BatchNormalization"], 0) << name;
    int64_t bn_channels = 0;
    for (NodeId id : kept.Ops()) {
      const Node& op = kept.node(id);
      if (op.op_type == "Conv") {
        EXPECT_EQ(op.inputs.size(), 2u) << name << ": a Conv followed by a BN has no bias";
      }
      if (op.op_type != "BatchNormalization") continue;
      ASSERT_EQ(op.inputs.size(), 5u);  // x, scale, bias, running mean, running variance
      bn_channels += kept.tensor(op.inputs[1]).shape[0];
    }
    // Kept: four values per channel. Folded into a Conv: its bias, one; DenseNet's BNs after a
    // Concat: Mul and Add by weights, two.
    int64_t affine_channels = 0;
    for (NodeId id : folded.Ops()) {
      const Node& op = folded.node(id);
      if (op.op_type == "Mul" &&
          folded.node(folded.tensor(op.inputs[1]).producer).kind == NodeKind::kWeight)
        affine_channels += folded.tensor(op.inputs[1]).shape[0];
    }
    EXPECT_EQ(kept.NumParameters() - folded.NumParameters(), 3 * bn_channels - affine_channels)
        << name;
  }
  // torchvision's resnet50: 25,557,032 parameters and the BNs' running mean and variance
  // (53,120 values).
  EXPECT_EQ(Build("resnet50", separate).NumParameters(), 25557032 + 53120);
  EXPECT_EQ(OpCounts(Build("resnet50", separate))["BatchNormalization"], 53);
}

TEST(ZooTest, ResNet50FlopsAreAbout8Point2Giga) {
  // 4.1 GMACs at 224x224, batch 1 (torchvision / fvcore), 2 FLOPs per MAC.
  const double flops = TotalFlops(Build("resnet50"));
  EXPECT_NEAR(flops / 8.2e9, 1.0, 0.05) << flops;
}

TEST(ZooTest, Gpt2FlopsMatchTheStandardEstimate) {
  // Standard forward estimate for a decoder over T tokens (Kaplan et al. 2020, with the full
  // T x T attention the exported graph computes): 2 * params * T for the weight MatMuls (the tied
  // LM head reuses the embedding) plus, per layer, 2*T*T*d for Q K^T and 2*T*T*d for softmax * V.
  ZooOptions o;
  o.seq = 1024;
  Graph g = Build("gpt2", o);
  const double T = 1024, L = 12, d = 768;
  const double estimate = 2.0 * double(g.NumParameters()) * T + L * 4.0 * T * T * d;
  const double flops = TotalFlops(g);
  EXPECT_NEAR(flops / estimate, 1.0, 0.05) << flops << " vs " << estimate;
}

TEST(ZooTest, FlopsScaleLinearlyWithBatch) {
  for (const char* name : {"gpt2", "resnet50", "bert-large", "lstm"}) {
    ZooOptions one, three;
    one.seq = three.seq = std::string(name) == "lstm" ? 8 : 64;
    three.batch = 3;
    const double f1 = TotalFlops(Build(name, one));
    const double f3 = TotalFlops(Build(name, three));
    EXPECT_NEAR(f3 / f1, 3.0, 1e-9) << name;
  }
}

TEST(ZooTest, AttentionFlopsGrowQuadraticallyWithSeq) {
  ZooOptions a, b;
  a.seq = 128;
  b.seq = 256;
  auto counts = [](const Graph& g) {
    double attention = 0;
    for (NodeId id : g.Ops()) {
      const Node& n = g.node(id);
      if (n.op_type == "Softmax") attention += ComputeOpCost(g, id).flops;
    }
    return attention;
  };
  EXPECT_NEAR(counts(Build("gpt2", b)) / counts(Build("gpt2", a)), 4.0, 1e-9);
}

TEST(ZooTest, HalfPrecisionHalvesParameterBytesAndPropagates) {
  for (const char* name : {"gpt2", "openllama-3b", "resnet50", "swin-1.8b", "alphafold2-87m"}) {
    ZooOptions fp32, fp16, bf16;
    fp32.seq = fp16.seq = bf16.seq = 16;
    fp32.image_size = fp16.image_size = bf16.image_size = 224;
    fp16.dtype = DType::kF16;
    bf16.dtype = DType::kBF16;
    Graph a = Build(name, fp32), b = Build(name, fp16), c = Build(name, bf16);
    EXPECT_EQ(a.NumParameters(), b.NumParameters()) << name;
    EXPECT_EQ(a.ParameterBytes(), 2 * b.ParameterBytes()) << name;
    EXPECT_EQ(c.ParameterBytes(), b.ParameterBytes()) << name;
    EXPECT_EQ(a.ParameterBytes(), 4 * a.NumParameters()) << name;
    for (size_t i = 0; i < b.num_tensors(); ++i) {
      const Tensor& t = b.tensor(TensorId(i));
      if (IsFloatingPoint(t.dtype)) {
        EXPECT_EQ(t.dtype, DType::kF16) << name << " " << t.name;
      }
    }
    EXPECT_DOUBLE_EQ(TotalFlops(a), TotalFlops(b)) << name;
  }
}

TEST(ZooTest, Gpt2BlockHasTheExportedOpSequence) {
  ZooOptions o;
  o.seq = 16;
  o.batch = 2;
  Graph g = Build("gpt2", o);
  auto counts = OpCounts(g);
  EXPECT_EQ(counts["LayerNormalization"], 2 * 12 + 1);
  EXPECT_EQ(counts["MatMul"], 12 * 6 + 1);  // c_attn, QK, AV, c_proj, c_fc, c_proj + LM head
  EXPECT_EQ(counts["Softmax"], 12);
  EXPECT_EQ(counts["Split"], 12);
  EXPECT_EQ(counts["Tanh"], 12);  // gelu_new
  EXPECT_EQ(counts["Where"], 12);
  EXPECT_EQ(counts["Gather"], 2);
  // Tied LM head: no separate weight, the embedding feeds both the Gather and the head.
  EXPECT_FALSE(g.FindNode("lm_head.weight").has_value());
  const Tensor& wte = g.tensor(*g.FindTensor("transformer.wte.weight"));
  ASSERT_EQ(wte.consumers.size(), 2u);
  const Tensor& logits = g.tensor(g.node(g.Outputs()[0]).inputs[0]);
  EXPECT_EQ(logits.shape, (Shape{2, 16, 50257}));
  EXPECT_EQ(g.tensor(*g.FindTensor("transformer.h.3.attn.c_attn.weight")).shape,
            (Shape{768, 2304}));
}

TEST(ZooTest, LlamaUsesRmsNormRotaryAndSwiGlu) {
  ZooOptions o;
  o.seq = 32;
  Graph g = Build("openllama-3b", o);
  auto counts = OpCounts(g);
  const int layers = 26;
  EXPECT_EQ(counts.count("LayerNormalization"), 0u);
  EXPECT_EQ(counts["ReduceMean"], 2 * layers + 1);  // RMSNorm
  EXPECT_EQ(counts["Sigmoid"], layers);             // SiLU of SwiGLU
  EXPECT_EQ(counts["MatMul"], layers * 9 + 1);      // q k v o gate up down QK AV, LM head
  EXPECT_EQ(counts["Neg"], 2 * layers);             // rotate_half for q and k
  EXPECT_EQ(counts["Cos"], 1);
  EXPECT_TRUE(g.FindNode("lm_head.weight").has_value());  // untied
  auto tc = ZooTransformerConfig("openllama-7b");
  ASSERT_TRUE(tc.has_value());
  EXPECT_TRUE(tc->rmsnorm && tc->swiglu && tc->rotary);
  EXPECT_EQ(tc->ffn_hidden, 11008);
}

TEST(ZooTest, TransformerConfigs) {
  auto xl = ZooTransformerConfig("gpt2-xl");
  ASSERT_TRUE(xl.has_value());
  EXPECT_EQ(xl->layers, 48);
  EXPECT_EQ(xl->hidden, 1600);
  EXPECT_EQ(xl->heads, 25);
  EXPECT_EQ(xl->vocab, 50257);
  EXPECT_EQ(xl->max_positions, 1024);
  auto bert = ZooTransformerConfig("bert-large");
  ASSERT_TRUE(bert.has_value());
  EXPECT_FALSE(bert->decoder);
  auto gpt3 = ZooTransformerConfig("gpt3-175b");
  ASSERT_TRUE(gpt3.has_value());
  EXPECT_EQ(gpt3->layers, 96);
  EXPECT_EQ(gpt3->hidden, 12288);
  EXPECT_EQ(ZooTransformerConfig("mt-nlg-530b")->layers, 105);
  EXPECT_FALSE(ZooTransformerConfig("resnet50").has_value());
  EXPECT_FALSE(ZooTransformerConfig("nope").has_value());
}

TEST(ZooTest, LstmOpCountsScaleWithLayersTimesSeq) {
  for (auto [layers, seq, io] : {std::tuple{1, 1, 8}, {2, 5, 16}, {12, 6, 64}, {3, 7, 32}}) {
    ZooOptions o;
    o.lstm_layers = layers;
    o.seq = seq;
    o.lstm_io = io;
    o.batch = 2;
    Graph g = Build("lstm", o);
    ASSERT_TRUE(g.Validate().ok());
    auto counts = OpCounts(g);
    const int cells = layers * seq;
    EXPECT_EQ(counts["MatMul"], 2 * cells);
    EXPECT_EQ(counts["Sigmoid"], 3 * cells);
    EXPECT_EQ(counts["Tanh"], 2 * cells);
    EXPECT_EQ(counts["Split"], cells);
    EXPECT_EQ(g.Weights().size(), 4u * layers);  // shared across time steps
    EXPECT_EQ(g.NumParameters(), layers * (8 * io * io + 8 * io));
    // Each layer's input weight is read by every one of its cells.
    EXPECT_EQ(g.tensor(*g.FindTensor("lstm.cell0.weight_ih")).consumers.size(), size_t(seq));
    const Tensor& out = g.tensor(g.node(g.Outputs()[0]).inputs[0]);
    EXPECT_EQ(out.shape, (Shape{seq, 2, io}));
  }
}

TEST(ZooTest, CnnShapes) {
  Graph r = Build("resnet50");
  EXPECT_EQ(r.tensor(r.node(r.Outputs()[0]).inputs[0]).shape, (Shape{1, 1000}));
  EXPECT_EQ(OpCounts(r)["Conv"], 53);
  EXPECT_EQ(OpCounts(r)["Add"], 16);
  Graph inc = Build("inception_v3");
  ASSERT_EQ(inc.Outputs().size(), 2u);  // logits and the auxiliary classifier
  EXPECT_EQ(inc.tensor(inc.node(inc.Inputs()[0]).outputs[0]).shape, (Shape{1, 3, 299, 299}));
  Graph d = Build("densenet121");
  EXPECT_EQ(OpCounts(d)["Conv"], 120);
  Graph m = Build("mobilenet_v2");
  EXPECT_EQ(OpCounts(m)["Add"], 10);
  EXPECT_EQ(OpCounts(m)["Conv"], 52);
  ZooOptions big;
  big.image_size = 448;
  big.batch = 2;
  Graph v = Build("vgg16", big);
  EXPECT_EQ(OpCounts(v)["Conv"], 13);
  EXPECT_EQ(v.NumParameters(), 138357544);  // the adaptive pool keeps the classifier's shape
}

TEST(ZooTest, SwinAndAlphaFoldStructure) {
  ZooOptions o;
  o.image_size = 224;
  Graph s = Build("swin-1.8b", o);
  EXPECT_EQ(OpCounts(s)["Softmax"], 2 + 2 + 26 + 2);
  EXPECT_EQ(OpCounts(s)["LpNormalization"], 2 * 32);
  ZooOptions a;
  a.seq = 32;
  Graph af = Build("alphafold2-87m", a);
  // Per block: MSA row + column attention and two triangle attentions; two triangle updates
  // and the outer product mean as Einsum.
  EXPECT_EQ(OpCounts(af)["Softmax"], 48 * 4);
  EXPECT_EQ(OpCounts(af)["Einsum"], 48 * 3);
  EXPECT_EQ(af.tensor(af.node(af.Outputs()[1]).inputs[0]).shape, (Shape{1, 32, 32, 128}));
}

TEST(ZooTest, OptionsAreValidated) {
  ZooOptions o;
  EXPECT_TRUE(o.Validate().ok());
  o.batch = 0;
  EXPECT_NE(o.Validate().message().find("batch"), std::string::npos);
  o = {};
  o.seq = -1;
  EXPECT_NE(o.Validate().message().find("seq"), std::string::npos);
  o = {};
  o.lstm_layers = -2;
  EXPECT_FALSE(o.Validate().ok());
  o = {};
  o.lstm_io = -1;
  EXPECT_NE(o.Validate().message().find("io"), std::string::npos);
  o = {};
  o.dtype = DType::kI64;
  EXPECT_NE(o.Validate().message().find("dtype"), std::string::npos);
  o = {};
  o.seq = 1025;
  auto g = BuildZooModel("gpt2", o);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("1024"), std::string::npos);
  o.seq = 1024;
  EXPECT_TRUE(ResolveZooOptions("gpt2", o).ok());
  o.seq = 513;
  EXPECT_FALSE(BuildZooModel("bert-large", o).ok());
  o.seq = 4096;  // rotary positions: no hard limit
  EXPECT_TRUE(ResolveZooOptions("openllama-7b", o).ok());
  o = {};
  o.image_size = 256;  // 8x8 feature map cannot pool to 7x7
  EXPECT_FALSE(BuildZooModel("vgg16", o).ok());
  o.image_size = 16;
  EXPECT_FALSE(BuildZooModel("resnet50", o).ok());
  auto unknown = BuildZooModel("gpt5", ZooOptions{});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("gpt2-xl"), std::string::npos);
  EXPECT_EQ(FindZooModel("gpt5"), nullptr);
}

TEST(ZooTest, DefaultsResolvePerModel) {
  EXPECT_EQ(ResolveZooOptions("gpt2", {})->seq, 1024);
  EXPECT_EQ(ResolveZooOptions("bert-large", {})->seq, 128);
  EXPECT_EQ(ResolveZooOptions("gpt3-175b", {})->seq, 2048);
  EXPECT_EQ(ResolveZooOptions("resnet50", {})->image_size, 224);
  EXPECT_EQ(ResolveZooOptions("inception_v3", {})->image_size, 299);
  auto lstm = ResolveZooOptions("lstm", {});
  EXPECT_EQ(lstm->lstm_layers, 12);
  EXPECT_EQ(lstm->lstm_io, 64);
  EXPECT_EQ(lstm->seq, 96);
}

TEST(ZooTest, LargestModelsBuild) {
  // 96 and 105 layers at seq 2048: the builder only records shapes.
  Graph g = Build("mt-nlg-530b");
  EXPECT_NEAR(g.NumParameters() / 530e9, 1.0, 0.01);
  EXPECT_EQ(OpCounts(g)["Softmax"], 105);
}

}  // namespace
}  // namespace hx::graph
