#include "hexplan/tp/llm_tp.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>

#include "hexplan/cost/fit_op_class.h"

namespace hx::tp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string Bytes(double b) {
  std::ostringstream o;
  o.precision(4);
  o << b / 1e9 << " GB";
  return o.str();
}

// ---- Compute (roofline per kernel).
double KernelTime(double flops, double bytes, const TpGpu& gpu, const TimeParams& tp,
                  cost::OpClass c) {
  bool fused = tp.engine == TpEngine::kFused;
  if (tp.calibrated && gpu.calibration != nullptr) {
    cost::DevicePeak peak{gpu.peak_flops, gpu.memory_bandwidth};
    return cost::ClassKernelSeconds(gpu.calibration->Fit(c), peak, flops, bytes) +
           (fused ? kFusedKernelGapS : gpu.calibration->kernel_launch_s);
  }
  double t = std::max(flops / (gpu.peak_flops * tp.gemm_efficiency),
                      bytes / (gpu.memory_bandwidth * tp.memory_efficiency));
  return t + tp.kernel_overhead_s + (fused ? kFusedKernelGapS : gpu.launch_overhead_s);
}

// ---- Collectives on the cost layer's fits (calibrated preset): NCCL all-reduce lines fitted
// to vidur's measured kernel times (data/calibration/<model>.yaml `collectives`), plus one kernel
// launch per call (vidur times the NCCL kernel, not the host's launch of it). `library` "custom":
// the engine kernel's fit (--all-reduce custom), when the file has one for that many GPUs.
const cost::CollectiveCalibration* CalibratedAllReduce(const TpNode& node, const TimeParams& tp,
                                                       const char* library = "nccl") {
  if (!tp.calibrated || node.gpus.size() < 2) return nullptr;
  const cost::DeviceCalibration* cal = node.gpus.front().calibration;
  if (cal == nullptr) return nullptr;
  for (const TpGpu& g : node.gpus)
    if (g.calibration != cal) return nullptr;  // mixed models: no single fit applies
  for (const cost::CollectiveCalibration& c : cal->collectives)
    if (c.collective == "all_reduce" && c.library == library &&
        c.gpus == static_cast<int>(node.gpus.size()) && !c.lines.empty())
      return &c;
  return nullptr;
}

// `passes` passes of (gpus - 1) ring steps over `bytes` (all-reduce 2; reduce-scatter 1) on the
// fastest fitted line, plus the call's launch (eager) or the kernel gap (fused: enqueued ahead).
double CalibratedRingSeconds(const cost::CollectiveCalibration& c, const TpNode& node, double bytes,
                             int passes, TpEngine engine) {
  double n = static_cast<double>(c.gpus), best = kInf;
  for (const cost::CollectiveLine& l : c.lines)
    best = std::min(best, passes * (n - 1) * (l.alpha_s + bytes / n / l.bus_bytes_per_s));
  return best + (engine == TpEngine::kFused ? kFusedKernelGapS
                                            : node.gpus.front().calibration->kernel_launch_s);
}

// One decoder layer's linear + elementwise kernels on a GPU holding share `w` of the work;
// LayerNorm works on `ln_share` of the activation (1 when replicated, as in Megatron).
double LinearPartTime(const TpGpu& gpu, double w, double ln_share, double tokens, const LlmShape& s,
                      const TimeParams& tp) {
  double b = static_cast<double>(s.bytes_per_element);
  double t = 0.0;
  for (const auto& l : DecoderLinears(s)) {
    double in = static_cast<double>(l.in), out = static_cast<double>(l.out);
    t += KernelTime(2.0 * tokens * in * out * w, (in * out + tokens * in + tokens * out) * b * w,
                    gpu, tp, cost::OpClass::kGemm);
  }
  double h = static_cast<double>(s.hidden);
  t += 2 * KernelTime(0.0, 2.0 * tokens * h * b * ln_share, gpu, tp,
                      cost::OpClass::kNormalization);  // 2 LayerNorms
  t += KernelTime(0.0, 2.0 * tokens * static_cast<double>(s.ffn_hidden) * b * w, gpu, tp,
                  cost::OpClass::kElementwise);  // GeLU
  return t;
}

// Attention kernels (QK^T, softmax, AV) for `batch` sequences of `q` new tokens over `kv` keys,
// in prefill or in a decode step (the fused engine's decode kernel has a curve of its own).
double AttentionTime(const TpGpu& gpu, double w, double batch, double q, double kv, bool decode,
                     const LlmShape& s, const TimeParams& tp) {
  double b = static_cast<double>(s.bytes_per_element);
  double h = static_cast<double>(s.AttentionWidth()), hkv = static_cast<double>(s.KvWidth());
  double heads = static_cast<double>(s.heads);
  double scores = batch * heads * q * kv;
  if (tp.engine == TpEngine::kFused)  // one kernel; the scores stay on chip
    return KernelTime(4.0 * batch * q * kv * h * w,
                      (2.0 * batch * q * h + 2.0 * batch * kv * hkv) * b * w, gpu, tp,
                      decode ? cost::OpClass::kDecodeAttention : cost::OpClass::kAttention);
  double qk =
      KernelTime(2.0 * batch * q * kv * h * w, (batch * q * h + batch * kv * hkv + scores) * b * w,
                 gpu, tp, cost::OpClass::kGemm);
  double softmax = KernelTime(0.0, 2.0 * scores * b * w, gpu, tp, cost::OpClass::kSoftmax);
  double av =
      KernelTime(2.0 * batch * q * kv * h * w, (scores + batch * kv * hkv + batch * q * h) * b * w,
                 gpu, tp, cost::OpClass::kGemm);
  return qk + softmax + av;
}

// The LM head on a GPU holding share `w` of its vocabulary columns, for `tokens` rows: one GEMM
// streaming its vocab x hidden weights. Engines compute logits for the last position of each
// sequence only (TensorRT-LLM without gather_context_logits, FasterTransformer, vLLM), so prefill
// and every decode step pass `batch` rows. Sampling and the logits' gather over TP are not timed.
double LmHeadTime(const TpGpu& gpu, double w, double tokens, const LlmShape& s,
                  const TimeParams& tp) {
  double b = static_cast<double>(s.bytes_per_element), h = static_cast<double>(s.hidden);
  double v = static_cast<double>(s.vocab);
  return KernelTime(2.0 * tokens * h * v * w, (v * h + tokens * h + tokens * v) * b * w, gpu, tp,
                    cost::OpClass::kGemm);
}

// ---- The 2D layout shared by asymgroup and autoddl.
struct Layout2D {
  std::vector<double> caps;  // effective capabilities (asymgroup: c_n; autoddl: 1 per node)
  Grouping grouping;
  std::vector<int> group_of;
  std::vector<double> gsum, gmax, gmin;
  double total = 0.0;
  std::vector<std::vector<double>> gpu_share;  // per node, per GPU: share of the whole layer
};

