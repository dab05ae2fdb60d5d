// hexplan's JSON graph format: exact round trips, and a clear error (file and JSON path) for every
// kind of bad input.

#include "hexplan/graph/json_io.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "hexplan/graph/analysis.h"
#include "hexplan/graph/onnx_io.h"
#include "hexplan/graph/zoo.h"
#include "testing/cli_runner.h"
#include "testing/graph_builders.h"

namespace hx::graph {
namespace {

// Structural equality, ids included (the writer's order replays exactly).
void ExpectSameGraph(const Graph& a, const Graph& b) {
  EXPECT_EQ(a.name(), b.name());
  ASSERT_EQ(a.num_tensors(), b.num_tensors());
  ASSERT_EQ(a.num_nodes(), b.num_nodes());
  for (size_t i = 0; i < a.num_tensors(); ++i) {
    const Tensor& x = a.tensor(TensorId(i));
    const Tensor& y = b.tensor(TensorId(i));
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.dtype, y.dtype) << x.name;
    EXPECT_EQ(x.shape, y.shape) << x.name;
    EXPECT_EQ(x.producer, y.producer) << x.name;
    EXPECT_EQ(x.consumers, y.consumers) << x.name;
  }
  for (size_t i = 0; i < a.num_nodes(); ++i) {
    const Node& x = a.node(NodeId(i));
    const Node& y = b.node(NodeId(i));
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kind, y.kind) << x.name;
    EXPECT_EQ(x.op_type, y.op_type) << x.name;
    EXPECT_EQ(x.domain, y.domain) << x.name;
    EXPECT_EQ(x.inputs, y.inputs) << x.name;
    EXPECT_EQ(x.outputs, y.outputs) << x.name;
    EXPECT_EQ(x.attrs, y.attrs) << x.name;
    EXPECT_EQ(a.successors(NodeId(i)), b.successors(NodeId(i))) << x.name;
  }
  EXPECT_EQ(a.NumParameters(), b.NumParameters());
}

Graph RoundTrip(const Graph& g) {
  auto back = ReadGraphJson(WriteGraphJson(g), "rt.json");
  EXPECT_TRUE(back.ok()) << back.status().ToString();
  return back.ok() ? *back : Graph();
}

// Every feature of Graph the format carries.
Graph MakeEverything() {
  Graph g("every \"feature\"");
  TensorId x = g.node(g.AddInput("x", DType::kF16, {2, 3})).outputs[0];
  g.mutable_node(*g.FindNode("x")).attrs.Set("doc", std::string("an input"));
  TensorId w = g.node(g.AddWeight("w", DType::kBF16, {3, 0})).outputs[0];
  g.AddTensor("unused", DType::kBool, {});
  Attributes attrs;
  attrs.Set("i", int64_t{-7});
  attrs.Set("f", 2.0);
  attrs.Set("tiny", 1e-300);
  attrs.Set("s", std::string("a\nb\"c"));
  attrs.Set("ints", std::vector<int64_t>{1, -2, 3});
  attrs.Set("empty_ints", std::vector<int64_t>{});
  attrs.Set("floats", std::vector<double>{0.5, 1.0});
  attrs.Set("empty_floats", std::vector<double>{});
  attrs.Set("inf", std::numeric_limits<double>::infinity());
  attrs.Set("infs", std::vector<double>{-std::numeric_limits<double>::infinity(), 1.5});
  // An omitted optional input (invalid id) between two real ones; two outputs.
  NodeId op = g.AddOpWithOutputs("Custom", "y", {x, TensorId::Invalid(), w},
                                 {{"y", DType::kI64, {2}}, {"y2", DType::kU8, {5, 1}}}, attrs);
  g.mutable_node(op).domain = "com.example";
  // An output named "y:output" because node "y" exists; a tensor read twice.
  g.AddOutput(*g.FindTensor("y"));
  g.AddOpWithOutputs("Add", "twice", {*g.FindTensor("y2"), *g.FindTensor("y2")},
                     {{"z", DType::kI8, {5, 1}}});
  g.AddOutput(*g.FindTensor("z"));
  return g;
}

