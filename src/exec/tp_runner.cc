#include "hexplan/exec/tp_runner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <thread>
#include <utility>

#include "exec/tp_math.h"
#include "hexplan/tp/grouping.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace hx::exec {

using internal::TpAddBias;
using internal::TpCausalAttention;
using internal::TpGeluTanh;
using internal::TpGemm;
using internal::TpLayerNorm;
using internal::TpQkvLayout;

namespace {

using TpRange = std::pair<int64_t, int64_t>;

const tp::WeightBlock* TpFindBlock(const tp::NodePlan& node, const std::string& layer) {
  for (const auto& b : node.blocks)
    if (b.layer == layer) return &b;
  return nullptr;
}

// The plan numbers QKV's outputs head-major: column c is head c / 3dh, part (q, k, v)
// (c % 3dh) / dh, feature c % dh. The model's (the zoo's) order is Q | K | V.
int64_t TpQkvZooColumn(int64_t c, int64_t attention_width, int64_t dh) {
  const int64_t head = c / (3 * dh), part = (c % (3 * dh)) / dh;
  return part * attention_width + head * dh + c % dh;
}

// Whether `ranges` (in any order) cover [0, total) exactly once.
bool TpTiles(std::vector<TpRange> ranges, int64_t total) {
  std::sort(ranges.begin(), ranges.end());
  int64_t at = 0;
  for (const auto& r : ranges) {
    if (r.first != at || r.second < r.first) return false;
    at = r.second;
  }
  return at == total;
}

// One linear of a decoder layer as the runner sees it.
struct TpLinear {
  std::string name;
  int64_t in = 0, out = 0;
  const std::vector<float>* weight = nullptr;  // [in, out], model order
  std::vector<float> bias;                     // [out], plan order
  bool qkv = false;
};

std::vector<TpLinear> TpLayerLinears(const TpGptModel& m, const TpGptLayerWeights& w) {
  const int64_t d = m.config.hidden, f = m.Ffn();
  std::vector<TpLinear> out = {{"qkv", d, 3 * d, &w.qkv, {}, true},
                               {"proj", d, d, &w.proj, w.proj_bias, false},
                               {"fc1", d, f, &w.fc1, w.fc1_bias, false},
                               {"fc2", f, d, &w.fc2, w.fc2_bias, false}};
  out[0].bias.resize(static_cast<size_t>(3 * d));
  for (int64_t c = 0; c < 3 * d; ++c)
    out[0].bias[static_cast<size_t>(c)] =
        w.qkv_bias[static_cast<size_t>(TpQkvZooColumn(c, d, m.HeadDim()))];
  return out;
}

// The block's rows x columns of `linear`'s weight, [rows, cols] row-major.
std::vector<float> TpSliceWeight(const TpLinear& linear, const tp::WeightBlock& b, int64_t a,
                                 int64_t dh) {
  const int64_t rows = b.row_end - b.row_begin, cols = b.col_end - b.col_begin;
  std::vector<float> s(static_cast<size_t>(rows * cols));
  for (int64_t c = 0; c < cols; ++c) {
    const int64_t src = linear.qkv ? TpQkvZooColumn(b.col_begin + c, a, dh) : b.col_begin + c;
    for (int64_t r = 0; r < rows; ++r)
      s[static_cast<size_t>(r * cols + c)] =
          (*linear.weight)[static_cast<size_t>((b.row_begin + r) * linear.out + src)];
  }
  return s;
}

Status TpCheckBatch(const TpRunRequest& q, bool megatron) {
  int64_t at = 0;
  for (const auto& node : q.plan->plan.nodes) {
    const int64_t begin = megatron ? 0 : at;
    if (node.batch_begin != begin || node.batch_end < node.batch_begin || node.batch_end > q.batch)
      return InvalidArgument("tp plan: node " + node.name + "'s batch slice [" +
                             std::to_string(node.batch_begin) + ", " +
                             std::to_string(node.batch_end) + ") does not continue the slices of " +
                             "a batch of " + std::to_string(q.batch));
    at = node.batch_end;
  }
  if (at != q.batch)
    return InvalidArgument("tp plan: the batch slices end at " + std::to_string(at) +
                           ", the run's batch is " + std::to_string(q.batch) +
                           " (plan with --batch " + std::to_string(q.batch) + ")");
  return Status::Ok();
}

// Megatron: column layers split output columns over all rows, row layers the reverse, and the
// QKV / proj and FC1 / FC2 blocks of a node line up on whole heads and on FFN features.
Status TpCheckMegatron(const TpRunRequest& q) {
  const int64_t dh = q.model->HeadDim();
  for (const auto& node : q.plan->plan.nodes) {
    const tp::WeightBlock* qkv = TpFindBlock(node, "qkv");
    const tp::WeightBlock* proj = TpFindBlock(node, "proj");
    const tp::WeightBlock* fc1 = TpFindBlock(node, "fc1");
    const tp::WeightBlock* fc2 = TpFindBlock(node, "fc2");
    if (qkv->col_begin % (3 * dh) || qkv->col_end % (3 * dh))
      return InvalidArgument("tp plan: node " + node.name + "'s qkv columns [" +
                             std::to_string(qkv->col_begin) + ", " + std::to_string(qkv->col_end) +
                             ") are not whole heads (3 x head_dim = " + std::to_string(3 * dh) +
                             "); run megatron with a rank count that divides the heads");
    if (proj->row_begin != qkv->col_begin / 3 || proj->row_end != qkv->col_end / 3 ||
        fc2->row_begin != fc1->col_begin || fc2->row_end != fc1->col_end)
      return InvalidArgument("tp plan: node " + node.name +
                             "'s proj / fc2 rows do not match its qkv / fc1 columns");
  }
  return Status::Ok();
}

// Every node has one block of `lin` inside its weight; returns them in node order.
StatusOr<std::vector<const tp::WeightBlock*>> TpLayerBlocks(const TpRunRequest& q,
                                                            const tp::LinearLayer& lin) {
  std::vector<const tp::WeightBlock*> blocks;
  for (const auto& node : q.plan->plan.nodes) {
    const tp::WeightBlock* b = TpFindBlock(node, lin.name);
    if (b == nullptr)
      return InvalidArgument("tp plan: node " + node.name + " has no block of " + lin.name);
    if (b->row_begin < 0 || b->row_end > lin.in || b->col_begin < 0 || b->col_end > lin.out)
      return InvalidArgument("tp plan: node " + node.name + "'s " + lin.name +
                             " block lies outside the " + std::to_string(lin.in) + " x " +
                             std::to_string(lin.out) + " weight");
    blocks.push_back(b);
  }
  return blocks;
}

// Megatron: a column layer's blocks hold all rows and tile the columns, a row layer's the reverse.
bool TpMegatronTiles(const std::vector<const tp::WeightBlock*>& blocks,
                     const tp::LinearLayer& lin) {
  const bool column = lin.name == "qkv" || lin.name == "fc1";
  std::vector<TpRange> split;
  for (const auto* b : blocks) {
    const TpRange rows{b->row_begin, b->row_end}, cols{b->col_begin, b->col_end};
    if ((column ? rows : cols) != TpRange{0, column ? lin.in : lin.out}) return false;
    split.push_back(column ? cols : rows);
  }
  return TpTiles(split, column ? lin.out : lin.in);
}

// 2D: the members of a group share the group's columns and tile the rows; the groups tile the
// columns.
bool TpTwoDTiles(const TpRunRequest& q, const std::vector<const tp::WeightBlock*>& blocks,
                 const tp::LinearLayer& lin) {
  std::map<int, std::vector<const tp::WeightBlock*>> groups;
  for (size_t n = 0; n < blocks.size(); ++n)
    groups[q.plan->plan.nodes[n].group].push_back(blocks[n]);
  std::vector<TpRange> group_cols;
  for (const auto& [group, members] : groups) {
    std::vector<TpRange> rows;
    for (const auto* b : members) {
      rows.push_back({b->row_begin, b->row_end});
      if (b->col_begin != members[0]->col_begin || b->col_end != members[0]->col_end) return false;
    }
    if (!TpTiles(rows, lin.in)) return false;
    group_cols.push_back({members[0]->col_begin, members[0]->col_end});
  }
  return TpTiles(group_cols, lin.out);
}

Status TpCheckBlocks(const TpRunRequest& q, const tp::LinearLayer& lin, bool megatron) {
  HX_ASSIGN_OR_RETURN(auto blocks, TpLayerBlocks(q, lin));
  if (megatron ? TpMegatronTiles(blocks, lin) : TpTwoDTiles(q, blocks, lin)) return Status::Ok();
  return InvalidArgument("tp plan: the blocks of " + lin.name + " do not tile its " +
                         std::to_string(lin.in) + " x " + std::to_string(lin.out) +
                         " weight the way the " + tp::TpMethodName(q.plan->layout) +
                         " layout needs");
}

// All ranks, 0..size-1.
RankGroup TpWorldGroup(int size) {
  RankGroup g(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) g[static_cast<size_t>(r)] = r;
  return g;
}

// One rank's execution of the plan.
class TpRankRun {
 public:
  TpRankRun(const TpRunRequest& q, Communicator& comm)
      : q_(q), m_(*q.model), nodes_(q.plan->plan.nodes), comm_(comm), me_(comm.rank()) {
    d_ = m_.config.hidden;
    dh_ = m_.HeadDim();
    heads_ = m_.config.heads;
    tokens_ = q.batch * q.seq;
    world_ = TpWorldGroup(comm.size());
  }

