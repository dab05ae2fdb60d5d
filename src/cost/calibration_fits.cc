#include "hexplan/cost/calibration_fits.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "hexplan/cost/calibration_data.h"
#include "hexplan/cost/deepbench_data.h"
#include "hexplan/cost/fit_collective.h"
#include "hexplan/cost/vidur_attention_data.h"
#include "hexplan/hw/device_spec.h"

namespace hx::cost {
namespace {

constexpr double kOperatorBound = 0.10;  // issue 21: geomean per operator class

struct Fitted {
  std::vector<ClassFitResult> classes;
  std::vector<OpSample> fitted;    // every class's fitted half
  std::vector<OpSample> held_out;  // every class's held-out half
};

std::string SourceOf(const std::vector<OpSample>& samples, const std::string& device_note) {
  std::set<std::string> groups;
  for (const OpSample& s : samples) groups.insert(s.group.substr(0, s.group.find(' ')));
  std::string out;
  for (const std::string& g : groups) out += (out.empty() ? "" : " + ") + g;
  return out + " (" + device_note + ")";
}

// The errors by sample.group, or with `by_operator` by the source's operator name.
std::vector<GroupErrors> ErrorsByGroup(const ClassFit& fit, const DevicePeak& peak,
                                       const std::vector<OpSample>& fitted,
                                       const std::vector<OpSample>& held_out, bool by_operator) {
  auto key = [&](const OpSample& s) {
    return by_operator ? s.group.substr(0, s.group.find(' ')) + " " + s.label : s.group;
  };
  std::map<std::string, std::pair<std::vector<OpSample>, std::vector<OpSample>>> by_group;
  for (const OpSample& s : fitted) by_group[key(s)].first.push_back(s);
  for (const OpSample& s : held_out) by_group[key(s)].second.push_back(s);
  std::vector<GroupErrors> out;
  for (const auto& [group, halves] : by_group)
    out.push_back({group, EvaluateClassFit(fit, peak, halves.first),
                   EvaluateClassFit(fit, peak, halves.second)});
  return out;
}

bool WithinBound(const ClassFitResult& r) {
  if (r.bound <= 0) return true;
  if (r.fit.fit_error > r.bound || r.fit.held_out_error > r.bound) return false;
  for (const GroupErrors& g : r.groups)
    if (g.fitted.geomean > r.bound || g.held_out.geomean > r.bound) return false;
  return true;
}

// One fit per class present in `samples` (a class needs >= 4 samples).
StatusOr<Fitted> FitClasses(const std::vector<OpSample>& samples, const DevicePeak& peak,
                            const std::string& device_note, double bound) {
  std::map<OpClass, std::vector<OpSample>> by_class;
  for (const OpSample& s : samples) by_class[s.op_class].push_back(s);
  Fitted out;
  for (const auto& [op_class, class_samples] : by_class) {
    if (class_samples.size() < 4) continue;
    ClassFitResult r;
    r.op_class = op_class;
    r.bound = bound;
    HX_ASSIGN_OR_RETURN(
        r.fit, FitClassWithHeldOut(class_samples, peak, SourceOf(class_samples, device_note)));
    std::vector<OpSample> fitted, held_out;
    SplitByRooflineTime(class_samples, peak, fitted, held_out);
    r.groups = ErrorsByGroup(r.fit, peak, fitted, held_out, false);
    r.operators = ErrorsByGroup(r.fit, peak, fitted, held_out, true);
    r.pass = WithinBound(r);
    out.classes.push_back(std::move(r));
    out.fitted.insert(out.fitted.end(), fitted.begin(), fitted.end());
    out.held_out.insert(out.held_out.end(), held_out.begin(), held_out.end());
  }
  return out;
}

Status Append(StatusOr<std::vector<OpSample>> read, std::vector<OpSample>& out) {
  if (!read.ok()) return read.status();
  out.insert(out.end(), read->begin(), read->end());
  return Status::Ok();
}

Status AppendVidur(const std::string& data_dir, const std::string& gpu,
                   std::vector<OpSample>& out) {
  const std::string base = data_dir + "/tp/microsoft-vidur/data/profiling/compute/" + gpu + "/";
  HX_RETURN_IF_ERROR(Append(
      ReadVidurMlp(base + "meta-llama/Llama-2-70b-hf/mlp.csv", "vidur " + gpu + " Llama-2-70b"),
      out));
  return Append(ReadVidurMlp(base + "codellama/CodeLlama-34b-Instruct-hf/mlp.csv",
                             "vidur " + gpu + " CodeLlama-34b"),
                out);
}

StatusOr<DeviceFits> OperatorFits(const std::string& model, const std::string& measured_on,
                                  const std::vector<OpSample>& samples) {
  DeviceFits d;
  d.model = model;
  d.measured_on = measured_on;
  d.dtype = "fp16";
  HX_ASSIGN_OR_RETURN(d.peak, CalibrationPeak(model));
  HX_ASSIGN_OR_RETURN(Fitted f, FitClasses(samples, d.peak, measured_on, kOperatorBound));
  d.classes = std::move(f.classes);
  return d;
}

// The device's fitted curves by class.
std::map<OpClass, ClassFit> CurvesOf(const DeviceFits& d) {
  std::map<OpClass, ClassFit> fits;
  for (const ClassFitResult& r : d.classes) fits[r.op_class] = r.fit;
  return fits;
}

// PipeDream's image classification and translation profiles, timed by its profiler.
const char* const kPipeDreamModels[] = {"image_classification/alexnet",
                                        "image_classification/vgg16",
                                        "image_classification/squeezenet1_0",
                                        "image_classification/resnet18",
                                        "image_classification/resnet50",
                                        "image_classification/resnet101",
                                        "image_classification/resnext50",
                                        "image_classification/resnext101",
                                        "image_classification/inception_v3",
                                        "image_classification/densenet121",
                                        "image_classification/nasnetamobile",
                                        "image_classification/nasnetalarge",
                                        "translation/gnmt",
                                        "translation/gnmt_large"};

StatusOr<std::vector<OpSample>> PipeDreamSamples(const std::string& data_dir) {
  std::vector<OpSample> samples;
  for (const std::string name : kPipeDreamModels) {
    const std::string family = name.substr(0, name.find('/'));
    const std::string model = name.substr(name.find('/') + 1);
    const std::string path =
        data_dir + "/placement/pipedream/profiler/" + family + "/profiles/" + model + "/graph.txt";
    HX_RETURN_IF_ERROR(Append(ReadPipeDreamLayers(path, "PipeDream " + model, "PipeDream " + family,
                                                  family == "image_classification"),
                              samples));
  }
  return samples;
}

// DeepBench's kernels a V100 class is fitted to (the rest are its check): its SGEMMs, where
// PipeDream has ten Linear layers. Its convolutions stay a check: fitted with PipeDream's layers
// they make batch-1 networks 27-53 % faster than measured (docs/cost-model.md, "DeepBench").
bool DeepBenchFitted(const OpSample& s) { return s.op_class == OpClass::kGemm; }

// The V100's samples: PipeDream's layers, and DeepBench's SGEMMs (a named V100).
StatusOr<std::vector<OpSample>> V100Samples(const std::string& data_dir) {
  HX_ASSIGN_OR_RETURN(std::vector<OpSample> samples, PipeDreamSamples(data_dir));
  for (const OpSample& s : DeepBenchV100Samples())
    if (DeepBenchFitted(s)) samples.push_back(s);
  return samples;
}

// Only PipeDream's groups are models (DeepBench's are kernel tables, reported with the classes).
std::vector<OpSample> PipeDreamOnly(std::vector<OpSample> samples) {
  samples.erase(
      std::remove_if(samples.begin(), samples.end(),
                     [](const OpSample& s) { return s.group.rfind("PipeDream", 0) != 0; }),
      samples.end());
  return samples;
}

StatusOr<DeviceFits> PipeDreamFits(const std::string& data_dir) {
  HX_ASSIGN_OR_RETURN(std::vector<OpSample> samples, V100Samples(data_dir));
  DeviceFits d;
  d.model = "V100-SXM2-32GB";
  d.measured_on =
      "assumed V100 (PipeDream, SOSP'19: V100 clusters; fp32, batch 128); gemm also V100 "
      "(DeepBench: DGX-1, CUDA 10.1, fp32)";
  d.dtype = "fp32";
  HX_ASSIGN_OR_RETURN(d.peak, CalibrationPeak(d.model));
  HX_ASSIGN_OR_RETURN(Fitted f, FitClasses(samples, d.peak, "assumed V100-SXM2", 0.0));
  d.classes = std::move(f.classes);
  const std::map<OpClass, ClassFit> fits = CurvesOf(d);
  d.models = PerModelErrors(fits, d.peak, PipeDreamOnly(f.fitted), PipeDreamOnly(f.held_out));
  std::vector<OpSample> unfitted = DeepBenchV100Samples();
  unfitted.erase(std::remove_if(unfitted.begin(), unfitted.end(), DeepBenchFitted), unfitted.end());
  d.kernel_checks =
      CheckKernels(fits, d.peak, unfitted, "DeepBench V100 (DGX-1, CUDA 10.1, cuDNN 7.6.2, fp32)");
  return d;
}

// One model's predicted / measured ratios, each half.
struct ModelRatios {
  std::vector<double> fitted, held_out;
};

// |ratio x factor - 1| of each ratio.
std::vector<double> ScaledErrors(const std::vector<double>& ratios, double factor) {
  std::vector<double> out;
  for (double r : ratios) out.push_back(std::abs(r * factor - 1.0));
  return out;
}

// measured / predicted, geometric mean over `ratios` (predicted / measured); 1 without any.
double SpeedFactor(const std::vector<double>& ratios) {
  if (ratios.empty()) return 1.0;
  double log_sum = 0.0;
  for (double r : ratios) log_sum -= std::log(r);
  return std::exp(log_sum / ratios.size());
}

ModelErrors SummariseModel(const std::string& model, const ModelRatios& r) {
  ModelErrors m;
  m.model = model;
  std::vector<double> all = r.fitted;
  all.insert(all.end(), r.held_out.begin(), r.held_out.end());
  m.all = SummariseErrors(ScaledErrors(all, 1.0));
  m.held_out = SummariseErrors(ScaledErrors(r.held_out, 1.0));
  m.speed_factor = SpeedFactor(r.fitted);
  m.shape_all = SummariseErrors(ScaledErrors(all, m.speed_factor));
  m.shape_fitted = SummariseErrors(ScaledErrors(r.fitted, m.speed_factor));
  m.shape_held_out = SummariseErrors(ScaledErrors(r.held_out, m.speed_factor));
  m.pass = m.shape_all.median <= m.bound && m.shape_held_out.median <= m.bound;
  return m;
}

}  // namespace

std::vector<ModelErrors> PerModelErrors(const std::map<OpClass, ClassFit>& fits,
                                        const DevicePeak& peak, const std::vector<OpSample>& fitted,
                                        const std::vector<OpSample>& held_out) {
  std::map<std::string, ModelRatios> ratios;
  auto add = [&](const OpSample& s, bool is_held_out) {
    auto it = fits.find(s.op_class);
    if (it == fits.end()) return;
    const double ratio = MeasuredSeconds(it->second, peak, s) / s.seconds;
    (is_held_out ? ratios[s.group].held_out : ratios[s.group].fitted).push_back(ratio);
  };
  for (const OpSample& s : fitted) add(s, false);
  for (const OpSample& s : held_out) add(s, true);
  std::vector<ModelErrors> out;
  for (const auto& [model, r] : ratios) out.push_back(SummariseModel(model, r));
  return out;
}

std::vector<KernelCheck> CheckKernels(const std::map<OpClass, ClassFit>& fits,
                                      const DevicePeak& peak, const std::vector<OpSample>& samples,
                                      const std::string& source) {
  std::map<OpClass, std::vector<double>> ratios;
  for (const OpSample& s : samples) {
    auto it = fits.find(s.op_class);
    if (it == fits.end()) continue;
    ratios[s.op_class].push_back(ClassKernelSeconds(it->second, peak, s.flops, s.bytes) /
                                 s.seconds);
  }
  std::vector<KernelCheck> out;
  for (const auto& [op_class, r] : ratios) {
    KernelCheck c;
    c.op_class = op_class;
    c.source = source;
    c.samples = static_cast<int>(r.size());
    c.ratio = 1.0 / SpeedFactor(r);
    c.errors = SummariseErrors(ScaledErrors(r, 1.0));
    out.push_back(c);
  }
  return out;
}

StatusOr<DevicePeak> CalibrationPeak(const std::string& model) {
  auto spec = hw::FindDeviceSpec(model);
  if (!spec) return NotFound("no device spec for calibration model '" + model + "'");
  const std::string dtype = model.rfind("V100", 0) == 0 ? "fp32" : "fp16";
  return DevicePeak{spec->PeakFlops(dtype), spec->memory_bandwidth_bytes_per_s};
}

StatusOr<std::vector<OpSample>> ReadCalibrationSamples(const std::string& data_dir,
                                                       const std::string& model) {
  std::vector<OpSample> out;
  if (model == "A100-SXM4-80GB") {
    HX_RETURN_IF_ERROR(
        Append(ReadLlmCompassOps(data_dir + "/tp/PrincetonUniversity-LLMCompass"), out));
    HX_RETURN_IF_ERROR(AppendVidur(data_dir, "a100", out));
    // vidur's FlashAttention decode kernels, compiled in (vidur_attention_data.h); its FlashInfer
    // ones are a check (A100Fits).
    HX_RETURN_IF_ERROR(
        Append(VidurA100DecodeAttentionSamples(VidurAttentionBackend::kFlashAttentionLlama2), out));
  } else if (model == "H100-SXM5-80GB") {
    HX_RETURN_IF_ERROR(AppendVidur(data_dir, "h100", out));
  } else if (model == "V100-SXM2-32GB") {
    return V100Samples(data_dir);
  } else {
    return NotFound("no measured operator data for device model '" + model + "'");
  }
  return out;
}

bool DeviceFits::pass() const {
  for (const auto& c : classes)
    if (!c.pass) return false;
  for (const auto& m : models)
    if (!m.pass) return false;
  for (const auto& c : collectives)
    if (!c.pass) return false;
  return true;
}

bool CalibrationFits::pass() const {
  for (const auto& d : devices)
    if (!d.pass()) return false;
  return true;
}

StatusOr<CalibrationFits> RunCalibrationFits(const std::string& data_dir) {
  if (!std::filesystem::is_directory(data_dir))
    return NotFound(data_dir + ": no such data directory");
  CalibrationFits out;
  HX_ASSIGN_OR_RETURN(auto a100, ReadCalibrationSamples(data_dir, "A100-SXM4-80GB"));
  HX_ASSIGN_OR_RETURN(auto h100, ReadCalibrationSamples(data_dir, "H100-SXM5-80GB"));
  HX_ASSIGN_OR_RETURN(
      DeviceFits a,
      OperatorFits("A100-SXM4-80GB", "A100-SXM4-80GB (LLMCompass), A100 80GB (vidur)", a100));
  // FlashInfer's decode kernel, a second kernel for the same operator (a floor of ~24 us below
  // batch 8 where FlashAttention's is ~12): checked, not fitted, as one curve fits one kernel.
  a.kernel_checks =
      CheckKernels(CurvesOf(a), a.peak,
                   VidurA100DecodeAttentionSamples(VidurAttentionBackend::kFlashInferLlama3),
                   "vidur FlashInfer decode attention (A100 80GB, Llama-3-8B's 32/8 heads)");
  HX_ASSIGN_OR_RETURN(a.collectives, VidurCollectiveFits(data_dir, "a100"));
  HX_ASSIGN_OR_RETURN(DeviceFits h, OperatorFits("H100-SXM5-80GB", "H100 80GB (vidur)", h100));
  HX_ASSIGN_OR_RETURN(h.collectives, VidurCollectiveFits(data_dir, "h100"));
  HX_ASSIGN_OR_RETURN(DeviceFits v, PipeDreamFits(data_dir));
  out.devices = {std::move(a), std::move(h), std::move(v)};
  return out;
}

namespace {

// A parent class (normalization) the data has no sample of, where one of its kinds (RMSNorm) was
// fitted: the parent takes that curve as an assumption (samples 0), replacing a stale fit.
void FillUnfittedParents(const DeviceFits& fits, DeviceCalibration& calibration) {
  std::set<OpClass> fitted;
  for (const ClassFitResult& c : fits.classes) fitted.insert(c.op_class);
  for (const ClassFitResult& c : fits.classes) {
    const OpClass parent = ParentOpClass(c.op_class);
    if (parent == c.op_class || fitted.count(parent)) continue;
    // A kind chosen by phase (decode attention: one token over a KV cache) is no stand-in for its
    // parent's kernels (prefill attention's are compute-bound).
    if (c.op_class == OpClass::kDecodeAttention) continue;
    auto it = calibration.classes.find(parent);
    if (it != calibration.classes.end() && it->second.samples == 0 &&
        it->second.source.find("curve (no ") == std::string::npos)
      continue;  // the file's own assumption stays
    ClassFit assumed = c.fit;
    assumed.samples = 0;
    assumed.fit_error = assumed.held_out_error = 0.0;
    assumed.source = "assumed: the " + std::string(OpClassName(c.op_class)) + " curve (no " +
                     std::string(OpClassName(parent)) + " data for this model)";
    calibration.classes[parent] = assumed;
    fitted.insert(parent);
  }
}

}  // namespace

void ApplyFits(const DeviceFits& fits, DeviceCalibration& calibration) {
  for (const ClassFitResult& c : fits.classes) calibration.classes[c.op_class] = c.fit;
  FillUnfittedParents(fits, calibration);
  for (const CollectiveFitResult& c : fits.collectives) {
    if (!c.written) continue;
    auto& list = calibration.collectives;
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const CollectiveCalibration& x) {
                                return x.collective == c.calibration.collective &&
                                       x.library == c.calibration.library &&
                                       x.fabric == c.calibration.fabric &&
                                       x.gpus == c.calibration.gpus;
                              }),
               list.end());
    list.push_back(c.calibration);
  }
  if (calibration.measured_on.empty())
    calibration.measured_on = fits.measured_on;
  else if (calibration.measured_on.find(fits.measured_on) == std::string::npos)
    calibration.measured_on += "; operator classes: " + fits.measured_on;
}

}  // namespace hx::cost
