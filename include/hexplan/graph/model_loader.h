#pragma once
// One entry point for every way a user names a model: a zoo name, an .onnx file, a hexplan .json
// graph, or an EfficientMIP .json workload.

#include <string>

#include "hexplan/core/logger.h"
#include "hexplan/core/status.h"
#include "hexplan/graph/graph.h"
#include "hexplan/graph/zoo.h"

namespace hx::graph {

StatusOr<Graph> LoadModel(const std::string& spec, const ZooOptions& options,
                          Logger* logger = nullptr);

}  // namespace hx::graph