Layout2D MakeLayout(const TpSystem& sys, std::vector<double> caps, Grouping grouping,
                    bool gpu_split_by_capability) {
  Layout2D L;
  L.caps = std::move(caps);
  L.grouping = std::move(grouping);
  int n = static_cast<int>(L.caps.size());
  L.group_of.assign(n, 0);
  int k = L.grouping.k();
  L.gsum.assign(k, 0.0);
  L.gmax.assign(k, 0.0);
  L.gmin.assign(k, kInf);
  for (int t = 0; t < k; ++t)
    for (int node : L.grouping.groups[t]) {
      L.group_of[node] = t;
      L.gsum[t] += L.caps[node];
      L.gmax[t] = std::max(L.gmax[t], L.caps[node]);
      L.gmin[t] = std::min(L.gmin[t], L.caps[node]);
    }
  L.total = std::accumulate(L.caps.begin(), L.caps.end(), 0.0);
  for (int i = 0; i < n; ++i) {
    const TpNode& node = sys.nodes[i];
    double w = L.caps[i] / L.total;
    std::vector<double> shares;
    for (const auto& g : node.gpus)
      shares.push_back(gpu_split_by_capability ? w * g.capability / node.capability
                                               : w / static_cast<double>(node.gpus.size()));
    L.gpu_share.push_back(shares);
  }
  return L;
}

double GroupPairBandwidth(const TpSystem& sys, const Layout2D& L, int a, int b, double& latency) {
  double bw = kInf;
  latency = 0.0;
  for (int t : {a, b})
    for (int node : L.grouping.groups[t]) {
      bw = std::min(bw, sys.nodes[node].inter_bandwidth);
      latency = std::max(latency, sys.nodes[node].inter_latency_s);
    }
  return bw;
}

// Eqs. 2-3 turned into time: ring steps over groups, each bounded by its busiest node.
double AllGatherTime(const TpSystem& sys, const Layout2D& L, double act_bytes,
                     const TimeParams& tp) {
  int k = L.grouping.k();
  if (k <= 1) return 0.0;
  double total = tp.collective_base_s;
  for (int s = 0; s + 1 < k; ++s) {
    double step = 0.0;
    for (int t = 0; t < k; ++t) {
      int next = (t + 1) % k, origin = ((t - s) % k + k) % k;
      double share = std::max(L.gmax[t] / L.gsum[t], L.gmax[next] / L.gsum[next]);
      double bytes = act_bytes * (L.gsum[origin] / L.total) * share;
      double lat;
      double bw = GroupPairBandwidth(sys, L, t, next, lat);
      step = std::max(step, lat + tp.inter_step_s + bytes / (bw * tp.bandwidth_efficiency));
    }
    total += step;
  }
  return total;
}

// Eq. 4 turned into time: intra-node reduce-scatter over NVLink, then the intragroup exchange, each
// node bounded by the larger of what it sends and what it receives.
double ReduceScatterTime(const TpSystem& sys, const Layout2D& L, double act_bytes,
                         const TimeParams& tp) {
  double intra = 0.0, inter = 0.0;
  bool any_intra = false, any_inter = false;
  for (int t = 0; t < L.grouping.k(); ++t) {
    const auto& members = L.grouping.groups[t];
    double partial = act_bytes * L.gsum[t] / L.total;  // each node's partial sums for the group
    for (int node : members) {
      const TpNode& nd = sys.nodes[node];
      int g = static_cast<int>(nd.gpus.size());
      if (g > 1) {
        double max_share = 0.0;
        double node_share =
            std::accumulate(L.gpu_share[node].begin(), L.gpu_share[node].end(), 0.0);
        for (double sh : L.gpu_share[node]) max_share = std::max(max_share, 1.0 - sh / node_share);
        if (const cost::CollectiveCalibration* c = CalibratedAllReduce(nd, tp)) {
          // The fit is per ring of equal chunks: scale the bytes to the largest share's.
          double equal = (g - 1.0) / g;
          intra = std::max(
              intra, CalibratedRingSeconds(*c, nd, partial * max_share / equal, 1, tp.engine));
        } else {
          any_intra = true;  // the collective's base latency, added once below
          intra = std::max(
              intra, (g - 1) * (nd.intra_latency_s + tp.intra_step_s) +
                         partial * max_share / (nd.intra_bandwidth * tp.bandwidth_efficiency));
        }
      }
      int m = static_cast<int>(members.size());
      if (m > 1) {
        any_inter = true;
        double send = act_bytes * (L.gsum[t] - L.caps[node]) / L.total;
        double recv = act_bytes * (m - 1) * L.caps[node] / L.total;
        inter = std::max(inter,
                         (m - 1) * (nd.inter_latency_s + tp.inter_step_s) +
                             std::max(send, recv) / (nd.inter_bandwidth * tp.bandwidth_efficiency));
      }
    }
  }
  return intra + inter + (any_intra ? tp.collective_base_s : 0.0) +
         (any_inter ? tp.collective_base_s : 0.0);
}

// ---- Megatron's ring all-reduce over all GPUs (node-major order).
struct RingLink {
  double bw;
  double latency;
  double step;
};

std::vector<RingLink> MegatronRing(const TpSystem& sys, const TimeParams& tp,
                                   std::vector<int>* gpu_node) {
  std::vector<int> node_of;
  for (size_t n = 0; n < sys.nodes.size(); ++n)
    for (size_t g = 0; g < sys.nodes[n].gpus.size(); ++g) node_of.push_back(static_cast<int>(n));
  int G = static_cast<int>(node_of.size());
  std::vector<RingLink> links;
  for (int i = 0; i < G; ++i) {
    int a = node_of[i], b = node_of[(i + 1) % G];
    if (a == b) {
      links.push_back(
          {sys.nodes[a].intra_bandwidth, sys.nodes[a].intra_latency_s, tp.intra_step_s});
    } else {
      links.push_back({std::min(sys.nodes[a].inter_bandwidth, sys.nodes[b].inter_bandwidth),
                       std::max(sys.nodes[a].inter_latency_s, sys.nodes[b].inter_latency_s),
                       tp.inter_step_s});
    }
  }
  if (gpu_node) *gpu_node = node_of;
  return links;
}

// Ring all-reduce with chunk shares x (sum 1): 2(G-1) steps; at step s link i carries chunk i-s.
double RingAllReduceTime(const std::vector<RingLink>& links, const std::vector<double>& x,
                         double bytes, const TimeParams& tp) {
  int G = static_cast<int>(links.size());
  if (G <= 1) return 0.0;
  double total = tp.collective_base_s;
  for (int phase = 0; phase < 2; ++phase)
    for (int s = 0; s + 1 < G; ++s) {
      double step = 0.0;
      for (int i = 0; i < G; ++i) {
        const RingLink& l = links[i];
        double chunk = x[((i - s) % G + G) % G] * bytes;
        step = std::max(step, l.latency + l.step + chunk / (l.bw * tp.bandwidth_efficiency));
      }
      total += step;
    }
  return total;
}

