#ifndef ONNX_ML
#define ONNX_ML 1  // the test links onnx_proto only through hx_graph; match its definitions
#endif
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif

#include <gmock/gmock.h>
#include <google/protobuf/unknown_field_set.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <random>

#include "graph/onnx_constant_folding.h"
#include "graph/onnx_einsum_shape.h"
#include "graph/onnx_fixtures.h"
#include "hexplan/core/file_util.h"
#include "hexplan/graph/onnx_io.h"
#include "hexplan/graph/zoo.h"

namespace hx::graph {
namespace {

using hx::testing::OnnxModelBuilder;
using ::testing::HasSubstr;

std::map<std::string, int> OpTypeCounts(const Graph& g) {
  std::map<std::string, int> counts;
  for (NodeId id : g.Ops()) ++counts[g.node(id).op_type];
  return counts;
}

Shape ShapeOf(const Graph& g, const std::string& tensor) {
  auto t = g.FindTensor(tensor);
  EXPECT_TRUE(t.has_value()) << tensor;
  return t ? g.tensor(*t).shape : Shape{};
}

StatusOr<Graph> Read(const OnnxModelBuilder& b, OnnxReadOptions options = {},
                     Logger* logger = nullptr) {
  return ReadOnnxBytes(b.Serialize(), "model.onnx", options, logger);
}

// ---- (a) CNN.

TEST(OnnxReadTest, TorchCnnImportsWithExactParamsAndShapes) {
  OnnxReadOptions options;
  options.default_batch = 4;
  CollectingLogger logger;
  auto g = Read(hx::testing::TorchCnn(13), options, &logger);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->NumParameters(), hx::testing::kCnnParams);
  EXPECT_EQ(g->ParameterBytes(), 4 * hx::testing::kCnnParams);
  EXPECT_EQ(g->Weights().size(), 17u);
  EXPECT_EQ(ShapeOf(*g, "input"), (Shape{4, 3, 32, 32}));
  EXPECT_EQ(ShapeOf(*g, "/maxpool/MaxPool_output_0"), (Shape{4, 16, 16, 16}));
  EXPECT_EQ(ShapeOf(*g, "/avgpool/GlobalAveragePool_output_0"), (Shape{4, 16, 1, 1}));
  EXPECT_EQ(ShapeOf(*g, "output"), (Shape{4, 10}));
  const std::map<std::string, int> expected = {
      {"Conv", 3}, {"BatchNormalization", 3}, {"Relu", 3},    {"MaxPool", 1},
      {"Add", 1},  {"GlobalAveragePool", 1},  {"Flatten", 1}, {"Gemm", 1}};
  EXPECT_EQ(OpTypeCounts(*g), expected);
  ASSERT_EQ(g->Outputs().size(), 1u);
  const Node& gemm = g->node(*g->FindNode("/fc/Gemm"));
  EXPECT_EQ(gemm.attrs.GetInt("transB", 0), 1);
  const Node& conv = g->node(*g->FindNode("/stem/conv/Conv"));
  EXPECT_EQ(conv.attrs.GetInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  // Payloads kept: the fc bias is the fixture's ramp.
  const Node& bias = g->node(*g->FindNode("fc.bias"));
  ASSERT_NE(bias.data, nullptr);
  ASSERT_EQ(bias.data->size(), 40u);
  float second;
  std::memcpy(&second, bias.data->data() + 4, 4);
  EXPECT_FLOAT_EQ(second, 0.01f);
  EXPECT_TRUE(g->Validate().ok());
  EXPECT_EQ(logger.Count(LogLevel::kWarning), 0u);
}

TEST(OnnxReadTest, OldExporterWeightsListedAsInputsAreWeights) {
  auto g = Read(hx::testing::TorchCnn(11, /*weights_as_inputs=*/true));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->Inputs().size(), 1u);
  EXPECT_EQ(g->NumParameters(), hx::testing::kCnnParams);
  EXPECT_EQ(ShapeOf(*g, "output"), (Shape{1, 10}));
}

TEST(OnnxReadTest, KeepWeightDataFalseDropsPayloads) {
  OnnxReadOptions options;
  options.keep_weight_data = false;
  auto g = Read(hx::testing::TorchCnn(13), options);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  for (NodeId w : g->Weights()) EXPECT_EQ(g->node(w).data, nullptr);
  EXPECT_EQ(g->NumParameters(), hx::testing::kCnnParams);
}

// ---- (d) External and stripped weights.

TEST(OnnxReadTest, ExternalDataWeightsImportWithDims) {
  auto b = hx::testing::TorchCnn(17);
  hx::testing::MakeWeightsExternal(&b.model());
  auto g = Read(b);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->NumParameters(), hx::testing::kCnnParams);
  EXPECT_EQ(ShapeOf(*g, "layer1.0.a.conv.weight"), (Shape{16, 16, 3, 3}));
  for (NodeId w : g->Weights()) EXPECT_EQ(g->node(w).data, nullptr);
  EXPECT_EQ(ShapeOf(*g, "output"), (Shape{1, 10}));
}

TEST(OnnxReadTest, StrippedWeightsImportWithDims) {
  auto b = hx::testing::TorchGpt(17);
  hx::testing::StripWeights(&b.model());
  OnnxReadOptions options;
  options.default_seq = 8;
  auto g = Read(b, options);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->NumParameters(), hx::testing::GptFixtureParams({}));
  EXPECT_EQ(ShapeOf(*g, "logits"), (Shape{1, 8, 100}));
}

