#include "hexplan/graph/op_cost.h"

#include <gtest/gtest.h>

namespace hx::graph {
namespace {

// A one-op graph: inputs are graph inputs unless named in `weights`.
struct OneOp {
  Graph g{"one_op"};
  NodeId op;
  std::vector<TensorId> ins;

  TensorId In(const std::string& name, Shape shape, bool weight = false,
              DType dtype = DType::kF32) {
    NodeId n = weight ? g.AddWeight(name, dtype, std::move(shape))
                      : g.AddInput(name, dtype, std::move(shape));
    TensorId t = g.node(n).outputs[0];
    ins.push_back(t);
    return t;
  }
  void Skip() { ins.push_back(TensorId::Invalid()); }
  OpCost Run(const std::string& type, Shape out, Attributes attrs = {}) {
    op =
        g.AddOpWithOutputs(type, "op", ins, {{"y", DType::kF32, std::move(out)}}, std::move(attrs));
    return ComputeOpCost(g, op);
  }
};

TEST(OpCostTest, MatMulBroadcastsBatchDimensions) {
  OneOp t;
  t.In("a", {2, 3, 4, 5});
  t.In("w", {5, 6}, true);
  OpCost c = t.Run("MatMul", {2, 3, 4, 6});
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * (2 * 3 * 4 * 6) * 5);
  EXPECT_EQ(c.input_bytes, 2 * 3 * 4 * 5 * 4);
  EXPECT_EQ(c.weight_bytes, 5 * 6 * 4);
  EXPECT_EQ(c.output_bytes, 2 * 3 * 4 * 6 * 4);
  EXPECT_EQ(c.bytes_moved(), c.input_bytes + c.weight_bytes + c.output_bytes);
  EXPECT_TRUE(c.has_rule);
}

TEST(OpCostTest, GemmCountsTransposeAndBias) {
  OneOp t;
  t.In("a", {7, 3});  // transA: A is [K, M] = [7, 3]
  t.In("b", {5, 7}, true);
  t.In("c", {5}, true);
  Attributes attrs;
  attrs.Set("transA", int64_t{1});
  attrs.Set("transB", int64_t{1});
  OpCost c = t.Run("Gemm", {3, 5}, attrs);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 3 * 5 * 7 + 3 * 5);
  EXPECT_EQ(c.weight_bytes, (5 * 7 + 5) * 4);
}

TEST(OpCostTest, ConvUsesGroupsStridesAndDilationThroughShapes) {
  // 1x8x10x10, 16 output channels, 4 groups, 3x3 kernel, stride 2, dilation 2, pad 2:
  // out = (10 + 4 - 5) / 2 + 1 = 5.
  OneOp t;
  t.In("x", {1, 8, 10, 10});
  t.In("w", {16, 2, 3, 3}, true);
  t.In("b", {16}, true);
  Attributes attrs;
  attrs.Set("group", int64_t{4});
  OpCost c = t.Run("Conv", {1, 16, 5, 5}, attrs);
  const double out = 16 * 5 * 5;
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * out * (2 * 3 * 3) + out);
}

TEST(OpCostTest, ConvTransposeScattersEveryInput) {
  OneOp t;
  t.In("x", {1, 4, 3, 3});
  t.In("w", {4, 6, 2, 2}, true);
  OpCost c = t.Run("ConvTranspose", {1, 6, 6, 6});
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * (4 * 3 * 3) * (6 * 2 * 2));
}

TEST(OpCostTest, PoolsCountTheirWindow) {
  OneOp t;
  t.In("x", {1, 2, 8, 8});
  Attributes attrs;
  attrs.Set("kernel_shape", std::vector<int64_t>{3, 3});
  EXPECT_DOUBLE_EQ(t.Run("MaxPool", {1, 2, 4, 4}, attrs).flops, 2 * 4 * 4 * 9.0);
  OneOp g;
  g.In("x", {1, 2, 8, 8});
  EXPECT_DOUBLE_EQ(g.Run("GlobalAveragePool", {1, 2, 1, 1}).flops, 2 * 64 + 2.0);
}

TEST(OpCostTest, ElementwiseBroadcastCountsOutputElements) {
  OneOp t;
  t.In("a", {4, 1});
  t.In("b", {1, 5});
  EXPECT_DOUBLE_EQ(t.Run("Add", {4, 5}).flops, 20.0);
}

TEST(OpCostTest, NormalizationsAndSoftmax) {
  OneOp ln;
  ln.In("x", {2, 10});
  ln.In("s", {10}, true);
  ln.In("b", {10}, true);
  EXPECT_DOUBLE_EQ(ln.Run("LayerNormalization", {2, 10}).flops, 7.0 * 20);
  OneOp ln2;
  ln2.In("x", {2, 10});
  ln2.In("s", {10}, true);
  EXPECT_DOUBLE_EQ(ln2.Run("LayerNormalization", {2, 10}).flops, 6.0 * 20);
  OneOp sm;
  sm.In("x", {3, 7});
  EXPECT_DOUBLE_EQ(sm.Run("Softmax", {3, 7}).flops, 5.0 * 21);
  OneOp bn;
  bn.In("x", {1, 3, 4, 4});
  for (const char* n : {"scale", "bias", "mean", "var"}) bn.In(n, {3}, true);
  EXPECT_DOUBLE_EQ(bn.Run("BatchNormalization", {1, 3, 4, 4}).flops, 2.0 * 48);
}

