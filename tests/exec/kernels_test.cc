// CPU kernels against hand-computed values, BLAS paths against the naive loops, and .npy files.
#include "hexplan/exec/kernels.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>

#include "hexplan/exec/tensor.h"
#include "hexplan/exec/values.h"

namespace hx::exec {
namespace {

using graph::DType;
using graph::Shape;

// A one-op graph whose inputs are given values; returns the outputs (BLAS or naive kernels).
struct OneOp {
  graph::Graph g{"one-op"};
  std::vector<TensorId> ins;
  std::map<std::string, HostTensor> values;

  TensorId In(const std::string& name, Shape shape, std::vector<float> v) {
    TensorId t = g.node(g.AddInput(name, DType::kF32, shape)).outputs[0];
    HostTensor h(DType::kF32, shape);
    HX_CHECK(static_cast<int64_t>(v.size()) == h.NumElements());
    std::copy(v.begin(), v.end(), h.data<float>());
    values[name] = h;
    ins.push_back(t);
    return t;
  }
  TensorId InInts(const std::string& name, Shape shape, std::vector<int64_t> v) {
    TensorId t = g.node(g.AddInput(name, DType::kI64, shape)).outputs[0];
    HostTensor h(DType::kI64, shape);
    std::copy(v.begin(), v.end(), h.data<int64_t>());
    values[name] = h;
    ins.push_back(t);
    return t;
  }
  std::vector<float> Run(const std::string& type, Shape out, graph::Attributes attrs = {},
                         bool naive = false) {
    NodeId op = g.AddOpWithOutputs(type, "op", ins, {{"y", DType::kF32, out}}, attrs);
    g.AddOutput(g.node(op).outputs[0]);
    std::vector<HostTensor> weights(g.num_nodes());
    auto r = RunReference(g, weights, values, KernelOptions{.naive = naive});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return {};
    const HostTensor& y = r->at(0);
    return std::vector<float>(y.data<float>(), y.data<float>() + y.NumElements());
  }
};

std::vector<float> Iota(int n, float start = 0.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + static_cast<float>(i);
  return v;
}

TEST(KernelTest, MatMulBroadcastsBatch) {
  OneOp o;
  o.In("a", {2, 2, 3}, Iota(12));
  o.In("b", {3, 2}, {1, 0, 0, 1, 1, 1});
  // a[0] = [[0,1,2],[3,4,5]] -> [[2,3],[8,9]]; a[1] = [[6,7,8],[9,10,11]] -> [[14,15],[20,21]]
  EXPECT_EQ(o.Run("MatMul", {2, 2, 2}), (std::vector<float>{2, 3, 8, 9, 14, 15, 20, 21}));
}

TEST(KernelTest, GemmTransposesAndAddsBias) {
  OneOp o;
  o.In("a", {2, 2}, {1, 2, 3, 4});
  o.In("b", {3, 2}, {1, 0, 0, 1, 1, 1});  // transB: B^T is [2,3]
  o.In("c", {3}, {10, 20, 30});
  graph::Attributes at;
  at.Set("transB", int64_t{1});
  at.Set("alpha", 2.0);
  EXPECT_EQ(o.Run("Gemm", {2, 3}, at), (std::vector<float>{12, 24, 36, 16, 28, 44}));
}

// A row times a matrix of a MiB or more splits the output across the calling thread's OpenMP
// team (a core group of two): every part lands where it belongs, for both layouts of B.
TEST(KernelTest, LargeSingleRowProductsOnATeamMatchNaive) {
  const int64_t K = 640, N = 1000;  // 2.4 MiB of B
  const int threads = omp_get_max_threads();
  omp_set_num_threads(2);
  for (bool tb : {false, true}) {
    std::vector<float> blas, naive;
    for (bool use_naive : {false, true}) {
      OneOp o;
      std::vector<float> a = Iota(static_cast<int>(K), -300.0f);
      for (float& x : a) x *= 0.01f;
      o.In("a", {1, K}, a);
      std::vector<float> b(static_cast<size_t>(K * N));
      for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 7919) % 101) - 50.0f;
      o.In("b", tb ? Shape{N, K} : Shape{K, N}, b);
      graph::Attributes at;
      at.Set("transB", int64_t{tb});
      (use_naive ? naive : blas) = o.Run("Gemm", {1, N}, at, use_naive);
    }
    ASSERT_EQ(blas.size(), static_cast<size_t>(N));
    ASSERT_EQ(naive.size(), blas.size());
    for (size_t i = 0; i < blas.size(); ++i)
      ASSERT_NEAR(blas[i], naive[i], 1e-3 * (1 + std::abs(naive[i]))) << tb << " " << i;
  }
  omp_set_num_threads(threads);
}