// ---- (b, e) GPT-style decoder, opsets 11 to 17.

struct GptCase {
  int opset;
  bool layer_norm_op;
};

class OnnxGptTest : public ::testing::TestWithParam<GptCase> {};

TEST_P(OnnxGptTest, DynamicReshapeChainsFoldAndShapesResolve) {
  hx::testing::GptFixtureConfig config;
  config.layer_norm_op = GetParam().layer_norm_op;
  OnnxReadOptions options;
  options.default_batch = 2;
  options.default_seq = 16;
  CollectingLogger logger;
  auto g = Read(hx::testing::TorchGpt(GetParam().opset, config), options, &logger);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->NumParameters(), hx::testing::GptFixtureParams(config));
  EXPECT_EQ(g->NumParameters(), 33920);
  EXPECT_EQ(ShapeOf(*g, "logits"), (Shape{2, 16, 100}));
  EXPECT_EQ(ShapeOf(*g, "/h.1/attn/heads0/Reshape_output_0"), (Shape{2, 16, 4, 8}));
  EXPECT_EQ(ShapeOf(*g, "/h.1/attn/heads1/Transpose_output_0"), (Shape{2, 4, 8, 16}));
  EXPECT_EQ(ShapeOf(*g, "/h.0/attn/Softmax_output_0"), (Shape{2, 4, 16, 16}));
  EXPECT_EQ(ShapeOf(*g, "/h.1/attn/Reshape_output_0"), (Shape{2, 16, 32}));
  const auto counts = OpTypeCounts(*g);
  // The shape arithmetic is gone: no Shape, no Range, no Concat or Unsqueeze on shapes.
  EXPECT_EQ(counts.count("Shape"), 0u);
  EXPECT_EQ(counts.count("Range"), 0u);
  EXPECT_EQ(counts.count("Concat"), 0u);
  EXPECT_EQ(counts.count("Unsqueeze"), 0u);
  EXPECT_EQ(counts.at("Reshape"), 8);
  EXPECT_EQ(counts.at("Softmax"), 2);
  EXPECT_EQ(counts.at("Erf"), 2);
  EXPECT_EQ(counts.at("MatMul"), 2 * 6 + 1);
  EXPECT_EQ(counts.at("Gather"), 2);  // the two embedding lookups
  if (GetParam().layer_norm_op)
    EXPECT_EQ(counts.at("LayerNormalization"), 5);
  else
    EXPECT_EQ(counts.at("ReduceMean"), 10);
  // The folded position ids feed the wpe Gather as a constant.
  const Node& wpe = g->node(*g->FindNode("/wpe/Gather"));
  const Tensor& pos = g->tensor(wpe.inputs[1]);
  EXPECT_EQ(pos.shape, (Shape{16}));
  const Node& pos_node = g->node(pos.producer);
  EXPECT_EQ(pos_node.op_type, "Constant");
  ASSERT_NE(pos_node.data, nullptr);
  int64_t last;
  std::memcpy(&last, pos_node.data->data() + 15 * 8, 8);
  EXPECT_EQ(last, 15);
  // Reshape targets are constants [2,16,4,8]: integer, so they are not parameters.
  const Node& reshape = g->node(*g->FindNode("/h.0/attn/heads2/Reshape"));
  const Tensor& target = g->tensor(reshape.inputs[1]);
  EXPECT_EQ(target.dtype, DType::kI64);
  EXPECT_EQ(g->node(target.producer).op_type, "Constant");
  EXPECT_TRUE(g->Validate().ok());
  EXPECT_EQ(logger.Count(LogLevel::kWarning), 0u);
}

TEST_P(OnnxGptTest, SymbolicSequenceWithoutDefaultIsAnErrorNamingTheInput) {
  auto g =
      Read(hx::testing::TorchGpt(GetParam().opset, {.layer_norm_op = GetParam().layer_norm_op}));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("model.onnx"));
  EXPECT_THAT(g.status().message(), HasSubstr("'input_ids'"));
  EXPECT_THAT(g.status().message(), HasSubstr("'sequence'"));
}

INSTANTIATE_TEST_SUITE_P(Opsets, OnnxGptTest,
                         ::testing::Values(GptCase{11, false}, GptCase{13, false},
                                           GptCase{17, false}, GptCase{17, true}),
                         [](const auto& info) {
                           return "opset" + std::to_string(info.param.opset) +
                                  (info.param.layer_norm_op ? "_layernorm" : "_reducemean");
                         });

TEST(OnnxReadTest, NamedDimValuesOverrideDefaults) {
  OnnxReadOptions options;
  options.dim_values = {{"batch", 3}, {"sequence", 5}};
  auto g = Read(hx::testing::TorchGpt(17), options);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(ShapeOf(*g, "logits"), (Shape{3, 5, 100}));
}

// ---- (c) LSTM.