TEST(OpCostTest, ActivationsFollowTheirDecomposition) {
  OneOp e;
  e.In("x", {100});
  EXPECT_DOUBLE_EQ(e.Run("Erf", {100}).flops, 100.0);
  OneOp g;
  g.In("x", {100});
  Attributes tanh;
  tanh.Set("approximate", std::string("tanh"));
  EXPECT_DOUBLE_EQ(g.Run("Gelu", {100}, tanh).flops, 800.0);
  OneOp g2;
  g2.In("x", {100});
  EXPECT_DOUBLE_EQ(g2.Run("Gelu", {100}).flops, 500.0);
}

TEST(OpCostTest, ReductionsCountInputsAndTheMeanDivide) {
  OneOp t;
  t.In("x", {4, 8});
  EXPECT_DOUBLE_EQ(t.Run("ReduceMean", {4, 1}).flops, 32.0 + 4.0);
  OneOp s;
  s.In("x", {4, 8});
  EXPECT_DOUBLE_EQ(s.Run("ReduceSum", {4, 1}).flops, 32.0);
}

TEST(OpCostTest, DataMovementIsFreeButMovesBytes) {
  for (const char* type : {"Reshape", "Transpose", "Gather", "Concat", "Slice", "Split"}) {
    OneOp t;
    t.In("x", {6, 4});
    OpCost c = t.Run(type, {24});
    EXPECT_EQ(c.flops, 0.0) << type;
    EXPECT_TRUE(c.has_rule) << type;
    EXPECT_EQ(c.input_bytes, 96) << type;
    EXPECT_EQ(c.output_bytes, 96) << type;
  }
}

TEST(OpCostTest, OnnxLstmCountsEveryStep) {
  const int64_t S = 5, B = 2, I = 3, H = 4;
  OneOp t;
  t.In("x", {S, B, I});
  t.In("w", {1, 4 * H, I}, true);
  t.In("r", {1, 4 * H, H}, true);
  t.In("b", {1, 8 * H}, true);
  OpCost c = t.Run("LSTM", {S, 1, B, H});
  EXPECT_DOUBLE_EQ(c.flops, double(S * B) * (8.0 * H * (I + H) + 8.0 * H + 9.0 * H));
  EXPECT_EQ(c.weight_bytes, (4 * H * I + 4 * H * H + 8 * H) * 4);
}

TEST(OpCostTest, EinsumMatchesTheEquivalentMatMul) {
  OneOp e;
  e.In("a", {2, 3, 4});
  e.In("b", {2, 4, 5});
  Attributes attrs;
  attrs.Set("equation", std::string("bik,bkj->bij"));
  OneOp m;
  m.In("a", {2, 3, 4});
  m.In("b", {2, 4, 5});
  const double matmul = m.Run("MatMul", {2, 3, 5}).flops;
  EXPECT_DOUBLE_EQ(matmul, 2.0 * 2 * 3 * 5 * 4);
  EXPECT_DOUBLE_EQ(e.Run("Einsum", {2, 3, 5}, attrs).flops, matmul);
}

TEST(OpCostTest, ATensorReadTwiceIsCountedOnce) {
  OneOp t;
  TensorId x = t.In("x", {10});
  t.ins.push_back(x);
  OpCost c = t.Run("Mul", {10});
  EXPECT_EQ(c.input_bytes, 40);
}

TEST(OpCostTest, UnknownOpsHaveNoRuleButKeepTheirBytes) {
  OneOp t;
  t.In("x", {10});
  OpCost c = t.Run("MyCustomOp", {10});
  EXPECT_FALSE(c.has_rule);
  EXPECT_EQ(c.flops, 0.0);
  EXPECT_EQ(c.bytes_moved(), 80);
  EXPECT_FALSE(HasFlopRule("MyCustomOp"));
  EXPECT_TRUE(HasFlopRule("MatMul"));
  EXPECT_EQ(OpTypesWithoutFlopRule(t.g), std::vector<std::string>{"MyCustomOp"});
}

TEST(OpCostTest, NonOpNodesCostNothingAndTotalsSum) {
  OneOp t;
  t.In("a", {4, 8});
  t.In("w", {8, 2}, true);
  t.Run("MatMul", {4, 2});
  NodeId w = *t.g.FindNode("w");
  OpCost c = ComputeOpCost(t.g, w);
  EXPECT_EQ(c.flops, 0.0);
  EXPECT_EQ(c.bytes_moved(), 0);
  EXPECT_DOUBLE_EQ(TotalFlops(t.g), 2.0 * 4 * 2 * 8);
}

}  // namespace
}  // namespace hx::graph