// FlexReduce-style: equal shares or shares proportional to each ring link's bandwidth, the faster.
double MegatronAllReduceTime(const std::vector<RingLink>& links, double bytes, const TimeParams& tp,
                             std::vector<double>* best_shares) {
  int G = static_cast<int>(links.size());
  std::vector<double> equal(G, 1.0 / std::max(G, 1)), prop(G, 0.0);
  double sum = 0.0;
  for (int i = 0; i < G; ++i) sum += links[i].bw;
  for (int i = 0; i < G; ++i) prop[i] = links[i].bw / sum;
  double te = RingAllReduceTime(links, equal, bytes, tp);
  double tpp = RingAllReduceTime(links, prop, bytes, tp);
  if (best_shares) *best_shares = tpp < te ? prop : equal;
  return std::min(te, tpp);
}

struct Contiguous {
  static Grouping Blocks(int n, int k) {
    Grouping g;
    g.groups.assign(k, {});
    for (int i = 0; i < n; ++i) g.groups[i / (n / k)].push_back(i);
    return g;
  }
};

// ---- Plans.
void AddSend(NodePlan& np, const std::string& layer, const std::string& coll, int peer,
             int64_t bytes) {
  if (bytes <= 0 || peer == np.node) return;
  for (auto& s : np.sends)
    if (s.layer == layer && s.collective == coll && s.peer == peer) {
      s.bytes += bytes;
      np.bytes_sent_per_layer += bytes;
      return;
    }
  np.sends.push_back({layer, coll, peer, bytes});
  np.bytes_sent_per_layer += bytes;
}

std::vector<std::pair<int64_t, int64_t>> Ranges(int64_t items, const std::vector<double>& weights) {
  std::vector<int64_t> sizes = ProportionalSplit(items, weights);
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back({at, at + s});
    at += s;
  }
  return out;
}

int64_t Overlap(std::pair<int64_t, int64_t> a, std::pair<int64_t, int64_t> b) {
  return std::max<int64_t>(0, std::min(a.second, b.second) - std::max(a.first, b.first));
}

TpPlan Plan2D(const TpSystem& sys, const Layout2D& L, const LlmShape& shape,
              const LlmWorkload& wl) {
  TpPlan plan;
  int n = static_cast<int>(sys.nodes.size());
  int k = L.grouping.k();
  auto batch = Ranges(wl.batch, L.caps);
  for (int i = 0; i < n; ++i) {
    NodePlan np;
    np.node = i;
    np.name = sys.nodes[i].name;
    np.group = L.group_of[i];
    np.capability = sys.nodes[i].capability;
    np.batch_begin = batch[i].first;
    np.batch_end = batch[i].second;
    for (size_t g = 0; g < sys.nodes[i].gpus.size(); ++g)
      np.gpus.push_back({sys.nodes[i].gpus[g].name, L.gpu_share[i][g], {}});
    plan.nodes.push_back(std::move(np));
  }
  // Rows (sequences) each group holds before the all-gather.
  std::vector<int64_t> group_rows(k, 0);
  for (int i = 0; i < n; ++i) group_rows[L.group_of[i]] += batch[i].second - batch[i].first;
  int64_t b = shape.bytes_per_element;
  for (const auto& lin : DecoderLinears(shape)) {
    auto cols = Ranges(lin.out, L.gsum);
    std::vector<std::vector<std::pair<int64_t, int64_t>>> rows(k), colsub(k);
    for (int t = 0; t < k; ++t) {
      std::vector<double> w;
      for (int node : L.grouping.groups[t]) w.push_back(L.caps[node]);
      rows[t] = Ranges(lin.in, w);
      colsub[t] = Ranges(cols[t].second - cols[t].first, w);
    }
    for (int t = 0; t < k; ++t) {
      const auto& members = L.grouping.groups[t];
      for (size_t j = 0; j < members.size(); ++j) {
        NodePlan& np = plan.nodes[members[j]];
        WeightBlock blk{lin.name, rows[t][j].first, rows[t][j].second, cols[t].first,
                        cols[t].second};
        np.blocks.push_back(blk);
        auto sub = Ranges(blk.row_end - blk.row_begin, L.gpu_share[members[j]]);
        for (size_t g = 0; g < np.gpus.size(); ++g)
          np.gpus[g].blocks.push_back({lin.name, blk.row_begin + sub[g].first,
                                       blk.row_begin + sub[g].second, blk.col_begin, blk.col_end});
        // All-gather: at step s, forward origin (t-s)'s rows of my feature range to group t+1.
        if (k > 1) {
          int next = (t + 1) % k;
          for (int s = 0; s + 1 < k; ++s) {
            int origin = ((t - s) % k + k) % k;
            for (size_t m = 0; m < L.grouping.groups[next].size(); ++m)
              AddSend(np, lin.name, "all-gather", L.grouping.groups[next][m],
                      group_rows[origin] * Overlap(rows[t][j], rows[next][m]) * b);
          }
        }
        // Reduce-scatter: my partial sums for each peer's column sub-range, all rows.
        for (size_t m = 0; m < members.size(); ++m) {
          if (m == j) continue;
          AddSend(np, lin.name, "reduce-scatter", members[m],
                  wl.batch * (colsub[t][m].second - colsub[t][m].first) * b);
        }
      }
    }
  }
  return plan;
}