TEST(OnnxReadTest, TorchLstmImportsWithFoldedInitialState) {
  for (int opset : {11, 14}) {
    OnnxReadOptions options;
    options.default_batch = 3;
    options.default_seq = 7;
    auto g = Read(hx::testing::TorchLstm(opset), options);
    ASSERT_TRUE(g.ok()) << "opset " << opset << ": " << g.status().ToString();
    EXPECT_EQ(g->NumParameters(), hx::testing::kLstmParams);
    EXPECT_EQ(ShapeOf(*g, "input"), (Shape{7, 3, 8}));
    EXPECT_EQ(ShapeOf(*g, "/lstm/LSTM_output_0"), (Shape{7, 1, 3, 16}));
    EXPECT_EQ(ShapeOf(*g, "/lstm/LSTM_output_1"), (Shape{1, 3, 16}));
    EXPECT_EQ(ShapeOf(*g, "output"), (Shape{7, 3, 4}));
    const auto counts = OpTypeCounts(*g);
    EXPECT_EQ(counts.at("LSTM"), 1);
    EXPECT_EQ(counts.count("Shape"), 0u);
    EXPECT_EQ(counts.count("ConstantOfShape"), 0u);  // h0 and c0 are folded zeros
    const Node& lstm = g->node(*g->FindNode("/lstm/LSTM"));
    EXPECT_EQ(lstm.attrs.GetInt("hidden_size", 0), 16);
    ASSERT_EQ(lstm.inputs.size(), 7u);
    EXPECT_FALSE(lstm.inputs[4].valid());  // omitted sequence_lens
    EXPECT_EQ(g->tensor(lstm.inputs[5]).shape, (Shape{1, 3, 16}));
    EXPECT_EQ(g->Outputs().size(), 2u);
  }
}

// ---- Op types without a FLOP rule, unnamed nodes.

TEST(OnnxReadTest, OpsWithoutFlopRuleImportWithOneWarning) {
  using T = onnx::TensorProto;
  OnnxModelBuilder b(17);
  std::string x = b.Input("x", T::FLOAT, {2, 3, 3});
  std::string d = b.Op("Det", "det", {x});
  std::string r = b.Op("Bernoulli", "bern", {b.Op("Sigmoid", "sig", {x})});
  std::string d2 = b.Op("Det", "det2", {r});
  b.Op("Add", "sum", {d, d2});
  b.Output("sum_output_0", T::FLOAT, {2});
  CollectingLogger logger;
  auto g = Read(b, {}, &logger);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->Ops().size(), 5u);
  ASSERT_EQ(logger.Count(LogLevel::kWarning), 1u);
  const std::string message = logger.entries()[0].message;
  EXPECT_THAT(message, HasSubstr("Bernoulli, Det"));
  EXPECT_THAT(message, Not(HasSubstr("Sigmoid")));
}

TEST(OnnxReadTest, UnnamedNodesGetUniqueNames) {
  using T = onnx::TensorProto;
  OnnxModelBuilder b(13);
  std::string x = b.Input("x", T::FLOAT, {4});
  auto* n1 = b.Node("Relu", "", {x});
  n1->set_output(0, "a");
  auto* n2 = b.Node("Relu", "", {"a"});
  n2->set_output(0, "b");
  auto* n3 = b.Node("Relu", "x", {"b"});  // same name as the input node
  n3->set_output(0, "c");
  b.Output("c", T::FLOAT, {4});
  auto g = Read(b);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::set<std::string> names;
  for (NodeId id : g->NodeIds()) EXPECT_TRUE(names.insert(g->node(id).name).second);
  EXPECT_TRUE(g->FindNode("Relu_0").has_value());
  EXPECT_TRUE(g->FindNode("Relu_1").has_value());
  EXPECT_TRUE(g->FindNode("x_1").has_value());
}

// ---- Bad input: a clear error naming the file and the node or tensor, never a crash.

TEST(OnnxReadTest, TruncatedFileIsAParseErrorNamingTheFile) {
  const std::string bytes = hx::testing::TorchCnn(13).Serialize();
  const std::string path = ::testing::TempDir() + "/truncated.onnx";
  ASSERT_TRUE(WriteFileAtomic(path, bytes.substr(0, bytes.size() / 2)).ok());
  auto g = ReadOnnxFile(path);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kParseError);
  EXPECT_THAT(g.status().message(), HasSubstr(path));
  EXPECT_EQ(g.status().ExitCode(), 2);
  std::remove(path.c_str());
}

TEST(OnnxReadTest, MissingFileIsAnErrorNamingTheFile) {
  auto g = ReadOnnxFile("/nonexistent/model.onnx");
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("/nonexistent/model.onnx"));
}

TEST(OnnxReadTest, RandomBytesAndEveryTruncationNeverCrash) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::string bytes(1 + rng() % 300, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    auto g = ReadOnnxBytes(bytes, "random.onnx");
    ASSERT_FALSE(g.ok());
    EXPECT_THAT(g.status().message(), HasSubstr("random.onnx"));
  }
  const std::string model = hx::testing::TorchLstm().Serialize();
  OnnxReadOptions options;
  options.default_seq = 4;
  for (size_t cut = 0; cut < model.size(); cut += 7) {
    auto g = ReadOnnxBytes(model.substr(0, cut), "cut.onnx", options);
    if (!g.ok()) {
      EXPECT_THAT(g.status().message(), HasSubstr("cut.onnx"));
      EXPECT_EQ(g.status().ExitCode(), 2) << g.status().ToString();
    }
  }
}

