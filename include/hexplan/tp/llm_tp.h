#pragma once
// Tensor-parallel LLM inference on a (possibly asymmetric) cluster: AsymGroup (paper 003) and its
// baselines, with a communication volume model, an alpha-beta + roofline time model and the plan a
// runtime needs (per node: batch slice, weight blocks of every linear layer, peers and bytes).
//
// Methods:
//   asymgroup  capability-proportional 2D TP: k groups (ring), intergroup all-gather + intragroup
//              reduce-scatter around each linear layer (eqs. 2-5), work proportional to c_n.
//   megatron   1D TP over all GPUs with equal shards; two ring all-reduces per decoder layer, chunk
//              shares either equal or proportional to each ring link's bandwidth
//              (FlexReduce-style), whichever is faster.
//   autoddl    symmetric 2D TP over the N nodes: a k x N/k grid with k a divisor of N (rigid
//              factorisation), equal work per node regardless of its GPU count.
//   ideal      the sqrt(N) x sqrt(N) grid bound of eq. 1 (communication volume only).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hexplan/core/registry.h"
#include "hexplan/core/status.h"
#include "hexplan/graph/zoo.h"
#include "hexplan/graph/zoo_attention.h"
#include "hexplan/tp/grouping.h"
#include "hexplan/tp/tp_system.h"

