// The shipped calibration files (data/calibration/*.yaml) against the measured data they were
// fitted to: each fitted class and collective reproduces its recorded errors (a stale file fails)
// and stays within its bound on the fitted half and on the held-out half.
#include "hexplan/cost/calibration_fits.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "hexplan/cost/calibration_data.h"
#include "hexplan/cost/custom_all_reduce_data.h"
#include "hexplan/cost/deepbench_data.h"
#include "hexplan/cost/fit_collective.h"
#include "hexplan/cost/op_class.h"
#include "hexplan/cost/vidur_attention_data.h"
#include "testing/test_paths.h"

namespace hx::cost {
namespace {

// Geomean bounds per fitted class. 0.10 is issue 21's number for the LLMCompass and vidur
// operator classes, which all reach it (the held-out half: shapes the fit did not see). PipeDream's
// classes are bounded by the per-model median below; their class bound only catches a broken fit.
const std::map<std::pair<std::string, OpClass>, double>& Bounds() {
  static const std::map<std::pair<std::string, OpClass>, double> bounds = {
      {{"A100-SXM4-80GB", OpClass::kGemm}, 0.10},
      {{"A100-SXM4-80GB", OpClass::kElementwise}, 0.10},
      {{"A100-SXM4-80GB", OpClass::kFusedElementwise}, 0.10},
      {{"A100-SXM4-80GB", OpClass::kNormalization}, 0.10},
      {{"A100-SXM4-80GB", OpClass::kSoftmax}, 0.10},
      {{"A100-SXM4-80GB", OpClass::kRmsNormalization}, 0.10},
      {{"A100-SXM4-80GB", OpClass::kDecodeAttention}, 0.10},
      {{"H100-SXM5-80GB", OpClass::kGemm}, 0.10},
      {{"H100-SXM5-80GB", OpClass::kElementwise}, 0.10},
      {{"H100-SXM5-80GB", OpClass::kFusedElementwise}, 0.10},
      {{"H100-SXM5-80GB", OpClass::kRmsNormalization}, 0.10},
      {{"V100-SXM2-32GB", OpClass::kGemm}, 0.20},
      {{"V100-SXM2-32GB", OpClass::kConvolution}, 0.20},
      {{"V100-SXM2-32GB", OpClass::kWinogradConvolution}, 0.20},
      {{"V100-SXM2-32GB", OpClass::kElementwise}, 0.20},
      {{"V100-SXM2-32GB", OpClass::kNormalization}, 0.20},
      {{"V100-SXM2-32GB", OpClass::kRecurrent}, 0.20},
      {{"V100-SXM2-32GB", OpClass::kOther}, 0.30},  // two embeddings fitted, two held out
      {{"V100-SXM2-32GB", OpClass::kGroupedConvolution}, 0.20},
      {{"V100-SXM2-32GB", OpClass::kImageConvolution}, 0.20},
      {{"V100-SXM2-32GB", OpClass::kPooling}, 0.20},
      {{"V100-SXM2-32GB", OpClass::kDropout}, 0.20},
  };
  return bounds;
}

class ShippedCalibrationTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedCalibrationTest, FittedClassesReproduceTheirErrors) {
  const std::string model = GetParam();
  auto it = BuiltinCalibrations().find(model);
  ASSERT_NE(it, BuiltinCalibrations().end()) << model << ": no data/calibration file";
  auto peak = CalibrationPeak(model);
  ASSERT_TRUE(peak.ok());
  auto samples = ReadCalibrationSamples(testing::SharedDataDir(), model);
  ASSERT_TRUE(samples.ok()) << samples.status().ToString();
  int fitted_classes = 0;
  for (const auto& [op_class, fit] : it->second.classes) {
    if (fit.samples == 0) continue;  // an assumption, not a fit
    ++fitted_classes;
    std::vector<OpSample> of_class, fitted, held_out;
    for (const OpSample& s : *samples)
      if (s.op_class == op_class) of_class.push_back(s);
    SplitByRooflineTime(of_class, *peak, fitted, held_out);
    const std::string what = model + " " + std::string(OpClassName(op_class));
    ASSERT_EQ(fit.samples, static_cast<int>(fitted.size())) << what << ": stale file";
    const FitErrors on_fitted = EvaluateClassFit(fit, *peak, fitted);
    const FitErrors on_held_out = EvaluateClassFit(fit, *peak, held_out);
    EXPECT_NEAR(on_fitted.geomean, fit.fit_error, 1e-3) << what << ": stale file";
    EXPECT_NEAR(on_held_out.geomean, fit.held_out_error, 1e-3) << what << ": stale file";
    const double bound = Bounds().at({model, op_class});
    EXPECT_LE(on_fitted.geomean, bound) << what;
    EXPECT_LE(on_held_out.geomean, bound) << what;
  }
  EXPECT_GE(fitted_classes, 3) << model;
}

INSTANTIATE_TEST_SUITE_P(Models, ShippedCalibrationTest,
                         ::testing::Values("A100-SXM4-80GB", "H100-SXM5-80GB", "V100-SXM2-32GB"));

// PipeDream's per-model errors under the shipped V100 file, each class split as its fit was.
std::vector<ModelErrors> ShippedPipeDreamErrors() {
  const DeviceCalibration& v100 = BuiltinCalibrations().at("V100-SXM2-32GB");
  auto peak = CalibrationPeak("V100-SXM2-32GB");
  auto samples = ReadCalibrationSamples(testing::SharedDataDir(), "V100-SXM2-32GB");
  EXPECT_TRUE(samples.ok() && peak.ok());
  if (!samples.ok() || !peak.ok()) return {};
  std::map<OpClass, std::vector<OpSample>> by_class;
  for (const OpSample& s : *samples) by_class[s.op_class].push_back(s);
  std::vector<OpSample> fitted, held_out;
  auto pipedream = [](const OpSample& s) { return s.group.rfind("PipeDream", 0) == 0; };
  for (const auto& [op_class, of_class] : by_class) {
    EXPECT_GT(v100.classes.count(op_class), 0u) << OpClassName(op_class) << " is not fitted";
    std::vector<OpSample> class_fitted, class_held_out;
    SplitByRooflineTime(of_class, *peak, class_fitted, class_held_out);  // DeepBench's GEMMs too
    std::copy_if(class_fitted.begin(), class_fitted.end(), std::back_inserter(fitted), pipedream);
    std::copy_if(class_held_out.begin(), class_held_out.end(), std::back_inserter(held_out),
                 pipedream);
  }
  return PerModelErrors(v100.classes, *peak, fitted, held_out);
}

double BoundOf(const std::map<std::string, double>& gaps, const std::string& model) {
  auto gap = gaps.find(model);
  return gap == gaps.end() ? 0.15 : gap->second;
}

// Issue 21: PipeDream's per-layer times within 15% median per model under the assumed V100, on
// all layers and on the held-out shapes alone. The models listed with a larger bound do not reach
// it in absolute time (docs/cost-model.md "Fits"); the bound is on the shape error below.
TEST(ShippedCalibrationTest, PipeDreamAbsoluteMedianPerModel) {
  const std::map<std::string, double> known_gaps = {
      {"PipeDream alexnet", 0.17}, {"PipeDream gnmt", 0.20}, {"PipeDream squeezenet1_0", 0.16}};
  const std::map<std::string, double> known_held_out_gaps = {
      {"PipeDream alexnet", 0.22}, {"PipeDream gnmt", 0.43}, {"PipeDream gnmt_large", 0.21}};
  const std::vector<ModelErrors> models = ShippedPipeDreamErrors();
  EXPECT_EQ(models.size(), 14u);
  for (const ModelErrors& m : models) {
    EXPECT_LE(m.all.median, BoundOf(known_gaps, m.model)) << m.model;
    EXPECT_LE(m.held_out.median, BoundOf(known_held_out_gaps, m.model)) << m.model << " held out";
  }
}

// Issue 21: the profiles name no GPU; used "for per-layer shape, not absolute speed": each
// model's layers within 15% median after one speed factor set on its fitted half (the held-out
// half predicted with that factor). The models listed with a larger bound do not reach it
// (docs/cost-model.md "Fits": alexnet and squeezenet1_0 vary within one profile, gnmt's LSTMs
// against its dropouts, vgg16's held-out half); inception_v3 passes on all layers (13.6%) and
// held out (12.6%) but not on its fitted half alone.
TEST(ShippedCalibrationTest, PipeDreamShapeMedianPerModel) {
  const std::map<std::string, double> known_gaps = {
      {"PipeDream alexnet", 0.20}, {"PipeDream gnmt", 0.16}, {"PipeDream squeezenet1_0", 0.20}};
  const std::map<std::string, double> known_fitted_gaps = {{"PipeDream alexnet", 0.18},
                                                           {"PipeDream inception_v3", 0.16},
                                                           {"PipeDream squeezenet1_0", 0.21}};
  const std::map<std::string, double> known_held_out_gaps = {{"PipeDream alexnet", 0.20},
                                                             {"PipeDream gnmt", 0.29},
                                                             {"PipeDream squeezenet1_0", 0.18},
                                                             {"PipeDream vgg16", 0.17}};
  const std::vector<ModelErrors> models = ShippedPipeDreamErrors();
  EXPECT_EQ(models.size(), 14u);
  for (const ModelErrors& m : models) {
    EXPECT_LE(m.shape_all.median, BoundOf(known_gaps, m.model)) << m.model;
    EXPECT_LE(m.shape_fitted.median, BoundOf(known_fitted_gaps, m.model)) << m.model << " fitted";
    EXPECT_LE(m.shape_held_out.median, BoundOf(known_held_out_gaps, m.model))
        << m.model << " held out";
    EXPECT_EQ(m.pass, m.shape_all.median <= 0.15 && m.shape_held_out.median <= 0.15) << m.model;
  }
}

// Layers of a synthetic model, each taking `scale` x the curve's time (memory-bound, no harness).
std::vector<OpSample> ScaledLayers(const ClassFit& fit, const DevicePeak& peak,
                                   const std::string& model, double scale, int first, int count) {
  std::vector<OpSample> out;
  for (int i = first; i < first + count; ++i) {
    OpSample s;
    s.op_class = OpClass::kElementwise;
    s.group = model;
    s.bytes = 1e6 * (i + 1);
    s.seconds = scale * ClassKernelSeconds(fit, peak, 0.0, s.bytes);
    out.push_back(s);
  }
  return out;
}

// A model whose layers all take 2x the curve gets factor 2 and no shape error, against 50%
// absolute; its held-out half is predicted with the fitted half's factor (held-out layers at 3x:
// 1 - 2/3 = 33% shape error, not 0); each model gets its own factor.
TEST(PerModelErrorsTest, SpeedFactorComesFromTheFittedHalf) {
  const DevicePeak peak{10e12, 900e9};
  ClassFit fit;
  fit.memory_max = 0.8;
  fit.fixed_s = 5e-6;
  const std::map<OpClass, ClassFit> fits = {{OpClass::kElementwise, fit}};
  std::vector<OpSample> fitted = ScaledLayers(fit, peak, "twice", 2.0, 0, 6);
  std::vector<OpSample> held_out = ScaledLayers(fit, peak, "twice", 2.0, 6, 5);
  for (const OpSample& s : ScaledLayers(fit, peak, "slower held out", 2.0, 0, 4))
    fitted.push_back(s);
  for (const OpSample& s : ScaledLayers(fit, peak, "slower held out", 3.0, 4, 4))
    held_out.push_back(s);
  const std::vector<ModelErrors> models = PerModelErrors(fits, peak, fitted, held_out);
  ASSERT_EQ(models.size(), 2u);
  const ModelErrors& slower = models[0];  // by name: "slower held out" < "twice"
  const ModelErrors& twice = models[1];
  EXPECT_EQ(twice.model, "twice");
  EXPECT_NEAR(twice.speed_factor, 2.0, 1e-9);
  EXPECT_NEAR(twice.all.median, 0.5, 1e-9);
  EXPECT_NEAR(twice.held_out.median, 0.5, 1e-9);
  EXPECT_LT(twice.shape_all.median, 1e-9);
  EXPECT_LT(twice.shape_held_out.median, 1e-9);
  EXPECT_TRUE(twice.pass);
  EXPECT_EQ(twice.all.samples, 11);
  EXPECT_EQ(twice.shape_held_out.samples, 5);
  EXPECT_NEAR(slower.speed_factor, 2.0, 1e-9);
  EXPECT_LT(slower.shape_fitted.median, 1e-9);
  EXPECT_NEAR(slower.shape_held_out.median, 1.0 / 3.0, 1e-9);
  EXPECT_NEAR(slower.held_out.median, 2.0 / 3.0, 1e-9);
  EXPECT_FALSE(slower.pass);
}

// A layer whose class has no fit is left out; a model with no fitted layer keeps factor 1.
TEST(PerModelErrorsTest, UnfittedClassIsLeftOut) {
  const DevicePeak peak{10e12, 900e9};
  ClassFit fit;
  const std::map<OpClass, ClassFit> fits = {{OpClass::kElementwise, fit}};
  std::vector<OpSample> held_out = ScaledLayers(fit, peak, "m", 1.25, 0, 3);
  OpSample other = held_out[0];
  other.op_class = OpClass::kGemm;
  held_out.push_back(other);
  const std::vector<ModelErrors> models = PerModelErrors(fits, peak, {}, held_out);
  ASSERT_EQ(models.size(), 1u);
  EXPECT_EQ(models[0].all.samples, 3);
  EXPECT_EQ(models[0].speed_factor, 1.0);
  EXPECT_NEAR(models[0].shape_held_out.median, 0.2, 1e-9);
}

// DeepBench's V100 tables as samples: every row, each with the FLOPs, bytes and class its shape
// gives (a GEMM's 2MNK; a 3x3 stride-1 convolution as Winograd; a 3-channel input layer as an
// image convolution, its output size from padding and stride).
TEST(DeepBenchTest, RowsBecomeSamplesWithTheirShapes) {
  const std::vector<OpSample> samples = DeepBenchV100Samples();
  ASSERT_EQ(samples.size(), DeepBenchV100Gemms().size() + DeepBenchV100Convs().size());
  EXPECT_EQ(DeepBenchV100Gemms().size(), 160u);
  EXPECT_EQ(DeepBenchV100Convs().size(), 94u);
  const OpSample& gemm = samples.front();  // DeepSpeech 1760 x 16 x 1760, 0.038 ms
  EXPECT_EQ(gemm.op_class, OpClass::kGemm);
  EXPECT_DOUBLE_EQ(gemm.flops, 2.0 * 1760 * 16 * 1760);
  EXPECT_DOUBLE_EQ(gemm.bytes, 4.0 * (1760 * 1760 + 1760 * 16 + 16 * 1760));
  EXPECT_DOUBLE_EQ(gemm.seconds, 0.038e-3);
  EXPECT_TRUE(gemm.harness.empty());
  std::map<OpClass, int> classes;
  for (const OpSample& s : samples) {
    ++classes[s.op_class];
    EXPECT_GT(s.seconds, 0.0) << s.label;
    EXPECT_GT(s.flops, 0.0) << s.label;
  }
  EXPECT_EQ(classes[OpClass::kGemm], 160);
  EXPECT_EQ(classes[OpClass::kImageConvolution], 7);  // one or three input channels
  // The sample of the first convolution row that `matches`.
  auto conv_sample = [&](auto matches) -> const OpSample* {
    const std::vector<DeepBenchConv>& convs = DeepBenchV100Convs();
    for (size_t i = 0; i < convs.size(); ++i)
      if (matches(convs[i])) return &samples[DeepBenchV100Gemms().size() + i];
    return nullptr;
  };
  // Vision 224 x 224 x 3, batch 16, 64 filters of 7 x 7, pad 3, stride 2: 112 x 112 outputs.
  const OpSample* image =
      conv_sample([](const DeepBenchConv& c) { return c.w == 224 && c.c == 3 && c.s == 7; });
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(image->op_class, OpClass::kImageConvolution);
  EXPECT_DOUBLE_EQ(image->flops, 2.0 * 16 * 64 * 112 * 112 * 3 * 7 * 7);
  EXPECT_DOUBLE_EQ(image->bytes,
                   4.0 * (16.0 * 3 * 224 * 224 + 64 * 3 * 7 * 7 + 16.0 * 64 * 112 * 112));
  // ResNet's 7 x 7 x 512 3 x 3 layer at batch 8: Winograd, the direct count / 2.25.
  const OpSample* winograd = conv_sample([](const DeepBenchConv& c) {
    return c.w == 7 && c.c == 512 && c.n == 8 && c.k == 512 && c.r == 3;
  });
  ASSERT_NE(winograd, nullptr);
  EXPECT_EQ(winograd->op_class, OpClass::kWinogradConvolution);
  EXPECT_DOUBLE_EQ(winograd->flops, 2.0 * 8 * 512 * 7 * 7 * 512 * 9 / kWinogradFlopDivisor);
  EXPECT_DOUBLE_EQ(winograd->seconds, 0.236e-3);
}

// A check's ratio is the geometric mean of predicted / measured over the class's kernels, from
// the kernel's time alone (no harness constant); a class without a fit is left out.
TEST(KernelCheckTest, RatioIsTheGeomeanOfPredictedOverMeasured) {
  const DevicePeak peak{10e12, 900e9};
  ClassFit fit;
  fit.memory_max = 0.8;
  fit.harness_s["profiler"] = 1.0;  // not a kernel's time: must not count
  std::vector<OpSample> samples = ScaledLayers(fit, peak, "a", 1.0, 0, 4);  // the curve's times
  samples[0].seconds /= 2.0;                                                // predicted 2x measured
  samples[1].seconds /= 2.0;
  samples[2].seconds *= 2.0;  // predicted 0.5x measured
  samples[3].seconds /= 4.0;  // predicted 4x
  OpSample gemm = samples[0];
  gemm.op_class = OpClass::kGemm;
  samples.push_back(gemm);
  const std::vector<KernelCheck> checks =
      CheckKernels({{OpClass::kElementwise, fit}}, peak, samples, "test");
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].op_class, OpClass::kElementwise);
  EXPECT_EQ(checks[0].samples, 4);
  EXPECT_NEAR(checks[0].ratio, std::pow(2.0 * 2.0 * 0.5 * 4.0, 0.25), 1e-9);
  EXPECT_NEAR(checks[0].errors.max, 3.0, 1e-9);
  EXPECT_EQ(checks[0].source, "test");
}