  StatusOr<std::vector<float>> Run() {
    return q_.plan->layout == tp::TpMethod::kMegatron ? RunMegatron() : Run2D();
  }

 private:
  int64_t TokenBegin(int node) const { return nodes_[node].batch_begin * q_.seq; }
  int64_t TokenCount(int node) const {
    return (nodes_[node].batch_end - nodes_[node].batch_begin) * q_.seq;
  }
  const tp::WeightBlock& Block(int node, const std::string& layer) const {
    return *TpFindBlock(nodes_[node], layer);
  }

  // x[rows, in] x this rank's block of `linear` (rows of x = the block's rows if `row_slice`,
  // else x's columns row_begin..row_end are read).
  std::vector<float> BlockProduct(const std::vector<float>& x, const TpLinear& linear,
                                  bool x_is_block_rows) const {
    const tp::WeightBlock& b = Block(me_, linear.name);
    const int64_t k = b.row_end - b.row_begin, n = b.col_end - b.col_begin;
    const int64_t ld = x_is_block_rows ? k : linear.in;
    const int64_t rows = ld > 0 ? static_cast<int64_t>(x.size()) / ld : tokens_;
    std::vector<float> w = TpSliceWeight(linear, b, d_, dh_);
    std::vector<float> y(static_cast<size_t>(rows * n), 0.0f);
    const float* a = x.data() + (x_is_block_rows ? 0 : b.row_begin);
    TpGemm(rows, n, k, a, ld, w.data(), n, y.data(), n);
    return y;
  }

