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
  EXPECT_EQ(ClassifyOpType("Softmax"), OpClass::kSoftmax);
  EXPECT_EQ(ClassifyOpType("LogSoftmax"), OpClass::kSoftmax);
  EXPECT_EQ(ClassifyOpType("RMSNormalization"), OpClass::kRmsNormalization);
  EXPECT_EQ(ClassifyOpType("SimplifiedLayerNormalization"), OpClass::kRmsNormalization);
  EXPECT_EQ(ClassifyOpType("RotaryEmbedding"), OpClass::kFusedElementwise);
  EXPECT_EQ(ClassifyOpType("SiluAndMul"), OpClass::kFusedElementwise);
  EXPECT_EQ(ClassifyOpType("Sigmoid"), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpType("ReduceMean"), OpClass::kNormalization);
  EXPECT_EQ(ClassifyOpType("Relu"), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpType("ReLU"), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpType("Add"), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpType("Gelu"), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpType("LSTM"), OpClass::kRecurrent);
  EXPECT_EQ(ClassifyOpType("GRU"), OpClass::kRecurrent);
  EXPECT_EQ(ClassifyOpType("MaxPool2d"), OpClass::kPooling);
  EXPECT_EQ(ClassifyOpType("MaxPool"), OpClass::kPooling);
  EXPECT_EQ(ClassifyOpType("GlobalAveragePool"), OpClass::kPooling);
  EXPECT_EQ(ClassifyOpType("AdaptiveAvgPool2d"), OpClass::kPooling);
  EXPECT_EQ(ClassifyOpType("Dropout"), OpClass::kDropout);
  EXPECT_EQ(ParentOpClass(OpClass::kPooling), OpClass::kOther);
  EXPECT_EQ(ParentOpClass(OpClass::kDropout), OpClass::kElementwise);
  EXPECT_EQ(ClassifyOpType("Gather"), OpClass::kOther);
  EXPECT_EQ(ClassifyOpType("NoSuchOp"), OpClass::kOther);
  EXPECT_EQ(ClassifyOpType(""), OpClass::kOther);
}

TEST(OpClassTest, ThreeByThreeStrideOneConvIsWinograd) {
  EXPECT_TRUE(IsWinogradConvolution(3, 3, 1, 1, 1, 1));
  EXPECT_FALSE(IsWinogradConvolution(3, 3, 2, 2, 1, 1));  // strided
  EXPECT_FALSE(IsWinogradConvolution(1, 1, 1, 1, 1, 1));
  EXPECT_FALSE(IsWinogradConvolution(3, 3, 1, 1, 2, 1));   // dilated
  EXPECT_FALSE(IsWinogradConvolution(3, 3, 1, 1, 1, 32));  // grouped
  graph::Graph g("conv");
  NodeId x = g.AddInput("x", DType::kF32, {1, 64, 56, 56});
  NodeId w3 = g.AddWeight("w3", DType::kF32, {64, 64, 3, 3});
  NodeId w1 = g.AddWeight("w1", DType::kF32, {64, 64, 1, 1});
  auto conv = [&](const char* name, NodeId w, int64_t stride) {
    graph::Attributes a;
    a.Set("strides", std::vector<int64_t>{stride, stride});
    return g.AddOpWithOutputs("Conv", name, {g.node(x).outputs[0], g.node(w).outputs[0]},
                              {{std::string(name) + "_y", DType::kF32, {1, 64, 56, 56}}}, a);
  };
  EXPECT_EQ(ClassifyOp(g, conv("c3", w3, 1)), OpClass::kWinogradConvolution);  // from the weight
  EXPECT_EQ(ClassifyOp(g, conv("c3s2", w3, 2)), OpClass::kConvolution);
  EXPECT_EQ(ClassifyOp(g, conv("c1", w1, 1)), OpClass::kConvolution);
}

