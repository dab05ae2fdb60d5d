// The oneDNN kernels (dnnl_ops.h) against the naive reference: Conv geometries (groups,
// depthwise, strides, asymmetric pads, dilations, auto_pad, bias), pooling, a chain that keeps
// activations channel-blocked between ops, weights read through an Identity (packed once) and
// weights that change between runs (never cached).
#include "hexplan/exec/dnnl_ops.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <thread>

#include "exec/exec_test_util.h"

namespace hx::exec {
namespace {

using graph::DType;
using graph::Shape;
using testing::CpuCluster;
using testing::MakePlan;
using testing::PlanSpec;

struct Built {
  graph::Graph g{"dnnl"};
  TensorId Add(const std::string& type, const std::string& name, std::vector<TensorId> in,
               Shape out, graph::Attributes attrs = {}) {
    return g.node(g.AddOpWithOutputs(type, name, std::move(in), {{name, DType::kF32, out}}, attrs))
        .outputs[0];
  }
  TensorId Weight(const std::string& name, Shape shape) {
    return g.node(g.AddWeight(name, DType::kF32, shape)).outputs[0];
  }
};

graph::Attributes Attrs(std::initializer_list<std::pair<std::string, graph::AttributeValue>> kv) {
  graph::Attributes a;
  for (const auto& [k, v] : kv) a.Set(k, v);
  return a;
}

// Runs `g` twice through the executor on `devices` core groups (CpuBackend: oneDNN; `spec`
// places the ops) and checks both runs against the naive reference and each other; returns the
// number of oneDNN nodes.
int ExpectMatchesReference(const graph::Graph& g, int64_t* blocked = nullptr, int devices = 1,
                           const PlanSpec& spec = PlanSpec{}, int* xnnpack = nullptr) {
  auto weights = MaterializeWeights(g, 3);
  HX_CHECK(weights.ok());
  auto inputs = RandomInputs(g, 4);
  hw::Cluster cluster = CpuCluster(devices);
  plan::Plan plan = MakePlan(g, cluster, spec);
  auto backend = CpuBackend::Create(cluster);
  HX_CHECK(backend.ok());
  auto executor = Executor::Create(plan, g, cluster, backend->get(), &*weights, {});
  EXPECT_TRUE(executor.ok()) << executor.status().ToString();
  if (!executor.ok()) return 0;
  auto ref = RunReference(g, *weights, inputs);
  EXPECT_TRUE(ref.ok()) << ref.status().ToString();
  for (int run = 0; run < 2; ++run) {
    auto r = (*executor)->Run(inputs);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || !ref.ok()) return 0;
    for (size_t i = 0; i < ref->size(); ++i) {
      EXPECT_LT(MaxRelativeError(r->outputs[i], (*ref)[i]), 1e-4) << "run " << run;
      double sum = 0.0;  // the check can fail: the reference is not all zero
      for (int64_t k = 0; k < (*ref)[i].NumElements(); ++k)
        sum += std::abs((*ref)[i].data<float>()[k]);
      EXPECT_GT(sum, 0.0);
    }
  }
  DnnlOps probe;
  probe.Prepare(g);
  if (blocked != nullptr) *blocked = probe.num_blocked_tensors();
  if (xnnpack != nullptr) *xnnpack = probe.num_xnnpack_nodes();
  return probe.num_nodes();
}

struct ConvCase {
  const char* name;
  int64_t c, m, group, k, stride, dilation;
  std::vector<int64_t> pads;  // empty: auto_pad SAME_UPPER
  bool bias;
};

class DnnlConvTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(DnnlConvTest, MatchesNaiveReference) {
  const ConvCase& p = GetParam();
  const int64_t h = 11, w = 9;
  Built b;
  TensorId x = b.g.node(b.g.AddInput("x", DType::kF32, {2, p.c, h, w})).outputs[0];
  std::vector<TensorId> in{x, b.Weight("conv.weight", {p.m, p.c / p.group, p.k, p.k})};
  if (p.bias) in.push_back(b.Weight("conv.bias", {p.m}));
  graph::Attributes a = Attrs({{"group", p.group},
                               {"strides", std::vector<int64_t>{p.stride, p.stride}},
                               {"dilations", std::vector<int64_t>{p.dilation, p.dilation}}});
  const int64_t extent = (p.k - 1) * p.dilation + 1;
  int64_t oh = (h + p.stride - 1) / p.stride, ow = (w + p.stride - 1) / p.stride;
  if (p.pads.empty()) {
    a.Set("auto_pad", std::string("SAME_UPPER"));
  } else {
    a.Set("pads", p.pads);
    oh = (h + p.pads[0] + p.pads[2] - extent) / p.stride + 1;
    ow = (w + p.pads[1] + p.pads[3] - extent) / p.stride + 1;
  }
  b.g.AddOutput(b.Add("Conv", "conv", in, {2, p.m, oh, ow}, a));
  EXPECT_EQ(ExpectMatchesReference(b.g), 1);
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, DnnlConvTest,
    ::testing::Values(ConvCase{"plain3x3", 16, 32, 1, 3, 1, 1, {1, 1, 1, 1}, true},
                      ConvCase{"pointwise", 16, 24, 1, 1, 1, 1, {0, 0, 0, 0}, false},
                      ConvCase{"depthwise_stride2", 16, 16, 16, 3, 2, 1, {1, 1, 1, 1}, true},
                      ConvCase{"grouped_asym_pads", 12, 8, 4, 3, 1, 1, {0, 1, 2, 0}, true},
                      ConvCase{"dilated", 8, 16, 1, 3, 1, 2, {2, 2, 2, 2}, false},
                      ConvCase{"same_upper_stride2", 3, 16, 1, 3, 2, 1, {}, true}),
    [](const ::testing::TestParamInfo<ConvCase>& info) { return std::string(info.param.name); });

// Conv -> Relu -> depthwise Conv -> Clip -> Add (residual) -> MaxPool -> AveragePool ->
// GlobalAveragePool: the activations between them stay channel-blocked where the CPU has a
// blocked layout, and the result still matches the reference.
TEST(DnnlOpsTest, BlockedChainMatchesNaiveReference) {
  Built b;
  TensorId x = b.g.node(b.g.AddInput("x", DType::kF32, {1, 16, 12, 12})).outputs[0];
  auto pads1 = Attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  TensorId c1 =
      b.Add("Conv", "c1", {x, b.Weight("c1.weight", {32, 16, 3, 3})}, {1, 32, 12, 12}, pads1);
  TensorId r1 = b.Add("Relu", "r1", {c1}, {1, 32, 12, 12});
  auto dw = pads1;
  dw.Set("group", int64_t{32});
  TensorId c2 =
      b.Add("Conv", "c2", {r1, b.Weight("c2.weight", {32, 1, 3, 3})}, {1, 32, 12, 12}, dw);
  TensorId k2 = b.Add("Clip", "k2", {c2}, {1, 32, 12, 12}, Attrs({{"min", 0.0}, {"max", 0.05}}));
  TensorId s = b.Add("Add", "s", {k2, r1}, {1, 32, 12, 12});
  TensorId mp = b.Add("MaxPool", "mp", {s}, {1, 32, 6, 6},
                      Attrs({{"kernel_shape", std::vector<int64_t>{3, 3}},
                             {"strides", std::vector<int64_t>{2, 2}},
                             {"pads", std::vector<int64_t>{1, 1, 0, 0}}}));
  TensorId ap = b.Add("AveragePool", "ap", {mp}, {1, 32, 3, 3},
                      Attrs({{"kernel_shape", std::vector<int64_t>{2, 2}},
                             {"strides", std::vector<int64_t>{2, 2}}}));
  b.g.AddOutput(b.Add("GlobalAveragePool", "gap", {ap}, {1, 32, 1, 1}));
  int64_t blocked = 0;
  EXPECT_EQ(ExpectMatchesReference(b.g, &blocked), 8);
  // c1, r1, c2, k2, s, mp and ap stay blocked (gap is a graph output: NCHW) on a CPU where
  // oneDNN's convolutions prefer a blocked layout.
  if (blocked > 0) {
    EXPECT_EQ(blocked, 7);
  }
}

// PyTorch exports read weights through Identity ops: they are still constants, packed at the
// first run; the second run (which reads the packed copy) must match too.
TEST(DnnlOpsTest, WeightsThroughIdentityArePackedOnceAndStillMatch) {
  Built b;
  TensorId x = b.g.node(b.g.AddInput("x", DType::kF32, {1, 8, 7, 7})).outputs[0];
  TensorId w = b.Add("Identity", "w", {b.Weight("conv.weight", {16, 8, 3, 3})}, {16, 8, 3, 3});
  b.g.AddOutput(b.Add("Conv", "conv", {x, w}, {1, 16, 5, 5}));
  EXPECT_EQ(ExpectMatchesReference(b.g), 1);
}

// Weights that are a graph input change between runs: each run must use its own values.
TEST(DnnlOpsTest, WeightsFromAGraphInputAreNotCached) {
  Built b;
  TensorId x = b.g.node(b.g.AddInput("x", DType::kF32, {1, 8, 6, 6})).outputs[0];
  TensorId w = b.g.node(b.g.AddInput("w", DType::kF32, {16, 8, 3, 3})).outputs[0];
  b.g.AddOutput(b.Add("Conv", "conv", {x, w}, {1, 16, 4, 4}));
  hw::Cluster cluster = CpuCluster(1);
  plan::Plan plan = MakePlan(b.g, cluster, PlanSpec{});
  auto backend = CpuBackend::Create(cluster);
  ASSERT_TRUE(backend.ok());
  std::vector<HostTensor> weights(b.g.num_nodes());
  auto executor = Executor::Create(plan, b.g, cluster, backend->get(), &weights, {});
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  for (uint64_t seed : {1, 2}) {
    auto inputs = RandomInputs(b.g, seed);
    auto r = (*executor)->Run(inputs);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    auto ref = RunReference(b.g, weights, inputs);
    ASSERT_TRUE(ref.ok()) << ref.status().ToString();
    EXPECT_LT(MaxRelativeError(r->outputs[0], (*ref)[0]), 1e-4) << "seed " << seed;
  }
}

}  // namespace
}  // namespace hx::exec