  StatusOr<std::vector<float>> RunMegatron() {
    std::vector<float> h = *q_.input;
    const TpQkvLayout head_major{3 * dh_, 0, dh_, 2 * dh_};
    for (const TpGptLayerWeights& w : m_.layers) {
      std::vector<TpLinear> lin = TpLayerLinears(m_, w);
      const tp::WeightBlock& qb = Block(me_, "qkv");
      std::vector<float> qkv =
          BlockProduct(TpLayerNorm(h, d_, w.ln1_scale, w.ln1_bias), lin[0], false);
      TpAddBias(qkv, qb.col_end - qb.col_begin, lin[0].bias.data() + qb.col_begin);
      const int64_t my_heads = (qb.col_end - qb.col_begin) / (3 * dh_);
      std::vector<float> ctx = TpCausalAttention(qkv, qb.col_end - qb.col_begin, head_major,
                                                 q_.batch, q_.seq, my_heads, dh_);
      HX_RETURN_IF_ERROR(RowParallel(lin[1], ctx, &h));
      const tp::WeightBlock& fb = Block(me_, "fc1");
      std::vector<float> f =
          BlockProduct(TpLayerNorm(h, d_, w.ln2_scale, w.ln2_bias), lin[2], false);
      TpAddBias(f, fb.col_end - fb.col_begin, lin[2].bias.data() + fb.col_begin);
      TpGeluTanh(f);
      HX_RETURN_IF_ERROR(RowParallel(lin[3], f, &h));
    }
    return TpLayerNorm(h, d_, m_.lnf_scale, m_.lnf_bias);
  }

  // h += AllReduceSum(x_block x W[block rows, :]) + bias.
  Status RowParallel(const TpLinear& linear, const std::vector<float>& x, std::vector<float>* h) {
    std::vector<float> y = BlockProduct(x, linear, true);
    if (y.empty()) y.assign(static_cast<size_t>(tokens_ * linear.out), 0.0f);
    HX_RETURN_IF_ERROR(comm_.AllReduceSum(world_, y.data(), static_cast<int64_t>(y.size())));
    TpAddBias(y, linear.out, linear.bias.data());
    for (size_t i = 0; i < h->size(); ++i) (*h)[i] += y[i];
    return Status::Ok();
  }

