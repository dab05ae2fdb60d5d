#include "hexplan/graph/model_loader.h"

#include "hexplan/core/file_util.h"
#include "hexplan/graph/efficientmip_io.h"
#include "hexplan/graph/json_io.h"
#include "hexplan/graph/onnx_io.h"

namespace hx::graph {

StatusOr<Graph> LoadModel(const std::string& spec, const ZooOptions& options, Logger* logger) {
  HX_RETURN_IF_ERROR(options.Validate());
  if (FindZooModel(spec) != nullptr) return BuildZooModel(spec, options);
  const std::string ext = FileExtension(spec);
  if (ext == "onnx") {
    OnnxReadOptions onnx_options;
    onnx_options.default_batch = options.batch;
    onnx_options.default_seq = options.seq;
    return ReadOnnxFile(spec, onnx_options, logger);
  }
  if (ext == "json") {
    HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(spec));
    if (LooksLikeEfficientMipJson(text)) {
      HX_ASSIGN_OR_RETURN(EfficientMipWorkload workload, ReadEfficientMipJson(text, spec));
      return std::move(workload.graph);
    }
    return ReadGraphJson(text, spec);
  }
  std::string known;
  for (const auto& m : ZooModels()) known += (known.empty() ? "" : ", ") + m.name;
  return InvalidArgument(
      "'" + spec + "' is neither a zoo model nor a .onnx or .json file; zoo models: " + known);
}

}  // namespace hx::graph
