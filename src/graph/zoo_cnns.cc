// torchvision CNNs as torch.onnx.export writes them in eval mode: a BatchNormalization that follows
// a Conv is folded into it (the Conv gains a bias), ReLU6 is Clip(0, 6), adaptive average pooling
// to 1x1 is GlobalAveragePool and nn.Linear on the flattened features is Gemm. DenseNet's
// pre-activation BatchNormalizations (after a Concat, not a Conv) cannot be folded; they are the
// per-channel affine x * scale + shift that eval-mode BN computes (Mul, Add with [C,1,1]
// parameters), so the parameter count is torchvision's minus one value per folded BN channel
// (docs/models.md).

#include "zoo_builder.h"

namespace hx::graph::zoo_internal {
namespace {

using Spec = ZooBuilder::ConvSpec;

Spec K(int64_t out, int64_t k, int64_t stride = 1, int64_t pad = 0) {
  Spec s;
  s.out_channels = out;
  s.kernel = {k, k};
  s.stride = {stride, stride};
  s.pad = {pad, pad};
  return s;
}

Spec K2(int64_t out, int64_t kh, int64_t kw, int64_t ph, int64_t pw) {
  Spec s;
  s.out_channels = out;
  s.kernel = {kh, kw};
  s.pad = {ph, pw};
  return s;
}

// Eval-mode BatchNormalization as its own op (ZooOptions::separate_batchnorm): scale, bias,
// running mean and running variance, one value per channel each. torchvision's epsilon is 1e-5
// (1e-3 in Inception-v3's BasicConv2d).
TensorId BatchNorm(ZooBuilder& b, TensorId x, const std::string& prefix, double epsilon) {
  const int64_t c = b.shape(x)[1];
  Attributes attrs;
  attrs.Set("epsilon", epsilon);
  return b.Op("BatchNormalization",
              {x, b.Weight(prefix + ".weight", {c}), b.Weight(prefix + ".bias", {c}),
               b.Weight(prefix + ".running_mean", {c}), b.Weight(prefix + ".running_var", {c})},
              b.shape(x), std::move(attrs));
}

// Conv + BN (folded into the Conv's bias, or its own op) + optional ReLU.
TensorId ConvBn(ZooBuilder& b, TensorId x, const std::string& prefix, Spec spec, bool relu = true,
                double epsilon = 1e-5) {
  TensorId y;
  if (b.separate_batchnorm()) {
    spec.bias = false;
    y = BatchNorm(b, b.Conv(x, prefix, spec), prefix + ".bn", epsilon);
  } else {
    spec.bias = true;
    y = b.Conv(x, prefix, spec);
  }
  return relu ? b.Unary("Relu", y) : y;
}

// A builder for a torchvision CNN with the options' BatchNorm layout.
ZooBuilder CnnBuilder(const std::string& name, const ZooOptions& o) {
  ZooBuilder b(name, o.dtype);
  b.set_separate_batchnorm(o.separate_batchnorm);
  return b;
}

TensorId Relu6(ZooBuilder& b, TensorId x) {
  return b.Op("Clip", {x, b.ConstFloat(0.0), b.ConstFloat(6.0)}, b.shape(x));
}

// Eval-mode BatchNormalization that cannot be folded: x * scale + shift per channel (or the
// BatchNormalization op itself with ZooOptions::separate_batchnorm).
TensorId BnAffine(ZooBuilder& b, TensorId x, const std::string& prefix) {
  if (b.separate_batchnorm()) return BatchNorm(b, x, prefix, 1e-5);
  const int64_t c = b.shape(x)[1];
  TensorId y = b.Binary("Mul", x, b.Weight(prefix + ".weight", {c, 1, 1}));
  return b.Binary("Add", y, b.Weight(prefix + ".bias", {c, 1, 1}));
}

TensorId Classifier(ZooBuilder& b, TensorId x, const std::string& prefix) {
  b.SetScope(prefix);
  return b.Gemm(b.Flatten(b.GlobalAveragePool(x)), prefix, 1000);
}

// ---- ResNet (torchvision Bottleneck, stride on the 3x3 conv).
Graph ResNet(const std::string& name, const std::vector<int64_t>& blocks, const ZooOptions& o) {
  ZooBuilder b = CnnBuilder(name, o);
  TensorId x = b.Input("input", o.dtype, {o.batch, 3, o.image_size, o.image_size});
  b.SetScope("conv1");
  x = ConvBn(b, x, "conv1", K(64, 7, 2, 3));
  b.SetScope("maxpool");
  x = b.MaxPool(x, 3, 2, 1);
  for (size_t stage = 0; stage < blocks.size(); ++stage) {
    const int64_t planes = int64_t{64} << stage;
    for (int64_t i = 0; i < blocks[stage]; ++i) {
      const int64_t stride = (i == 0 && stage > 0) ? 2 : 1;
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(i);
      b.SetScope(p);
      TensorId y = ConvBn(b, x, p + ".conv1", K(planes, 1));
      y = ConvBn(b, y, p + ".conv2", K(planes, 3, stride, 1));
      y = ConvBn(b, y, p + ".conv3", K(planes * 4, 1), false);
      TensorId identity = x;
      if (i == 0) identity = ConvBn(b, x, p + ".downsample.0", K(planes * 4, 1, stride), false);
      x = b.Unary("Relu", b.Binary("Add", y, identity));
    }
  }
  b.Output(Classifier(b, x, "fc"));
  return b.Finish();
}

// ---- VGG (configuration "D" = 16, "E" = 19), no batch norm.
Graph Vgg(const std::string& name, const std::vector<int64_t>& cfg, const ZooOptions& o) {
  ZooBuilder b = CnnBuilder(name, o);
  TensorId x = b.Input("input", o.dtype, {o.batch, 3, o.image_size, o.image_size});
  int64_t index = 0;
  for (int64_t c : cfg) {
    const std::string p = "features." + std::to_string(index);
    b.SetScope(p);
    if (c == 0) {
      x = b.MaxPool(x, 2, 2, 0);
      index += 1;
    } else {
      Spec s = K(c, 3, 1, 1);
      s.bias = true;
      x = b.Unary("Relu", b.Conv(x, p, s));
      index += 2;
    }
  }
  // AdaptiveAvgPool2d((7, 7)): an AveragePool whose window is the size ratio.
  b.SetScope("avgpool");
  const int64_t ratio = b.shape(x)[2] / 7;
  if (ratio > 1) x = b.AveragePool(x, ratio, ratio, 0);
  b.SetScope("classifier");
  x = b.Flatten(x);
  x = b.Unary("Relu", b.Gemm(x, "classifier.0", 4096));
  x = b.Unary("Relu", b.Gemm(x, "classifier.3", 4096));
  b.Output(b.Gemm(x, "classifier.6", 1000));
  return b.Finish();
}

// ---- DenseNet-BC (growth 32, bn_size 4, 64 initial features).
Graph DenseNet(const std::string& name, const std::vector<int64_t>& blocks, const ZooOptions& o) {
  constexpr int64_t kGrowth = 32, kBnSize = 4;
  ZooBuilder b = CnnBuilder(name, o);
  TensorId x = b.Input("input", o.dtype, {o.batch, 3, o.image_size, o.image_size});
  b.SetScope("features");
  x = ConvBn(b, x, "features.conv0", K(64, 7, 2, 3));  // conv0 + norm0 + relu0
  x = b.MaxPool(x, 3, 2, 1);
  for (size_t blk = 0; blk < blocks.size(); ++blk) {
    std::vector<TensorId> features = {x};
    for (int64_t l = 0; l < blocks[blk]; ++l) {
      const std::string p =
          "features.denseblock" + std::to_string(blk + 1) + ".denselayer" + std::to_string(l + 1);
      b.SetScope(p);
      TensorId in = features.size() == 1 ? features[0] : b.Concat(features, 1);
      TensorId y = b.Unary("Relu", BnAffine(b, in, p + ".norm1"));
      y = ConvBn(b, y, p + ".conv1", K(kBnSize * kGrowth, 1));  // conv1 + norm2 + relu2
      Spec s = K(kGrowth, 3, 1, 1);
      features.push_back(b.Conv(y, p + ".conv2", s));
    }
    const std::string bp = "features.denseblock" + std::to_string(blk + 1);
    b.SetScope(bp);
    x = b.Concat(features, 1);
    if (blk + 1 < blocks.size()) {
      const std::string p = "features.transition" + std::to_string(blk + 1);
      b.SetScope(p);
      TensorId y = b.Unary("Relu", BnAffine(b, x, p + ".norm"));
      y = b.Conv(y, p + ".conv", K(b.shape(x)[1] / 2, 1));
      x = b.AveragePool(y, 2, 2, 0);
    }
  }
  b.SetScope("features.norm5");
  x = b.Unary("Relu", BnAffine(b, x, "features.norm5"));
  b.Output(Classifier(b, x, "classifier"));
  return b.Finish();
}

// ---- MobileNetV2 (width 1.0).
Graph MobileNetV2(const std::string& name, const ZooOptions& o) {
  ZooBuilder b = CnnBuilder(name, o);
  TensorId x = b.Input("input", o.dtype, {o.batch, 3, o.image_size, o.image_size});
  b.SetScope("features.0");
  x = Relu6(b, ConvBn(b, x, "features.0.0", K(32, 3, 2, 1), false));
  struct Stage {
    int64_t t, c, n, s;
  };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                          {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int64_t in = 32;
  int64_t index = 1;
  for (const Stage& st : stages) {
    for (int64_t i = 0; i < st.n; ++i, ++index) {
      const int64_t stride = i == 0 ? st.s : 1;
      const int64_t hidden = in * st.t;
      const std::string p = "features." + std::to_string(index) + ".conv";
      b.SetScope("features." + std::to_string(index));
      TensorId y = x;
      int64_t layer = 0;
      if (st.t != 1) {
        y = Relu6(b, ConvBn(b, y, p + ".0.0", K(hidden, 1), false));
        layer = 1;
      }
      Spec dw = K(hidden, 3, stride, 1);
      dw.groups = hidden;
      y = Relu6(b, ConvBn(b, y, p + "." + std::to_string(layer) + ".0", dw, false));
      y = ConvBn(b, y, p + "." + std::to_string(layer + 1), K(st.c, 1), false);
      if (stride == 1 && in == st.c) y = b.Binary("Add", x, y);
      x = y;
      in = st.c;
    }
  }
  b.SetScope("features." + std::to_string(index));
  x = Relu6(b, ConvBn(b, x, "features." + std::to_string(index) + ".0", K(1280, 1), false));
  b.Output(Classifier(b, x, "classifier.1"));
  return b.Finish();
}

// ---- Inception-v3 (torchvision; BasicConv2d = Conv + folded BN + ReLU).
class Inception {
 public:
  explicit Inception(ZooBuilder& b) : b_(b) {}

  TensorId C(TensorId x, const std::string& name, Spec spec) {
    return ConvBn(b_, x, scope_ + "." + name + ".conv", spec, true, 1e-3);
  }
  TensorId AvgPool3(TensorId x) {
    TensorId y = b_.AveragePool(x, 3, 1, 1);
    // count_include_pad=True is PyTorch's default for avg_pool2d.
    b_.graph()
        .mutable_node(b_.graph().tensor(y).producer)
        .attrs.Set("count_include_pad", int64_t{1});
    return y;
  }
  void Scope(const std::string& s) {
    scope_ = s;
    b_.SetScope(s);
  }

  TensorId A(TensorId x, int64_t pool_features) {
    TensorId b1 = C(x, "branch1x1", K(64, 1));
    TensorId b5 = C(C(x, "branch5x5_1", K(48, 1)), "branch5x5_2", K(64, 5, 1, 2));
    TensorId b3 = C(x, "branch3x3dbl_1", K(64, 1));
    b3 = C(C(b3, "branch3x3dbl_2", K(96, 3, 1, 1)), "branch3x3dbl_3", K(96, 3, 1, 1));
    TensorId bp = C(AvgPool3(x), "branch_pool", K(pool_features, 1));
    return b_.Concat({b1, b5, b3, bp}, 1);
  }
  TensorId B(TensorId x) {
    TensorId b3 = C(x, "branch3x3", K(384, 3, 2));
    TensorId bd = C(x, "branch3x3dbl_1", K(64, 1));
    bd = C(C(bd, "branch3x3dbl_2", K(96, 3, 1, 1)), "branch3x3dbl_3", K(96, 3, 2));
    return b_.Concat({b3, bd, b_.MaxPool(x, 3, 2, 0)}, 1);
  }
  TensorId Cc(TensorId x, int64_t c7) {
    TensorId b1 = C(x, "branch1x1", K(192, 1));
    TensorId b7 = C(x, "branch7x7_1", K(c7, 1));
    b7 = C(b7, "branch7x7_2", K2(c7, 1, 7, 0, 3));
    b7 = C(b7, "branch7x7_3", K2(192, 7, 1, 3, 0));
    TensorId bd = C(x, "branch7x7dbl_1", K(c7, 1));
    bd = C(bd, "branch7x7dbl_2", K2(c7, 7, 1, 3, 0));
    bd = C(bd, "branch7x7dbl_3", K2(c7, 1, 7, 0, 3));
    bd = C(bd, "branch7x7dbl_4", K2(c7, 7, 1, 3, 0));
    bd = C(bd, "branch7x7dbl_5", K2(192, 1, 7, 0, 3));
    TensorId bp = C(AvgPool3(x), "branch_pool", K(192, 1));
    return b_.Concat({b1, b7, bd, bp}, 1);
  }
  TensorId D(TensorId x) {
    TensorId b3 = C(C(x, "branch3x3_1", K(192, 1)), "branch3x3_2", K(320, 3, 2));
    TensorId b7 = C(x, "branch7x7x3_1", K(192, 1));
    b7 = C(b7, "branch7x7x3_2", K2(192, 1, 7, 0, 3));
    b7 = C(b7, "branch7x7x3_3", K2(192, 7, 1, 3, 0));
    b7 = C(b7, "branch7x7x3_4", K(192, 3, 2));
    return b_.Concat({b3, b7, b_.MaxPool(x, 3, 2, 0)}, 1);
  }
  TensorId E(TensorId x) {
    TensorId b1 = C(x, "branch1x1", K(320, 1));
    TensorId b3 = C(x, "branch3x3_1", K(384, 1));
    b3 = b_.Concat(
        {C(b3, "branch3x3_2a", K2(384, 1, 3, 0, 1)), C(b3, "branch3x3_2b", K2(384, 3, 1, 1, 0))},
        1);
    TensorId bd = C(C(x, "branch3x3dbl_1", K(448, 1)), "branch3x3dbl_2", K(384, 3, 1, 1));
    bd = b_.Concat({C(bd, "branch3x3dbl_3a", K2(384, 1, 3, 0, 1)),
                    C(bd, "branch3x3dbl_3b", K2(384, 3, 1, 1, 0))},
                   1);
    TensorId bp = C(AvgPool3(x), "branch_pool", K(192, 1));
    return b_.Concat({b1, b3, bd, bp}, 1);
  }
  TensorId Aux(TensorId x) {
    TensorId y = b_.AveragePool(x, 5, 3, 0);
    y = C(y, "conv0", K(128, 1));
    y = C(y, "conv1", K(768, 5));
    b_.SetScope(scope_ + ".fc");
    return b_.Gemm(b_.Flatten(b_.GlobalAveragePool(y)), scope_ + ".fc", 1000);
  }

 private:
  ZooBuilder& b_;
  std::string scope_;
};

Graph InceptionV3(const std::string& name, const ZooOptions& o) {
  ZooBuilder b = CnnBuilder(name, o);
  TensorId x = b.Input("input", o.dtype, {o.batch, 3, o.image_size, o.image_size});
  auto stem = [&](const std::string& n, Spec s) {
    b.SetScope(n);
    return ConvBn(b, x, n + ".conv", s, true, 1e-3);
  };
  x = stem("Conv2d_1a_3x3", K(32, 3, 2));
  x = stem("Conv2d_2a_3x3", K(32, 3));
  x = stem("Conv2d_2b_3x3", K(64, 3, 1, 1));
  b.SetScope("maxpool1");
  x = b.MaxPool(x, 3, 2, 0);
  x = stem("Conv2d_3b_1x1", K(80, 1));
  x = stem("Conv2d_4a_3x3", K(192, 3));
  b.SetScope("maxpool2");
  x = b.MaxPool(x, 3, 2, 0);
  Inception m(b);
  m.Scope("Mixed_5b");
  x = m.A(x, 32);
  m.Scope("Mixed_5c");
  x = m.A(x, 64);
  m.Scope("Mixed_5d");
  x = m.A(x, 64);
  m.Scope("Mixed_6a");
  x = m.B(x);
  const int64_t c7s[] = {128, 160, 160, 192};
  const char* names[] = {"Mixed_6b", "Mixed_6c", "Mixed_6d", "Mixed_6e"};
  for (int i = 0; i < 4; ++i) {
    m.Scope(names[i]);
    x = m.Cc(x, c7s[i]);
  }
  m.Scope("AuxLogits");
  TensorId aux = m.Aux(x);
  m.Scope("Mixed_7a");
  x = m.D(x);
  m.Scope("Mixed_7b");
  x = m.E(x);
  m.Scope("Mixed_7c");
  x = m.E(x);
  b.Output(Classifier(b, x, "fc"));
  b.Output(aux);
  return b.Finish();
}

}  // namespace

Graph BuildCnn(const std::string& name, const ZooOptions& o) {
  if (name == "resnet50") return ResNet(name, {3, 4, 6, 3}, o);
  if (name == "resnet101") return ResNet(name, {3, 4, 23, 3}, o);
  if (name == "resnet152") return ResNet(name, {3, 8, 36, 3}, o);
  if (name == "vgg16")
    return Vgg(name, {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0},
               o);
  if (name == "vgg19")
    return Vgg(name, {64,  64,  0,   128, 128, 0,   256, 256, 256, 256, 0,
                      512, 512, 512, 512, 0,   512, 512, 512, 512, 0},
               o);
  if (name == "densenet121") return DenseNet(name, {6, 12, 24, 16}, o);
  if (name == "densenet169") return DenseNet(name, {6, 12, 32, 32}, o);
  if (name == "densenet201") return DenseNet(name, {6, 12, 48, 32}, o);
  if (name == "inception_v3") return InceptionV3(name, o);
  HX_CHECK(name == "mobilenet_v2");
  return MobileNetV2(name, o);
}

}  // namespace hx::graph::zoo_internal