  StatusOr<std::vector<float>> Run2D() {
    const int64_t begin = TokenBegin(me_) * d_, count = TokenCount(me_) * d_;
    std::vector<float> h(q_.input->begin() + begin, q_.input->begin() + begin + count);
    const TpQkvLayout head_major{3 * dh_, 0, dh_, 2 * dh_};
    const int64_t my_sequences = nodes_[me_].batch_end - nodes_[me_].batch_begin;
    for (const TpGptLayerWeights& w : m_.layers) {
      std::vector<TpLinear> lin = TpLayerLinears(m_, w);
      HX_ASSIGN_OR_RETURN(std::vector<float> qkv,
                          Linear2D(TpLayerNorm(h, d_, w.ln1_scale, w.ln1_bias), lin[0]));
      std::vector<float> ctx =
          TpCausalAttention(qkv, 3 * d_, head_major, my_sequences, q_.seq, heads_, dh_);
      HX_ASSIGN_OR_RETURN(std::vector<float> attn, Linear2D(ctx, lin[1]));
      for (size_t i = 0; i < h.size(); ++i) h[i] += attn[i];
      HX_ASSIGN_OR_RETURN(std::vector<float> f,
                          Linear2D(TpLayerNorm(h, d_, w.ln2_scale, w.ln2_bias), lin[2]));
      TpGeluTanh(f);
      HX_ASSIGN_OR_RETURN(std::vector<float> mlp, Linear2D(f, lin[3]));
      for (size_t i = 0; i < h.size(); ++i) h[i] += mlp[i];
    }
    return GatherTokens(TpLayerNorm(h, d_, m_.lnf_scale, m_.lnf_bias), d_);
  }

  // Every rank's token rows of width `width` (AllGather over all ranks, padded to the longest
  // slice): [tokens, width].
  StatusOr<std::vector<float>> GatherTokens(const std::vector<float>& mine, int64_t width) {
    int64_t longest = 0;
    for (size_t n = 0; n < nodes_.size(); ++n)
      longest = std::max(longest, TokenCount(static_cast<int>(n)));
    const int64_t per_rank = longest * width;
    std::vector<float> send(static_cast<size_t>(per_rank), 0.0f), all(world_.size() * per_rank);
    std::copy(mine.begin(), mine.end(), send.begin());
    HX_RETURN_IF_ERROR(comm_.AllGather(world_, send.data(), per_rank, all.data()));
    std::vector<float> out(static_cast<size_t>(tokens_ * width));
    for (size_t n = 0; n < nodes_.size(); ++n) {
      const auto from = all.begin() + static_cast<int64_t>(n) * per_rank;
      const int64_t count = TokenCount(static_cast<int>(n)) * width;
      std::copy(from, from + count, out.begin() + TokenBegin(static_cast<int>(n)) * width);
    }
    return out;
  }

  // The plan's group of `node` (ascending ranks) and each node's column piece of `layer` after
  // the group's reduce-scatter: the group's columns split by the members' capabilities.
  RankGroup GroupOf(int node) const {
    RankGroup g;
    for (size_t n = 0; n < nodes_.size(); ++n)
      if (nodes_[n].group == nodes_[node].group) g.push_back(static_cast<int>(n));
    return g;
  }
  std::vector<TpRange> ColumnPieces(const std::string& layer) const {
    std::vector<TpRange> pieces(nodes_.size());
    for (size_t n = 0; n < nodes_.size(); ++n) {
      RankGroup g = GroupOf(static_cast<int>(n));
      if (g.front() != static_cast<int>(n)) continue;  // the group's first member fills it in
      std::vector<double> caps;
      for (int member : g) caps.push_back(std::max(nodes_[member].capability, 1e-9));
      const tp::WeightBlock& b = Block(static_cast<int>(n), layer);
      std::vector<int64_t> widths = tp::ProportionalSplit(b.col_end - b.col_begin, caps);
      int64_t at = b.col_begin;
      for (size_t i = 0; i < g.size(); ++i) {
        pieces[g[i]] = {at, at + widths[i]};
        at += widths[i];
      }
    }
    return pieces;
  }