namespace hx::exec {
namespace {

// Add/Mul/Sub/Div with one input broadcast (numpy rules), the broadcast one first for Mul (oneDNN
// broadcasts only its second source: the sources swap).
TEST(DnnlOpsTest, BroadcastBinaryOpsMatchNaiveReference) {
  Built b;
  TensorId x = b.g.node(b.g.AddInput("x", DType::kF32, {2, 3, 4})).outputs[0];
  TensorId d = b.g.node(b.g.AddInput("d", DType::kF32, {2, 3, 4})).outputs[0];
  TensorId add = b.Add("Add", "add", {x, b.Weight("bias", {4})}, {2, 3, 4});
  TensorId mul = b.Add("Mul", "mul", {b.Weight("scale", {3, 1}), add}, {2, 3, 4});
  TensorId sub = b.Add("Sub", "sub", {mul, b.Weight("shift", {1, 1, 4})}, {2, 3, 4});
  TensorId div = b.Add("Div", "div", {sub, b.Add("Add", "den", {d, d}, {2, 3, 4})}, {2, 3, 4});
  b.g.AddOutput(div);
  int xnnpack = 0;  // only `div` reads two ops' outputs; the others read weights or inputs
  EXPECT_EQ(ExpectMatchesReference(b.g, nullptr, 1, PlanSpec{}, &xnnpack), 5);
  EXPECT_EQ(xnnpack, 1);
}

// The small elementwise ops XNNPACK takes (xnn_eltwise.h): Add, Sub, Mul, Div with either input
// broadcast (a row, a column, one element) and Sigmoid, all reading ops' outputs (buffers with
// slack past their ends; here oneDNN's Sigmoids of the inputs, never zero), against the naive
// reference.
TEST(DnnlOpsTest, SmallElementwiseOpsOnXnnpackMatchNaiveReference) {
  Built b;
  auto input = [&](const std::string& name, Shape shape) {
    TensorId in = b.g.node(b.g.AddInput(name, DType::kF32, shape)).outputs[0];
    return b.Add("Sigmoid", name + ".s", {in}, shape);
  };
  TensorId x = input("x", {2, 3, 4}), row = input("row", {4}), col = input("col", {3, 1});
  TensorId one = input("one", {1}), den = input("den", {2, 3, 4});
  TensorId add = b.Add("Add", "add", {x, row}, {2, 3, 4});
  TensorId mul = b.Add("Mul", "mul", {col, add}, {2, 3, 4});
  TensorId sub = b.Add("Sub", "sub", {one, mul}, {2, 3, 4});
  TensorId div = b.Add("Div", "div", {sub, b.Add("Add", "den1", {den, one}, {2, 3, 4})}, {2, 3, 4});
  b.g.AddOutput(b.Add("Sigmoid", "sig", {div}, {2, 3, 4}));
  int xnnpack = 0;
  EXPECT_EQ(ExpectMatchesReference(b.g, nullptr, 1, PlanSpec{}, &xnnpack), 11);
  EXPECT_EQ(xnnpack, 6);  // the five binary ops and the last Sigmoid
}

// One node run on two threads at once (the profiler times a node side by side): each call gets
// its own inputs' product, never the other thread's (an XNNPACK operator holds the pointers of its
// last setup; a call that finds it busy makes its own).
TEST(DnnlOpsTest, OneXnnpackNodeOnTwoThreadsAtOnce) {
  Built b;
  auto sigmoid = [&](const std::string& name) {
    TensorId in = b.g.node(b.g.AddInput(name, DType::kF32, {8, 64})).outputs[0];
    return b.Add("Sigmoid", name + ".s", {in}, {8, 64});
  };
  TensorId x = sigmoid("x"), y = sigmoid("y");
  b.g.AddOutput(b.Add("Mul", "mul", {x, y}, {8, 64}));
  DnnlOps ops;
  ops.Prepare(b.g);
  ASSERT_EQ(ops.num_xnnpack_nodes(), 1);
  const graph::Node& mul = b.g.node(b.g.tensor(b.g.node(b.g.Outputs()[0]).inputs[0]).producer);
  const graph::Shape& shape = b.g.tensor(x).shape;
  std::atomic<int> wrong{0}, failed{0};
  auto work = [&](float scale) {
    // 64 floats of slack past each buffer, as the CPU backend allocates them.
    std::vector<float> a(512 + 64), c(512 + 64), out(512 + 64);
    for (int k = 0; k < 512; ++k) {
      a[k] = scale * static_cast<float>(k % 7 + 1);
      c[k] = static_cast<float>(k % 5 + 1);
    }
    const std::vector<TensorRef> in = {{DType::kF32, &shape, a.data()},
                                       {DType::kF32, &shape, c.data()}};
    const std::vector<TensorRef> o = {{DType::kF32, &shape, out.data()}};
    for (int r = 0; r < 2000; ++r) {
      std::fill(out.begin(), out.end(), 0.0f);
      auto ran = ops.Run(mul, in, o);
      if (!ran.ok() || !*ran) ++failed;
      for (int k = 0; k < 512; ++k) wrong += out[k] != a[k] * c[k] ? 1 : 0;
    }
  };
  std::thread other(work, 3.0f);
  work(1.0f);
  other.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace hx::exec

namespace hx::exec {
namespace {

// A transformer block's ops on oneDNN: LayerNormalization over the last axis and over the axes
// from 1 on (Scale and B flattened), MatMul against a constant 2-D weight (rows folded, weights
// packed once), a batched MatMul whose second input broadcasts its batch dim, Softmax.
TEST(DnnlOpsTest, TransformerOpsMatchNaiveReference) {
  Built b;
  TensorId x = b.g.node(b.g.AddInput("x", DType::kF32, {2, 8, 16})).outputs[0];
  TensorId q = b.g.node(b.g.AddInput("q", DType::kF32, {2, 3, 8, 4})).outputs[0];
  TensorId k = b.g.node(b.g.AddInput("k", DType::kF32, {1, 3, 4, 8})).outputs[0];
  TensorId ln =
      b.Add("LayerNormalization", "ln", {x, b.Weight("ln_scale", {16}), b.Weight("ln_bias", {16})},
            {2, 8, 16}, Attrs({{"epsilon", 1e-5}}));
  TensorId mm = b.Add("MatMul", "mm", {ln, b.Weight("w", {16, 24})}, {2, 8, 24});
  b.g.AddOutput(b.Add("Softmax", "sm", {mm}, {2, 8, 24}, Attrs({{"axis", int64_t{-1}}})));
  TensorId scores = b.Add("MatMul", "qk", {q, k}, {2, 3, 8, 8});
  b.g.AddOutput(b.Add("LayerNormalization", "ln_axis1", {scores, b.Weight("ln1_scale", {3, 8, 8})},
                      {2, 3, 8, 8}, Attrs({{"axis", int64_t{1}}})));
  EXPECT_EQ(ExpectMatchesReference(b.g), 5);
}

// An unrolled LSTM cell's ops on oneDNN: Gemm against constant weights (transposed and not, with
// and without a bias) read by two Gemms each (one packed copy, shared), Sigmoid and Tanh. A Gemm
// of one row stays a GEMV (not a oneDNN node); one whose B is a graph input is not oneDNN's either.
TEST(DnnlOpsTest, GemmSigmoidTanhMatchNaiveReference) {
  Built b;
  TensorId x = b.g.node(b.g.AddInput("x", DType::kF32, {8, 16})).outputs[0];
  TensorId y = b.g.node(b.g.AddInput("y", DType::kF32, {8, 16})).outputs[0];
  TensorId wt = b.Weight("w_t", {24, 16}), w = b.Weight("w", {16, 24}), bias = b.Weight("b", {24});
  const graph::Attributes trans = Attrs({{"transB", int64_t{1}}});
  TensorId g1 = b.Add("Gemm", "g1", {x, wt, bias}, {8, 24}, trans);
  TensorId g2 = b.Add("Gemm", "g2", {y, wt, bias}, {8, 24}, trans);
  TensorId g3 = b.Add("Gemm", "g3", {x, w}, {8, 24});
  TensorId g4 = b.Add("Gemm", "g4", {y, w, bias}, {8, 24});
  b.g.AddOutput(b.Add("Sigmoid", "s", {b.Add("Add", "a", {g1, g2}, {8, 24})}, {8, 24}));
  b.g.AddOutput(b.Add("Tanh", "t", {b.Add("Sub", "d", {g3, g4}, {8, 24})}, {8, 24}));
  TensorId row = b.g.node(b.g.AddInput("row", DType::kF32, {1, 16})).outputs[0];
  b.g.AddOutput(b.Add("Gemm", "gemv", {row, wt, bias}, {1, 24}, trans));
  TensorId bx = b.g.node(b.g.AddInput("bx", DType::kF32, {24, 16})).outputs[0];
  b.g.AddOutput(b.Add("Gemm", "g_input_b", {x, bx}, {8, 24}, trans));
  int xnnpack = 0;
  EXPECT_EQ(ExpectMatchesReference(b.g, nullptr, 1, PlanSpec{}, &xnnpack),
            8);           // 4 Gemms, Add, Sub, Sigmoid, Tanh
  EXPECT_EQ(xnnpack, 3);  // Add, Sub, Sigmoid (Tanh stays on oneDNN)
}

// The vectorised fp32 Erf (four lanes and a scalar tail) against std::erf, with its clamp's
// edges: beyond +-4, infinities and NaN.
TEST(DnnlOpsTest, Fp32ErfMatchesStdErf) {
  Built b;
  TensorId x = b.g.node(b.g.AddInput("x", DType::kF32, {1031})).outputs[0];
  b.g.AddOutput(b.Add("Erf", "erf", {x}, {1031}));
  HostTensor in(DType::kF32, {1031});
  float* v = in.data<float>();
  for (int i = 0; i < 1031; ++i) v[i] = -6.0f + 12.0f * static_cast<float>(i) / 1030.0f;
  v[3] = std::numeric_limits<float>::infinity();
  v[4] = -std::numeric_limits<float>::infinity();
  v[1030] = std::numeric_limits<float>::quiet_NaN();
  auto out = RunReference(b.g, {}, {{"x", in}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const float* y = (*out)[0].data<float>();
  EXPECT_EQ(y[3], 1.0f);
  EXPECT_EQ(y[4], -1.0f);
  EXPECT_TRUE(std::isnan(y[1030]));
  for (int i = 5; i < 1030; ++i)
    EXPECT_NEAR(y[i], std::erf(static_cast<double>(v[i])), 1e-6) << "x = " << v[i];
}

}  // namespace
}  // namespace hx::exec

namespace hx::exec {
namespace {

// A Conv applies the Relu/Clip that alone reads its output (a oneDNN post-op; the activation then
// runs in place and does nothing), but not one that shares the output with another reader; the
// Flatten and Unsqueeze views take their input's buffer. Both runs (the first learns Clip's bounds,
// the second runs fused) match the reference.
TEST(DnnlOpsTest, ConvActivationFusionAndViewsMatchNaiveReference) {
  Built b;
  TensorId x = b.g.node(b.g.AddInput("x", DType::kF32, {1, 8, 6, 6})).outputs[0];
  auto pads1 = Attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  TensorId c1 =
      b.Add("Conv", "c1", {x, b.Weight("c1.weight", {16, 8, 3, 3})}, {1, 16, 6, 6}, pads1);
  TensorId r1 = b.Add("Relu", "r1", {c1}, {1, 16, 6, 6});
  TensorId c2 = b.Add("Conv", "c2", {r1, b.Weight("c2.weight", {16, 16, 1, 1})}, {1, 16, 6, 6});
  TensorId k2 = b.Add("Clip", "k2", {c2}, {1, 16, 6, 6}, Attrs({{"min", 0.0}, {"max", 0.1}}));
  TensorId c3 = b.Add("Conv", "c3", {k2, b.Weight("c3.weight", {16, 16, 1, 1})}, {1, 16, 6, 6});
  b.g.AddOutput(c3);  // a second reader of c3: its Relu is not fused
  TensorId r3 = b.Add("Relu", "r3", {c3}, {1, 16, 6, 6});
  TensorId flat = b.Add("Flatten", "flat", {r3}, {1, 576});
  b.g.AddOutput(b.Add("Unsqueeze", "unsqueeze", {flat}, {1, 1, 576},
                      Attrs({{"axes", std::vector<int64_t>{0}}})));
  DnnlOps probe;
  probe.Prepare(b.g);
  auto node = [&](const char* name) -> const graph::Node& { return b.g.node(*b.g.FindNode(name)); };
  EXPECT_TRUE(probe.RunsInPlace(node("r1")));
  EXPECT_TRUE(probe.RunsInPlace(node("k2")));
  EXPECT_FALSE(probe.RunsInPlace(node("r3")));
  EXPECT_EQ(ExpectMatchesReference(b.g), 6);
}

// A team of two runs an LSTM of batch 4 as two parts of batch 2, one per thread (lstm.cc), with
// initial states: every run (alone and split, as the team choice alternates) matches the
// reference in Y, Y_h and Y_c.
TEST(DnnlOpsTest, LstmBatchSplitAcrossTheTeamMatchesNaiveReference) {
  constexpr int64_t S = 5, B = 4, I = 6, H = 8;
  Built b;
  auto input = [&](const char* name, Shape s) {
    return b.g.node(b.g.AddInput(name, DType::kF32, std::move(s))).outputs[0];
  };
  TensorId x = input("x", {S, B, I}), h0 = input("h0", {1, B, H}), c0 = input("c0", {1, B, H});
  const NodeId lstm =
      b.g.AddOpWithOutputs("LSTM", "lstm",
                           {x, b.Weight("w", {1, 4 * H, I}), b.Weight("r", {1, 4 * H, H}),
                            b.Weight("b", {1, 8 * H}), TensorId(), h0, c0},
                           {{"y", DType::kF32, {S, 1, B, H}},
                            {"yh", DType::kF32, {1, B, H}},
                            {"yc", DType::kF32, {1, B, H}}},
                           Attrs({{"hidden_size", H}}));
  for (TensorId t : b.g.node(lstm).outputs) b.g.AddOutput(t);
  auto weights = MaterializeWeights(b.g, 5);
  ASSERT_TRUE(weights.ok());
  auto inputs = RandomInputs(b.g, 6);
  auto ref = RunReference(b.g, *weights, inputs);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  const graph::Node& op = b.g.node(lstm);
  std::vector<TensorRef> in;
  for (TensorId t : op.inputs) {
    if (!t.valid()) {
      in.push_back(TensorRef{});
      continue;
    }
    const graph::Tensor& tensor = b.g.tensor(t);
    const graph::Node& producer = b.g.node(tensor.producer);
    HostTensor& h = producer.kind == graph::NodeKind::kWeight ? (*weights)[tensor.producer.value()]
                                                              : inputs.at(tensor.name);
    in.push_back(TensorRef{DType::kF32, &tensor.shape, h.bytes.data()});
  }
  std::vector<HostTensor> got;
  std::vector<TensorRef> out;
  for (TensorId t : op.outputs) got.emplace_back(DType::kF32, b.g.tensor(t).shape);
  for (size_t i = 0; i < got.size(); ++i)
    out.push_back(TensorRef{DType::kF32, &b.g.tensor(op.outputs[i]).shape, got[i].bytes.data()});
  DnnlOps ops;
  ops.Prepare(b.g);
  const DnnlOps::ScopedTeamSize team(2);
  for (int run = 0; run < 4; ++run) {
    auto ran = ops.Run(op, in, out);
    ASSERT_TRUE(ran.ok()) << ran.status().ToString();
    ASSERT_TRUE(*ran);
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_LT(MaxRelativeError(got[i], (*ref)[i]), 1e-4) << "run " << run << " output " << i;
  }
}

}  // namespace
}  // namespace hx::exec

namespace hx::exec {
namespace {

// x -> Conv -> Clip (the skip tensor s) -> 1x1 Conv -> Clip -> depthwise Conv -> Clip -> 1x1 Conv
// (c), as in mobilenet_v2's inverted residual blocks; the residual Add is the caller's.
struct ResidualBlock {
  Built b;
  TensorId x, s, c;
  explicit ResidualBlock(int64_t ch = 16) {
    const Shape shape{1, ch, 8, 8};
    x = b.g.node(b.g.AddInput("x", DType::kF32, {1, 8, 8, 8})).outputs[0];
    auto pads1 = Attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    auto clip = Attrs({{"min", 0.0}, {"max", 6.0}});
    TensorId c0 = b.Add("Conv", "c0", {x, b.Weight("c0.weight", {ch, 8, 3, 3})}, shape, pads1);
    s = b.Add("Clip", "s", {c0}, shape, clip);
    TensorId c1 =
        b.Add("Conv", "c1", {s, b.Weight("c1.weight", {2 * ch, ch, 1, 1})}, {1, 2 * ch, 8, 8});
    TensorId k1 = b.Add("Clip", "k1", {c1}, {1, 2 * ch, 8, 8}, clip);
    auto dw = pads1;
    dw.Set("group", 2 * ch);
    TensorId c2 =
        b.Add("Conv", "c2", {k1, b.Weight("c2.weight", {2 * ch, 1, 3, 3})}, {1, 2 * ch, 8, 8}, dw);
    TensorId k2 = b.Add("Clip", "k2", {c2}, {1, 2 * ch, 8, 8}, clip);
    c = b.Add("Conv", "c", {k2, b.Weight("c.weight", {ch, 2 * ch, 1, 1}), b.Weight("c.bias", {ch})},
              shape);
  }
  // A graph output through a GlobalAveragePool (a graph output itself stays NCHW; pooled, `t`
  // keeps the blocked layout, where the Conv can add in it).
  void Output(TensorId t) {
    const std::string name = "pooled_" + b.g.tensor(t).name;
    b.g.AddOutput(b.Add("GlobalAveragePool", name, {t}, {1, b.g.tensor(t).shape[1], 1, 1}));
  }
  const graph::Node& node(const char* name) const {
    const std::optional<NodeId> id = b.g.FindNode(name);
    HX_CHECK_MSG(id.has_value(), name);
    return b.g.node(*id);
  }
};

// The residual Add (either input order) is applied by its Conv as it writes: the executor gives
// the Conv the skip tensor's buffer, whose last reader the Add is, and the Conv adds into it (a
// sum post-op); the Add runs in place on it and does nothing. Two blocks in a row, both runs
// match the reference.
TEST(DnnlOpsTest, ConvAddFusionMatchesNaiveReference) {
  ResidualBlock r;
  Built& b = r.b;
  TensorId y = b.Add("Add", "add", {r.s, r.c}, {1, 16, 8, 8});
  TensorId d = b.Add("Conv", "d", {y, b.Weight("d.weight", {16, 16, 1, 1})}, {1, 16, 8, 8});
  r.Output(b.Add("Add", "add2", {d, y}, {1, 16, 8, 8}));
  DnnlOps probe;
  probe.Prepare(b.g);
  EXPECT_TRUE(probe.RunsInPlace(r.node("add")));
  EXPECT_EQ(probe.InPlaceInput(r.node("add")), 1u);
  EXPECT_EQ(probe.FusedInput(r.node("c")), r.s);
  EXPECT_TRUE(probe.RunsInPlace(r.node("add2")));
  EXPECT_EQ(probe.InPlaceInput(r.node("add2")), 0u);
  EXPECT_EQ(probe.FusedInput(r.node("d")), y);
  EXPECT_FALSE(probe.FusedInput(r.node("c1")).valid());
  EXPECT_EQ(ExpectMatchesReference(b.g), 11);
  // The Conv on one core group and its Add on another: the executor passes the Conv nothing
  // to add, and the Add adds.
  size_t add_index = 0, k = 0;
  const std::vector<NodeId> order = *graph::TopologicalOrder(b.g);
  for (NodeId id : order)
    if (b.g.node(id).is_op()) {
      if (b.g.node(id).name == "add") add_index = k;
      ++k;
    }
  PlanSpec spec;
  spec.device_of = [add_index](size_t op) { return op == add_index ? 1 : 0; };
  EXPECT_EQ(ExpectMatchesReference(b.g, nullptr, 2, spec), 11);
}

// The skip tensor is read again after the Add (by a Sub, a Conv and a graph output's pooling):
// the executor must not give its buffer to the Conv, so s, add - s (= c) and the rest still
// match the reference.
TEST(DnnlOpsTest, ConvAddFusionLeavesTheSkipTensorIntact) {
  ResidualBlock r;
  Built& b = r.b;
  TensorId y = b.Add("Add", "add", {r.c, r.s}, {1, 16, 8, 8});
  r.Output(b.Add("Sub", "sub", {y, r.s}, {1, 16, 8, 8}));
  r.Output(b.Add("Conv", "after", {r.s, b.Weight("after.weight", {16, 16, 1, 1})}, {1, 16, 8, 8}));
  r.Output(r.s);
  DnnlOps probe;
  probe.Prepare(b.g);
  EXPECT_EQ(probe.FusedInput(r.node("c")), r.s);
  EXPECT_EQ(probe.InPlaceInput(r.node("add")), 0u);
  EXPECT_EQ(ExpectMatchesReference(b.g), 13);
}

// Not fused: a Conv output that another op (or the graph's output) reads too, and an Add of two
// Convs' outputs neither of which comes before the other (x -> c0 and x -> e): the other input
// would not be written when the Conv runs.
TEST(DnnlOpsTest, ConvAddNotFusedWhenTheConvOutputHasOtherReaders) {
  ResidualBlock r;
  Built& b = r.b;
  TensorId y = b.Add("Add", "add", {r.s, r.c}, {1, 16, 8, 8});
  r.Output(y);
  r.Output(b.Add("Relu", "other_reader", {r.c}, {1, 16, 8, 8}));
  TensorId e = b.Add("Conv", "e", {r.x, b.Weight("e.weight", {16, 8, 1, 1})}, {1, 16, 8, 8});
  TensorId f = b.Add("Conv", "f", {r.x, b.Weight("f.weight", {16, 8, 1, 1})}, {1, 16, 8, 8});
  r.Output(b.Add("Add", "parallel", {e, f}, {1, 16, 8, 8}));
  DnnlOps probe;
  probe.Prepare(b.g);
  for (const char* name : {"c", "e", "f"}) EXPECT_FALSE(probe.FusedInput(r.node(name)).valid());
  EXPECT_FALSE(probe.RunsInPlace(r.node("add")));
  EXPECT_FALSE(probe.RunsInPlace(r.node("parallel")));
  EXPECT_EQ(ExpectMatchesReference(b.g), 15);
}

// The fused Add's paths, on DnnlOps directly: a Conv given the skip tensor's buffer as its
// output (the executor's FusedInput hand-over) adds into it, and the Add, whose inputs then share
// that buffer, does nothing in place or copies it; a Conv run as usual (the skip tensor still read
// later, another device) leaves the Add to add, in place on the Conv's buffer too. Each against
// the unfused sum.
TEST(DnnlOpsTest, FusedAddAddsExactlyOnce) {
  ResidualBlock r;
  Built& b = r.b;
  r.Output(b.Add("Add", "add", {r.s, r.c}, {1, 16, 8, 8}));
  auto weights = MaterializeWeights(b.g, 3);
  HX_CHECK(weights.ok());
  DnnlOps ops;
  ops.Prepare(b.g);
  const graph::Node& conv = r.node("c");
  const graph::Node& add = r.node("add");
  ASSERT_EQ(ops.FusedInput(conv), r.s);
  ASSERT_EQ(ops.InPlaceInput(add), 1u);
  const Shape& in_shape = b.g.tensor(conv.inputs[0]).shape;
  const Shape& shape = b.g.tensor(r.c).shape;
  const auto n = static_cast<size_t>(graph::NumElements(shape));
  std::vector<float> x(static_cast<size_t>(graph::NumElements(in_shape))), skip(n), c(n), y(n);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 11) * 0.1f - 0.5f;
  for (size_t i = 0; i < n; ++i) skip[i] = static_cast<float>(i % 7) - 3.0f;
  auto ref = [](const Shape& sh, void* p) { return TensorRef{DType::kF32, &sh, p}; };
  auto weight = [&](size_t k) {
    const TensorId t = conv.inputs[k];
    return ref(b.g.tensor(t).shape,
               const_cast<uint8_t*>((*weights)[b.g.tensor(t).producer.value()].bytes.data()));
  };
  const std::vector<TensorRef> conv_in{ref(in_shape, x.data()), weight(1), weight(2)};
  std::vector<float> plain(n);
  ASSERT_TRUE(*ops.Run(conv, conv_in, {ref(shape, plain.data())}));
  for (int mode = 0; mode < 4; ++mode) {
    const bool fused = mode < 2, in_place = mode % 2 == 0;
    std::vector<TensorRef> in = conv_in;
    void* skip_buffer = skip.data();
    if (fused) {
      c = skip;  // the hand-over: the Conv's output is the skip tensor's buffer
      in.push_back(ref(shape, c.data()));
      skip_buffer = c.data();
    }
    ASSERT_TRUE(*ops.Run(conv, in, {ref(shape, c.data())}));
    void* out = in_place ? c.data() : y.data();
    ASSERT_TRUE(*ops.Run(add, {ref(shape, skip_buffer), ref(shape, c.data())}, {ref(shape, out)}));
    const float* got = static_cast<const float*>(out);
    for (size_t i = 0; i < n; ++i)
      ASSERT_NEAR(got[i], plain[i] + skip[i], 1e-4f) << "mode " << mode << " at " << i;
  }
}

}  // namespace
}  // namespace hx::exec