// The shipped V100 curves against DeepBench's V100 kernels. The gemm class is fitted to its
// SGEMMs (with PipeDream's ten Linear layers): within 10% geomean of them. The convolution
// classes are fitted to PipeDream's layers alone (batch 128-256), whose half points make
// DeepBench's small kernels 2-3x slow; the check keeps reporting that (docs/cost-model.md
// "DeepBench"), and a fit that reached DeepBench's speed would move these ratios and this test.
TEST(ShippedCalibrationTest, V100CurvesAgainstDeepBench) {
  const DeviceCalibration& v100 = BuiltinCalibrations().at("V100-SXM2-32GB");
  auto peak = CalibrationPeak("V100-SXM2-32GB");
  ASSERT_TRUE(peak.ok());
  const std::vector<KernelCheck> checks =
      CheckKernels(v100.classes, *peak, DeepBenchV100Samples(), "DeepBench");
  std::map<OpClass, KernelCheck> by_class;
  for (const KernelCheck& c : checks) by_class[c.op_class] = c;
  ASSERT_EQ(by_class.size(), 4u);
  EXPECT_NEAR(by_class[OpClass::kGemm].ratio, 1.0, 0.05);
  EXPECT_LE(by_class[OpClass::kGemm].errors.geomean, 0.10);
  EXPECT_NEAR(by_class[OpClass::kConvolution].ratio, 1.53, 0.01);
  EXPECT_NEAR(by_class[OpClass::kWinogradConvolution].ratio, 1.93, 0.01);
}