  // One linear on the 2D layout: x_mine[my tokens, in] -> [my tokens, out].
  StatusOr<std::vector<float>> Linear2D(const std::vector<float>& x_mine, const TpLinear& linear) {
    HX_ASSIGN_OR_RETURN(std::vector<float> x_all, GatherTokens(x_mine, linear.in));
    std::vector<float> partial = BlockProduct(x_all, linear, false);
    const tp::WeightBlock& b = Block(me_, linear.name);
    const int64_t cols = b.col_end - b.col_begin;
    const RankGroup group = GroupOf(me_);
    const std::vector<TpRange> pieces = ColumnPieces(linear.name);
    int64_t group_width = 0, world_width = 0;
    for (int n : group) group_width = std::max(group_width, pieces[n].second - pieces[n].first);
    for (const auto& p : pieces) world_width = std::max(world_width, p.second - p.first);
    // Reduce-scatter the partial products over the group, member m's piece in block m.
    std::vector<float> send(group.size() * tokens_ * group_width, 0.0f);
    for (size_t m = 0; m < group.size(); ++m) {
      const TpRange p = pieces[group[m]];
      for (int64_t t = 0; t < tokens_; ++t)
        for (int64_t c = p.first; c < p.second; ++c)
          send[(m * tokens_ + t) * group_width + (c - p.first)] =
              partial[t * cols + (c - b.col_begin)];
    }
    std::vector<float> piece(static_cast<size_t>(tokens_ * group_width));
    HX_RETURN_IF_ERROR(
        comm_.ReduceScatterSum(group, send.data(), tokens_ * group_width, piece.data()));
    return AssemblePieces(piece, group_width, world_width, pieces, linear);
  }

  // All-gathers every rank's column piece (plus bias) and keeps this rank's token rows.
  StatusOr<std::vector<float>> AssemblePieces(const std::vector<float>& piece, int64_t piece_ld,
                                              int64_t world_width,
                                              const std::vector<TpRange>& pieces,
                                              const TpLinear& linear) {
    const TpRange mine = pieces[me_];
    std::vector<float> send(static_cast<size_t>(tokens_ * world_width), 0.0f);
    for (int64_t t = 0; t < tokens_; ++t)
      for (int64_t c = mine.first; c < mine.second; ++c)
        send[t * world_width + (c - mine.first)] =
            piece[t * piece_ld + (c - mine.first)] + linear.bias[c];
    std::vector<float> all(world_.size() * send.size());
    HX_RETURN_IF_ERROR(comm_.AllGather(world_, send.data(), tokens_ * world_width, all.data()));
    const int64_t first = TokenBegin(me_), count = TokenCount(me_);
    std::vector<float> y(static_cast<size_t>(count * linear.out));
    for (size_t n = 0; n < pieces.size(); ++n)
      for (int64_t t = 0; t < count; ++t)
        for (int64_t c = pieces[n].first; c < pieces[n].second; ++c)
          y[t * linear.out + c] =
              all[(n * tokens_ + first + t) * world_width + (c - pieces[n].first)];
    return y;
  }

  const TpRunRequest& q_;
  const TpGptModel& m_;
  const std::vector<tp::NodePlan>& nodes_;
  Communicator& comm_;
  int me_;
  int64_t d_ = 0, dh_ = 0, heads_ = 0, tokens_ = 0;
  RankGroup world_;
};

}  // namespace

Status ValidateTpRun(const TpRunRequest& q, int world_size) {
  if (!q.model || !q.plan || !q.input) return Internal("tp run: model, plan and input are needed");
  HX_RETURN_IF_ERROR(ValidateTpGptConfig(q.model->config));
  const int64_t d = q.model->config.hidden;
  if (q.batch < 1 || q.seq < 1 || static_cast<int64_t>(q.input->size()) != q.batch * q.seq * d)
    return InvalidArgument("tp run: the input holds " + std::to_string(q.input->size()) +
                           " values, batch x seq x hidden is " +
                           std::to_string(q.batch * q.seq * d));
  const tp::TpResult& r = *q.plan;
  if (r.volume_only || r.layout == tp::TpMethod::kIdeal)
    return InvalidArgument("tp plan: 'ideal' is a volume bound with no plan to run");
  if (static_cast<int>(r.plan.nodes.size()) != world_size)
    return InvalidArgument("tp plan: " + std::to_string(r.plan.nodes.size()) +
                           " nodes, but the run has " + std::to_string(world_size) +
                           " ranks (one rank per node)");
  const bool megatron = r.layout == tp::TpMethod::kMegatron;
  HX_RETURN_IF_ERROR(TpCheckBatch(q, megatron));
  for (const auto& lin : tp::DecoderLinears(q.model->Shape()))
    HX_RETURN_IF_ERROR(TpCheckBlocks(q, lin, megatron));
  return megatron ? TpCheckMegatron(q) : Status::Ok();
}

void ShareBlasThreadsAmongRanks(int ranks_here) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  openblas_set_num_threads(std::max(1, cores / std::max(1, ranks_here)));
}

StatusOr<std::vector<float>> RunTensorParallel(const TpRunRequest& request, Communicator& comm) {
  HX_RETURN_IF_ERROR(ValidateTpRun(request, comm.size()));
  TpRankRun run(request, comm);
  return run.Run();
}

double TpRelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return scale > 0.0 ? diff / scale : diff;
}

}  // namespace hx::exec