TEST(GraphJsonTest, RoundTripsEverything) {
  Graph g = MakeEverything();
  ASSERT_TRUE(g.Validate().ok()) << g.Validate().ToString();
  Graph back = RoundTrip(g);
  ExpectSameGraph(g, back);
  EXPECT_EQ(back.node(*back.FindNode("y:output")).kind, NodeKind::kOutput);
  // Written twice, the text is identical: the writer is deterministic.
  EXPECT_EQ(WriteGraphJson(g), WriteGraphJson(back));
}

TEST(GraphJsonTest, RoundTripsNaNAttribute) {
  Graph g("nan");
  TensorId x = g.node(g.AddInput("x", DType::kF32, {1})).outputs[0];
  Attributes attrs;
  attrs.Set("nan", std::nan(""));
  attrs.Set("nans", std::vector<double>{std::nan("")});
  g.AddOutput(
      g.node(g.AddOpWithOutputs("Op", "op", {x}, {{"y", DType::kF32, {1}}}, attrs)).outputs[0]);
  Graph back = RoundTrip(g);
  const Attributes& a = back.node(*back.FindNode("op")).attrs;
  EXPECT_TRUE(std::isnan(a.GetFloat("nan", 0.0)));
  ASSERT_EQ(a.GetFloats("nans").size(), 1u);
  EXPECT_TRUE(std::isnan(a.GetFloats("nans")[0]));
}

TEST(GraphJsonTest, RoundTripsBuilderGraphs) {
  std::vector<Graph> graphs = {testing::MakeChain(5), testing::MakeDiamond(),
                               testing::MakeForkJoin(4, 3), Graph("empty")};
  for (uint64_t seed = 1; seed <= 10; ++seed) graphs.push_back(testing::MakeRandomDag(50, seed));
  for (const Graph& g : graphs) ExpectSameGraph(g, RoundTrip(g));
}

TEST(GraphJsonTest, RoundTripsZooModels) {
  for (const char* name : {"gpt2", "resnet50", "openllama-3b"}) {
    if (FindZooModel(name) == nullptr) continue;
    ZooOptions options;
    options.seq = 64;
    if (std::string(name) == "resnet50") options.seq = 0;
    auto g = BuildZooModel(name, options);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ExpectSameGraph(*g, RoundTrip(*g));
  }
}

TEST(GraphJsonTest, WeightPayloadIsDropped) {
  Graph g("payload");
  auto data = std::make_shared<const std::string>(std::string(16, '\1'));
  NodeId w = g.AddWeight("w", DType::kF32, {4}, data);
  g.AddOutput(g.node(w).outputs[0]);
  Graph back = RoundTrip(g);
  EXPECT_EQ(back.node(*back.FindNode("w")).data, nullptr);
  EXPECT_EQ(back.NumParameters(), 4);
}

TEST(GraphJsonTest, HandWrittenOrderIsAccepted) {
  // Ops before the nodes producing their inputs, the output node without a name, and tensors in
  // any order: the graph is the same, only the ids differ. The op is in a custom domain because
  // ONNX's MatMul has no attributes (the reader checks default-domain ops against ONNX).
  const std::string text = R"({"format": "hexplan-graph", "version": 1, "name": "hand",
    "tensors": [{"name": "y", "dtype": "float32", "shape": [2, 4]},
                {"name": "x", "dtype": "fp32", "shape": [2, 3]},
                {"name": "w", "dtype": "fp32", "shape": [3, 4]}],
    "nodes": [{"name": "mm", "kind": "op", "op_type": "MatMul", "domain": "com.example",
               "inputs": ["x", "w"], "outputs": ["y"],
               "attrs": {"alpha": {"float": 1}, "axes": {"ints": []}}},
              {"kind": "output", "inputs": ["y"]},
              {"name": "x", "kind": "input"},
              {"name": "w", "kind": "weight", "outputs": ["w"]}]})";
  auto g = ReadGraphJson(text, "hand.json");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->name(), "hand");
  EXPECT_EQ(g->Ops().size(), 1u);
  EXPECT_EQ(g->NumParameters(), 12);
  EXPECT_EQ(g->num_edges(), 3u);
  const Node& mm = g->node(*g->FindNode("mm"));
  EXPECT_EQ(g->tensor(mm.inputs[0]).name, "x");
  EXPECT_EQ(mm.attrs.GetFloat("alpha", 0.0), 1.0);
  EXPECT_TRUE(std::holds_alternative<double>(mm.attrs.values().at("alpha")));
  EXPECT_TRUE(mm.attrs.GetInts("axes", {9}).empty());
  EXPECT_TRUE(g->FindNode("y").has_value());  // the output node, named after its tensor
}