// The A100 decode-attention curve is fitted to vidur's FlashAttention decode kernels; vidur's
// FlashInfer ones (another kernel: a ~24 us floor below batch 8, grouped heads) are its check,
// pinned where the curve reads them (17% fast) so a changed fit or table shows here.
TEST(ShippedCalibrationTest, A100DecodeAttentionAgainstFlashInfer) {
  const DeviceCalibration& a100 = BuiltinCalibrations().at("A100-SXM4-80GB");
  ASSERT_TRUE(a100.classes.count(OpClass::kDecodeAttention));
  EXPECT_GT(a100.classes.at(OpClass::kDecodeAttention).samples, 0);
  auto peak = CalibrationPeak("A100-SXM4-80GB");
  ASSERT_TRUE(peak.ok());
  const std::vector<OpSample> flash_infer =
      VidurA100DecodeAttentionSamples(VidurAttentionBackend::kFlashInferLlama3);
  ASSERT_EQ(flash_infer.size(), 70u);
  const std::vector<KernelCheck> checks =
      CheckKernels(a100.classes, *peak, flash_infer, "vidur FlashInfer");
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].op_class, OpClass::kDecodeAttention);
  EXPECT_NEAR(checks[0].ratio, 0.83, 0.01);
  EXPECT_LE(checks[0].errors.geomean, 0.15);
}