TpPlan PlanMegatron(const TpSystem& sys, const LlmShape& shape, const LlmWorkload& wl,
                    const std::vector<int>& gpu_node, const std::vector<double>& shares) {
  TpPlan plan;
  int G = static_cast<int>(gpu_node.size());
  for (size_t i = 0; i < sys.nodes.size(); ++i) {
    NodePlan np;
    np.node = static_cast<int>(i);
    np.name = sys.nodes[i].name;
    np.group = 0;
    np.capability = sys.nodes[i].capability;
    np.batch_begin = 0;
    np.batch_end = wl.batch;  // 1D TP: every GPU sees the whole batch
    plan.nodes.push_back(std::move(np));
  }
  std::vector<double> equal(G, 1.0);
  std::vector<int> local(G, 0);
  for (int g = 0; g < G; ++g) {
    NodePlan& np = plan.nodes[gpu_node[g]];
    local[g] = static_cast<int>(np.gpus.size());
    np.gpus.push_back({sys.nodes[gpu_node[g]].gpus[local[g]].name, 1.0 / G, {}});
  }
  for (const auto& lin : DecoderLinears(shape)) {
    bool column = lin.name == "qkv" || lin.name == "fc1";
    auto split = Ranges(column ? lin.out : lin.in, equal);
    for (int g = 0; g < G; ++g) {
      NodePlan& np = plan.nodes[gpu_node[g]];
      WeightBlock blk = column ? WeightBlock{lin.name, 0, lin.in, split[g].first, split[g].second}
                               : WeightBlock{lin.name, split[g].first, split[g].second, 0, lin.out};
      np.gpus[local[g]].blocks.push_back(blk);
      // The node's block: union over its consecutive GPUs.
      if (!np.blocks.empty() && np.blocks.back().layer == lin.name) {
        if (column)
          np.blocks.back().col_end = blk.col_end;
        else
          np.blocks.back().row_end = blk.row_end;
      } else {
        np.blocks.push_back(blk);
      }
    }
  }
  // Two all-reduces per layer (after proj and fc2), on batch*hidden: each GPU sends 2(G-1) chunks.
  double act = static_cast<double>(wl.batch * shape.hidden * shape.bytes_per_element);
  for (const char* layer : {"proj", "fc2"})
    for (int g = 0; g < G; ++g) {
      int next = (g + 1) % G;
      double sent = 0.0;
      for (int s = 0; s + 1 < G; ++s) sent += 2.0 * shares[((g - s) % G + G) % G] * act;
      AddSend(plan.nodes[gpu_node[g]], layer, "all-reduce", gpu_node[next],
              static_cast<int64_t>(std::llround(sent)));
    }
  return plan;
}

}  // namespace

const std::vector<TpMethodEntry>& TpMethods() {
  static const std::vector<TpMethodEntry> methods = {
      {"asymgroup", "AsymGroup: capability-proportional 2D TP over k groups on a ring",
       TpMethod::kAsymGroup},
      {"megatron", "1D TP over all GPUs, two ring all-reduces per decoder layer",
       TpMethod::kMegatron},
      {"autoddl", "symmetric 2D TP on a k x N/k grid of the nodes, equal work per node",
       TpMethod::kAutoDdl},
      {"ideal", "the sqrt(N) x sqrt(N) grid bound of eq. 1 (communication volume only, no plan)",
       TpMethod::kIdeal},
  };
  return methods;
}

const Registry<TpMethodEntry>& TpMethodRegistry() {
  static Registry<TpMethodEntry> registry("--algo: unknown method");
  static const bool listed = [] {
    for (const TpMethodEntry& m : TpMethods()) registry.Register(m.name, m);
    return true;
  }();
  (void)listed;
  return registry;
}

const char* TpMethodName(TpMethod method) {
  for (const TpMethodEntry& m : TpMethods()) {
    if (m.method == method) return m.name.c_str();
  }
  return "?";
}

StatusOr<TpMethod> ParseTpMethod(const std::string& name) {
  HX_ASSIGN_OR_RETURN(const TpMethodEntry entry, TpMethodRegistry().Find(name));
  return entry.method;
}

Status LlmShape::Validate() const {
  if (layers <= 0 || hidden <= 0 || heads <= 0 || ffn_hidden <= 0)
    return InvalidArgument("model '" + name +
                           "': layers, hidden, heads and ffn_hidden must be > 0");
  if (head_dim < 0 || kv_heads < 0)
    return InvalidArgument("model '" + name + "': head_dim and kv_heads must be >= 0");
  if (head_dim == 0 && hidden % heads != 0)
    return InvalidArgument("model '" + name + "': hidden " + std::to_string(hidden) +
                           " is not a multiple of heads " + std::to_string(heads) +
                           " and no head_dim is given");
  if (kv_heads > 0 && heads % kv_heads != 0)
    return InvalidArgument("model '" + name + "': heads " + std::to_string(heads) +
                           " is not a multiple of kv_heads " + std::to_string(kv_heads));
  if (bytes_per_element <= 0)
    return InvalidArgument("model '" + name + "': bytes per element must be > 0");
  return Status::Ok();
}

int64_t LlmShape::HeadDim() const { return head_dim > 0 ? head_dim : hidden / heads; }
int64_t LlmShape::AttentionWidth() const { return heads * HeadDim(); }
int64_t LlmShape::KvWidth() const { return (kv_heads > 0 ? kv_heads : heads) * HeadDim(); }

double LlmShape::ParameterCount() const {
  double per_layer = 0.0;
  for (const auto& l : DecoderLinears(*this))
    per_layer += static_cast<double>(l.in) * static_cast<double>(l.out);
  const double matrices = (embedding ? 1.0 : 0.0) + (lm_head && (untied_lm_head || !embedding));
  return static_cast<double>(layers) * per_layer +
         matrices * static_cast<double>(vocab) * static_cast<double>(hidden);
}

double LlmShape::KvBytesPerToken() const {
  return static_cast<double>(layers) * 2.0 * static_cast<double>(KvWidth()) *
         static_cast<double>(bytes_per_element);
}

LlmShape ShapeFromConfig(const std::string& name, const graph::TransformerConfig& c,
                         int64_t bytes_per_element, const graph::ZooAttentionShape* attention) {
  LlmShape s;
  s.name = name;
  s.layers = c.layers;
  s.hidden = c.hidden;
  s.heads = c.heads;
  s.kv_heads = c.kv_heads > 0 && c.kv_heads != c.heads ? c.kv_heads : 0;
  if (attention != nullptr) {
    s.heads = attention->heads;
    s.kv_heads = attention->kv_heads != attention->heads ? attention->kv_heads : 0;
    s.head_dim = attention->head_dim;
  }
  s.ffn_hidden = c.ffn_hidden > 0 ? c.ffn_hidden : 4 * c.hidden;
  s.gated_ffn = c.swiglu;
  s.untied_lm_head = c.swiglu;  // the zoo's SwiGLU models are LLaMA's, whose head is not tied
  s.vocab = c.vocab;
  s.bytes_per_element = bytes_per_element;
  return s;
}

Status LlmWorkload::Validate() const {
  if (batch <= 0) return InvalidArgument("--batch must be > 0, got " + std::to_string(batch));
  if (input_len <= 0)
    return InvalidArgument("--input-len must be > 0, got " + std::to_string(input_len));
  if (output_len <= 0)
    return InvalidArgument("--output-len must be > 0, got " + std::to_string(output_len));
  return Status::Ok();
}

StatusOr<TpEngine> ParseTpEngine(const std::string& name) {
  if (name == "eager") return TpEngine::kEager;
  if (name == "fused") return TpEngine::kFused;
  return InvalidArgument("--engine '" + name + "' is unknown; expected eager or fused");
}

const char* TpEngineName(TpEngine engine) { return engine == TpEngine::kFused ? "fused" : "eager"; }

