#pragma once
// Reader for PipeDream's profiled layer graphs (profiler/*/profiles/*/graph.txt in
// shared/data/placement/pipedream; format in docs/formats.md, "PipeDream graph.txt"):
//   node77 -- BatchNorm2d(512, ...) -- forward_compute_time=1.236, backward_compute_time=1.442,
//             activation_size=205520896.000, parameter_size=4096.000
//   \tnode76 -- node77
// Times in ms (GPU, training batch), sizes in bytes.

#include <string>
#include <utility>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/graph/graph.h"

namespace hx::graph {

struct PipeDreamLayer {
  std::string name;    // "node77"
  std::string module;  // the PyTorch module repr, "BatchNorm2d(512, eps=1e-05, ...)"
  NodeId node;         // the graph node it became
  double forward_ms = 0.0;
  double backward_ms = 0.0;
  std::vector<int64_t> activation_sizes;  // bytes per output (one, or several for "[a; b]")
  int64_t activation_bytes = 0;           // their sum
  int64_t parameter_bytes = 0;
};

struct PipeDreamProfile {
  // Layers named "InputK" become graph inputs (a uint8 tensor named after the layer); every other
  // layer an op whose op_type is the module's class name ("Conv2d", "__getitem__"), producing
  // "<name>:out" (uint8, [activation_bytes]) and carrying attributes forward_ms, backward_ms,
  // parameter_bytes and module. Each layer without successors feeds an output node.
  Graph graph;
  std::vector<PipeDreamLayer> layers;            // in file order
  std::vector<std::pair<size_t, size_t>> edges;  // indices into layers, in file order
};

StatusOr<PipeDreamProfile> ReadPipeDreamGraph(const std::string& text,
                                              const std::string& source_name);
StatusOr<PipeDreamProfile> ReadPipeDreamGraphFile(const std::string& path);

}  // namespace hx::graph