// The grid's bytes are the K/V cache per GPU: FlashAttention's TP 4 rows read a quarter of TP 1's
// at the same length and batch, FlashInfer's (8 K/V heads) a quarter of FlashAttention's (32).
TEST(VidurAttentionDataTest, BytesFollowTheHeadsPerGpu) {
  auto bytes_of = [](const std::vector<OpSample>& samples,
                     const std::vector<VidurDecodeAttention>& rows, VidurAttentionBackend backend,
                     int tp, int kv, int batch) {
    size_t i = 0;
    for (const VidurDecodeAttention& r : rows) {
      if (r.backend != backend) continue;
      if (r.tp == tp && r.kv_tokens == kv && r.batch == batch) return samples[i].bytes;
      ++i;
    }
    return -1.0;
  };
  const auto& rows = VidurA100DecodeAttention();
  const auto fa = VidurA100DecodeAttentionSamples(VidurAttentionBackend::kFlashAttentionLlama2);
  const auto fi = VidurA100DecodeAttentionSamples(VidurAttentionBackend::kFlashInferLlama3);
  ASSERT_EQ(fa.size() + fi.size(), rows.size());
  const double kv_read = 2.0 * 64 * 2048 * 32 * 128 * 2;  // K and V, 32 heads, FP16
  EXPECT_NEAR(bytes_of(fa, rows, VidurAttentionBackend::kFlashAttentionLlama2, 1, 2048, 64),
              kv_read + 2.0 * 64 * 32 * 128 * 2, 1.0);
  EXPECT_NEAR(bytes_of(fa, rows, VidurAttentionBackend::kFlashAttentionLlama2, 4, 2048, 64),
              (kv_read + 2.0 * 64 * 32 * 128 * 2) / 4, 1.0);
  EXPECT_NEAR(bytes_of(fi, rows, VidurAttentionBackend::kFlashInferLlama3, 1, 2048, 64),
              kv_read / 4 + 2.0 * 64 * 32 * 128 * 2, 1.0);
  for (const OpSample& s : fa) {
    EXPECT_EQ(s.op_class, OpClass::kDecodeAttention);
    EXPECT_EQ(s.flops, 0.0);
    EXPECT_GT(s.seconds, 0.0);
  }
}

