#include <cstdio>

#include "cli/command.h"
#include "hexplan/core/file_util.h"
#include "hexplan/core/output_files.h"
#include "hexplan/graph/json_io.h"
#include "hexplan/graph/onnx_io.h"

namespace hx::cli {

namespace {

int RunExport(const ModelArgs& model, const std::string& out) {
  const std::string ext = FileExtension(out);
  OutputFiles outputs;
  Status st = ext == "onnx" || ext == "json"
                  ? outputs.Expect("--output", out)
                  : InvalidArgument("--output: '" + out + "' must end in .onnx or .json");
  if (!st.ok()) return ReportError(st);
  auto loaded = model.Load();
  if (!loaded.ok()) return ReportError(loaded.status());
  st = outputs.StageWith(out, [&](const std::string& path) {
    return ext == "onnx" ? graph::WriteOnnxFile(*loaded, path)
                         : graph::WriteGraphJsonFile(*loaded, path);
  });
  if (st.ok()) st = CommitOutputs(outputs);
  if (!st.ok()) return ReportError(st);
  std::printf("wrote %s (%zu ops)\n", out.c_str(), loaded->Ops().size());
  return 0;
}

}  // namespace

Command AddExportCommand(CLI::App& root) {
  auto* app = root.add_subcommand(
      "export", "write a model as ONNX (shape-only, opens in Netron) or hexplan JSON");
  auto args = std::make_shared<ModelArgs>();
  auto out = std::make_shared<std::string>();
  args->AddTo(app);
  app->add_option("-o,--output", *out, "output file: .onnx or .json")->required();
  return {app, [args, out]() { return RunExport(*args, *out); }};
}

}  // namespace hx::cli