// ---- Errors: each names the file and the JSON path, never throws.

struct BadCase {
  std::string text;
  std::string expected;  // a substring of the message
};

std::string Wrap(const std::string& tensors, const std::string& nodes) {
  return R"({"format": "hexplan-graph", "version": 1, "tensors": [)" + tensors +
         R"(], "nodes": [)" + nodes + "]}";
}

const char* kX = R"({"name": "x", "dtype": "fp32", "shape": [2]})";
const char* kY = R"({"name": "y", "dtype": "fp32", "shape": [2]})";
const char* kInX = R"({"name": "x", "kind": "input"})";

TEST(GraphJsonTest, BadInputGetsAClearError) {
  const std::vector<BadCase> cases = {
      // Syntax errors give the line and column (1-based, in bytes) of the offending byte.
      {"{\"format\": \"hexplan-graph\",\n \"version\": 1,\n \"tensors\": [,]}",
       "m.json:3:14: invalid JSON: syntax error while parsing value - unexpected ','"},
      {"{\"format\": \"hexplan-graph\", ", "m.json:1:29: invalid JSON: syntax error"},
      {"", "m.json:1:1: invalid JSON"},
      {Wrap(std::string(R"({"name": "x)") + "\xFF" + R"(", "dtype": "fp32", "shape": [2]})", ""),
       "m.json:1:66: invalid UTF-8 at byte 65 (text files must be UTF-8)"},
      {"[1, 2]", "m.json: expected a JSON object at the top level, got array"},
      {R"({"version": 1, "tensors": [], "nodes": []})", "m.json: missing field 'format'"},
      {R"({"format": "onnx", "version": 1, "tensors": [], "nodes": []})",
       "m.json: format: expected \"hexplan-graph\", got 'onnx'"},
      {R"({"format": "hexplan-graph", "version": 2, "tensors": [], "nodes": []})",
       "m.json: version: unsupported version 2"},
      {R"({"format": "hexplan-graph", "version": "1", "tensors": [], "nodes": []})",
       "m.json: version: expected an integer, got string \"1\""},
      {R"({"format": "hexplan-graph", "version": 1, "tensors": {}, "nodes": []})",
       "m.json: tensors: expected an array, got object"},
      {R"({"format": "hexplan-graph", "version": 1, "tensors": []})",
       "m.json: missing field 'nodes'"},
      {R"({"format": "hexplan-graph", "version": 1, "tensors": [], "nodes": [], "extra": 1})",
       "m.json: unknown field 'extra'"},
      {Wrap(R"({"name": 3, "dtype": "fp32", "shape": [2]})", ""),
       "m.json: tensors[0].name: expected a string, got number 3"},
      {Wrap(R"({"name": "x", "dtype": "float8", "shape": [2]})", ""),
       "m.json: tensors[0].dtype: unknown dtype 'float8'"},
      {Wrap(std::string(kX) + R"(, {"name": "t", "dtype": "fp32", "shape": [2, -3]})", ""),
       "m.json: tensors[1].shape[1]: negative dimension -3"},
      {Wrap(R"({"name": "x", "dtype": "fp32", "shape": [2.5]})", ""),
       "m.json: tensors[0].shape[0]: expected an integer, got number 2.5"},
      {Wrap(R"({"name": "x", "dtype": "fp32", "shape": "2"})", ""),
       "m.json: tensors[0].shape: expected an array of dimensions, got string"},
      {Wrap(R"({"name": "x", "dtype": "fp32"})", ""), "m.json: tensors[0]: missing field 'shape'"},
      {Wrap(R"({"name": "x", "dtype": "fp32", "shape": [99999999999999999999]})", ""),
       "m.json: tensors[0].shape[0]: expected an integer, got number"},
      {Wrap(R"({"name": "x", "dtype": "fp32", "shape": [9223372036854775807, 4]})", ""),
       "m.json: tensors[0].shape: more than 2^56 elements"},
      {Wrap(std::string(kX) + ", " + kX, kInX),
       "m.json: tensors[1].name: duplicate tensor name 'x' (first at tensors[0])"},
      {Wrap(std::string(kX) + ", " + kY,
            std::string(kInX) +
                R"(, {"name": "r", "kind": "op", "op_type": "Relu", "inputs": ["x", "q"],
                       "outputs": ["y"]})"),
       "m.json: nodes[1].inputs[1]: unknown tensor 'q'"},
      {Wrap(std::string(kX) + ", " + kY,
            R"({"name": "r", "kind": "op", "op_type": "Relu", "inputs": ["x"], "outputs": ["y"]})"),
       "m.json: nodes[0].inputs[0]: tensor 'x' has no producer (dangling edge)"},
      {Wrap(kX, std::string(kInX) + ", " + kInX),
       "m.json: nodes[1].name: duplicate node name 'x' (first at nodes[0])"},
      {Wrap(kX, R"({"name": "x", "kind": "layer"})"),
       "m.json: nodes[0].kind: unknown kind 'layer'"},
      {Wrap(kX, R"({"name": "x"})"), "m.json: nodes[0]: missing field 'kind'"},
      {Wrap(kX, R"({"name": "x", "kind": "input", "input": []})"),
       "m.json: nodes[0]: unknown field 'input'"},
      {Wrap(std::string(kX) + ", " + kY,
            std::string(kInX) +
                R"(, {"name": "r", "kind": "op", "inputs": ["x"], "outputs": ["y"]})"),
       "m.json: nodes[1]: an op node needs a non-empty 'op_type'"},
      {Wrap(std::string(kX) + ", " + kY,
            std::string(kInX) + R"(, {"name": "r", "kind": "op", "op_type": "T", "inputs": ["x"],
               "outputs": ["y"], "attrs": {"perm": [1, "a"]}})"),
       "m.json: nodes[1].attrs.perm[1]: expected a number (lists hold numbers), got string \"a\""},
      {Wrap(std::string(kX) + ", " + kY,
            std::string(kInX) + R"(, {"name": "r", "kind": "op", "op_type": "T", "inputs": ["x"],
               "outputs": ["y"], "attrs": {"a": null}})"),
       "m.json: nodes[1].attrs.a: expected a number, a string"},
      {Wrap(std::string(kX) + ", " + kY,
            std::string(kInX) + R"(, {"name": "r", "kind": "op", "op_type": "T", "inputs": ["x"],
               "outputs": ["y"], "attrs": {"a": {"bits": 1}}})"),
       "m.json: nodes[1].attrs.a: unknown attribute tag 'bits'"},
      {Wrap(std::string(kX) + ", " + kY,
            std::string(kInX) + R"(, {"name": "r", "kind": "op", "op_type": "T", "inputs": "x",
               "outputs": ["y"]})"),
       "m.json: nodes[1].inputs: expected an array of tensor names, got string"},
      {Wrap(std::string(kX) + ", " + kY,
            std::string(kInX) +
                R"(, {"name": "r", "kind": "op", "op_type": "T", "inputs": ["x"], "outputs": ["y"]},
                     {"name": "s", "kind": "op", "op_type": "T", "inputs": ["x"], "outputs": ["y"]})"),
       "m.json: nodes[2].outputs[0]: tensor 'y' is already produced by nodes[1] ('r')"},
      {Wrap(std::string(kX) + ", " + kY, R"({"name": "x", "kind": "input", "inputs": ["y"]})"),
       "m.json: nodes[0].inputs: a input node reads nothing"},
      {Wrap(std::string(kX), R"({"name": "w", "kind": "weight"})"),
       "m.json: nodes[0]: no tensor named 'w' for this weight"},
      {Wrap(std::string(kX) + ", " + kY, R"({"name": "x", "kind": "input", "outputs": ["y"]})"),
       "m.json: nodes[0].outputs: a input node produces exactly one tensor, named like the node"},
      {Wrap(kX, std::string(kInX) + R"(, {"name": "out", "kind": "output", "inputs": ["x"]})"),
       "m.json: nodes[1].name: an output node is named after the tensor it exports: expected "
       "'x:output'"},
      {Wrap(kX, std::string(kInX) + R"(, {"name": "o", "kind": "output", "inputs": []})"),
       "m.json: nodes[1].inputs: an output node reads exactly one tensor"},
      // A cycle: r reads y which s makes from r's output.
      {Wrap(
           std::string(kX) + ", " + kY + R"(, {"name": "z", "dtype": "fp32", "shape": [2]})",
           std::string(kInX) +
               R"(, {"name": "r", "kind": "op", "op_type": "Add", "inputs": ["x", "y"], "outputs": ["z"]},
                     {"name": "s", "kind": "op", "op_type": "Relu", "inputs": ["z"], "outputs": ["y"]})"),
       "the graph has a cycle: r -> s -> r"},
  };
  for (const BadCase& c : cases) {
    StatusOr<Graph> g = Status::Ok();
    ASSERT_NO_THROW(g = ReadGraphJson(c.text, "m.json")) << c.text;
    ASSERT_FALSE(g.ok()) << "accepted: " << c.text;
    EXPECT_NE(g.status().message().find(c.expected), std::string::npos)
        << "message: " << g.status().message() << "\nexpected: " << c.expected;
    EXPECT_EQ(g.status().ExitCode(), 2) << g.status().message();
    EXPECT_EQ(g.status().message().rfind("m.json:", 0), 0u) << g.status().message();
  }
}