StatusOr<TpAllReduce> ParseTpAllReduce(const std::string& name) {
  if (name == "nccl") return TpAllReduce::kNccl;
  if (name == "custom") return TpAllReduce::kCustom;
  return InvalidArgument("--all-reduce '" + name + "' is unknown; expected nccl or custom");
}

const char* TpAllReduceName(TpAllReduce a) { return a == TpAllReduce::kCustom ? "custom" : "nccl"; }

std::string CustomAllReduceGap(const TpSystem& sys, TpMethod method) {
  if (sys.nodes.size() != 1) return "it runs inside one node; this cluster has several";
  TimeParams calibrated;
  calibrated.calibrated = true;
  const TpNode& node = sys.nodes.front();
  if (node.gpus.size() < 2) return "one GPU has no all-reduce";
  if (CalibratedAllReduce(node, calibrated, "custom") == nullptr)
    return "no custom all-reduce fit for " + std::to_string(node.gpus.size()) + " x " +
           (node.gpus.front().calibration ? node.gpus.front().calibration->model
                                          : std::string("uncalibrated GPUs")) +
           " (data/calibration; docs/cost-model.md \"Custom all-reduce\"); NCCL's fit is used";
  if (method == TpMethod::kAutoDdl || method == TpMethod::kIdeal)
    return "only megatron's all-reduce runs on it (and asymgroup's where it reduces to megatron's "
           "layout); " +
           std::string(TpMethodName(method)) + " has none";
  return "";
}

Status TimeParams::Validate() const {
  if (all_reduce == TpAllReduce::kCustom && !calibrated)
    return InvalidArgument(
        "--all-reduce custom needs --time-preset calibrated (the custom kernel's times are "
        "fits in the GPUs' calibration files)");
  if (collective_base_s < 0 || intra_step_s < 0 || inter_step_s < 0 || kernel_overhead_s < 0)
    return InvalidArgument("time model latencies must be >= 0");
  for (double e : {bandwidth_efficiency, gemm_efficiency, memory_efficiency})
    if (!(e > 0 && e <= 1.0))
      return InvalidArgument("time model efficiencies must be in (0, 1], got " + std::to_string(e));
  return Status::Ok();
}

StatusOr<TimeParams> TimePreset(const std::string& name) {
  TimeParams p;
  p.preset = name;
  if (name == "paper") return p;
  if (name == "nccl" || name == "calibrated") {
    // data/tp/NVIDIA-nccl/tuner_constants_ring_simple.csv: Ring/Simple.
    p.collective_base_s = 8.4e-6;
    p.intra_step_s = 3.4e-6;
    p.inter_step_s = 14.0e-6;
    p.calibrated = name == "calibrated";
    return p;
  }
  return InvalidArgument("time preset '" + name +
                         "' is unknown; expected paper, nccl or calibrated");
}

Status TpOptions::Validate() const {
  if (groups < 0) return InvalidArgument("--groups must be >= 0 (0 = automatic)");
  HX_RETURN_IF_ERROR(grouping.Validate());
  return time.Validate();
}

std::vector<LinearLayer> DecoderLinears(const LlmShape& s) {
  int64_t q = s.AttentionWidth(), kv = s.KvWidth();
  return {{"qkv", s.hidden, q + 2 * kv},
          {"proj", q, s.hidden},
          {"fc1", s.hidden, (s.gated_ffn ? 2 : 1) * s.ffn_hidden},
          {"fc2", s.ffn_hidden, s.hidden}};
}

double KernelSeconds(double flops, double bytes, const TpGpu& gpu, const TimeParams& params,
                     cost::OpClass op_class) {
  return KernelTime(flops, bytes, gpu, params, op_class);
}

int AutoDdlGridRows(int n) {
  int best = 1;
  double best_cost = kInf;
  for (int k = 1; k <= n; ++k) {
    if (n % k) continue;
    double c = (k - 1) + (n / k - 1);
    if (c < best_cost - 1e-12) best = k, best_cost = c;
  }
  return best;
}

StatusOr<double> CommVolumeFraction(TpMethod method, const std::vector<double>& caps, int gpus,
                                    const TpOptions& options) {
  HX_RETURN_IF_ERROR(ValidateCapabilities(caps));
  int n = static_cast<int>(caps.size());
  switch (method) {
    case TpMethod::kMegatron:
      return OneDCost(1.0, gpus);
    case TpMethod::kIdeal:
      return SymmetricCost(1.0, n, std::sqrt(static_cast<double>(n)));
    case TpMethod::kAutoDdl:
      return SymmetricCost(1.0, n, AutoDdlGridRows(n));
    case TpMethod::kAsymGroup: {
      if (options.groups > 0) {
        HX_ASSIGN_OR_RETURN(GroupingResult r, FormGroups(caps, options.groups, options.grouping));
        return r.cost.total();
      }
      HX_ASSIGN_OR_RETURN(AutoGroupingResult r, FormGroupsAutoK(caps, options.grouping));
      return r.best.cost.total();
    }
  }
  return Internal("unknown method");
}

