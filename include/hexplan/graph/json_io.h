#pragma once
// hexplan's own JSON graph format (docs/formats.md), read and write.

#include <string>

#include "hexplan/core/status.h"
#include "hexplan/graph/graph.h"

namespace hx::graph {

std::string WriteGraphJson(const Graph& graph);
Status WriteGraphJsonFile(const Graph& graph, const std::string& path);
// `source_name` names the input in errors ("model.json: nodes[3].inputs[1]: ...").
StatusOr<Graph> ReadGraphJson(const std::string& text, const std::string& source_name);
StatusOr<Graph> ReadGraphJsonFile(const std::string& path);

}  // namespace hx::graph