TEST(OnnxReadTest, CyclicGraphIsAnErrorNamingTheCycle) {
  using T = onnx::TensorProto;
  OnnxModelBuilder b(13);
  std::string x = b.Input("x", T::FLOAT, {4});
  auto* a = b.Node("Add", "first", {x, "second_output_0"});
  b.Node("Relu", "second", {a->output(0)});
  b.Output("second_output_0", T::FLOAT, {4});
  auto g = Read(b);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("model.onnx"));
  EXPECT_THAT(g.status().message(), HasSubstr("cycle"));
  // In data-flow order, each name feeding the next (not "second -> first -> first").
  EXPECT_THAT(g.status().message(), HasSubstr("the graph has a cycle: first -> second -> first"));
}

TEST(OnnxReadTest, ThreeNodeCycleIsPrintedInDataFlowOrder) {
  using T = onnx::TensorProto;
  OnnxModelBuilder b(13);
  std::string x = b.Input("x", T::FLOAT, {4});
  b.Node("Relu", "pre", {x});
  auto* a = b.Node("Add", "a", {"pre_output_0", "c_output_0"});  // reads c
  auto* bb = b.Node("Relu", "b", {a->output(0)});
  b.Node("Relu", "c", {bb->output(0)});
  b.Output("c_output_0", T::FLOAT, {4});
  auto g = Read(b);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("the graph has a cycle: a -> b -> c -> a"));
}

// Protobuf does not check proto2 strings: the reader checks every name that reaches hexplan.
TEST(OnnxReadTest, InvalidUtf8NamesAreErrorsNamingTheField) {
  using T = onnx::TensorProto;
  struct Case {
    std::string what;
    std::function<void(OnnxModelBuilder&)> spoil;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"node name", [](OnnxModelBuilder& b) { b.graph().mutable_node(1)->set_name("r\xFF"); },
       "model.onnx: node #1 name: invalid UTF-8 at byte 1"},
      {"node output",
       [](OnnxModelBuilder& b) { b.graph().mutable_node(0)->set_output(0, "t\xC0\xAF"); },
       "model.onnx: node #0 output 0: invalid UTF-8 at byte 1"},
      {"graph input",
       [](OnnxModelBuilder& b) { b.graph().mutable_input(0)->set_name("\xED\xA0\x80"); },
       "model.onnx: graph input 0 name: invalid UTF-8 at byte 0"},
      {"graph output",
       [](OnnxModelBuilder& b) { b.graph().mutable_output(0)->set_name("y\xF4\x90\x80\x80"); },
       "model.onnx: graph output 0 name: invalid UTF-8 at byte 1"},
      {"graph name", [](OnnxModelBuilder& b) { b.graph().set_name("g\x80"); },
       "model.onnx: graph name: invalid UTF-8 at byte 1"},
      {"string attribute",
       [](OnnxModelBuilder& b) {
         auto* a = b.graph().mutable_node(0)->add_attribute();
         a->set_name("mode");
         a->set_type(onnx::AttributeProto::STRING);
         a->set_s("x\xFE");
       },
       "model.onnx: node #0 attribute 0 'mode' string value: invalid UTF-8 at byte 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    OnnxModelBuilder b(13);
    std::string x = b.Input("x", T::FLOAT, {4});
    std::string h = b.Op("Relu", "first", {x});
    std::string y = b.Op("Relu", "second", {h});
    b.Output(y, T::FLOAT, {4});
    ASSERT_TRUE(Read(b).ok());
    c.spoil(b);
    auto g = Read(b);
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().ExitCode(), 2);
    EXPECT_THAT(g.status().message(), HasSubstr(c.expected));
  }
  // Well-formed multibyte names are fine.
  OnnxModelBuilder b(13);
  std::string x = b.Input("x\xC3\xA9", T::FLOAT, {4});
  b.Output(b.Op("Relu", "r\xE2\x82\xAC", {x}), T::FLOAT, {4});
  auto g = Read(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_TRUE(g->FindNode("r\xE2\x82\xAC").has_value());
}

TEST(OnnxReadTest, DanglingInputIsAnErrorNamingNodeAndTensor) {
  using T = onnx::TensorProto;
  OnnxModelBuilder b(13);
  std::string x = b.Input("x", T::FLOAT, {4});
  b.Op("Add", "adder", {x, "ghost"});
  b.Output("adder_output_0", T::FLOAT, {4});
  auto g = Read(b);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("model.onnx"));
  EXPECT_THAT(g.status().message(), HasSubstr("'adder'"));
  EXPECT_THAT(g.status().message(), HasSubstr("'ghost'"));
  EXPECT_THAT(g.status().message(), HasSubstr("dangling"));
}

TEST(OnnxReadTest, NegativeDimsAreErrorsNamingTheTensor) {
  using T = onnx::TensorProto;
  {
    OnnxModelBuilder b(13);
    std::string x = b.Input("images", T::FLOAT, {1, -3});
    b.Op("Relu", "r", {x});
    b.Output("r_output_0", T::FLOAT, {1, 3});
    auto g = Read(b);
    ASSERT_FALSE(g.ok());
    EXPECT_THAT(g.status().message(), HasSubstr("'images'"));
    EXPECT_THAT(g.status().message(), HasSubstr("negative"));
  }
  {
    OnnxModelBuilder b(13);
    std::string x = b.Input("x", T::FLOAT, {2, 2});
    auto* w = b.graph().add_initializer();
    w->set_name("bad.weight");
    w->set_data_type(T::FLOAT);
    w->add_dims(2);
    w->add_dims(-2);
    b.Op("MatMul", "mm", {x, "bad.weight"});
    b.Output("mm_output_0", T::FLOAT, {2, 2});
    auto g = Read(b);
    ASSERT_FALSE(g.ok());
    EXPECT_THAT(g.status().message(), HasSubstr("'bad.weight'"));
    EXPECT_THAT(g.status().message(), HasSubstr("negative"));
  }
  {  // A Reshape to a negative size, through folded arithmetic.
    OnnxModelBuilder b(13);
    std::string x = b.Input("x", T::FLOAT, {2, 2});
    b.Op("Reshape", "reshape", {x, b.ConstInts("shape", {-4, 1})});
    b.Output("reshape_output_0", T::FLOAT, {4, 1});
    auto g = Read(b);
    ASSERT_FALSE(g.ok());
    EXPECT_THAT(g.status().message(), HasSubstr("model.onnx"));
  }
}