namespace {

// ---- A method's layout: per-GPU work shares and per-layer communication.
struct Layout {
  TpMethod method = TpMethod::kAsymGroup;
  Grouping grouping;
  std::vector<std::vector<double>> gpu_share;  // per node, per GPU: share of the layer's work
  bool replicated_norm = false;                // Megatron: LayerNorm on the whole activation
  std::function<double(double)> comm_time;     // tokens -> seconds per decoder layer
  std::function<double(double)> inter_volume;  // tokens -> bytes per layer, bottleneck node
  std::function<double(double)> intra_volume;  // tokens -> NVLink bytes per layer, busiest GPU
  std::shared_ptr<Layout2D> two_d;             // the 2D methods' layout (for the plan)
  std::vector<int> gpu_node;                   // Megatron's ring order (for the plan)
  std::vector<double> ring_shares;
};

bool AnyMultiGpuNode(const TpSystem& sys) {
  for (const auto& n : sys.nodes)
    if (n.gpus.size() > 1) return true;
  return false;
}

Layout MegatronLayout(const TpSystem& sys, const LlmShape& shape, const TimeParams& tp,
                      double decode_tokens) {
  Layout L;
  L.method = TpMethod::kMegatron;
  L.replicated_norm = true;
  int n = static_cast<int>(sys.nodes.size()), G = sys.NumGpus();
  auto links = MegatronRing(sys, tp, &L.gpu_node);
  for (int i = 0; i < n; ++i)
    L.gpu_share.push_back(std::vector<double>(sys.nodes[i].gpus.size(), 1.0 / G));
  L.grouping.groups = {std::vector<int>(n)};
  std::iota(L.grouping.groups[0].begin(), L.grouping.groups[0].end(), 0);
  double act = static_cast<double>(shape.hidden * shape.bytes_per_element);  // bytes per token
  MegatronAllReduceTime(links, decode_tokens * act, tp, &L.ring_shares);
  const cost::CollectiveCalibration* fit = n == 1 ? CalibratedAllReduce(sys.nodes[0], tp) : nullptr;
  const cost::CollectiveCalibration* custom = n == 1 && tp.all_reduce == TpAllReduce::kCustom
                                                  ? CalibratedAllReduce(sys.nodes[0], tp, "custom")
                                                  : nullptr;
  const TpNode* node0 = &sys.nodes[0];
  L.comm_time = [links, act, tp, fit, custom, node0](double tokens) {
    const double bytes = tokens * act;
    if (custom != nullptr && (custom->max_bytes <= 0 || bytes <= custom->max_bytes))
      return 2.0 * CalibratedRingSeconds(*custom, *node0, bytes, 2, tp.engine);
    if (fit != nullptr) return 2.0 * CalibratedRingSeconds(*fit, *node0, bytes, 2, tp.engine);
    return 2.0 * MegatronAllReduceTime(links, bytes, tp, nullptr);
  };
  // Two all-reduces per layer, each a reduce-scatter plus an all-gather of (G-1)/G.
  bool inter = n > 1, intra = AnyMultiGpuNode(sys);
  L.inter_volume = [act, G, inter](double tokens) {
    return inter ? 4.0 * OneDCost(tokens * act, G) : 0.0;
  };
  L.intra_volume = [act, G, intra](double tokens) {
    return intra ? 4.0 * OneDCost(tokens * act, G) : 0.0;
  };
  return L;
}

// What the busiest GPU sends over NVLink in the intra-node reduce-scatter of `act_bytes`.
double IntraReduceScatterBytes(const TpSystem& sys, const Layout2D& L, double act_bytes) {
  double worst = 0.0;
  for (int t = 0; t < L.grouping.k(); ++t)
    for (int node : L.grouping.groups[t]) {
      if (sys.nodes[node].gpus.size() < 2) continue;
      double partial = act_bytes * L.gsum[t] / L.total;
      double node_share = std::accumulate(L.gpu_share[node].begin(), L.gpu_share[node].end(), 0.0);
      for (double sh : L.gpu_share[node])
        worst = std::max(worst, partial * (1.0 - sh / node_share));
    }
  return worst;
}

Layout TwoDLayout(const TpSystem& sys, const LlmShape& shape, TpMethod method,
                  const std::vector<double>& caps, const Grouping& grouping,
                  const TpOptions& options) {
  Layout L;
  L.method = method;
  L.grouping = grouping;
  L.two_d =
      std::make_shared<Layout2D>(MakeLayout(sys, caps, grouping, method == TpMethod::kAsymGroup));
  L.gpu_share = L.two_d->gpu_share;
  auto linears = DecoderLinears(shape);
  double b = static_cast<double>(shape.bytes_per_element);
  const TpSystem* sp = &sys;
  std::shared_ptr<const Layout2D> l2 = L.two_d;
  TimeParams tp = options.time;
  // --paper-volume: every collective moves b*h (eq. 1), in the volume and in the time.
  const bool paper_widths = options.paper_volume_accounting;
  const double h = static_cast<double>(shape.hidden);
  L.comm_time = [l2, sp, linears, b, tp, paper_widths, h](double tokens) {
    double t = 0.0;
    for (const auto& l : linears) {
      double in = paper_widths ? h : static_cast<double>(l.in);
      double out = paper_widths ? h : static_cast<double>(l.out);
      t += AllGatherTime(*sp, *l2, tokens * in * b, tp);
      t += ReduceScatterTime(*sp, *l2, tokens * out * b, tp);
    }
    return t;
  };
  bool paper = options.paper_volume_accounting;
  double hidden = static_cast<double>(shape.hidden);
  AsymCost c = EvaluateAsymCost(l2->caps, l2->grouping, 1.0);
  L.inter_volume = [c, linears, b, paper, hidden](double tokens) {
    double v = 0.0;
    for (const auto& l : linears) {
      double in = paper ? hidden : l.in, out = paper ? hidden : l.out;
      v += c.all_gather * tokens * in * b + c.reduce_scatter * tokens * out * b;
    }
    return v;
  };
  L.intra_volume = [l2, sp, linears, b](double tokens) {
    double v = 0.0;
    for (const auto& l : linears) v += IntraReduceScatterBytes(*sp, *l2, tokens * l.out * b);
    return v;
  };
  return L;
}

// AutoDDL's layout: equal work per node on a k x N/k grid of contiguous nodes.
StatusOr<Layout> SymmetricLayout(const TpSystem& sys, const LlmShape& shape, int k,
                                 const TpOptions& options) {
  int n = static_cast<int>(sys.nodes.size());
  if (n % k)
    return InvalidArgument("autoddl needs --groups to divide the node count " + std::to_string(n) +
                           ", got " + std::to_string(k));
  return TwoDLayout(sys, shape, TpMethod::kAutoDdl, std::vector<double>(n, 1.0),
                    Contiguous::Blocks(n, k), options);
}

// GPUs with the same figures and the same share take the same time: one of each.
struct GpuWork {
  const TpGpu* gpu;
  double share;
};
std::vector<GpuWork> DistinctWork(const TpSystem& sys, const Layout& L) {
  std::vector<GpuWork> out;
  for (size_t i = 0; i < sys.nodes.size(); ++i)
    for (size_t g = 0; g < sys.nodes[i].gpus.size(); ++g) {
      const TpGpu& gpu = sys.nodes[i].gpus[g];
      double w = L.gpu_share[i][g];
      bool seen = std::any_of(out.begin(), out.end(), [&](const GpuWork& o) {
        return o.share == w && o.gpu->peak_flops == gpu.peak_flops &&
               o.gpu->memory_bandwidth == gpu.memory_bandwidth &&
               o.gpu->launch_overhead_s == gpu.launch_overhead_s;
      });
      if (!seen) out.push_back({&gpu, w});
    }
  return out;
}

// Weights and KV cache split like the work; Megatron splits the KV cache by heads (1/G).
double GpuMemoryNeed(const Layout& L, int node, size_t gpu, double weights, double kv, int G) {
  double share = L.gpu_share[node][gpu];
  return L.method == TpMethod::kMegatron ? weights * share + kv / G : (weights + kv) * share;
}

Status CheckGpuMemory(const TpSystem& sys, const LlmShape& shape, const Layout& L, double weights,
                      double kv, bool check, double* worst) {
  *worst = 0.0;
  for (size_t i = 0; i < sys.nodes.size(); ++i)
    for (size_t g = 0; g < sys.nodes[i].gpus.size(); ++g) {
      double need = GpuMemoryNeed(L, static_cast<int>(i), g, weights, kv, sys.NumGpus());
      *worst = std::max(*worst, need);
      if (check && need > static_cast<double>(sys.nodes[i].gpus[g].memory_bytes))
        return ResourceExhausted("model '" + shape.name + "' does not fit node '" +
                                 sys.nodes[i].name + "' GPU '" + sys.nodes[i].gpus[g].name +
                                 "' with " + TpMethodName(L.method) + ": its share needs " +
                                 Bytes(need) + ", it has " +
                                 Bytes(static_cast<double>(sys.nodes[i].gpus[g].memory_bytes)));
    }
  return Status::Ok();
}

// Prefill and every decode step: the slowest GPU bounds each layer (collectives synchronise).
void TimeLayout(const TpSystem& sys, const LlmShape& shape, const LlmWorkload& wl,
                const TimeParams& tp, const Layout& L, TpResult* res) {
  auto work = DistinctWork(sys, L);
  double layers = static_cast<double>(shape.layers), batch = static_cast<double>(wl.batch);
  auto linear_part = [&](double tokens) {  // independent of the KV length: once per GPU kind
    std::vector<double> out;
    for (const auto& w : work)
      out.push_back(
          LinearPartTime(*w.gpu, w.share, L.replicated_norm ? 1.0 : w.share, tokens, shape, tp));
    return out;
  };
  auto compute = [&](const std::vector<double>& lin, double q, double kv_len, bool decode) {
    double worst = 0.0;
    for (size_t i = 0; i < work.size(); ++i)
      worst = std::max(worst, lin[i] + AttentionTime(*work[i].gpu, work[i].share, batch, q, kv_len,
                                                     decode, shape, tp));
    return worst;
  };
  double prefill_tokens = batch * static_cast<double>(wl.input_len);
  double in_len = static_cast<double>(wl.input_len);
  res->prefill_compute_s = layers * compute(linear_part(prefill_tokens), in_len, in_len, false);
  res->prefill_comm_s = layers * L.comm_time(prefill_tokens);
  res->prefill_s = res->prefill_compute_s + res->prefill_comm_s;
  std::vector<double> decode_linear = linear_part(batch);
  res->decode_compute_s = 0.0;
  for (int64_t i = 0; i < wl.output_len; ++i)
    res->decode_compute_s +=
        layers * compute(decode_linear, 1.0, in_len + static_cast<double>(i) + 1, true);
  if (tp.calibrated && shape.vocab > 0 && shape.lm_head) {  // once per pass (calibrated model)
    double head = 0.0;  // on calibrated GPUs only: without one, "calibrated" is the roofline
    for (const auto& w : work)
      if (w.gpu->calibration != nullptr)
        head = std::max(head, LmHeadTime(*w.gpu, w.share, batch, shape, tp));
    res->prefill_compute_s += head;
    res->prefill_s += head;
    res->decode_compute_s += head * static_cast<double>(wl.output_len);
  }
  res->decode_comm_s = layers * L.comm_time(batch) * static_cast<double>(wl.output_len);
  res->decode_s = res->decode_compute_s + res->decode_comm_s;
  res->per_token_s = res->decode_s / static_cast<double>(wl.output_len);
  res->comm_volume_bytes = layers * L.inter_volume(batch);
  res->comm_volume_prefill_bytes = layers * L.inter_volume(prefill_tokens);
  res->comm_volume_intra_bytes = layers * L.intra_volume(batch);
  res->comm_volume_intra_prefill_bytes = layers * L.intra_volume(prefill_tokens);
}

// Memory and times of one layout (no plan).
StatusOr<TpResult> EvaluateLayout(const TpSystem& sys, const LlmShape& shape, const LlmWorkload& wl,
                                  const TpOptions& options, const Layout& L) {
  TpResult r;
  r.method = r.layout = L.method;
  r.capabilities = sys.Capabilities();
  r.grouping = L.grouping;
  r.k = L.grouping.k();
  double b = static_cast<double>(shape.bytes_per_element);
  double weights = shape.ParameterCount() * b;
  double kv = shape.KvBytesPerToken() * static_cast<double>(wl.KvSequences()) *
              static_cast<double>(wl.input_len + wl.output_len);
  r.memory_needed_bytes = weights + kv;
  HX_RETURN_IF_ERROR(CheckGpuMemory(sys, shape, L, weights, kv, options.check_memory,
                                    &r.memory_per_gpu_max_bytes));
  TimeLayout(sys, shape, wl, options.time, L, &r);
  return r;
}

void AttachPlan(const TpSystem& sys, const LlmShape& shape, const LlmWorkload& wl, const Layout& L,
                TpResult* r) {
  if (L.method == TpMethod::kMegatron)
    r->plan = PlanMegatron(sys, shape, wl, L.gpu_node, L.ring_shares);
  else
    r->plan = Plan2D(sys, *L.two_d, shape, wl);
}

// Eq. 1 with k = sqrt(N): the ideal grid's volume; no plan, no times.
TpResult IdealBound(const TpSystem& sys, const LlmShape& shape, const LlmWorkload& wl,
                    bool paper_widths) {
  TpResult r;
  r.method = r.layout = TpMethod::kIdeal;
  r.volume_only = true;
  r.capabilities = sys.Capabilities();
  double n = static_cast<double>(sys.nodes.size()), k = std::sqrt(n);
  r.k = static_cast<int>(std::lround(k));
  double b = static_cast<double>(shape.bytes_per_element), h = static_cast<double>(shape.hidden);
  auto volume = [&](double tokens) {
    double v = 0.0;
    for (const auto& l : DecoderLinears(shape)) {
      double in = paper_widths ? h : static_cast<double>(l.in);
      double out = paper_widths ? h : static_cast<double>(l.out);
      v += tokens * b / n * ((k - 1) * in + (n / k - 1) * out);
    }
    return static_cast<double>(shape.layers) * v;
  };
  r.comm_volume_bytes = volume(static_cast<double>(wl.batch));
  r.comm_volume_prefill_bytes = volume(static_cast<double>(wl.batch * wl.input_len));
  r.memory_needed_bytes =
      shape.ParameterCount() * b + shape.KvBytesPerToken() * static_cast<double>(wl.batch) *
                                       static_cast<double>(wl.input_len + wl.output_len);
  return r;
}

struct Scored {
  Layout layout;
  TpResult result;
};

// The asymgroup layouts worth timing: the paper's (eq.-5-best grouping) first, then the greedy
// grouping of every k, the symmetric grids of every divisor k and the 1D ring (best_of_layouts).
StatusOr<std::vector<Layout>> AsymCandidates(const TpSystem& sys, const LlmShape& shape,
                                             const TpOptions& options, double decode_tokens) {
  std::vector<double> caps = sys.Capabilities();
  int n = static_cast<int>(caps.size());
  std::vector<Layout> out;
  if (options.groups > 0) {
    HX_ASSIGN_OR_RETURN(GroupingResult r, FormGroups(caps, options.groups, options.grouping));
    out.push_back(TwoDLayout(sys, shape, TpMethod::kAsymGroup, caps, r.grouping, options));
    return out;
  }
  HX_ASSIGN_OR_RETURN(AutoGroupingResult best, FormGroupsAutoK(caps, options.grouping));
  out.push_back(TwoDLayout(sys, shape, TpMethod::kAsymGroup, caps, best.best.grouping, options));
  if (!options.best_of_layouts) return out;
  GroupingOptions greedy = options.grouping;
  greedy.algo = GroupAlgo::kGreedy;
  for (int k = 1; k <= n; ++k) {
    if (k == best.best.grouping.k()) continue;
    HX_ASSIGN_OR_RETURN(GroupingResult r, FormGroups(caps, k, greedy));
    out.push_back(TwoDLayout(sys, shape, TpMethod::kAsymGroup, caps, r.grouping, options));
  }
  for (int k = 1; k <= n; ++k)
    if (n % k == 0) {
      HX_ASSIGN_OR_RETURN(Layout l, SymmetricLayout(sys, shape, k, options));
      out.push_back(std::move(l));
    }
  out.push_back(MegatronLayout(sys, shape, options.time, decode_tokens));
  return out;
}

// Times every candidate and keeps the fastest that fits (ties to the earlier one).
StatusOr<Scored> FastestLayout(const TpSystem& sys, const LlmShape& shape, const LlmWorkload& wl,
                               const TpOptions& options, std::vector<Layout> candidates) {
  std::optional<Scored> best;
  Status first_error = Status::Ok();
  double paper_total = 0.0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    auto r = EvaluateLayout(sys, shape, wl, options, candidates[i]);
    if (!r.ok()) {
      if (first_error.ok()) first_error = r.status();
      continue;
    }
    if (i == 0) paper_total = r->total_s();
    if (!best || r->total_s() < best->result.total_s() * (1 - 1e-12))
      best = Scored{std::move(candidates[i]), std::move(r).value()};
  }
  if (!best) return first_error;
  best->result.method = TpMethod::kAsymGroup;
  best->result.paper_asymgroup_total_s = paper_total;
  return std::move(best).value();
}