// An untimed residual Add is counted in the next layer the forward pass reaches (its bytes join
// that layer's), only where asked (the image-classification profiler).
TEST(PipeDreamLayersTest, UntimedAddFoldsIntoItsNextLayer) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "hx_pipedream_fold_graph.txt").string();
  {
    std::ofstream out(path);
    out << "node1 -- Conv2d(8, 8, kernel_size=(1, 1), stride=(1, 1), bias=False) -- "
           "forward_compute_time=1.000, activation_size=400.0, parameter_size=256.0\n"
           "node2 -- Add(inplace) -- forward_compute_time=0.000, activation_size=400.0, "
           "parameter_size=0.0\n"
           "node3 -- ReLU(inplace) -- forward_compute_time=0.500, activation_size=400.0, "
           "parameter_size=0.0\n"
           "node4 -- Dropout(p=0.5) -- forward_compute_time=0.200, activation_size=400.0, "
           "parameter_size=0.0\n"
           "\tnode1 -- node2\n\tnode1 -- node2\n\tnode2 -- node3\n\tnode2 -- node4\n";
  }
  auto plain = ReadPipeDreamLayers(path, "m", "h");
  auto folded = ReadPipeDreamLayers(path, "m", "h", true);
  std::filesystem::remove(path);
  ASSERT_TRUE(plain.ok() && folded.ok());
  ASSERT_EQ(plain->size(), 3u);  // the Add timed 0 is no sample
  ASSERT_EQ(folded->size(), 3u);
  EXPECT_EQ((*plain)[1].op_class, OpClass::kElementwise);
  EXPECT_EQ((*plain)[2].op_class, OpClass::kDropout);
  EXPECT_DOUBLE_EQ((*plain)[1].bytes, 800.0);  // the ReLU: its input and output
  // + the Add's two inputs (800) and its output (400); node3 runs before node4.
  EXPECT_DOUBLE_EQ((*folded)[1].bytes, 800.0 + 1200.0);
  EXPECT_DOUBLE_EQ((*folded)[2].bytes, 800.0);
}