TEST(OnnxReadTest, UnknownShapeIsAnErrorNamingTheTensor) {
  using T = onnx::TensorProto;
  OnnxModelBuilder b(13);
  std::string x = b.Input("x", T::FLOAT, {4});
  std::string nz = b.Op("NonZero", "nonzero", {x});  // data-dependent output size
  b.Output(nz, T::INT64, {1, std::string("n")});
  auto g = Read(b);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("'nonzero_output_0'"));
  EXPECT_THAT(g.status().message(), HasSubstr("unknown shape"));
}

TEST(OnnxReadTest, UnsupportedOpsetsAndSubgraphsAreRejected) {
  auto g = Read(hx::testing::TorchCnn(18));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), HasSubstr("opset 18"));
  // Opsets 1-10 are upgraded by ONNX's version converter and import like the opset-13 file.
  auto old = Read(hx::testing::TorchCnn(9));
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  auto now = Read(hx::testing::TorchCnn(13));
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  EXPECT_EQ(old->Ops().size(), now->Ops().size());

  using T = onnx::TensorProto;
  OnnxModelBuilder b(13);
  std::string c = b.Input("cond", T::BOOL, {});
  auto* n = b.Node("If", "branch", {c});
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = n->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name(branch);
  }
  b.Output("branch_output_0", T::FLOAT, {1});
  auto g2 = Read(b);
  ASSERT_FALSE(g2.ok());
  EXPECT_EQ(g2.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(g2.status().message(), HasSubstr("'branch'"));
}

TEST(OnnxReadTest, NodeViolatingItsSchemaIsAnErrorNamingTheNode) {
  using T = onnx::TensorProto;
  OnnxModelBuilder b(13);
  std::string x = b.Input("x", T::FLOAT, {4});
  b.Op("Add", "lonely_add", {x});  // Add needs two inputs
  b.Output("lonely_add_output_0", T::FLOAT, {4});
  auto g = Read(b);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("'lonely_add'"));
}

// ---- Writer and round trips.

// ONNX stores float attributes in single precision; everything else must match exactly.
void ExpectSameAttributes(const Attributes& a, const Attributes& b, const std::string& where) {
  ASSERT_EQ(a.values().size(), b.values().size()) << where;
  for (const auto& [name, value] : a.values()) {
    ASSERT_TRUE(b.Has(name)) << where << " " << name;
    const AttributeValue& other = b.values().at(name);
    if (const auto* f = std::get_if<double>(&value)) {
      EXPECT_FLOAT_EQ(static_cast<float>(*f), static_cast<float>(b.GetFloat(name, 0))) << where;
    } else if (const auto* fs = std::get_if<std::vector<double>>(&value)) {
      const auto other_fs = b.GetFloats(name);
      ASSERT_EQ(fs->size(), other_fs.size()) << where << " " << name;
      for (size_t k = 0; k < fs->size(); ++k)
        EXPECT_FLOAT_EQ(static_cast<float>((*fs)[k]), static_cast<float>(other_fs[k])) << where;
    } else {
      EXPECT_TRUE(value == other) << where << " " << name;
    }
  }
}

void ExpectSameNode(const Graph& a, const Node& na, const Graph& b, const Node& nb) {
  EXPECT_EQ(na.kind, nb.kind) << na.name;
  EXPECT_EQ(na.op_type, nb.op_type) << na.name;
  ExpectSameAttributes(na.attrs, nb.attrs, na.name);
  ASSERT_EQ(na.outputs.size(), nb.outputs.size()) << na.name;
  for (size_t k = 0; k < na.outputs.size(); ++k) {
    EXPECT_EQ(a.tensor(na.outputs[k]).name, b.tensor(nb.outputs[k]).name);
    EXPECT_EQ(a.tensor(na.outputs[k]).shape, b.tensor(nb.outputs[k]).shape) << na.name;
    EXPECT_EQ(a.tensor(na.outputs[k]).dtype, b.tensor(nb.outputs[k]).dtype) << na.name;
  }
  EXPECT_EQ(na.inputs.size(), nb.inputs.size()) << na.name;
}

// `b` read back from `a` written as ONNX: the same nodes, names, op types, shapes, attributes.
void ExpectSameOnnxGraph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.num_nodes(), b.num_nodes());
  EXPECT_EQ(a.NumParameters(), b.NumParameters());
  EXPECT_EQ(OpTypeCounts(a), OpTypeCounts(b));
  EXPECT_EQ(a.Inputs().size(), b.Inputs().size());
  EXPECT_EQ(a.Outputs().size(), b.Outputs().size());
  for (NodeId id : a.NodeIds()) {
    const Node& na = a.node(id);
    auto other = b.FindNode(na.name);
    ASSERT_TRUE(other.has_value()) << na.name;
    ExpectSameNode(a, na, b, b.node(*other));
  }
}