TEST(OpClassTest, ConvolutionClassesByShape) {
  // (kernel h, w, stride h, w, dilation, groups, input channels per group)
  EXPECT_EQ(ConvolutionClass(3, 3, 1, 1, 1, 1, 64), OpClass::kWinogradConvolution);
  EXPECT_EQ(ConvolutionClass(3, 3, 1, 1, 1, 1, 3), OpClass::kWinogradConvolution);  // VGG's first
  EXPECT_EQ(ConvolutionClass(7, 7, 2, 2, 1, 1, 3), OpClass::kImageConvolution);     // ResNet's
  EXPECT_EQ(ConvolutionClass(11, 11, 4, 4, 1, 1, 3), OpClass::kImageConvolution);   // AlexNet's
  EXPECT_EQ(ConvolutionClass(1, 1, 1, 1, 1, 1, 5), OpClass::kConvolution);
  EXPECT_EQ(ConvolutionClass(3, 3, 1, 1, 1, 32, 4), OpClass::kGroupedConvolution);  // ResNeXt
  EXPECT_EQ(ConvolutionClass(3, 3, 2, 2, 1, 32, 8), OpClass::kGroupedConvolution);
  EXPECT_EQ(ConvolutionClass(5, 5, 1, 1, 1, 96, 1), OpClass::kConvolution);  // depthwise
  EXPECT_EQ(ParentOpClass(OpClass::kGroupedConvolution), OpClass::kConvolution);
  EXPECT_EQ(ParentOpClass(OpClass::kImageConvolution), OpClass::kConvolution);

  graph::Graph g("convs");
  NodeId x = g.AddInput("x", DType::kF32, {1, 3, 224, 224});
  NodeId y = g.AddInput("y", DType::kF32, {1, 128, 56, 56});
  NodeId w_rgb = g.AddWeight("w_rgb", DType::kF32, {64, 3, 7, 7});
  NodeId w_grp = g.AddWeight("w_grp", DType::kF32, {128, 4, 3, 3});
  NodeId w_dw = g.AddWeight("w_dw", DType::kF32, {128, 1, 3, 3});
  auto conv = [&](const char* name, NodeId in, NodeId w, int64_t stride, int64_t group) {
    graph::Attributes a;
    a.Set("strides", std::vector<int64_t>{stride, stride});
    a.Set("group", group);
    return g.AddOpWithOutputs("Conv", name, {g.node(in).outputs[0], g.node(w).outputs[0]},
                              {{std::string(name) + "_y", DType::kF32, {1, 64, 56, 56}}}, a);
  };
  EXPECT_EQ(ClassifyOp(g, conv("rgb", x, w_rgb, 2, 1)), OpClass::kImageConvolution);
  EXPECT_EQ(ClassifyOp(g, conv("grp", y, w_grp, 1, 32)), OpClass::kGroupedConvolution);
  EXPECT_EQ(ClassifyOp(g, conv("dw", y, w_dw, 1, 128)), OpClass::kConvolution);
}

TEST(OpClassTest, LayerNormOverLongRowsReadsItsInputThreeTimes) {
  EXPECT_EQ(LayerNormExtraBytes(8192, 1000.0), 0.0);
  EXPECT_EQ(LayerNormExtraBytes(16384, 1000.0), 2000.0);
  graph::Graph g("ln");
  NodeId short_x = g.AddInput("short", DType::kF16, {4, 8192});
  NodeId long_x = g.AddInput("long", DType::kF16, {2, 16384});
  auto op = [&](const char* type, const char* name, NodeId x) {
    return g.AddOpWithOutputs(
        type, name, {g.node(x).outputs[0]},
        {{std::string(name) + "_y", DType::kF16, g.tensor(g.node(x).outputs[0]).shape}});
  };
  EXPECT_EQ(LayerNormExtraBytes(g, op("LayerNormalization", "a", short_x)), 0.0);
  EXPECT_EQ(LayerNormExtraBytes(g, op("LayerNormalization", "b", long_x)), 2.0 * 2 * 16384 * 2);
  EXPECT_EQ(LayerNormExtraBytes(g, op("Softmax", "c", long_x)), 0.0);  // softmax keeps its rate
  EXPECT_EQ(LayerNormExtraBytes(g, long_x), 0.0);                      // not an op
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
