#include <cstdio>

#include "cli/command.h"
#include "hexplan/graph/model_loader.h"

namespace hx::cli {

int ReportError(const Status& status) {
  std::fprintf(stderr, "hexplan: error: %s\n", status.message().c_str());
  return status.ExitCode();
}

Logger& CliLogger() {
  static StderrLogger logger(LogLevel::kWarning);
  return logger;
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
  app->add_option("--layers", lstm_layers, "lstm only: stacked layers (default 12)");
  app->add_option("--io", lstm_io, "lstm only: input and hidden size (default 64)");
}

StatusOr<graph::ZooOptions> ModelArgs::ToZooOptions() const {
  graph::ZooOptions options;
  options.batch = batch;
  options.seq = seq;
  auto dt = graph::ParseDType(dtype);
  if (!dt)
    return InvalidArgument("--dtype: unknown dtype '" + dtype + "' (expected fp32, fp16 or bf16)");
  options.dtype = *dt;
  options.lstm_layers = lstm_layers;
  options.lstm_io = lstm_io;
  HX_RETURN_IF_ERROR(options.Validate());
  return options;
}

StatusOr<graph::Graph> ModelArgs::Load() const {
  HX_ASSIGN_OR_RETURN(graph::ZooOptions options, ToZooOptions());
  return graph::LoadModel(model, options, &CliLogger());
}

}  // namespace hx::cli