// Ops are checked as the ONNX reader checks them (arity, attributes, shape inference), because a
// graph JSON file may be exported to ONNX (`hexplan export`): these three used to be accepted
// and then exported to files our own ONNX reader rejects.
TEST(GraphJsonTest, OpsThatOnnxRejectsAreRejected) {
  const std::vector<BadCase> cases = {
      {Wrap(R"({"name": "y", "dtype": "fp32", "shape": [8, 32]})",
            R"({"name": "mm", "kind": "op", "op_type": "MatMul", "inputs": [], "outputs": ["y"]},
               {"kind": "output", "inputs": ["y"]})"),
       "m.json: node 'mm' (MatMul): "},
      {Wrap(R"({"name": "a", "dtype": "fp32", "shape": [8, 64]},
               {"name": "b", "dtype": "fp32", "shape": [3]},
               {"name": "y", "dtype": "fp32", "shape": [8]})",
            R"({"name": "a", "kind": "input"}, {"name": "b", "kind": "weight"},
               {"name": "mm", "kind": "op", "op_type": "MatMul", "inputs": ["a", "b"],
                "outputs": ["y"]},
               {"kind": "output", "inputs": ["y"]})"),
       "m.json: "},
      {Wrap(R"({"name": "x", "dtype": "fp32", "shape": [1, 3, 8, 8]},
               {"name": "w", "dtype": "fp32", "shape": [4, 3, 3, 3]},
               {"name": "y", "dtype": "fp32", "shape": [1, 4, 6, 6]})",
            R"({"name": "x", "kind": "input"}, {"name": "w", "kind": "weight"},
               {"name": "conv", "kind": "op", "op_type": "Conv", "inputs": ["x", "w"],
                "outputs": ["y"], "attrs": {"group": 0, "kernel_shape": [3, 3]}},
               {"kind": "output", "inputs": ["y"]})"),
       "m.json: "},
      // A declared shape that disagrees with what the op computes ([8,64] x [64,32] is [8,32]).
      {Wrap(R"({"name": "a", "dtype": "fp32", "shape": [8, 64]},
               {"name": "b", "dtype": "fp32", "shape": [64, 32]},
               {"name": "y", "dtype": "fp32", "shape": [8, 99]})",
            R"({"name": "a", "kind": "input"}, {"name": "b", "kind": "weight"},
               {"name": "mm", "kind": "op", "op_type": "MatMul", "inputs": ["a", "b"],
                "outputs": ["y"]},
               {"kind": "output", "inputs": ["y"]})"),
       "m.json: tensor 'y' (output 0 of node 'mm' (MatMul)) has shape [8,99], but its op computes "
       "[8,32] (ONNX shape inference)"},
  };
  for (const BadCase& c : cases) {
    StatusOr<Graph> g = Status::Ok();
    ASSERT_NO_THROW(g = ReadGraphJson(c.text, "m.json")) << c.text;
    ASSERT_FALSE(g.ok()) << "accepted: " << c.text;
    EXPECT_EQ(g.status().ExitCode(), 2) << g.status().message();
    EXPECT_EQ(g.status().message().rfind(c.expected, 0), 0u) << g.status().message();
    EXPECT_NE(g.status().message().back(), '\n') << "no trailing blank lines";
  }
}

