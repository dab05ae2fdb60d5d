#pragma once
// Output of the tensor-parallel planner: the JSON the CLI prints, the AsymGroup evaluation sweeps
// (Figs. 8 and 9 of paper 003) and simple SVG charts for docs/tensor-parallel.md.

#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/tp/llm_tp.h"
#include "hexplan/tp/pipeline.h"
#include "hexplan/tp/serving.h"
#include "hexplan/tp/tp_compare.h"

namespace hx::tp {

// {"method", "k", "groups":[{"nodes":[...],"capability":c}], "comm_volume_bytes", "latency_ms",
//  "prefill_ms", "decode_ms", "total_ms", ..., "plan":{"nodes":[...]}}
// Also "layout" and "reduced_to" (asymgroup: the baseline layout it reduced to, else null),
// "ttft_ms", "tpot_ms", "comm_volume_intra_bytes" (NVLink, busiest GPU),
// "memory_per_gpu_max_bytes"; ideal ("volume_only": true) has null times and no plan.
// With `serving` (--rate): "serving": {"rate", "requests", "ttft_ms": {"p50", "p99"}, "tpot_ms",
// "latency_ms", "mean_running"}.
std::string TpResultToJson(const TpResult& result, const TpSystem& system, const LlmShape& shape,
                           const LlmWorkload& workload, bool include_plan = true,
                           const ServingResult* serving = nullptr, double rate = 0.0);
// One line for a terminal: "at R req/s: TTFT p50 .. ms, p99 .. ms; TPOT ...; latency ...".
std::string ServingLine(const ServingResult& serving, double rate);
// {"model", "cluster", ..., "winner": "asymgroup", "methods": [{"method", ... as above, no plan} or
//  {"method", "error"}]}
std::string TpComparisonToJson(const TpComparison& comparison, const TpSystem& system,
                               const LlmShape& shape, const LlmWorkload& workload);

// {"model", ..., "pipeline": {"stages": [{"nodes", "capability", "layers": [begin, end],
//  "max_layers", "tp": {as TpResultToJson, no plan}}], "micro_batches", "ttft_ms", "tpot_ms",
//  "decode_ms", "total_ms", "bubble_fraction"}}
std::string PipelineToJson(const PipelineResult& result, const TpSystem& system,
                           const LlmShape& shape, const LlmWorkload& workload);

// Bytes in the unit that keeps 1-999 of it ("117 MB", "1.42 GB", "512 B"): real traffic never
// prints as 0.
std::string FormatBytes(double bytes);

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
