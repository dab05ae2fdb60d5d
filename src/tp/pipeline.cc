#include "hexplan/tp/pipeline.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>
#include <optional>

namespace hx::tp {

Status PipelineOptions::Validate() const {
  if (stages < 0) return InvalidArgument("--pp must be 'auto' or a stage count >= 1");
  if (micro_batches < 0) return InvalidArgument("--micro-batches must be >= 0 (0 = automatic)");
  if (max_stages < 1) return InvalidArgument("pipeline: max_stages must be >= 1");
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> SplitLayers(int64_t layers, const std::vector<StageTime>& times,
                                           const std::vector<int64_t>& max_layers) {
  int64_t room = std::accumulate(max_layers.begin(), max_layers.end(), int64_t{0});
  if (room < layers)
    return ResourceExhausted("the stages' GPU memory holds " + std::to_string(room) + " of the " +
                             std::to_string(layers) + " layers");
  std::vector<int64_t> out(times.size(), 0);
  int64_t placed = 0;
  // The first and the last stage hold the model's ends (their times include them): each takes a
  // layer first where its memory holds one, so that the ends never move to a stage timed and
  // sized without them.
  for (size_t s : {size_t{0}, times.size() - 1})
    if (out[s] == 0 && max_layers[s] > 0 && placed < layers) ++out[s], ++placed;
  for (; placed < layers; ++placed) {
    size_t best = times.size();
    for (size_t s = 0; s < times.size(); ++s) {
      if (out[s] >= max_layers[s]) continue;
      if (best == times.size() || times[s].For(out[s] + 1) < times[best].For(out[best] + 1))
        best = s;
    }
    ++out[best];  // room >= layers: some stage has room
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

// A stage's time for a micro-batch's whole request (prefill and every decode step) with its ends,
// from its tensor-parallel plans of one and two layers (memory unchecked: MaxLayers caps it).
StatusOr<StageTime> TimeStage(const TpSystem& sub, const LlmShape& shape, const LlmWorkload& micro,
                              const TpOptions& options, bool first, bool last) {
  TpOptions probe = options;
  probe.check_memory = false;
  auto request_s = [&](int64_t layers) -> StatusOr<double> {
    HX_ASSIGN_OR_RETURN(
        TpResult r, PlanTensorParallel(sub, StageShape(shape, layers, first, last), micro, probe));
    return r.total_s();
  };
  HX_ASSIGN_OR_RETURN(double one, request_s(1));
  HX_ASSIGN_OR_RETURN(double two, request_s(2));
  StageTime t;
  t.per_layer_s = std::max(0.0, two - one);
  t.ends_s = std::max(0.0, one - t.per_layer_s);
  return t;
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
  int64_t micro_batch = (wl.batch + r.micro_batches - 1) / r.micro_batches;
  LlmWorkload micro = wl;
  micro.batch = micro_batch;
  micro.kv_batch = wl.KvSequences();  // every micro-batch's KV cache stays on the stage
  auto groups = StageNodes(sys, S);
  std::vector<TpSystem> subs;
  std::vector<double> caps;
  std::vector<StageTime> times;
  std::vector<int64_t> max_layers;
  for (int s = 0; s < S; ++s) {
    subs.push_back(SubSystem(sys, groups[s], s));
    double c = 0.0;
    for (int n : groups[s]) c += sys.nodes[n].capability;
    caps.push_back(c);
    HX_ASSIGN_OR_RETURN(int64_t m, MaxLayers(subs[s], shape, wl, options, s == 0, s == S - 1));
    max_layers.push_back(m);
    HX_ASSIGN_OR_RETURN(StageTime t, TimeStage(subs[s], shape, micro, options, s == 0, s == S - 1));
    times.push_back(t);
  }
  auto split = SplitLayers(shape.layers, times, max_layers);
  if (!split.ok())
    return ResourceExhausted("model '" + shape.name + "' does not fit " + std::to_string(S) +
                             " pipeline stages of '" + sys.name + "': " + split.status().message());
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
  if (options.micro_batches > wl.batch)
    return InvalidArgument("--micro-batches " + std::to_string(options.micro_batches) +
                           " is more micro-batches than the batch has sequences (" +
                           std::to_string(wl.batch) + ")");
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
