#include "hexplan/graph/graph.h"

#include <gtest/gtest.h>

#include "hexplan/graph/analysis.h"
#include "testing/graph_builders.h"

namespace hx::graph {
namespace {

TEST(GraphTest, ChainHasEdgesAndParameters) {
  Graph g = testing::MakeChain(3, 16, 4);
  EXPECT_TRUE(g.Validate().ok());
  EXPECT_EQ(g.Ops().size(), 3u);
  EXPECT_EQ(g.Weights().size(), 3u);
  EXPECT_EQ(g.NumParameters(), 3 * 16 * 16);
  EXPECT_EQ(g.ParameterBytes(), 3 * 16 * 16 * 4);
  // input->op0, w0->op0, op0->op1, w1->op1, op1->op2, w2->op2, op2->output
  EXPECT_EQ(g.num_edges(), 7u);
  NodeId op1 = *g.FindNode("op1");
  ASSERT_EQ(g.predecessors(op1).size(), 2u);
  EXPECT_EQ(g.node(g.predecessors(op1)[0]).name, "op0");
}

TEST(GraphTest, TopologicalOrderRespectsEveryEdge) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Graph g = testing::MakeRandomDag(40, seed);
    ASSERT_TRUE(g.Validate().ok()) << g.Validate().ToString();
    auto order = TopologicalOrder(g);
    ASSERT_TRUE(order.ok());
    ASSERT_EQ(order->size(), g.num_nodes());
    std::vector<size_t> pos(g.num_nodes());
    for (size_t i = 0; i < order->size(); ++i) pos[(*order)[i].index()] = i;
    for (const Edge& e : g.Edges()) EXPECT_LT(pos[e.src.index()], pos[e.dst.index()]);
  }
}

TEST(GraphTest, CycleIsDetectedAndNamed) {
  Graph g("cyclic");
  TensorId a = g.AddTensor("a", DType::kF32, {4});
  TensorId b = g.AddTensor("b", DType::kF32, {4});
  g.AddOp("Relu", "first", {b}, {a});
  g.AddOp("Relu", "second", {a}, {b});
  Status s = g.Validate();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cycle"), std::string::npos);
  EXPECT_NE(s.message().find("first"), std::string::npos);
  EXPECT_NE(s.message().find("second"), std::string::npos);
  EXPECT_EQ(FindCycle(g).size(), 2u);
  EXPECT_FALSE(TopologicalOrder(g).ok());
}

TEST(GraphTest, DanglingEdgeAndNegativeDimsAreErrors) {
  Graph g("dangling");
  TensorId ghost = g.AddTensor("ghost", DType::kF32, {4});
  g.AddOpWithOutputs("Relu", "r", {ghost}, {{"y", DType::kF32, {4}}});
  Status s = g.Validate();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ghost"), std::string::npos);
  EXPECT_NE(s.message().find("'r'"), std::string::npos);

  Graph h("negative");
  h.AddInput("x", DType::kF32, {2, -3});
  EXPECT_FALSE(h.Validate().ok());

  Graph d("dup");
  d.AddInput("x", DType::kF32, {2});
  d.AddInput("x", DType::kF32, {2});
  EXPECT_FALSE(d.Validate().ok());
}

TEST(GraphTest, CopiesAreIndependentValues) {
  Graph g = testing::MakeDiamond();
  Graph copy = g;
  copy.mutable_node(*copy.FindNode("a")).name = "renamed";
  EXPECT_EQ(g.node(*g.FindNode("a")).name, "a");
  EXPECT_EQ(copy.num_nodes(), g.num_nodes());
}

}  // namespace
}  // namespace hx::graph