// The NCCL all-reduce lines in the A100 and H100 files reproduce vidur's times within 10%
// geomean on the sizes they were fitted to and on the others.
class ShippedAllReduceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedAllReduceTest, LinesReproduceVidur) {
  const std::string gpu = GetParam();
  const std::string model = gpu == "a100" ? "A100-SXM4-80GB" : "H100-SXM5-80GB";
  int checked = 0;
  for (const CollectiveCalibration& c : BuiltinCalibrations().at(model).collectives) {
    if (c.samples == 0 || c.fabric != "nvswitch" || c.library != "nccl") continue;
    auto samples = ReadVidurAllReduce(testing::SharedDataDir() +
                                          "/tp/microsoft-vidur/data/profiling/network/" + gpu +
                                          "_dgx/all_reduce.csv",
                                      c.gpus, c.gpus);
    ASSERT_TRUE(samples.ok());
    AllReduceModel m;
    m.gpus = c.gpus;
    for (const CollectiveLine& l : c.lines) m.lines.push_back({l.alpha_s, l.bus_bytes_per_s});
    std::vector<CollectiveSample> fitted, held_out;
    for (size_t i = 0; i < samples->size(); ++i)
      (i % 2 ? held_out : fitted).push_back((*samples)[i]);
    const double fit_error = EvaluateFit(m, fitted).geomean_rel_error;
    const double held_out_error = EvaluateFit(m, held_out).geomean_rel_error;
    EXPECT_NEAR(fit_error, c.fit_error, 1e-3) << model << " " << c.gpus << ": stale file";
    EXPECT_NEAR(held_out_error, c.held_out_error, 1e-3) << model << " " << c.gpus;
    EXPECT_LE(fit_error, 0.10);
    EXPECT_LE(held_out_error, 0.10);
    ++checked;
  }
  EXPECT_EQ(checked, 3) << model << ": 2, 4 and 8 GPUs";
}