// One row times a matrix takes BLAS's GEMV path: every transpose combination, with alpha and a
// bias (beta 1), against the naive loops; and a batched MatMul of single rows.
TEST(KernelTest, SingleRowProductsMatchNaive) {
  const int64_t K = 7, N = 5;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      std::vector<float> blas, naive;
      for (bool use_naive : {false, true}) {
        OneOp o;
        o.In("a", ta ? Shape{K, 1} : Shape{1, K}, Iota(static_cast<int>(K), -3.0f));
        std::vector<float> b = Iota(static_cast<int>(K * N), -10.0f);
        for (float& x : b) x *= 0.25f;
        o.In("b", tb ? Shape{N, K} : Shape{K, N}, b);
        o.In("c", {N}, Iota(static_cast<int>(N), 1.0f));
        graph::Attributes at;
        at.Set("transA", int64_t{ta});
        at.Set("transB", int64_t{tb});
        at.Set("alpha", 0.5);
        (use_naive ? naive : blas) = o.Run("Gemm", {1, N}, at, use_naive);
      }
      ASSERT_EQ(blas.size(), static_cast<size_t>(N));
      ASSERT_EQ(blas.size(), naive.size());
      double magnitude = 0.0;
      for (size_t i = 0; i < blas.size(); ++i) {
        EXPECT_NEAR(blas[i], naive[i], 1e-4 * (1 + std::abs(naive[i]))) << ta << tb << " " << i;
        magnitude += std::abs(naive[i]);
      }
      EXPECT_GT(magnitude, 1.0);
    }
  }
  std::vector<float> blas, naive;
  for (bool use_naive : {false, true}) {
    OneOp o;
    o.In("a", {3, 1, K}, Iota(static_cast<int>(3 * K), -9.0f));
    o.In("b", {3, K, N}, Iota(static_cast<int>(3 * K * N), -50.0f));
    (use_naive ? naive : blas) = o.Run("MatMul", {3, 1, N}, {}, use_naive);
  }
  ASSERT_EQ(blas.size(), naive.size());
  for (size_t i = 0; i < blas.size(); ++i)
    EXPECT_NEAR(blas[i], naive[i], 1e-4 * (1 + std::abs(naive[i]))) << i;
}

TEST(KernelTest, ConvIm2colMatchesNaiveOnStridedPaddedGroupedDilated) {
  for (int64_t group : {1, 2}) {
    for (int64_t dil : {1, 2}) {
      std::vector<float> blas, naive;
      for (bool use_naive : {false, true}) {
        OneOp o;
        std::vector<float> x(2 * 4 * 7 * 6), w(6 * (4 / group) * 3 * 3), b(6);
        for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * i);
        for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.11f * i);
        for (size_t i = 0; i < b.size(); ++i) b[i] = 0.5f * i;
        o.In("x", {2, 4, 7, 6}, x);
        o.In("w", {6, 4 / group, 3, 3}, w);
        o.In("b", {6}, b);
        graph::Attributes at;
        at.Set("strides", std::vector<int64_t>{2, 1});
        at.Set("pads", std::vector<int64_t>{1, 2, 1, 0});
        at.Set("dilations", std::vector<int64_t>{dil, dil});
        at.Set("group", group);
        const int64_t oh = (7 + 2 - dil * 2 - 1) / 2 + 1, ow = (6 + 2 - dil * 2 - 1) / 1 + 1;
        (use_naive ? naive : blas) = o.Run("Conv", {2, 6, oh, ow}, at, use_naive);
      }
      ASSERT_EQ(blas.size(), naive.size());
      for (size_t i = 0; i < blas.size(); ++i)
        EXPECT_NEAR(blas[i], naive[i], 1e-4 * (1 + std::abs(naive[i]))) << group << " " << dil;
    }
  }
}

