#include "hexplan/tp/pipeline.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>
#include <optional>

#include "hexplan/tp/grouping.h"

namespace hx::tp {

Status PipelineOptions::Validate() const {
  if (stages < 0) return InvalidArgument("--pp must be 'auto' or a stage count >= 1");
  if (micro_batches < 0) return InvalidArgument("--micro-batches must be >= 0 (0 = automatic)");
  if (max_stages < 1) return InvalidArgument("pipeline: max_stages must be >= 1");
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> SplitLayers(int64_t layers, const std::vector<double>& caps,
                                           const std::vector<int64_t>& max_layers) {
  int64_t room = std::accumulate(max_layers.begin(), max_layers.end(), int64_t{0});
  if (room < layers)
    return ResourceExhausted("the stages' GPU memory holds " + std::to_string(room) + " of the " +
                             std::to_string(layers) + " layers");
  std::vector<int64_t> out(caps.size(), 0);
  int64_t left = layers;
  while (left > 0) {  // each round either places every layer or fills at least one stage
    std::vector<double> w(caps.size(), 0.0);
    for (size_t s = 0; s < caps.size(); ++s) w[s] = out[s] < max_layers[s] ? caps[s] : 0.0;
    std::vector<int64_t> add = ProportionalSplit(left, w);
    for (size_t s = 0; s < caps.size(); ++s) {
      int64_t take = std::min(add[s], max_layers[s] - out[s]);
      out[s] += take;
      left -= take;
    }
  }
  return out;
}

namespace {

TpSystem SubSystem(const TpSystem& sys, const std::vector<int>& nodes, int stage) {
  TpSystem sub;
  sub.name = sys.name + "[stage " + std::to_string(stage) + "]";
  for (int n : nodes) sub.nodes.push_back(sys.nodes[n]);
  sub.NormalizeCapabilities();
  return sub;
}

// S contiguous runs of nodes whose capability sums are closest to C/S each (every run >= 1 node).
std::vector<std::vector<int>> StageNodes(const TpSystem& sys, int S) {
  std::vector<double> caps = sys.Capabilities();
  int n = static_cast<int>(caps.size());
  double total = std::accumulate(caps.begin(), caps.end(), 0.0), prefix = 0.0;
  std::vector<std::vector<int>> out(S);
  int s = 0;
  for (int i = 0; i < n; ++i) {
    bool can_cut = !out[s].empty() && s + 1 < S;
    bool must_cut = can_cut && n - i <= S - s - 1;  // the later stages need a node each
    double target = total * (s + 1) / S;
    bool want_cut = can_cut && std::fabs(prefix - target) < std::fabs(prefix + caps[i] - target);
    if (must_cut || want_cut) ++s;
    out[s].push_back(i);
    prefix += caps[i];
  }
  return out;
}

// The embedding on the first stage, the LM head on the last.
LlmShape StageShape(const LlmShape& shape, int64_t layers, bool first, bool last) {
  LlmShape s = shape;
  s.layers = layers;
  s.embedding = first;
  s.lm_head = last;
  return s;
}

// How many layers a stage's GPUs hold with its method's layout (weights + the whole batch's KV).
StatusOr<int64_t> MaxLayers(const TpSystem& sub, const LlmShape& shape, const LlmWorkload& wl,
                            const TpOptions& options, bool first, bool last) {
  if (!options.check_memory) return shape.layers;
  TpOptions probe = options;  // memory only: the paper's layout, one decode step
  probe.check_memory = false;
  probe.best_of_layouts = false;
  LlmWorkload step = wl;
  step.kv_batch = wl.KvSequences();
  step.input_len = wl.input_len + wl.output_len - 1;  // the same KV cache, one decode step
  step.output_len = 1;
  HX_ASSIGN_OR_RETURN(TpResult one,
                      PlanTensorParallel(sub, StageShape(shape, 1, false, false), step, probe));
  HX_ASSIGN_OR_RETURN(TpResult two,
                      PlanTensorParallel(sub, StageShape(shape, 2, first, last), step, probe));
  // Linear in the layer count: the fullest GPU's bytes per layer, plus the stage's ends (the
  // embedding on the first, the LM head on the last).
  double layer_bytes = one.memory_per_gpu_max_bytes;
  double embed = std::max(0.0, two.memory_per_gpu_max_bytes - 2 * layer_bytes);
  int64_t mem = INT64_MAX;
  for (const auto& n : sub.nodes)
    for (const auto& g : n.gpus) mem = std::min(mem, g.memory_bytes);
  double fit = std::floor((static_cast<double>(mem) - embed) / layer_bytes);
  return static_cast<int64_t>(std::clamp(fit, 0.0, static_cast<double>(shape.layers)));
}

double Handoff(const TpSystem& sys, const PipelineStage& from, double bytes) {
  const TpNode& n = sys.nodes[from.nodes.back()];
  return n.inter_latency_s + bytes / n.inter_bandwidth;
}

void TimePipeline(const TpSystem& sys, const LlmShape& shape, const LlmWorkload& wl,
                  int64_t micro_batch, PipelineResult* r) {
  double M = r->micro_batches, sum_p = 0, max_p = 0, sum_d = 0, max_d = 0;
  for (const auto& st : r->stages) {
    sum_p += st.tp.prefill_s, max_p = std::max(max_p, st.tp.prefill_s);
    sum_d += st.tp.per_token_s, max_d = std::max(max_d, st.tp.per_token_s);
  }
  double act = static_cast<double>(micro_batch * shape.hidden * shape.bytes_per_element);
  double bounds = static_cast<double>(r->stages.size()) - 1;
  r->handoff_prefill_s = r->stages.size() > 1
                             ? Handoff(sys, r->stages[0], act * static_cast<double>(wl.input_len))
                             : 0.0;
  r->handoff_step_s = r->stages.size() > 1 ? Handoff(sys, r->stages[0], act) : 0.0;
  r->prefill_s = sum_p + (M - 1) * max_p + bounds * r->handoff_prefill_s;
  r->step_s = std::max(M * max_d, sum_d + bounds * r->handoff_step_s);
  r->decode_s = r->step_s * static_cast<double>(wl.output_len);
  double S = static_cast<double>(r->stages.size());
  r->bubble_fraction = r->step_s > 0 ? 1.0 - M * sum_d / (S * r->step_s) : 0.0;
}

StatusOr<PipelineResult> PlanStages(const TpSystem& sys, const LlmShape& shape,
                                    const LlmWorkload& wl, const TpOptions& options, int S,
                                    int micro_batches) {
  PipelineResult r;
  r.micro_batches =
      micro_batches > 0 ? micro_batches : static_cast<int>(std::min<int64_t>(S, wl.batch));
  auto groups = StageNodes(sys, S);
  std::vector<TpSystem> subs;
  std::vector<double> caps;
  std::vector<int64_t> max_layers;
  for (int s = 0; s < S; ++s) {
    subs.push_back(SubSystem(sys, groups[s], s));
    double c = 0.0;
    for (int n : groups[s]) c += sys.nodes[n].capability;
    caps.push_back(c);
    HX_ASSIGN_OR_RETURN(int64_t m, MaxLayers(subs[s], shape, wl, options, s == 0, s == S - 1));
    max_layers.push_back(m);
  }
  auto split = SplitLayers(shape.layers, caps, max_layers);
  if (!split.ok())
    return ResourceExhausted("model '" + shape.name + "' does not fit " + std::to_string(S) +
                             " pipeline stages of '" + sys.name + "': " + split.status().message());
  int64_t micro_batch = (wl.batch + r.micro_batches - 1) / r.micro_batches;
  LlmWorkload micro = wl;
  micro.batch = micro_batch;
  micro.kv_batch = wl.KvSequences();  // every micro-batch's KV cache stays on the stage
  // The ends go to the first and last stages that take part (a stage too weak for a layer does
  // not); a stage whose ends then overflow it fails PlanTensorParallel's memory check.
  int first = 0, last = S - 1;
  while (first < S - 1 && (*split)[first] == 0) ++first;
  while (last > 0 && (*split)[last] == 0) --last;
  int64_t at = 0;
  for (int s = 0; s < S; ++s) {
    if ((*split)[s] == 0) continue;
    PipelineStage st;
    st.nodes = groups[s];
    st.capability = caps[s];
    st.max_layers = max_layers[s];
    st.layer_begin = at;
    st.layer_end = at += (*split)[s];
    st.embedding = s == first;
    st.lm_head = s == last;
    LlmShape part = StageShape(shape, (*split)[s], st.embedding, st.lm_head);
    HX_ASSIGN_OR_RETURN(st.tp, PlanTensorParallel(subs[s], part, micro, options));
    r.stages.push_back(std::move(st));
  }
  TimePipeline(sys, shape, wl, micro_batch, &r);
  return r;
}

}  // namespace

StatusOr<PipelineResult> PlanPipeline(const TpSystem& sys, const LlmShape& shape,
                                      const LlmWorkload& wl, const TpOptions& tp_options,
                                      const PipelineOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  HX_RETURN_IF_ERROR(shape.Validate());
  HX_RETURN_IF_ERROR(wl.Validate());
  HX_RETURN_IF_ERROR(sys.Validate());
  int n = static_cast<int>(sys.nodes.size());
  int64_t limit = std::min<int64_t>(n, shape.layers);
  if (options.stages > limit)
    return InvalidArgument("--pp " + std::to_string(options.stages) + " is more stages than '" +
                           sys.name + "' has nodes (" + std::to_string(n) + ") or '" + shape.name +
                           "' has layers (" + std::to_string(shape.layers) + ")");
  if (options.stages > 0)
    return PlanStages(sys, shape, wl, tp_options, options.stages, options.micro_batches);
  std::optional<PipelineResult> best;
  Status first = Status::Ok();
  for (int S = 1; S <= std::min<int64_t>(limit, options.max_stages); ++S) {
    auto r = PlanStages(sys, shape, wl, tp_options, S, options.micro_batches);
    if (!r.ok()) {
      if (first.ok()) first = r.status();
      continue;
    }
    if (!best || r->total_s() < best->total_s()) best = std::move(r).value();
  }
  if (!best) return first;
  return std::move(best).value();
}

}  // namespace hx::tp