// Like ExpectSameOnnxGraph, but constant subgraphs of `a` may have been folded into Constant nodes.
void ExpectSameGraphUpToFolding(const Graph& a, const Graph& b) {
  EXPECT_LE(b.num_nodes(), a.num_nodes());
  EXPECT_EQ(a.NumParameters(), b.NumParameters());
  EXPECT_EQ(a.Weights().size(), b.Weights().size());
  EXPECT_EQ(a.Inputs().size(), b.Inputs().size());
  EXPECT_EQ(a.Outputs().size(), b.Outputs().size());
  for (NodeId id : b.NodeIds()) {
    const Node& nb = b.node(id);
    if (nb.op_type == "Constant") continue;
    auto other = a.FindNode(nb.name);
    ASSERT_TRUE(other.has_value()) << nb.name;
    ExpectSameNode(a, a.node(*other), b, nb);
  }
  for (NodeId id : a.Outputs()) {
    const Node& na = a.node(id);
    auto other = b.FindNode(na.name);
    ASSERT_TRUE(other.has_value()) << na.name;
    EXPECT_EQ(a.tensor(na.inputs[0]).shape, b.tensor(b.node(*other).inputs[0]).shape);
  }
}

TEST(OnnxWriteTest, ImportedModelsRoundTrip) {
  OnnxReadOptions options;
  options.default_batch = 2;
  options.default_seq = 8;
  for (const auto& b :
       {hx::testing::TorchCnn(13), hx::testing::TorchGpt(17),
        hx::testing::TorchGpt(11, {.layer_norm_op = false}), hx::testing::TorchLstm()}) {
    auto first = Read(b, options);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    auto bytes = WriteOnnxBytes(*first);
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    auto second = ReadOnnxBytes(*bytes, "roundtrip.onnx", options);
    ASSERT_TRUE(second.ok()) << second.status().ToString();
    ExpectSameOnnxGraph(*first, *second);
    // Payloads survive too.
    for (NodeId w : first->Weights()) {
      const Node& a = first->node(w);
      const Node& c = second->node(*second->FindNode(a.name));
      ASSERT_NE(c.data, nullptr) << a.name;
      EXPECT_EQ(*a.data, *c.data) << a.name;
    }
  }
}

TEST(OnnxWriteTest, ShapeOnlyExportHasValueInfoAndDimsWithoutPayload) {
  OnnxReadOptions options;
  options.keep_weight_data = false;
  auto g = Read(hx::testing::TorchCnn(13), options);
  ASSERT_TRUE(g.ok());
  auto bytes = WriteOnnxBytes(*g);
  ASSERT_TRUE(bytes.ok());
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(*bytes));
  EXPECT_EQ(model.ir_version(), 8);
  ASSERT_EQ(model.opset_import_size(), 1);
  EXPECT_EQ(model.opset_import(0).version(), 17);
  EXPECT_EQ(model.graph().initializer_size(), 17);
  for (const auto& init : model.graph().initializer()) {
    EXPECT_GT(init.dims_size(), 0) << init.name();
    EXPECT_FALSE(init.has_raw_data()) << init.name();
    EXPECT_EQ(init.float_data_size(), 0);
  }
  // Every op output that is not a graph output has a value_info with a full shape.
  EXPECT_EQ(model.graph().value_info_size() + model.graph().output_size(),
            static_cast<int>(g->Ops().size()));
  for (const auto& vi : model.graph().value_info()) {
    for (const auto& d : vi.type().tensor_type().shape().dim()) EXPECT_TRUE(d.has_dim_value());
  }
  auto again = ReadOnnxBytes(*bytes, "shape_only.onnx");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->NumParameters(), hx::testing::kCnnParams);
}

TEST(OnnxWriteTest, FileRoundTrip) {
  auto g = Read(hx::testing::TorchCnn(17));
  ASSERT_TRUE(g.ok());
  const std::string path = ::testing::TempDir() + "/cnn_roundtrip.onnx";
  ASSERT_TRUE(WriteOnnxFile(*g, path).ok());
  auto back = ReadOnnxFile(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameOnnxGraph(*g, *back);
  std::remove(path.c_str());
}

TEST(OnnxWriteTest, MetadataGoesOnTheModelAndTheNamedOpsAndDoesNotChangeTheGraph) {
  auto g = Read(hx::testing::TorchCnn(17));
  ASSERT_TRUE(g.ok());
  const std::string op = g->node(g->Ops()[0]).name;
  OnnxMetadata metadata;
  metadata.model = {{"hexplan.planner", "heft"}};
  metadata.ops[op] = {{"hexplan.device", "gpu1"}, {"hexplan.order", "0"}};
  auto bytes = WriteOnnxBytes(*g, metadata);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(*bytes));
  ASSERT_EQ(model.metadata_props_size(), 1);
  EXPECT_EQ(model.metadata_props(0).key(), "hexplan.planner");
  for (const onnx::NodeProto& node : model.graph().node()) {
    const auto& unknown = node.GetReflection()->GetUnknownFields(node);
    if (node.name() != op) {
      EXPECT_EQ(unknown.field_count(), 0) << node.name();
      EXPECT_EQ(node.doc_string(), "") << node.name();
      continue;
    }
    ASSERT_EQ(unknown.field_count(), 2);
    onnx::StringStringEntryProto entry;
    EXPECT_EQ(unknown.field(0).number(), 9);  // NodeProto.metadata_props since ONNX 1.16
    ASSERT_TRUE(entry.ParseFromString(unknown.field(0).length_delimited()));
    EXPECT_EQ(entry.key(), "hexplan.device");
    EXPECT_EQ(entry.value(), "gpu1");
    EXPECT_EQ(node.doc_string(), "hexplan.device: gpu1\nhexplan.order: 0");
  }
  auto back = ReadOnnxBytes(*bytes, "annotated.onnx");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameOnnxGraph(*g, *back);
  metadata.ops["no-such-op"] = {{"k", "v"}};
  auto bad = WriteOnnxBytes(*g, metadata);
  EXPECT_EQ(bad.status().ExitCode(), 2);
  EXPECT_NE(bad.status().message().find("no-such-op"), std::string::npos);
}

class ZooRoundTripTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooRoundTripTest, ZooModelsExportAndReimportWithSameShapes) {
  ZooOptions options;
  options.seq = 16;
  options.lstm_layers = 2;
  auto resolved = ResolveZooOptions(GetParam(), options);
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  auto zoo = BuildZooModel(GetParam(), *resolved);
  ASSERT_TRUE(zoo.ok()) << zoo.status().ToString();
  auto bytes = WriteOnnxBytes(*zoo);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto back = ReadOnnxBytes(*bytes, GetParam() + ".onnx");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  // LLaMA's rotary tables are computed from constants in the zoo graph; import folds them.
  if (GetParam() == "openllama-3b")
    ExpectSameGraphUpToFolding(*zoo, *back);
  else
    ExpectSameOnnxGraph(*zoo, *back);
  // Exported again, the imported graph is a fixed point.
  auto bytes2 = WriteOnnxBytes(*back);
  ASSERT_TRUE(bytes2.ok());
  auto back2 = ReadOnnxBytes(*bytes2, GetParam() + ".2.onnx");
  ASSERT_TRUE(back2.ok()) << back2.status().ToString();
  ExpectSameOnnxGraph(*back, *back2);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooRoundTripTest,
                         ::testing::Values("gpt2", "openllama-3b", "resnet50", "mobilenet_v2",
                                           "inception_v3", "lstm"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

// ---- The folder on its own (edge cases of ONNX semantics).

using onnx_internal::ConstValue;
using onnx_internal::FoldInput;
using onnx_internal::FoldNode;

ConstValue Ints(std::vector<int64_t> v, Shape dims = {}) {
  ConstValue c;
  c.dtype = DType::kI64;
  c.dims = dims.empty() ? Shape{static_cast<int64_t>(v.size())} : dims;
  c.ints = std::move(v);
  return c;
}

std::vector<int64_t> FoldInts(const onnx::NodeProto& node, int opset,
                              const std::vector<const ConstValue*>& in, Shape* dims = nullptr) {
  std::vector<FoldInput> inputs;
  for (const ConstValue* v : in) inputs.push_back(FoldInput{v, nullptr});
  auto r = FoldNode(node, opset, inputs);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok() || !r->has_value()) return {-999};
  if (dims) *dims = (**r)[0].dims;
  return (**r)[0].ints;
}

TEST(OnnxFoldTest, SliceGatherReshapeRangeFollowOnnxSemantics) {
  OnnxModelBuilder b(13);
  ConstValue data = Ints({0, 1, 2, 3, 4, 5});
  auto starts = Ints({-1}), ends = Ints({-1000}), axes = Ints({0}), steps = Ints({-2});
  EXPECT_EQ(FoldInts(*b.Node("Slice", "s", {"d", "a", "b", "c", "e"}), 13,
                     {&data, &starts, &ends, &axes, &steps}),
            (std::vector<int64_t>{5, 3, 1}));
  auto big_end = Ints({std::numeric_limits<int64_t>::max()}), one = Ints({1});
  EXPECT_EQ(FoldInts(*b.Node("Slice", "s2", {"d", "a", "b"}), 13, {&data, &one, &big_end}),
            (std::vector<int64_t>{1, 2, 3, 4, 5}));
  auto idx = Ints({-1, 0}, {2});
  EXPECT_EQ(FoldInts(*b.Node("Gather", "g", {"d", "i"}), 13, {&data, &idx}),
            (std::vector<int64_t>{5, 0}));
  auto shape = Ints({0, -1});
  ConstValue m = Ints({1, 2, 3, 4, 5, 6}, {2, 3});
  Shape dims;
  FoldInts(*b.Node("Reshape", "r", {"m", "s"}), 13, {&m, &shape}, &dims);
  EXPECT_EQ(dims, (Shape{2, 3}));
  auto start = Ints({10}, {}), limit = Ints({1}, {}), delta = Ints({-4}, {});
  start.dims = limit.dims = delta.dims = {};
  EXPECT_EQ(FoldInts(*b.Node("Range", "range", {"a", "b", "c"}), 13, {&start, &limit, &delta}),
            (std::vector<int64_t>{10, 6, 2}));
  auto seven = Ints({-7}), two = Ints({2});
  EXPECT_EQ(FoldInts(*b.Node("Div", "div", {"a", "b"}), 13, {&seven, &two}),
            (std::vector<int64_t>{-3}));
  EXPECT_EQ(FoldInts(*b.Node("Mod", "mod", {"a", "b"}), 13, {&seven, &two}),
            (std::vector<int64_t>{1}));
  // Errors for invalid arithmetic rather than a crash.
  auto zero = Ints({0}), out_of_range = Ints({6});
  std::vector<FoldInput> div0 = {{&seven, nullptr}, {&zero, nullptr}};
  EXPECT_FALSE(FoldNode(*b.Node("Div", "d0", {"a", "b"}), 13, div0).ok());
  std::vector<FoldInput> oob = {{&data, nullptr}, {&out_of_range, nullptr}};
  EXPECT_FALSE(FoldNode(*b.Node("Gather", "g2", {"a", "b"}), 13, oob).ok());
}

TEST(OnnxFoldTest, TransposeFoldsShapeArithmeticAndRejectsBadPerms) {
  // torchvision's Swin-T computes its Pad amounts through a Transpose of a small int64 matrix.
  OnnxModelBuilder b(17);
  ConstValue m = Ints({1, 2, 3, 4, 5, 6}, {2, 3});
  Shape dims;
  EXPECT_EQ(FoldInts(*b.Node("Transpose", "t", {"m"}), 17, {&m}, &dims),
            (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(dims, (Shape{3, 2}));
  ConstValue cube = Ints({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  onnx::NodeProto* rotate = b.Node("Transpose", "t3", {"c"});
  OnnxModelBuilder::AttrInts(rotate, "perm", {1, 2, 0});
  // out[i][j][k] = in[k][i][j]
  EXPECT_EQ(FoldInts(*rotate, 17, {&cube}, &dims), (std::vector<int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
  onnx::NodeProto* repeated = b.Node("Transpose", "tr", {"m"});
  OnnxModelBuilder::AttrInts(repeated, "perm", {0, 0});
  std::vector<FoldInput> in = {{&m, nullptr}};
  EXPECT_FALSE(FoldNode(*repeated, 17, in).ok());
  onnx::NodeProto* short_perm = b.Node("Transpose", "ts", {"m"});
  OnnxModelBuilder::AttrInts(short_perm, "perm", {1});
  EXPECT_FALSE(FoldNode(*short_perm, 17, in).ok());
}

TEST(OnnxEinsumShapeTest, ExplicitImplicitAndEllipsisEquations) {
  using onnx_internal::EinsumOutputShape;
  EXPECT_EQ(EinsumOutputShape("ij,jk->ik", {{2, 3}, {3, 5}}), (Shape{2, 5}));
  EXPECT_EQ(EinsumOutputShape("ij,jk", {{2, 3}, {3, 5}}), (Shape{2, 5}));  // implicit: i, k
  EXPECT_EQ(EinsumOutputShape("ba", {{2, 3}}), (Shape{3, 2}));             // implicit sorts letters
  // MaxViT's relative attention: batch and heads broadcast through "...".
  EXPECT_EQ(
      EinsumOutputShape("... h i d, ... h j d -> ... h i j", {{4, 7, 2, 49, 32}, {1, 2, 49, 32}}),
      (Shape{4, 7, 2, 49, 49}));
  EXPECT_EQ(EinsumOutputShape("...ii->...i", {{3, 4, 4}}), (Shape{3, 4}));
  EXPECT_EQ(EinsumOutputShape("i,i->", {{6}, {6}}), (Shape{}));
  // Mismatches and malformed equations give no shape (the executor reports them).
  EXPECT_EQ(EinsumOutputShape("ij,jk->ik", {{2, 3}, {4, 5}}), std::nullopt);
  EXPECT_EQ(EinsumOutputShape("ij->ik", {{2, 3}}), std::nullopt);
  EXPECT_EQ(EinsumOutputShape("ij,jk->ik", {{2, 3}}), std::nullopt);
  EXPECT_EQ(EinsumOutputShape("i1->i", {{2, 3}}), std::nullopt);
  EXPECT_EQ(EinsumOutputShape("...i,...i->...i", {{2, 3}, {4, 3}}), std::nullopt);
}

// ONNX 1.12 infers only an Einsum's rank; the reader completes the dimensions inside ONNX's one
// inference pass, so a long chain of Einsums (AlphaFold2's Evoformer has 144) gets every shape,
// where a pass per Einsum stopped at the reader's 64 folding rounds.
TEST(OnnxEinsumShapeTest, AChainOfEinsumsLongerThanTheFoldingRoundsGetsItsShapes) {
  OnnxModelBuilder b(17);
  std::string x = b.Input("x", onnx::TensorProto::FLOAT, {2, 4});
  for (int i = 0; i < 100; ++i) {
    const std::string w = b.Weight("w" + std::to_string(i), {4, 4});
    auto* n = b.Node("Einsum", "e" + std::to_string(i), {x, w});
    auto* a = n->add_attribute();
    a->set_name("equation");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s("ij,jk->ik");
    x = b.Op("Relu", "r" + std::to_string(i), {n->output(0)});
  }
  b.Output(x, onnx::TensorProto::FLOAT, {2, 4});
  auto g = Read(b);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(ShapeOf(*g, "e99_output_0"), (Shape{2, 4}));
  EXPECT_EQ(OpTypeCounts(*g)["Einsum"], 100);
}

}  // namespace
}  // namespace hx::graph