TEST(KernelTest, ConvHandComputed) {
  OneOp o;
  o.In("x", {1, 1, 3, 3}, Iota(9, 1));
  o.In("w", {1, 1, 2, 2}, {1, 0, 0, 1});
  EXPECT_EQ(o.Run("Conv", {1, 1, 2, 2}), (std::vector<float>{6, 8, 12, 14}));
}

TEST(KernelTest, PoolsHandComputed) {
  {
    OneOp o;
    o.In("x", {1, 1, 4, 4}, Iota(16));
    graph::Attributes at;
    at.Set("kernel_shape", std::vector<int64_t>{2, 2});
    at.Set("strides", std::vector<int64_t>{2, 2});
    EXPECT_EQ(o.Run("MaxPool", {1, 1, 2, 2}, at), (std::vector<float>{5, 7, 13, 15}));
  }
  {
    OneOp o;
    o.In("x", {1, 1, 3, 3}, Iota(9, 1));
    graph::Attributes at;
    at.Set("kernel_shape", std::vector<int64_t>{3, 3});
    at.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
    at.Set("strides", std::vector<int64_t>{2, 2});
    // corners average 4 valid cells: (1+2+4+5)/4 = 3, (2+3+5+6)/4 = 4, ...
    EXPECT_EQ(o.Run("AveragePool", {1, 1, 2, 2}, at), (std::vector<float>{3, 4, 6, 7}));
  }
  {
    OneOp o;
    o.In("x", {1, 2, 2, 2}, Iota(8));
    EXPECT_EQ(o.Run("GlobalAveragePool", {1, 2, 1, 1}), (std::vector<float>{1.5f, 5.5f}));
  }
}

TEST(KernelTest, SoftmaxAndLayerNorm) {
  {
    OneOp o;
    o.In("x", {2, 3}, {0, 0, 0, 1, 2, 3});
    auto y = o.Run("Softmax", {2, 3});
    const float e = std::exp(1.0f), s = 1 + e + e * e;
    EXPECT_NEAR(y[0], 1.0f / 3, 1e-6);
    EXPECT_NEAR(y[5], e * e / s, 1e-6);
  }
  {
    OneOp o;
    o.In("x", {1, 4}, {1, 2, 3, 4});
    o.In("g", {4}, {1, 1, 2, 2});
    o.In("b", {4}, {0, 0, 0, 1});
    auto y = o.Run("LayerNormalization", {1, 4});
    const float inv = 1.0f / std::sqrt(1.25f + 1e-5f);
    EXPECT_NEAR(y[0], -1.5f * inv, 1e-5);
    EXPECT_NEAR(y[3], 2 * 1.5f * inv + 1, 1e-5);
  }
}

TEST(KernelTest, BroadcastingBinaryOps) {
  OneOp o;
  o.In("a", {2, 1, 3}, Iota(6));
  o.In("b", {2, 1}, {10, 20});
  EXPECT_EQ(o.Run("Add", {2, 2, 3}),
            (std::vector<float>{10, 11, 12, 20, 21, 22, 13, 14, 15, 23, 24, 25}));
}