namespace hx::tp {

enum class TpMethod { kAsymGroup, kMegatron, kAutoDdl, kIdeal };

// The methods by name (`hexplan tp --algo NAME`), listed once in src/tp/llm_tp.cc.
struct TpMethodEntry {
  std::string name;
  std::string description;  // one line, for help texts
  TpMethod method = TpMethod::kAsymGroup;
};
// Every method, in the order above.
const std::vector<TpMethodEntry>& TpMethods();
// The same methods by name. Find of an unknown name returns NotFound
// "--algo: unknown method 'NAME' (known: ...)".
const Registry<TpMethodEntry>& TpMethodRegistry();
const char* TpMethodName(TpMethod method);
StatusOr<TpMethod> ParseTpMethod(const std::string& name);  // TpMethodRegistry().Find

struct LlmShape {
  std::string name;
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;  // grouped-query attention: K/V heads (0 = heads)
  int64_t head_dim = 0;  // 0 = hidden / heads; heads x head_dim may differ from hidden (GPT-3 13B)
  int64_t ffn_hidden = 0;
  bool gated_ffn = false;  // SwiGLU (LLaMA): fc1 holds the gate and the up projection (2 x ffn)
  int64_t vocab = 0;
  bool untied_lm_head = false;  // LLaMA: the LM head is a second vocab x hidden matrix
  // Which ends of the model these GPUs hold: a pipeline's first stage the embedding, its last the
  // LM head (a tied head is a copy of the embedding there), one stage both.
  bool embedding = true;
  bool lm_head = true;
  int64_t bytes_per_element = 2;  // FP16
  Status Validate() const;
  int64_t HeadDim() const;         // head_dim, or hidden / heads
  int64_t AttentionWidth() const;  // heads x head_dim: Q's width and the output projection's input
  int64_t KvWidth() const;         // kv_heads x head_dim: K's and V's width
  // Decoder-block weights (the four linears of DecoderLinears per layer) plus the embedding and the
  // LM head this shape holds (one matrix for both where tied and held together).
  double ParameterCount() const;
  double KvBytesPerToken() const;  // layers * 2 (K and V) * KvWidth * bytes
};
// `attention` (from graph::ZooAttention) gives heads, K/V heads and head width; without it the
// heads tile the hidden width.
LlmShape ShapeFromConfig(const std::string& name, const graph::TransformerConfig& config,
                         int64_t bytes_per_element,
                         const graph::ZooAttentionShape* attention = nullptr);

struct LlmWorkload {
  int64_t batch = 200;
  int64_t input_len = 128;
  int64_t output_len = 128;
  // Sequences whose KV cache the GPUs hold: 0 = batch. A pipeline stage runs micro-batches of
  // `batch` but holds the KV cache of all of them.
  int64_t kv_batch = 0;
  int64_t KvSequences() const { return kv_batch > 0 ? kv_batch : batch; }
  Status Validate() const;
};

// How the inference engine runs a decoder step (`--engine`), chosen per measurement by what the
// measured system used (docs/tensor-parallel.md "End to end"):
//   eager  one kernel per operator (QK^T, softmax and AV apart), each launched from the host in
//          turn: the calibration's kernel_launch_s lies on the GPU's critical path (PyTorch eager).
//   fused  a compiled C++ engine (TensorRT-LLM, FasterTransformer): attention is one fused kernel
//          (FMHA in prefill, masked multi-head attention reading the KV cache in decode), and the
//          host enqueues asynchronously, so launches overlap GPU work and each kernel costs the
//          GPU only the gap between back-to-back kernels in a stream (kFusedKernelGapS).
enum class TpEngine { kEager, kFused };
StatusOr<TpEngine> ParseTpEngine(
    const std::string& name);  // "eager" | "fused"; else InvalidArgument
const char* TpEngineName(TpEngine engine);
// The GPU-side cost of one kernel behind asynchronous launches: NVIDIA's CUDA Graphs post (Gray,
// 2019, developer.nvidia.com/blog/cuda-graphs) measures a 2.9 us kernel at 3.8 us per kernel when
// launched back to back without synchronisation, so 0.9 us per kernel.
inline constexpr double kFusedKernelGapS = 0.9e-6;

// Which all-reduce a single-node tensor-parallel group runs (`--all-reduce`):
//   nccl    NCCL's ring, on the calibration's NCCL fits (vidur's measurements).
//   custom  the engine's own kernel over peer-mapped buffers (TensorRT-LLM's customAllReduce,
//           vLLM's and SGLang's custom all-reduce): the calibration's `library: custom` fit for
//           that many GPUs, up to its max_bytes; larger messages, GPU counts with no custom fit,
//           and collectives across nodes stay on NCCL.
enum class TpAllReduce { kNccl, kCustom };
StatusOr<TpAllReduce> ParseTpAllReduce(const std::string& name);  // "nccl" | "custom"
const char* TpAllReduceName(TpAllReduce a);
// Why `--all-reduce custom` changes nothing on `sys` with `method` (empty when it may apply): the
// custom kernel serves Megatron's all-reduces (asymgroup's too where it reduces to Megatron's
// layout) inside one node whose GPUs have a custom fit.
std::string CustomAllReduceGap(const TpSystem& sys, TpMethod method);

// The time model's calibrated parameters.
struct TimeParams {
  std::string preset = "paper";
  // Communication: each step of a collective costs link latency + step_latency + bytes/(bw*eff);
  // each collective adds collective_base_s once.
  double collective_base_s = 0.0;
  double intra_step_s = 0.0;
  double inter_step_s = 0.0;
  double bandwidth_efficiency = 1.0;
  // Compute: per kernel max(FLOPs/(peak*gemm_eff), bytes/(mem_bw*mem_eff)) + kernel_overhead_s.
  double gemm_efficiency = 0.9;
  double memory_efficiency = 0.8;
  double kernel_overhead_s = 0.0;
  // "calibrated": kernels timed by each GPU's shipped calibration (class curves + its launch
  // cost; the roofline above where a GPU has none); collectives inside a node whose GPUs share a
  // calibration with an all_reduce fit for that many GPUs (vidur's NCCL times, cost layer) on that
  // fit + one launch per call (Megatron's ring on one node, the 2D methods' NVLink
  // reduce-scatter); other collectives as "nccl". It also times the LM head (one GEMM over the
  // vocabulary for each sequence's last position, in prefill and in every decode step), which the
  // other presets leave out, as the AsymGroup paper's model does.
  bool calibrated = false;
  TpEngine engine = TpEngine::kEager;
  TpAllReduce all_reduce = TpAllReduce::kNccl;  // only with `calibrated`
  Status Validate() const;
};
// "paper": the link latencies of the cluster (AsymGroup §VI-A: 50 ns NVLink, 200 ns network) and
//          nothing else per step. "nccl": NCCL's Ring/Simple constants (base 8.4 us per collective,
//          +3.4 us per NVLink step, +14 us per network step; data/tp/NVIDIA-nccl).
//          "calibrated": every kernel and the intra-node collectives on the cost layer's fits
//          (TimeParams::calibrated), the rest as "nccl".
StatusOr<TimeParams> TimePreset(const std::string& name);

struct TpOptions {
  TpMethod method = TpMethod::kAsymGroup;
  int groups = 0;  // k; 0 = automatic
  GroupingOptions grouping;
  bool check_memory = true;
  // Every 2D collective moves b*h (eq. 1) instead of the layer width, in the volume and in the
  // time (`--paper-volume`).
  bool paper_volume_accounting = false;
  // asymgroup with automatic k: also time the symmetric 2D grids (AutoDDL's layout, every divisor
  // k) and the 1D layout (Megatron's), and keep the fastest, so that asymgroup is never slower
  // than either baseline (TpResult::layout says which layout won). false: the paper's grouping
  // only.
  bool best_of_layouts = true;
  TimeParams time;
  Status Validate() const;
};

struct LinearLayer {
  std::string name;  // "qkv", "proj", "fc1", "fc2"
  int64_t in = 0;
  int64_t out = 0;
};
std::vector<LinearLayer> DecoderLinears(const LlmShape& shape);

struct WeightBlock {
  std::string layer;
  int64_t row_begin = 0, row_end = 0;  // input features
  int64_t col_begin = 0, col_end = 0;  // output features
};

struct PeerSend {
  std::string layer;
  std::string collective;  // "all-gather", "reduce-scatter", "all-reduce"
  int peer = -1;           // node index
  int64_t bytes = 0;       // per decode step (batch tokens), per decoder layer
};

struct GpuPlan {
  std::string name;
  double work_share = 0.0;  // fraction of the whole layer's linear work
  std::vector<WeightBlock> blocks;
};

struct NodePlan {
  int node = 0;
  std::string name;
  int group = -1;
  double capability = 0.0;
  int64_t batch_begin = 0, batch_end = 0;  // its batch slice (sequences)
  std::vector<WeightBlock> blocks;         // the node's blocks (union of its GPUs')
  std::vector<GpuPlan> gpus;
  std::vector<PeerSend> sends;
  int64_t bytes_sent_per_layer = 0;  // per decode step
};

struct TpPlan {
  std::vector<NodePlan> nodes;
};

struct TpResult {
  TpMethod method = TpMethod::kAsymGroup;
  // The layout the plan uses: `method`, except where asymgroup reduced to a baseline's layout
  // (best_of_layouts): kAutoDdl (a symmetric 2D grid) or kMegatron (1D over all GPUs).
  TpMethod layout = TpMethod::kAsymGroup;
  bool reduced() const { return layout != method; }
  // asymgroup: the total time of the paper's layout (the eq.-5-best grouping), before the search
  // over group counts and baseline layouts; 0 for the other methods.
  double paper_asymgroup_total_s = 0.0;
  bool volume_only = false;  // ideal: a communication-volume bound, no plan and no times
  Grouping grouping;         // asymgroup/autoddl groups; megatron: one group of all nodes
  std::vector<double> capabilities;
  int k = 1;
  // Bytes the bottleneck node sends per decode step (batch tokens), summed over all layers and
  // collectives: the critical-path volume the paper's eqs. count.
  double comm_volume_bytes = 0.0;
  double comm_volume_prefill_bytes = 0.0;
  // Bytes the busiest GPU sends to the GPUs of its own node (NVLink) per decode step / in prefill.
  double comm_volume_intra_bytes = 0.0;
  double comm_volume_intra_prefill_bytes = 0.0;
  double prefill_s = 0.0, prefill_compute_s = 0.0, prefill_comm_s = 0.0;
  double decode_s = 0.0, decode_compute_s = 0.0, decode_comm_s = 0.0;  // all output tokens
  double per_token_s = 0.0;                                            // decode_s / output_len
  double total_s() const { return prefill_s + decode_s; }
  double ttft_s() const { return prefill_s; }  // time to first token: the prompt's forward pass
  double memory_needed_bytes = 0.0;
  double memory_per_gpu_max_bytes = 0.0;  // the largest GPU's share of weights + KV cache
  TpPlan plan;
};

// Communication volume of one linear-layer pair of collectives per unit activation, for the
// volume studies (Fig. 8): the fraction of the activation the bottleneck node sends.
StatusOr<double> CommVolumeFraction(TpMethod method, const std::vector<double>& capabilities,
                                    int gpus, const TpOptions& options = {});

// Plans and times one method. Errors: invalid options/shape/workload, a zero-capability node,
// k > nodes, or (with check_memory) a model that does not fit.
StatusOr<TpResult> PlanTensorParallel(const TpSystem& system, const LlmShape& shape,
                                      const LlmWorkload& workload, const TpOptions& options);

// The layout PlanTensorParallel picks for a workload, timed at other batch sizes with its grouping,
// shares and rings fixed: what a server deploying that plan sees as its running batch changes
// (continuous batching does not reshard weights per step). The system and shape must outlive it.
class PlannedLayout {
 public:
  // Errors as PlanTensorParallel's, and for kIdeal (a volume bound, no layout).
  static StatusOr<PlannedLayout> Plan(const TpSystem& system, const LlmShape& shape,
                                      const LlmWorkload& workload, const TpOptions& options);
  // The planned layout's times (and memory, with the planned batch's KV cache) at `batch`
  // sequences of the planned lengths.
  StatusOr<TpResult> At(int64_t batch) const;

 private:
  struct Chosen;
  const TpSystem* sys_ = nullptr;
  const LlmShape* shape_ = nullptr;
  LlmWorkload wl_;
  TpOptions options_;
  std::shared_ptr<const Chosen> chosen_;
};

// One kernel on one GPU under the roofline: max(FLOPs/(peak*gemm_eff), bytes/(bw*mem_eff)) +
// kernel overhead + the GPU's launch overhead.
// With params.calibrated and a GPU calibration: the class curve of `op_class` plus the
// calibration's kernel launch cost instead.
double KernelSeconds(double flops, double bytes, const TpGpu& gpu, const TimeParams& params,
                     cost::OpClass op_class = cost::OpClass::kOther);

// AutoDDL's rigid factorisation: the divisor k of n minimising (k-1) + (n/k-1); ties to smaller k.
int AutoDdlGridRows(int n);

}  // namespace hx::tp
