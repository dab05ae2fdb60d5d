#pragma once
// Reader for the EfficientMIP ("Efficient Algorithms for Device Placement of DNN Graph Operators",
// NeurIPS 2020) JSON operator and layer graphs in shared/data/placement/dnn-partitioning.
// Fields: {maxSizePerFPGA, maxFPGAs, maxCPUs, nodes[{id, name, supportedOnFpga, cpuLatency,
// fpgaLatency, isBackwardNode, colorClass, size, layerId?}], edges[{sourceId, destId, cost,
// size}]}. Time unit: ms. "FPGA" means any accelerator.

#include <cstdint>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/graph/graph.h"

namespace hx::graph {

// maxFPGAs and maxCPUs: the implicit cluster gets one device per accelerator and CPU, with routes
// between every pair, so a count in the millions would stall the import (the published files have
// at most 14 and 8).
inline constexpr int64_t kEfficientMipMaxDevices = 64;

struct EfficientMipNode {
  int64_t file_id = 0;
  NodeId node;  // the graph node it became
  bool supported_on_accelerator = true;
  double cpu_latency_ms = 0.0;
  double accelerator_latency_ms = 0.0;
  bool is_backward = false;
  int64_t color_class = -1;  // nodes of one class go to one device; -1 when the file gives none
  int64_t size_bytes = 0;    // memory footprint
  int64_t layer_id = -1;     // -1 when the file gives none
};

struct EfficientMipEdge {
  int64_t source_file_id = 0;
  int64_t dest_file_id = 0;
  double cost_ms = 0.0;  // time to move the source's output between accelerator and CPU DRAM
  int64_t size_bytes = 0;
};

struct EfficientMipWorkload {
  // One op per file node (op_type "EfficientMipNode", named as in the file, attributes
  // efficientmip_id, cpu_latency_ms, accelerator_latency_ms, memory_bytes, color_class,
  // supported_on_accelerator, is_backward). A node with out-edges produces one uint8 tensor of
  // shape [edge size] per distinct out-edge size ("<name>:out", or "<name>:out<k>" when sizes
  // differ) read by the edges' destinations. No input or output nodes: sources and sinks are ops.
  Graph graph;
  std::vector<EfficientMipNode> nodes;  // in file order
  std::vector<EfficientMipEdge> edges;  // in file order
  int64_t max_size_per_accelerator_bytes = 0;
  int64_t max_accelerators = 0;
  int64_t max_cpus = 0;
};

bool LooksLikeEfficientMipJson(const std::string& text);
StatusOr<EfficientMipWorkload> ReadEfficientMipJson(const std::string& text,
                                                    const std::string& source_name);
StatusOr<EfficientMipWorkload> ReadEfficientMipFile(const std::string& path);

}  // namespace hx::graph