INSTANTIATE_TEST_SUITE_P(Gpus, ShippedAllReduceTest, ::testing::Values("a100", "h100"));

// The custom all-reduce lines in the shipped files are the fits of the published kernel timings
// (custom_all_reduce_data.h), within 10 % on every size and on each size held out in turn, and
// they hold up to the largest size measured.
TEST_P(ShippedAllReduceTest, CustomKernelLinesReproduceThePublishedTimes) {
  const std::string gpu = GetParam();
  const std::string model = gpu == "a100" ? "A100-SXM4-80GB" : "H100-SXM5-80GB";
  const std::vector<PublishedAllReduceSet> sets = PublishedCustomAllReduce(gpu);
  ASSERT_EQ(sets.size(), gpu == "a100" ? 2u : 3u);
  for (const PublishedAllReduceSet& set : sets) {
    StatusOr<CollectiveFitResult> fit = FitCustomAllReduce(set);
    ASSERT_TRUE(fit.ok()) << fit.status().ToString();
    EXPECT_TRUE(fit->pass) << set.source;
    EXPECT_LE(fit->calibration.fit_error, 0.10) << set.source;
    EXPECT_LE(fit->calibration.held_out_error, 0.10) << set.source;
    const CollectiveCalibration* shipped = nullptr;
    for (const CollectiveCalibration& c : BuiltinCalibrations().at(model).collectives)
      if (c.library == "custom" && c.gpus == set.gpus) shipped = &c;
    ASSERT_NE(shipped, nullptr) << model << ": no custom fit for " << set.gpus << " GPUs";
    ASSERT_EQ(shipped->lines.size(), fit->calibration.lines.size()) << "stale file";
    AllReduceModel m;
    m.gpus = set.gpus;
    for (const CollectiveLine& l : shipped->lines)
      m.lines.push_back({l.alpha_s, l.bus_bytes_per_s});
    for (const CollectiveSample& s : set.samples)
      EXPECT_NEAR(m.AllReduceSeconds(s.bytes), s.seconds, 0.15 * s.seconds)
          << set.source << " at " << s.bytes << " bytes";
    EXPECT_EQ(shipped->max_bytes, set.samples.back().bytes);
    // Small messages: one call costs microseconds, far below NCCL's ring on that many GPUs.
    EXPECT_LT(m.AllReduceSeconds(16384), 15e-6);
  }
}

