#include <cstdio>

#include "cli/command.h"
#include "hexplan/core/file_util.h"
#include "hexplan/graph/json_io.h"
#include "hexplan/graph/onnx_io.h"

namespace hx::cli {

Command AddExportCommand(CLI::App& root) {
  auto* app = root.add_subcommand(
      "export", "write a model as ONNX (shape-only, opens in Netron) or hexplan JSON");
  auto args = std::make_shared<ModelArgs>();
  auto out = std::make_shared<std::string>();
  args->AddTo(app);
  app->add_option("-o,--output", *out, "output file: .onnx or .json")->required();
  return {app, [args, out]() {
            auto loaded = args->Load();
            if (!loaded.ok()) return ReportError(loaded.status());
            const std::string ext = FileExtension(*out);
            Status st;
            if (ext == "onnx") {
              st = graph::WriteOnnxFile(*loaded, *out);
            } else if (ext == "json") {
              st = graph::WriteGraphJsonFile(*loaded, *out);
            } else {
              st = InvalidArgument("--output: '" + *out + "' must end in .onnx or .json");
            }
            if (!st.ok()) return ReportError(st);
            std::printf("wrote %s (%zu ops)\n", out->c_str(), loaded->Ops().size());
            return 0;
          }};
}

}  // namespace hx::cli
