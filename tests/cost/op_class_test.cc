#include "hexplan/cost/op_class.h"

#include <gtest/gtest.h>

#include "hexplan/graph/graph.h"

namespace hx::cost {
namespace {

using graph::DType;

TEST(OpClassTest, OnnxZooAndPipeDreamTypes) {
  EXPECT_EQ(ClassifyOpType("Conv"), OpClass::kConvolution);
  EXPECT_EQ(ClassifyOpType("ConvTranspose"), OpClass::kConvolution);
  EXPECT_EQ(ClassifyOpType("Conv2d"), OpClass::kConvolution);
  EXPECT_EQ(ClassifyOpType("MatMul"), OpClass::kGemm);
  EXPECT_EQ(ClassifyOpType("Gemm"), OpClass::kGemm);
  EXPECT_EQ(ClassifyOpType("Linear"), OpClass::kGemm);
  EXPECT_EQ(ClassifyOpType("BatchNormalization"), OpClass::kNormalization);
  EXPECT_EQ(ClassifyOpType("BatchNorm2d"), OpClass::kNormalization);
  EXPECT_EQ(ClassifyOpType("LayerNormalization"), OpClass::kNormalization);
  EXPECT_EQ(ClassifyOpType("Softmax"), OpClass::kNormalization);
  EXPECT_EQ(ClassifyOpType("ReduceMean"), OpClass::kNormalization);
  EXPECT_EQ(ClassifyOpType("Relu"), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpType("ReLU"), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpType("Add"), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpType("Gelu"), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpType("LSTM"), OpClass::kRecurrent);
  EXPECT_EQ(ClassifyOpType("GRU"), OpClass::kRecurrent);
  EXPECT_EQ(ClassifyOpType("MaxPool2d"), OpClass::kOther);
  EXPECT_EQ(ClassifyOpType("MaxPool"), OpClass::kOther);
  EXPECT_EQ(ClassifyOpType("Gather"), OpClass::kOther);
  EXPECT_EQ(ClassifyOpType("NoSuchOp"), OpClass::kOther);
  EXPECT_EQ(ClassifyOpType(""), OpClass::kOther);
}

TEST(OpClassTest, ActivationTimesActivationBatchedMatMulIsAttention) {
  graph::Graph g("attn");
  NodeId x = g.AddInput("x", DType::kF32, {1, 8, 16, 64});
  NodeId k = g.AddInput("k", DType::kF32, {1, 8, 64, 16});
  NodeId w = g.AddWeight("w", DType::kF32, {64, 64});
  TensorId xt = g.node(x).outputs[0];
  NodeId scores = g.AddOpWithOutputs("MatMul", "scores", {xt, g.node(k).outputs[0]},
                                     {{"s", DType::kF32, {1, 8, 16, 16}}});
  NodeId proj = g.AddOpWithOutputs("MatMul", "proj", {xt, g.node(w).outputs[0]},
                                   {{"p", DType::kF32, {1, 8, 16, 64}}});
  NodeId relu = g.AddOpWithOutputs("Relu", "relu", {g.node(proj).outputs[0]},
                                   {{"r", DType::kF32, {1, 8, 16, 64}}});
  EXPECT_EQ(ClassifyOp(g, scores), OpClass::kAttention);
  EXPECT_EQ(ClassifyOp(g, proj), OpClass::kGemm);
  EXPECT_EQ(ClassifyOp(g, relu), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOp(g, w), OpClass::kOther);  // not an op
  // Two rank-2 activations: a plain GEMM, not attention.
  NodeId a = g.AddInput("a", DType::kF32, {16, 64});
  NodeId b = g.AddInput("b", DType::kF32, {64, 16});
  NodeId mm = g.AddOpWithOutputs("MatMul", "mm", {g.node(a).outputs[0], g.node(b).outputs[0]},
                                 {{"m", DType::kF32, {16, 16}}});
  EXPECT_EQ(ClassifyOp(g, mm), OpClass::kGemm);
}

}  // namespace
}  // namespace hx::cost
