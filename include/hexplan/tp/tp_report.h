#pragma once
// Output of the tensor-parallel planner: the JSON the CLI prints, the AsymGroup evaluation sweeps
// (Figs. 8 and 9 of paper 003) and simple SVG charts for docs/tensor-parallel.md.

#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/tp/llm_tp.h"

namespace hx::tp {

// {"method", "k", "groups":[{"nodes":[...],"capability":c}], "comm_volume_bytes", "latency_ms",
//  "prefill_ms", "decode_ms", "total_ms", ..., "plan":{"nodes":[...]}}
std::string TpResultToJson(const TpResult& result, const TpSystem& system, const LlmShape& shape,
                           const LlmWorkload& workload, bool include_plan = true);

// One series of a chart.
struct ChartSeries {
  std::string name;
  std::vector<double> y;
};
struct ChartSpec {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<std::string> x;  // category labels (one per point)
  std::vector<ChartSeries> series;
  bool bars = false;   // grouped bars instead of lines
  double y_min = 0.0;  // axis starts here
};
// A self-contained SVG (no scripts, no external references).
std::string RenderChartSvg(const ChartSpec& chart);

// Fig. 8: communication volume fraction per method for 1..max_nodes one-GPU nodes.
struct VolumeRow {
  int nodes = 0;
  double megatron = 0, autoddl = 0, asymgroup = 0, ideal = 0;  // fraction of b*h per linear
  int asym_k = 1, autoddl_k = 1;
};
StatusOr<std::vector<VolumeRow>> NodeCountVolumeSweep(int max_nodes);

}  // namespace hx::tp