// The request's inputs, and the cluster's memory against the weights and the whole generation's
// KV cache.
Status CheckRequest(const TpSystem& sys, const LlmShape& shape, const LlmWorkload& wl,
                    const TpOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  HX_RETURN_IF_ERROR(shape.Validate());
  HX_RETURN_IF_ERROR(wl.Validate());
  HX_RETURN_IF_ERROR(sys.Validate());
  int n = static_cast<int>(sys.nodes.size());
  if (options.groups > n)
    return InvalidArgument("--groups " + std::to_string(options.groups) +
                           " is larger than the number of nodes (" + std::to_string(n) + ") in '" +
                           sys.name + "'");
  HX_RETURN_IF_ERROR(ValidateCapabilities(sys.Capabilities()));
  double b = static_cast<double>(shape.bytes_per_element);
  double weights = shape.ParameterCount() * b;
  double kv = shape.KvBytesPerToken() * static_cast<double>(wl.KvSequences()) *
              static_cast<double>(wl.input_len + wl.output_len);
  if (options.check_memory && weights + kv > static_cast<double>(sys.MemoryBytes()))
    return ResourceExhausted(
        "model '" + shape.name + "' needs " + Bytes(weights + kv) + " (weights " + Bytes(weights) +
        " + KV cache " + Bytes(kv) + " for batch " + std::to_string(wl.KvSequences()) + " x " +
        std::to_string(wl.input_len + wl.output_len) + " tokens) but cluster '" + sys.name +
        "' has " + Bytes(static_cast<double>(sys.MemoryBytes())) + " of GPU memory");
  return Status::Ok();
}