TEST(KernelTest, TransposeSliceGatherConcat) {
  {
    OneOp o;
    o.In("x", {2, 3}, Iota(6));
    graph::Attributes at;
    at.Set("perm", std::vector<int64_t>{1, 0});
    EXPECT_EQ(o.Run("Transpose", {3, 2}, at), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  }
  {
    OneOp o;
    o.In("x", {2, 5}, Iota(10));
    o.InInts("starts", {1}, {-4});
    o.InInts("ends", {1}, {100});
    o.InInts("axes", {1}, {1});
    o.InInts("steps", {1}, {2});
    EXPECT_EQ(o.Run("Slice", {2, 2}), (std::vector<float>{1, 3, 6, 8}));
  }
  {
    OneOp o;
    o.In("x", {3, 2}, Iota(6));
    o.InInts("i", {2}, {2, -3});
    EXPECT_EQ(o.Run("Gather", {2, 2}), (std::vector<float>{4, 5, 0, 1}));
  }
  {
    OneOp o;
    o.In("a", {2, 1}, {1, 2});
    o.In("b", {2, 2}, {3, 4, 5, 6});
    graph::Attributes at;
    at.Set("axis", int64_t{1});
    EXPECT_EQ(o.Run("Concat", {2, 3}, at), (std::vector<float>{1, 3, 4, 2, 5, 6}));
  }
}

TEST(KernelTest, LstmOpHandComputedStep) {
  // One step, hidden 1, input 1: gates i,o,f,c = x*W + h*R + Wb + Rb.
  OneOp o;
  o.In("x", {1, 1, 1}, {1.0f});
  o.In("w", {1, 4, 1}, {0.5f, -0.5f, 1.0f, 2.0f});
  o.In("r", {1, 4, 1}, {0, 0, 0, 0});
  o.In("b", {1, 8}, {0, 0, 0, 0, 0, 0, 0, 0});
  auto y = o.Run("LSTM", {1, 1, 1, 1});
  auto sig = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
  const float c = sig(0.5f) * std::tanh(2.0f);  // f * c0 = 0
  ASSERT_EQ(y.size(), 1u);
  EXPECT_NEAR(y[0], sig(-0.5f) * std::tanh(c), 1e-6);
}

// Max and Min read every input (they read only two before), and other dtypes than fp32.
TEST(KernelTest, VariadicMaxMinReadEveryInput) {
  OneOp o;
  o.In("a", {3}, {1, 5, 2});
  o.In("b", {3}, {4, 0, 2});
  o.In("c", {1}, {3});
  EXPECT_EQ(o.Run("Max", {3}), (std::vector<float>{4, 5, 3}));
  OneOp m;
  m.In("a", {3}, {1, 5, 2});
  m.In("b", {3}, {4, 0, 2});
  m.In("c", {1}, {3});
  EXPECT_EQ(m.Run("Min", {3}), (std::vector<float>{1, 0, 2}));
}

// N-D convolution (plain loops) on a depth-1 volume equals the 2-D BLAS convolution.
TEST(KernelTest, Conv3dOfDepthOneMatchesConv2d) {
  OneOp two;
  two.In("x", {1, 1, 3, 3}, Iota(9));
  two.In("w", {1, 1, 2, 2}, {1, -1, 2, 0.5f});
  const std::vector<float> expect = two.Run("Conv", {1, 1, 2, 2});
  OneOp three;
  three.In("x", {1, 1, 1, 3, 3}, Iota(9));
  three.In("w", {1, 1, 1, 2, 2}, {1, -1, 2, 0.5f});
  EXPECT_EQ(three.Run("Conv", {1, 1, 1, 2, 2}), expect);
  EXPECT_EQ(expect.size(), 4u);
}

// MaxPool writes its Indices (flat NCHW positions of each maximum).
TEST(KernelTest, MaxPoolWritesIndices) {
  OneOp o;
  o.In("x", {1, 1, 2, 2}, {1, 4, 3, 2});
  graph::Attributes at;
  at.Set("kernel_shape", std::vector<int64_t>{2, 2});
  NodeId op = o.g.AddOpWithOutputs(
      "MaxPool", "op", o.ins, {{"y", DType::kF32, {1, 1, 1, 1}}, {"i", DType::kI64, {1, 1, 1, 1}}},
      at);
  o.g.AddOutput(o.g.node(op).outputs[0]);
  o.g.AddOutput(o.g.node(op).outputs[1]);
  std::vector<HostTensor> weights(o.g.num_nodes());
  auto r = RunReference(o.g, weights, o.values, KernelOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->at(0).data<float>()[0], 4.0f);
  EXPECT_EQ(r->at(1).data<int64_t>()[0], 1);
}

// Random dropout in training mode is refused naming the op and the attribute.
TEST(KernelTest, TrainingDropoutIsRefused) {
  OneOp o;
  o.In("x", {2}, {1, 2});
  o.In("ratio", {}, {0.5f});
  TensorId t = o.g.node(o.g.AddInput("training", DType::kBool, {})).outputs[0];
  HostTensor on(DType::kBool, {});
  on.bytes[0] = 1;
  o.values["training"] = on;
  o.ins.push_back(t);
  NodeId op = o.g.AddOpWithOutputs("Dropout", "drop", o.ins, {{"y", DType::kF32, {2}}});
  o.g.AddOutput(o.g.node(op).outputs[0]);
  std::vector<HostTensor> weights(o.g.num_nodes());
  auto r = RunReference(o.g, weights, o.values, KernelOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Dropout 'drop'"), std::string::npos);
  EXPECT_NE(r.status().message().find("training_mode"), std::string::npos);
}

TEST(KernelTest, UnknownOpAndBadIndexAreErrors) {
  graph::Node node;
  node.op_type = "NoSuchOp";
  node.name = "n1";
  Status s = RunCpuKernel(node, {}, {});
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("'n1'"), std::string::npos);
  OneOp o;
  o.In("x", {3, 2}, Iota(6));
  o.InInts("i", {1}, {3});
  NodeId op = o.g.AddOpWithOutputs("Gather", "g", o.ins, {{"y", DType::kF32, {1, 2}}});
  o.g.AddOutput(o.g.node(op).outputs[0]);
  std::vector<HostTensor> weights(o.g.num_nodes());
  auto r = RunReference(o.g, weights, o.values);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Gather 'g'"), std::string::npos) << r.status().message();
}

TEST(NpyTest, RoundTripAndErrors) {
  HostTensor t(DType::kF32, {2, 3});
  for (int i = 0; i < 6; ++i) t.data<float>()[i] = 0.5f * i;
  auto back = ParseNpy(NpyBytes(t), "t.npy");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->shape, t.shape);
  EXPECT_EQ(back->bytes, t.bytes);
  EXPECT_EQ((NpyBytes(t).size() - t.bytes.size()) % 64, 0u);  // data 64-byte aligned
  HostTensor scalar(DType::kI64, {});
  auto s = ParseNpy(NpyBytes(scalar), "s.npy");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->shape.empty());
  // A file numpy wrote: np.save of np.arange(3, dtype='<i4').
  std::string numpy = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                      "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
  numpy.resize(127, ' ');
  numpy += '\n';
  for (int32_t v : {0, 1, 2}) numpy.append(reinterpret_cast<const char*>(&v), 4);
  auto n = ParseNpy(numpy, "arange.npy");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(n->dtype, DType::kI32);
  EXPECT_EQ(n->data<int32_t>()[2], 2);
  auto bad = ParseNpy("not numpy", "bad.npy");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.npy"), std::string::npos);
  std::string truncated = NpyBytes(t);
  truncated.pop_back();
  auto tr = ParseNpy(truncated, "short.npy");
  ASSERT_FALSE(tr.ok());
  EXPECT_NE(tr.status().message().find("data bytes"), std::string::npos);
}

TEST(NpyTest, HeaderThatIsNotUtf8IsAnErrorNamingFileAndOffset) {
  HostTensor t(DType::kF32, {2});
  std::string bytes = NpyBytes(t);
  const size_t at = bytes.find("'descr'") + 2;  // inside the key: 'd\xFFscr'
  bytes[at] = '\xFF';
  auto bad = ParseNpy(bytes, "x.npy");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().ExitCode(), 2);
  EXPECT_EQ(bad.status().message(),
            "x.npy: not a valid .npy file: the header is not UTF-8 (invalid byte at offset " +
                std::to_string(at) + ")");
}

TEST(NpyTest, RelativeErrorIsNormwise) {
  HostTensor a(DType::kF32, {3}), b(DType::kF32, {3});
  b.data<float>()[0] = 100.0f;
  a.data<float>()[0] = 100.0f;
  a.data<float>()[1] = 0.01f;  // tiny next to the largest value
  EXPECT_NEAR(MaxRelativeError(a, b), 1e-4, 1e-9);
  HostTensor c(DType::kF32, {4});
  EXPECT_TRUE(std::isinf(MaxRelativeError(a, c)));
}

}  // namespace
}  // namespace hx::exec