// The property behind that check: whatever the reader accepts exports to ONNX and reads back.
class GraphJsonZooTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GraphJsonZooTest, ExportedJsonReadsAndExportsToOnnxThatReadsBack) {
  ZooOptions options;
  options.seq = 16;
  options.lstm_layers = 2;
  options.image_size = 0;
  auto resolved = ResolveZooOptions(GetParam(), options);
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  auto zoo = BuildZooModel(GetParam(), *resolved);
  ASSERT_TRUE(zoo.ok()) << zoo.status().ToString();
  auto g = ReadGraphJson(WriteGraphJson(*zoo), GetParam() + ".json");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  auto bytes = WriteOnnxBytes(*g);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto back = ReadOnnxBytes(*bytes, GetParam() + ".onnx");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->NumParameters(), zoo->NumParameters());
}

// One model per family: a family's members come from one generator and differ only in width and
// depth, so they export the same operators (the largest AlphaFold2 alone took 12 s under ASan). The
// "cnn" family is the exception: each of its models is an architecture of its own.
std::vector<std::string> ZooNames() {
  std::vector<std::string> names;
  std::set<std::string> families;
  for (const ZooModelInfo& m : ZooModels()) {
    if (m.family == "cnn" || families.insert(m.family).second) names.push_back(m.name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(Zoo, GraphJsonZooTest, ::testing::ValuesIn(ZooNames()),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

TEST(GraphJsonTest, MangledFilesNeverCrash) {
  const std::string good = WriteGraphJson(MakeEverything());
  std::mt19937_64 rng(42);
  const std::string alphabet = "{}[]\",:-0123456789.eEtruefalsnl \\ax";
  int accepted = 0;
  for (int i = 0; i < 1500; ++i) {
    std::string text = good;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text[pos] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          text.erase(pos, 1 + rng() % 8);
          break;
        default:
          text.resize(pos);
          break;
      }
      if (text.empty()) break;
    }
    StatusOr<Graph> g = Status::Ok();
    ASSERT_NO_THROW(g = ReadGraphJson(text, "fuzz.json"));
    if (g.ok()) {
      ++accepted;
      EXPECT_TRUE(g->Validate().ok());
    } else {
      EXPECT_EQ(g.status().message().rfind("fuzz.json:", 0), 0u) << g.status().message();
    }
  }
  EXPECT_LT(accepted, 1500);
}

TEST(GraphJsonTest, FileRoundTrip) {
  const std::string dir = testing::MakeTempDir();
  Graph g = testing::MakeDiamond();
  ASSERT_TRUE(WriteGraphJsonFile(g, dir + "/d.json").ok());
  auto back = ReadGraphJsonFile(dir + "/d.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameGraph(g, *back);
  auto missing = ReadGraphJsonFile(dir + "/nope.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(dir + "/nope.json"), std::string::npos);
  std::remove((dir + "/d.json").c_str());
}

}  // namespace
}  // namespace hx::graph
