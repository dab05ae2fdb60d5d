#include <cstdio>
#include <optional>

#include "cli/cli_app.h"
#include "cli/command.h"
#include "hexplan/graph/model_loader.h"
#include "hexplan/graph/zoo.h"
#include "hexplan/hw/device_spec.h"

namespace hx::cli {

int ReportError(const Status& status) {
  return RecordError(status.message(), status.ExitCode(), "hexplan: error: ");
}

namespace {
bool strict_warnings = false;
size_t warnings_before = 0;  // the logger's count when this command began (RunCli may run again)
}  // namespace

void SetStrict(bool strict) {
  strict_warnings = strict;
  warnings_before = CliLogger().warnings();
}

Status CheckStrict() {
  const size_t warnings = CliLogger().warnings() - warnings_before;
  if (!strict_warnings || warnings == 0) return Status::Ok();
  return InvalidArgument("--strict: " + std::to_string(warnings) + " warning" +
                         (warnings == 1 ? "" : "s") + " above; nothing written");
}

Status CommitOutputs(OutputFiles& outputs) {
  HX_RETURN_IF_ERROR(CheckStrict());
  return outputs.Commit();
}

StderrLogger& CliLogger() {
  static StderrLogger logger(LogLevel::kWarning);
  return logger;
}

void CostModelArgs::AddTo(CLI::App* app) {
  app->add_option("--cost-model", kind,
                  "calibrated (per-GPU-model calibrations, data/calibration; the default) or "
                  "roofline (the plain roofline at nominal link rates)")
      ->default_val("calibrated");
  app->add_option("--calibration", calibrations,
                  "a device calibration YAML (docs/cost-model.md) that replaces the builtin one "
                  "of its model; repeatable");
}

StatusOr<cost::CostModelOptions> CostModelArgs::ToOptions() const {
  cost::CostModelOptions options;
  std::optional<cost::CostModelKind> parsed = cost::ParseCostModelKind(kind);
  if (!parsed)
    return InvalidArgument("--cost-model: expected calibrated or roofline, got '" + kind + "'");
  options.kind = *parsed;
  for (const std::string& path : calibrations) {
    auto calibration = cost::ReadDeviceCalibration(path);
    if (!calibration.ok()) return calibration.status().WithContext("--calibration");
    std::string model = calibration->model;
    if (!hw::FindDeviceSpec(model))
      LogTo(&CliLogger(), LogLevel::kWarning,
            "--calibration " + path + ": model '" + model +
                "' is no device model hexplan knows (`hexplan topo` lists them): the file applies "
                "to no device");
    options.calibrations[model] = std::move(calibration).value();
  }
  return options;
}

void ModelArgs::AddTo(CLI::App* app, bool positional) {
  if (positional) {
    app->add_option("MODEL", model,
                    "a zoo model name (see `hexplan models`), or a .onnx/.json file")
        ->required();
  } else {
    app->add_option("--model", model, "a zoo model name, or a .onnx/.json file")->required();
  }
  app->add_option("--batch", batch, "batch size")->default_val(1);
  app->add_option("--seq", seq, "sequence length (0: the model's default)")->default_val(0);
  app->add_option("--dtype", dtype, "fp32, fp16 or bf16")->default_val("fp32");
  app->add_option("--image", image,
                  "image models only (CNNs, Swin): input height and width in pixels (default "
                  "224; 299 for inception_v3, 1100 for Swin)");
  app->add_option("--layers", lstm_layers, "lstm only: stacked layers (default 12)");
  app->add_option("--io", lstm_io, "lstm only: input and hidden size (default 64)");
  app->add_option("--batchnorm", batchnorm,
                  "CNNs only: folded (into the Conv, as torch.onnx.export writes it) or separate "
                  "(its own op with four tensors, as eager PyTorch and TorchScript run it)")
      ->default_val("folded");
}

namespace {

// A model flag's range, checked here so that the error names the flag the user typed.
Status CheckFlag(const char* flag, int64_t value, int64_t lo, int64_t hi, const char* zero) {
  if (value >= lo && value <= hi) return Status::Ok();
  return InvalidArgument(std::string(flag) + ": expected " + zero + "an integer in [" +
                         std::to_string(lo == 0 ? 1 : lo) + ", " + std::to_string(hi) + "], got " +
                         std::to_string(value));
}

// A flag whose default is "not given" (ModelArgs::kNotGiven): a value given is in [1, hi]. Returns
// the zoo option (0 = the model's default).
StatusOr<int64_t> CheckSizeFlag(const char* flag, int64_t value, int64_t hi) {
  if (value == ModelArgs::kNotGiven) return int64_t{0};
  HX_RETURN_IF_ERROR(CheckFlag(flag, value, 1, hi, ""));
  return value;
}

}  // namespace

StatusOr<graph::ZooOptions> ModelArgs::ToZooOptions() const {
  HX_RETURN_IF_ERROR(CheckFlag("--batch", batch, 1, graph::kZooMaxBatch, ""));
  HX_RETURN_IF_ERROR(CheckFlag("--seq", seq, 0, graph::kZooMaxSeq, "0 (the model's default) or "));
  graph::ZooOptions options;
  HX_ASSIGN_OR_RETURN(options.image_size, CheckSizeFlag("--image", image, graph::kZooMaxImage));
  HX_ASSIGN_OR_RETURN(options.lstm_layers,
                      CheckSizeFlag("--layers", lstm_layers, graph::kZooMaxLstmLayers));
  HX_ASSIGN_OR_RETURN(options.lstm_io, CheckSizeFlag("--io", lstm_io, graph::kZooMaxLstmIo));
  const std::optional<bool> separate = graph::ParseBatchNormLayout(batchnorm);
  if (!separate)
    return InvalidArgument("--batchnorm: expected folded or separate, got '" + batchnorm + "'");
  options.separate_batchnorm = *separate;
  options.batch = batch;
  options.seq = seq;
  auto dt = graph::ParseDType(dtype);
  if (!dt)
    return InvalidArgument("--dtype: unknown dtype '" + dtype + "' (expected fp32, fp16 or bf16)");
  options.dtype = *dt;
  HX_RETURN_IF_ERROR(options.Validate());
  return options;
}

StatusOr<graph::Graph> ModelArgs::Load() const {
  HX_ASSIGN_OR_RETURN(graph::ZooOptions options, ToZooOptions());
  return graph::LoadModel(model, options, &CliLogger());
}

}  // namespace hx::cli