// The layout PlanTensorParallel picks for `wl` (not for kIdeal, which has none), with its times.
StatusOr<Scored> ChooseLayout(const TpSystem& sys, const LlmShape& shape, const LlmWorkload& wl,
                              const TpOptions& options) {
  int n = static_cast<int>(sys.nodes.size());
  double decode_tokens = static_cast<double>(wl.batch);
  Scored s;
  if (options.method == TpMethod::kMegatron) {
    s.layout = MegatronLayout(sys, shape, options.time, decode_tokens);
  } else if (options.method == TpMethod::kAutoDdl) {
    int k = options.groups > 0 ? options.groups : AutoDdlGridRows(n);
    HX_ASSIGN_OR_RETURN(s.layout, SymmetricLayout(sys, shape, k, options));
  } else {
    HX_ASSIGN_OR_RETURN(auto candidates, AsymCandidates(sys, shape, options, decode_tokens));
    return FastestLayout(sys, shape, wl, options, std::move(candidates));
  }
  HX_ASSIGN_OR_RETURN(s.result, EvaluateLayout(sys, shape, wl, options, s.layout));
  return s;
}

}  // namespace

struct PlannedLayout::Chosen {
  Layout layout;
  TpMethod method = TpMethod::kAsymGroup;
};

StatusOr<PlannedLayout> PlannedLayout::Plan(const TpSystem& sys, const LlmShape& shape,
                                            const LlmWorkload& wl, const TpOptions& options) {
  HX_RETURN_IF_ERROR(CheckRequest(sys, shape, wl, options));
  if (options.method == TpMethod::kIdeal)
    return InvalidArgument("ideal is a volume bound: it has no layout to time");
  HX_ASSIGN_OR_RETURN(Scored s, ChooseLayout(sys, shape, wl, options));
  PlannedLayout out;
  out.sys_ = &sys;
  out.shape_ = &shape;
  out.wl_ = wl;
  out.options_ = options;
  out.chosen_ = std::make_shared<Chosen>(Chosen{std::move(s.layout), s.result.method});
  return out;
}

StatusOr<TpResult> PlannedLayout::At(int64_t batch) const {
  LlmWorkload w = wl_;
  w.batch = batch;
  w.kv_batch = wl_.KvSequences();  // memory: the planned batch's KV cache stays reserved
  HX_ASSIGN_OR_RETURN(TpResult r, EvaluateLayout(*sys_, *shape_, w, options_, chosen_->layout));
  r.method = chosen_->method;
  return r;
}

StatusOr<TpResult> PlanTensorParallel(const TpSystem& sys, const LlmShape& shape,
                                      const LlmWorkload& wl, const TpOptions& options) {
  HX_RETURN_IF_ERROR(CheckRequest(sys, shape, wl, options));
  if (options.method == TpMethod::kIdeal)
    return IdealBound(sys, shape, wl, options.paper_volume_accounting);
  HX_ASSIGN_OR_RETURN(Scored s, ChooseLayout(sys, shape, wl, options));
  AttachPlan(sys, shape, wl, s.layout, &s.result);
  return s.result;
}

}  // namespace hx::tp