// The fields the fits added to ClassFit (harness_s, min_s) survive a write and a read, and
// ApplyFits replaces only what was fitted.
TEST(CalibrationFitsTest, FittedFieldsRoundTripAndMerge) {
  DeviceCalibration c = BuiltinCalibrations().at("V100-SXM2-32GB");
  const CopyFit copy_before = c.copy.h2d_pinned;
  DeviceFits fits;
  fits.measured_on = "test data";
  ClassFitResult r;
  r.op_class = OpClass::kAttention;
  r.fit.min_s = 7e-6;
  r.fit.harness_s["a timer"] = 12e-6;
  r.fit.samples = 5;
  fits.classes.push_back(r);
  CollectiveFitResult unwritten;
  unwritten.calibration.fabric = "nvlink-pairs";
  fits.collectives.push_back(unwritten);
  const size_t collectives_before = c.collectives.size();
  ApplyFits(fits, c);
  EXPECT_EQ(c.collectives.size(), collectives_before);
  EXPECT_EQ(c.copy.h2d_pinned.fraction, copy_before.fraction);
  EXPECT_NE(c.measured_on.find("test data"), std::string::npos);
  const std::string path = std::filesystem::temp_directory_path() / "hx_fits_round_trip.yaml";
  ASSERT_TRUE(WriteDeviceCalibration(c, path).ok());
  auto back = ReadDeviceCalibration(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const ClassFit& f = back->classes.at(OpClass::kAttention);
  EXPECT_EQ(f.min_s, 7e-6);
  ASSERT_EQ(f.harness_s.count("a timer"), 1u);
  EXPECT_EQ(f.harness_s.at("a timer"), 12e-6);
}

}  // namespace
}  // namespace hx::cost
