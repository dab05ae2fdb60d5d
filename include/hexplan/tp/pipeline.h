#pragma once
// Pipeline x tensor parallelism (`hexplan tp MODEL --pp auto|N`): the nodes are cut into S stages
// (contiguous in the cluster's node order, capability-balanced); each stage holds a contiguous run
// of decoder layers, split unevenly so that the slowest stage (its layers and its ends: the
// embedding on the first, the LM head on the last) is as fast as it can be, capped by the stages'
// GPU memory (HexGen's idea, Jiang et al., ICML 2024), and runs them with tensor parallelism over
// its own nodes (the method of TpOptions). The batch is cut into micro-batches that flow through
// the stages; the bubbles are what the slowest stage leaves idle.
//
// Times per micro-batch m of b/M sequences: prefill (TTFT) = sum_s P_s + (M-1) max_s P_s plus one
// activation hand-off per stage boundary; decode step (TPOT) = max(M max_s D_s, sum_s D_s + the
// hand-offs), since a micro-batch's next token needs its last one, so with M < S stages idle.

#include <cstdint>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/tp/llm_tp.h"

namespace hx::tp {

struct PipelineOptions {
  int stages = 0;         // S; 0 = automatic (the fastest S in 1..min(nodes, layers, max_stages))
  int micro_batches = 0;  // M; 0 = min(S, batch)
  int max_stages = 16;
  Status Validate() const;
};

struct PipelineStage {
  std::vector<int> nodes;  // indices into the cluster's TpSystem
  double capability = 0.0;
  int64_t layer_begin = 0, layer_end = 0;  // [begin, end)
  int64_t max_layers = 0;                  // what its GPU memory holds (weights + KV cache)
  bool embedding = false;                  // the first stage holds the embedding
  bool lm_head = false;                    // the last stage the LM head
  TpResult tp;                             // its tensor-parallel plan, timed per micro-batch
};

struct PipelineResult {
  std::vector<PipelineStage> stages;
  int micro_batches = 1;
  double prefill_s = 0.0;  // TTFT
  double step_s = 0.0;     // one decode step of the whole batch (TPOT)
  double decode_s = 0.0;
  double handoff_prefill_s = 0.0, handoff_step_s = 0.0;  // per stage boundary
  double bubble_fraction = 0.0;  // decode: stage-time idle / stage-time available
  double total_s() const { return prefill_s + decode_s; }
};

// Errors: bad options, S > nodes or > layers, a model whose layers do not fit the stages' memory
// (naming the stage), and the tensor-parallel errors of a stage.
StatusOr<PipelineResult> PlanPipeline(const TpSystem& system, const LlmShape& shape,
                                      const LlmWorkload& workload, const TpOptions& tp_options,
                                      const PipelineOptions& options);

// A stage's time for n layers, linear in n: its ends (embedding, LM head) plus n layers. A stage
// given no layer takes no part (time 0).
struct StageTime {
  double ends_s = 0.0;
  double per_layer_s = 0.0;
  double For(int64_t layers) const {
    return layers > 0 ? ends_s + static_cast<double>(layers) * per_layer_s : 0.0;
  }
};

// The layer split whose slowest stage is fastest: every layer once, no stage above its
// `max_layers`, the first and the last stage (which hold the model's ends) at least one layer
// each where their memory holds one. Each further layer goes, one at a time, to the stage it
// leaves least loaded (ties to the earlier stage): for stage times that grow with their layers no
// split under those rules has a faster slowest stage. Errors when sum(max_layers) < layers.
StatusOr<std::vector<int64_t>> SplitLayers(int64_t layers, const std::vector<StageTime>& times,
                                           const std::vector<int64_t>& max_layers);

}  // namespace hx::tp
