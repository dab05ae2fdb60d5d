#include "hexplan/graph/model_loader.h"

#include <algorithm>
#include <fstream>
#include <vector>

#include "hexplan/core/file_util.h"
#include "hexplan/graph/efficientmip_io.h"
#include "hexplan/graph/json_io.h"
#include "hexplan/graph/onnx_io.h"

namespace hx::graph {
namespace {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// Why `spec` names no model: a path that does not exist, a file of another kind, or a name that
// is not in the zoo (with the closest zoo name, when one is close).
Status UnknownModel(const std::string& spec) {
  std::string known, closest;
  size_t best = 3;  // suggest only names within two edits
  for (const auto& m : ZooModels()) {
    known += (known.empty() ? "" : ", ") + m.name;
    if (const size_t d = EditDistance(spec, m.name); d < best) best = d, closest = m.name;
  }
  const bool looks_like_path = spec.find('/') != std::string::npos || !FileExtension(spec).empty();
  if (looks_like_path && !std::ifstream(spec).good()) {
    return NotFound("'" + spec +
                    "': no such file (a model is a zoo name, a .onnx or a .json file)");
  }
  if (looks_like_path) {
    return InvalidArgument(
        "'" + spec + "': not a model file this command reads (.onnx or .json" +
        std::string(FileExtension(spec) == "csv"
                        ? "; MOIRAI CSV workloads are read by inspect, place and compare"
                        : "") +
        ")");
  }
  return InvalidArgument("'" + spec + "' is not a zoo model" +
                         (closest.empty() ? "" : " (did you mean '" + closest + "'?)") +
                         "; zoo models: " + known);
}

// Options a zoo model has no use for are ignored; say so rather than pretend.
void WarnIgnoredZooOptions(const ZooModelInfo& info, const ZooOptions& options, Logger* logger) {
  if (options.seq > 0 && info.default_seq == 0) {
    LogTo(logger, LogLevel::kWarning,
          "--seq " + std::to_string(options.seq) + " is ignored: " + info.name +
              " takes images, it has no sequence length");
  }
  if (info.family != "lstm" && (options.lstm_layers > 0 || options.lstm_io > 0)) {
    LogTo(logger, LogLevel::kWarning,
          std::string(options.lstm_layers > 0 ? "--layers" : "--io") +
              " is ignored: it sizes the zoo's lstm only, not " + info.name);
  }
  if (options.separate_batchnorm && (info.family != "cnn" || info.name.rfind("vgg", 0) == 0)) {
    LogTo(logger, LogLevel::kWarning,
          "--batchnorm separate is ignored: " + info.name + " has no BatchNorm after a Conv");
  }
}

// An image size for a model that takes no image is refused, not ignored: the user asked for a
// different model than they would get.
Status CheckImageSize(const std::string& spec, const ZooModelInfo* info,
                      const ZooOptions& options) {
  if (options.image_size == 0 || (info != nullptr && info->default_image > 0)) return Status::Ok();
  const std::string given = "--image " + std::to_string(options.image_size) + ": ";
  if (info == nullptr)
    return InvalidArgument(given + "'" + spec +
                           "' is a model file, whose input sizes the file fixes; --image sizes "
                           "the zoo's image models (the CNNs and Swin)");
  return InvalidArgument(given + info->name +
                         " takes no image; --image sizes the zoo's image models (the CNNs and "
                         "Swin)");
}

}  // namespace

StatusOr<Graph> LoadModel(const std::string& spec, const ZooOptions& options, Logger* logger) {
  HX_RETURN_IF_ERROR(options.Validate());
  HX_RETURN_IF_ERROR(CheckImageSize(spec, FindZooModel(spec), options));
  if (const ZooModelInfo* info = FindZooModel(spec)) {
    WarnIgnoredZooOptions(*info, options, logger);
    return BuildZooModel(spec, options);
  }
  const std::string ext = FileExtension(spec);
  if (options.separate_batchnorm && (ext == "onnx" || ext == "json"))
    return InvalidArgument("--batchnorm separate: '" + spec +
                           "' is a model file, whose ops the file fixes; --batchnorm lays out "
                           "the zoo's CNNs");
  if (ext == "onnx") {
    OnnxReadOptions onnx_options;
    onnx_options.default_batch = options.batch;
    onnx_options.default_seq = options.seq;
    onnx_options.refuse_unapplied_defaults = true;
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
  return UnknownModel(spec);
}

}  // namespace hx::graph
