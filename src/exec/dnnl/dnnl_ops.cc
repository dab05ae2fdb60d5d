#include "hexplan/exec/dnnl_ops.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "exec/dnnl/layout.h"
#include "exec/dnnl/primitives.h"
#include "exec/dnnl/team_choice.h"
#include "exec/xnn/xnn_eltwise.h"

namespace hx::exec {
namespace {

using dnnl_impl::Layout;
using dnnl_impl::NodePrimitive;

bool IsPool(const std::string& t) {
  return t == "MaxPool" || t == "AveragePool" || t == "GlobalAveragePool";
}

bool IsEltwise(const std::string& t) {
  return t == "Relu" || t == "Clip" || t == "Sigmoid" || t == "Tanh";
}
// The activations a Conv applies as a post-op: idempotent ones only (FuseActivations).
bool IsIdempotentActivation(const std::string& t) { return t == "Relu" || t == "Clip"; }
bool IsBinary(const std::string& t) { return t == "Add" || t == "Sub" || t == "Mul" || t == "Div"; }

// `in`: the inputs of a run (Clip's bounds), or null while preparing; `post`: a Conv's fused
// activation, if any. One thread at a time makes primitives: oneDNN's primitive cache hands a
// primitive descriptor one thread built to another thread making the same primitive, and the locks
// that order the two live inside libdnnl, which a ThreadSanitizer build does not instrument (it
// reported the hand-over as a race). A node's primitive is made once per team size, off the hot
// path, so the lock costs a first run little.
std::unique_ptr<NodePrimitive> MakeForOp(const graph::Graph& g, const graph::Node& op,
                                         const dnnl_impl::Layouts& layouts,
                                         const std::vector<TensorRef>* in,
                                         const dnnl_impl::ConvPostOp* post) {
  if (!op.is_op() || !(op.domain.empty() || op.domain == "ai.onnx")) return nullptr;
  static std::mutex making;
  const std::lock_guard<std::mutex> one_at_a_time(making);
  if (op.op_type == "Conv") return dnnl_impl::MakeConv(g, op, layouts, post);
  if (IsPool(op.op_type)) return dnnl_impl::MakePool(g, op, layouts);
  if (IsEltwise(op.op_type)) return dnnl_impl::MakeEltwise(g, op, in);
  if (IsBinary(op.op_type)) return dnnl_impl::MakeBinary(g, op);
  if (op.op_type == "LSTM") return dnnl_impl::MakeLstm(g, op);
  if (op.op_type == "MatMul") return dnnl_impl::MakeMatMul(g, op);
  if (op.op_type == "Gemm") return dnnl_impl::MakeGemm(g, op);
  if (op.op_type == "Softmax") return dnnl_impl::MakeSoftmax(g, op);
  if (op.op_type == "LayerNormalization") return dnnl_impl::MakeLayerNorm(g, op);
  return nullptr;
}

std::unique_ptr<NodePrimitive> Make(const graph::Graph& g, const graph::Node& op,
                                    const dnnl_impl::Layouts& layouts,
                                    const std::vector<TensorRef>* in = nullptr,
                                    const dnnl_impl::ConvPostOp* post = nullptr) {
  std::unique_ptr<NodePrimitive> p = MakeForOp(g, op, layouts, in, post);
  if (p != nullptr) p->scratchpad_bytes = p->scratchpad.get_size();
  return p;
}

// Work between two barriers of a team small enough that waking the team's other threads (tens of
// microseconds on a VM, far more on a loaded one) costs more than it saves: a Conv under 4 MFLOP,
// an LSTM under 4 MFLOP per time step whose batch the team cannot split (oneDNN's own team
// synchronises at every step; a split batch runs a part per thread, lstm.cc), a MatMul under 1
// MFLOP; Softmax and LayerNormalization (memory-bound, like the elementwise ops).
bool IsSmall(const graph::Graph& g, const graph::Node& op) {
  constexpr double kFlops = 4e6;
  constexpr int64_t kBytes = 256 << 10;
  if (op.op_type == "Softmax" || op.op_type == "LayerNormalization") return true;
  if (op.op_type == "MatMul" || op.op_type == "Gemm") {
    const graph::Shape& a = g.tensor(op.inputs[0]).shape;
    return 2.0 * static_cast<double>(g.tensor(op.outputs[0]).NumElements() * a.back()) < 1e6;
  }
  if (op.op_type == "Conv") {
    // A depthwise Conv does 18 FLOP per output and is bound by memory, not arithmetic: it is
    // small only when its tensors are too (mobilenet_v2's 28x28 and 14x14 ones run in half the
    // time on a team of two, 45 -> 23 us and 21 -> 12 us).
    const graph::Shape& w = g.tensor(op.inputs[1]).shape;
    const double per_output = 2.0 * static_cast<double>(w[1] * w[2] * w[3]);
    const int64_t bytes = g.tensor(op.inputs[0]).Bytes() + g.tensor(op.outputs[0]).Bytes();
    return per_output * static_cast<double>(g.tensor(op.outputs[0]).NumElements()) < kFlops &&
           bytes < kBytes;
  }
  if (op.op_type == "LSTM") {
    const graph::Shape& x = g.tensor(op.inputs[0]).shape;
    const graph::Shape& r = g.tensor(op.inputs[2]).shape;
    return x[1] % 2 != 0 && 2.0 * static_cast<double>(x[1] * r[1] * (x[2] + r[2])) < kFlops;
  }
  return false;
}

// Whether the primitive `p` was made for this run: the calling thread's team size, and for Clip
// the bounds its inputs hold now.
bool Current(const NodePrimitive& p, const graph::Node& op, const std::vector<TensorRef>& in) {
  if (p.threads != omp_get_max_threads()) return false;
  if (op.op_type != "Clip") return true;
  const auto [lo, hi] = dnnl_impl::ClipBounds(op, &in);
  return lo == p.alpha && hi == p.beta;
}

}  // namespace

// Named, not anonymous: DnnlOps::Impl (a class with linkage) holds them.
namespace dnnl_state {

// The nodes of one prepared graph that read the same constant weight (an unrolled LSTM's 24 steps
// of a layer read its two matrices): the first primitive packed into a layout is the one the
// others with that layout read (their weights_from), so the packed copy is made and cached once.
struct SharedWeights {
  std::mutex lock;
  std::vector<std::shared_ptr<NodePrimitive>> packed;  // one per packed layout
};

// A node Prepare accepted. Its primitive is made on the thread that first runs it, for that
// thread's OpenMP team, and made again if a thread with another team size runs it.
struct NodeState {
  const graph::Graph* graph = nullptr;
  const graph::Node* node = nullptr;
  // What the node looked like when prepared: a node of another graph at the same address (the
  // graph was freed) must not run this state.
  std::string op_type;
  graph::Shape x, y;
  // The shape objects of the last inputs that matched x and y (Matches).
  std::atomic<const graph::Shape*> matched_x{nullptr}, matched_y{nullptr};
  dnnl_impl::Layouts layouts;
  // Elementwise ops run on the calling thread alone: they are memory-bound, and each parallel
  // region is a barrier the team waits at (a preempted team thread holds up the others).
  bool one_thread = false;
  // The others (Conv, pooling, MatMul, LSTM) run on the team or alone as measured
  // (team_choice.h).
  bool measured_team = false;
  std::mutex lock;
  dnnl_impl::TeamChoice choice;
  std::shared_ptr<NodePrimitive> built[2];        // made for one thread, for the team
  std::shared_ptr<SharedWeights> shared_weights;  // when input 1 is a constant read by others
  // Conv + Relu/Clip fusion (FuseActivations): on the activation, its Conv; on the Conv, the
  // activation it applies as it writes (once known: Relu at once, Clip's constant bounds when its
  // first run reads them; under `lock`), and the buffer its last run wrote with it applied.
  NodeState* absorbed_by = nullptr;
  std::optional<dnnl_impl::ConvPostOp> post;
  std::atomic<const void*> applied_to{nullptr};
  // Conv + Add fusion (FuseAdds): on the Conv, the Add's other input, whose buffer the executor
  // gives the Conv's output where it can (DeviceBackend::FusedInput); on the Add, its Conv and
  // which of its inputs is the Conv's output.
  TensorId add_other;
  NodeState* add_conv = nullptr;
  size_t conv_input = 0;
  // A small elementwise op in the plain layout, fused with nothing: XNNPACK runs it instead
  // (xnn_eltwise.h: a third of oneDNN's cost per call).
  std::unique_ptr<xnn_impl::XnnEltwise> xnn;
};

}  // namespace dnnl_state

using dnnl_state::NodeState;
using dnnl_state::SharedWeights;

namespace {

bool Matches(NodeState& s, const graph::Node& op, const std::vector<TensorRef>& in,
             const std::vector<TensorRef>& out) {
  if (in.empty() || out.empty() || in[0].shape == nullptr || out[0].shape == nullptr) return false;
  // The executor passes the graph's own shapes: the same two as last time matched then.
  if (in[0].shape == s.matched_x.load(std::memory_order_relaxed) &&
      out[0].shape == s.matched_y.load(std::memory_order_relaxed))
    return true;
  if (s.op_type != op.op_type || *in[0].shape != s.x || *out[0].shape != s.y) return false;
  s.matched_x.store(in[0].shape, std::memory_order_relaxed);
  s.matched_y.store(out[0].shape, std::memory_order_relaxed);
  return true;
}

// The node's primitive for the calling thread's team size (made on first use; a Clip whose bounds
// changed is made again). The one-thread and team primitives of a node share their packed
// weights when they chose the same layout for them. Called under s.lock; the primitive stays
// owned by `s` (a node runs on one thread at a time).
NodePrimitive* PrimitiveForTeam(NodeState& s, const graph::Node& op,
                                const std::vector<TensorRef>& in,
                                const dnnl_impl::ConvPostOp* post) {
  const int slot = omp_get_max_threads() > 1 ? 1 : 0;
  std::shared_ptr<NodePrimitive>& p = s.built[slot];
  const bool sums = post != nullptr && post->sum;
  if (p != nullptr && Current(*p, op, in) && p->post_op == (post != nullptr && !sums) &&
      p->post_sum == sums)
    return p.get();
  p = Make(*s.graph, *s.node, s.layouts, &in, post);
  const std::shared_ptr<NodePrimitive>& other = s.built[1 - slot];
  if (p != nullptr && other != nullptr && p->const_weights && other->const_weights &&
      p->w == other->w)
    p->weights_from = other->weights_from != nullptr ? other->weights_from : other;
  if (p != nullptr && p->const_weights && p->weights_from == nullptr && s.shared_weights) {
    std::lock_guard<std::mutex> lock(s.shared_weights->lock);
    for (const std::shared_ptr<NodePrimitive>& q : s.shared_weights->packed)
      if (q->w == p->w) p->weights_from = q;
    if (p->weights_from == nullptr) s.shared_weights->packed.push_back(p);
  }
  return p.get();
}

// The Relu or Clip node that is the only reader of Conv `op`'s output (not a graph output), when
// oneDNN runs it and Clip's bounds are constants; null otherwise.
const graph::Node* FusableActivation(const graph::Graph& g, const graph::Node& op) {
  if (op.op_type != "Conv" || op.outputs.size() != 1) return nullptr;
  const std::vector<NodeId>& readers = g.tensor(op.outputs[0]).consumers;
  if (readers.size() != 1) return nullptr;
  const graph::Node& act = g.node(readers[0]);
  if (!act.is_op() || !IsIdempotentActivation(act.op_type) || act.inputs.empty() ||
      act.inputs[0] != op.outputs[0] || Make(g, act, {}) == nullptr)
    return nullptr;
  for (size_t i = 1; i < act.inputs.size(); ++i)
    if (act.inputs[i].valid() && !dnnl_impl::IsConstantValue(g, act.inputs[i])) return nullptr;
  return &act;
}

// Pairs each Conv with the activation FusableActivation finds: the Conv applies it as a post-op,
// and the activation, run in place on the Conv's buffer (DnnlOps::RunsInPlace), then has nothing
// left to do. Relu(Relu(x)) = Relu(x) and Clip(Clip(x)) = Clip(x) with the same bounds, so an
// activation that does run (not in place, or on another device's copy) still gives the right
// answer. Only `g`'s nodes: `nodes` may still hold those of a graph freed since (their addresses
// are keys, never read through).
void FuseActivations(const graph::Graph& g,
                     std::unordered_map<const graph::Node*, std::unique_ptr<NodeState>>& nodes) {
  for (NodeId id : g.Ops()) {
    const graph::Node* node = &g.node(id);
    auto conv = nodes.find(node);
    if (conv == nodes.end()) continue;
    const graph::Node* act = FusableActivation(g, *node);
    if (act == nullptr) continue;
    auto it = nodes.find(act);
    if (it == nodes.end()) continue;
    it->second->absorbed_by = conv->second.get();
    if (act->op_type == "Relu") conv->second->post = dnnl_impl::ConvPostOp{true, 0.0f, 0.0f};
  }
}

// Whether node `a` is an ancestor of `op` (a bounded search: a residual's skip tensor is a few
// nodes up).
bool IsAncestor(const graph::Graph& g, NodeId a, const graph::Node& op) {
  constexpr size_t kMaxVisited = 256;
  std::vector<NodeId> stack;
  std::unordered_set<uint32_t> seen;
  auto push_producers = [&](const graph::Node& n) {
    for (TensorId t : n.inputs)
      if (t.valid()) stack.push_back(g.tensor(t).producer);
  };
  push_producers(op);
  while (!stack.empty() && seen.size() < kMaxVisited) {
    const NodeId id = stack.back();
    stack.pop_back();
    if (id == a) return true;
    if (!seen.insert(id.value()).second || !g.node(id).is_op()) continue;
    push_producers(g.node(id));
  }
  return false;
}

// The Conv whose output is input `k` of `add` and that can add `add`'s other input as it writes:
// `add` is its output's only reader (not a graph output), the other input is another op's output
// of the same shape, written before the Conv runs (an ancestor), and oneDNN takes the post-op.
NodeState* FusableConv(const graph::Graph& g, const graph::Node& add, size_t k,
                       std::unordered_map<const graph::Node*, std::unique_ptr<NodeState>>& nodes) {
  const TensorId c = add.inputs[k], other = add.inputs[1 - k];
  if (!c.valid() || !other.valid() || c == other || g.tensor(c).consumers.size() != 1)
    return nullptr;
  const graph::Node& conv = g.node(g.tensor(c).producer);
  auto it = nodes.find(&conv);
  const NodeId skip = g.tensor(other).producer;
  if (it == nodes.end() || conv.op_type != "Conv" || conv.outputs.size() != 1 ||
      it->second->add_other.valid() || it->second->post || !g.node(skip).is_op() ||
      g.tensor(other).shape != g.tensor(c).shape || !IsAncestor(g, skip, conv))
    return nullptr;
  const dnnl_impl::ConvPostOp sum{false, 0.0f, 0.0f, true};
  if (Make(g, conv, it->second->layouts, nullptr, &sum) == nullptr) return nullptr;
  return it->second.get();
}

// Pairs an Add of two equal shapes with the Conv FusableConv finds for one of its inputs: given
// the other input's buffer as its output (DeviceBackend::FusedInput), the Conv adds its result
// into it (a oneDNN sum post-op), and the Add, whose inputs then share that buffer, runs in place
// on it and has nothing left to do. The executor does that only when the Add is the buffer's last
// reader, so nothing else sees the skip tensor overwritten.
int FuseAdds(const graph::Graph& g,
             std::unordered_map<const graph::Node*, std::unique_ptr<NodeState>>& nodes) {
  int fused = 0;
  for (NodeId id : g.Ops()) {
    const graph::Node& add = g.node(id);
    auto it = nodes.find(&add);
    if (it == nodes.end() || add.op_type != "Add" || add.inputs.size() != 2 ||
        add.outputs.size() != 1 || !add.inputs[0].valid() || !add.inputs[1].valid() ||
        g.tensor(add.inputs[0]).shape != g.tensor(add.outputs[0]).shape)
      continue;
    for (size_t k = 0; k < 2; ++k) {
      NodeState* conv = FusableConv(g, add, k, nodes);
      if (conv == nullptr) continue;
      conv->add_other = add.inputs[1 - k];
      it->second->add_conv = conv;
      it->second->conv_input = k;
      ++fused;
      break;
    }
  }
  return fused;
}

// An Add FuseAdds paired with a Conv; true when done. Its two inputs (two tensors) share one
// buffer only after the executor's FusedInput hand-over: the Conv has added into it, and the
// result is copied unless the Add runs in place on it. Otherwise, run in place on the Conv's
// buffer (which oneDNN's binary primitive must not write while reading it as its second
// source), it adds here; else the binary primitive runs.
bool RunFusedAdd(const NodeState& s, const std::vector<TensorRef>& in,
                 const std::vector<TensorRef>& out) {
  const TensorRef& conv = in[s.conv_input];
  const TensorRef& other = in[1 - s.conv_input];
  if (conv.data == other.data && conv.data != nullptr) {
    if (out[0].data != conv.data) std::memcpy(out[0].data, conv.data, out[0].Bytes());
    return true;
  }
  if (out[0].data != conv.data) return false;
  float* y = out[0].as<float>();
  const float* b = other.as<float>();
  const int64_t n = out[0].NumElements();
  for (int64_t i = 0; i < n; ++i) y[i] += b[i];
  return true;
}

// An activation FuseActivations paired with a Conv: true when the Conv's last run applied it to
// this very buffer (nothing to do); otherwise records Clip's bounds for the Conv's next runs.
bool AlreadyApplied(NodeState& s, const graph::Node& op, const std::vector<TensorRef>& in,
                    const std::vector<TensorRef>& out) {
  NodeState& conv = *s.absorbed_by;
  dnnl_impl::ConvPostOp want{op.op_type == "Relu", 0.0f, 0.0f};
  if (!want.relu) std::tie(want.alpha, want.beta) = dnnl_impl::ClipBounds(op, &in);
  std::lock_guard<std::mutex> lock(conv.lock);
  if (!conv.post) {
    conv.post = want;
    return false;
  }
  return conv.post->relu == want.relu && conv.post->alpha == want.alpha &&
         conv.post->beta == want.beta && in[0].data == out[0].data &&
         conv.applied_to.load() == in[0].data;
}

}  // namespace

// A prepared node's state: what identifies it (Matches), before any choice of kernel.
std::unique_ptr<NodeState> NewNodeState(const graph::Graph& g, const graph::Node& op) {
  auto s = std::make_unique<NodeState>();
  s->graph = &g;
  s->node = &op;
  s->op_type = op.op_type;
  s->x = g.tensor(op.inputs[0]).shape;
  s->y = g.tensor(op.outputs[0]).shape;
  return s;
}

struct DnnlOps::Impl {
  std::unordered_map<const graph::Node*, std::unique_ptr<NodeState>> nodes;
  // The last prepared graph's states by node index (its nodes are one array): Run's lookup
  // without hashing, a miss per op in a 1,449-op LSTM (the map stays the owner, for other graphs).
  const graph::Node* first = nullptr;
  std::vector<NodeState*> by_index;
  int xnnpack_nodes = 0;  // of the last prepared graph

  // Gives XNNPACK the small elementwise ops it takes (xnn_eltwise.h) in the plain layout and fused
  // with nothing, after FuseActivations and FuseAdds; returns how many.
  int TakeXnnpackOps(const graph::Graph& graph, const std::vector<bool>& blocked) {
    xnnpack_nodes = 0;
    for (NodeId id : graph.Ops()) {
      NodeState* s = by_index[id.value()];
      if (s != nullptr &&
          (s->absorbed_by != nullptr || s->add_conv != nullptr || s->add_other.valid()))
        continue;
      const graph::Node& op = graph.node(id);
      // XNNPACK reads a little past its inputs' ends: only buffers the backend allocates, with
      // slack (ops' outputs), not weights or graph inputs read in place from host memory.
      bool plain = true;
      for (TensorId t : op.inputs)
        plain = plain && t.valid() && graph.node(graph.tensor(t).producer).is_op() &&
                !blocked[t.value()];
      for (TensorId t : op.outputs) plain = plain && !(t.valid() && blocked[t.value()]);
      std::unique_ptr<xnn_impl::XnnEltwise> xnn =
          plain ? xnn_impl::XnnEltwise::Make(graph, op) : nullptr;
      if (xnn == nullptr) continue;
      if (s == nullptr) {  // one oneDNN refuses (a Sub or Div whose first input broadcasts)
        std::unique_ptr<NodeState> made = NewNodeState(graph, op);
        made->one_thread = true;
        s = made.get();
        by_index[id.value()] = s;
        nodes[&op] = std::move(made);
      }
      s->xnn = std::move(xnn);
      ++xnnpack_nodes;
    }
    return xnnpack_nodes;
  }

  NodeState* Find(const graph::Node& op) const {
    const std::ptrdiff_t i = &op - first;
    if (first != nullptr && i >= 0 && static_cast<size_t>(i) < by_index.size() &&
        by_index[static_cast<size_t>(i)] != nullptr &&
        by_index[static_cast<size_t>(i)]->node == &op)
      return by_index[static_cast<size_t>(i)];
    auto it = nodes.find(&op);
    return it == nodes.end() ? nullptr : it->second.get();
  }
  dnnl_impl::PreferredLayout preferred = dnnl_impl::PreferredActivationLayout();
  int blocked_tensors = 0;
};

DnnlOps::DnnlOps() : impl_(std::make_unique<Impl>()) {}
DnnlOps::~DnnlOps() = default;

void DnnlOps::Prepare(const graph::Graph& graph) {
  // dnnl_op: the ops that convert layouts (Conv, pooling); elementwise ops run on oneDNN too but
  // keep their input's layout, as layout.h plans for them.
  std::vector<bool> dnnl_op(graph.num_nodes(), false), handled(graph.num_nodes(), false);
  for (NodeId id : graph.NodeIds()) {
    const graph::Node& op = graph.node(id);
    impl_->nodes.erase(&op);
    handled[id.value()] = Make(graph, op, {}) != nullptr;
    dnnl_op[id.value()] = handled[id.value()] && (op.op_type == "Conv" || IsPool(op.op_type));
  }
  std::vector<bool> blocked(graph.num_tensors(), false);
  if (impl_->preferred.tag != dnnl::memory::format_tag::undef)
    blocked = dnnl_impl::PlanBlockedTensors(graph, dnnl_op, impl_->preferred.block);
  impl_->blocked_tensors = 0;
  for (bool b : blocked) impl_->blocked_tensors += b ? 1 : 0;
  std::map<int64_t, std::shared_ptr<SharedWeights>> weights;  // by the weight's tensor
  for (NodeId id : graph.Ops()) {
    if (!handled[id.value()]) continue;
    const graph::Node& op = graph.node(id);
    std::unique_ptr<NodeState> s = NewNodeState(graph, op);
    s->layouts.blocked = impl_->preferred.tag;
    s->one_thread = IsEltwise(op.op_type) || IsBinary(op.op_type) || IsSmall(graph, op);
    s->measured_team = !s->one_thread;
    if (blocked[op.inputs[0].value()]) s->layouts.src = Layout::kBlocked;
    if (blocked[op.outputs[0].value()]) s->layouts.dst = Layout::kBlocked;
    if (op.inputs.size() > 1 && op.inputs[1].valid() &&
        dnnl_impl::IsConstantValue(graph, op.inputs[1])) {
      std::shared_ptr<SharedWeights>& shared = weights[op.inputs[1].value()];
      if (shared == nullptr) shared = std::make_shared<SharedWeights>();
      s->shared_weights = shared;
    }
    impl_->nodes[&op] = std::move(s);
  }
  impl_->first = graph.num_nodes() > 0 ? &graph.node(NodeId(0)) : nullptr;
  impl_->by_index.assign(graph.num_nodes(), nullptr);
  for (NodeId id : graph.NodeIds()) {
    auto it = impl_->nodes.find(&graph.node(id));
    if (it != impl_->nodes.end()) impl_->by_index[id.value()] = it->second.get();
  }
  FuseActivations(graph, impl_->nodes);
  const int fused_adds = FuseAdds(graph, impl_->nodes);
  const int on_xnnpack = impl_->TakeXnnpackOps(graph, blocked);
  if (std::getenv("HX_DNNL_DEBUG") != nullptr)
    std::fprintf(stderr,
                 "dnnl: %zu nodes, %d blocked tensors, %d Adds fused into Convs, %d on XNNPACK\n",
                 impl_->nodes.size(), impl_->blocked_tensors, fused_adds, on_xnnpack);
}

StatusOr<bool> DnnlOps::Run(const graph::Node& op, const std::vector<TensorRef>& inputs,
                            const std::vector<TensorRef>& outputs) {
  NodeState* found = impl_->Find(op);
  if (found == nullptr) return false;
  NodeState& s = *found;
  s.applied_to.store(nullptr);  // until this run has written its output with the post-op
  if (!Matches(s, op, inputs, outputs)) return false;
  if (s.absorbed_by != nullptr && AlreadyApplied(s, op, inputs, outputs)) return true;
  if (s.add_conv != nullptr && RunFusedAdd(s, inputs, outputs)) return true;
  if (s.xnn != nullptr) {
    HX_RETURN_IF_ERROR(s.xnn->Run(op, inputs, outputs));
    return true;
  }
  // A Conv given its Add's other input's buffer as its output adds into it (FusedInput).
  const dnnl_impl::ConvPostOp sum{false, 0.0f, 0.0f, true};
  const bool sums = s.add_other.valid() && inputs.size() > op.inputs.size();
  if (sums && inputs.back().data != outputs[0].data)
    return Internal("Conv '" + op.name + "': the tensor to add is not in its output buffer");
#if defined(__SANITIZE_THREAD__)
  // libgomp is not instrumented: ThreadSanitizer would report its team's barriers as races.
  omp_set_num_threads(1);
#endif
  const bool measure = s.measured_team && omp_get_max_threads() > 1;
  std::optional<ScopedTeamSize> team;
  NodePrimitive* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.lock);
    if (s.one_thread || (measure && !s.choice.NextUsesTeam())) team.emplace(1);
    p = PrimitiveForTeam(s, op, inputs, sums ? &sum : (s.post ? &*s.post : nullptr));
  }
  if (p == nullptr)
    return Internal(op.op_type + " '" + op.name +
                    "': oneDNN refused the layouts it was planned with");
  const auto start = std::chrono::steady_clock::now();
  HX_RETURN_IF_ERROR(dnnl_impl::RunNode(*p, inputs, outputs));
  if (p->post_op) s.applied_to.store(outputs[0].data);
  if (measure) {
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    std::lock_guard<std::mutex> lock(s.lock);
    s.choice.Record(took.count());
  }
  return true;
}

bool DnnlOps::RunsInPlace(const graph::Node& op) const {
  const NodeState* s = impl_->Find(op);
  return s != nullptr && (s->absorbed_by != nullptr || s->add_conv != nullptr);
}

size_t DnnlOps::InPlaceInput(const graph::Node& op) const {
  const NodeState* s = impl_->Find(op);
  return s != nullptr && s->add_conv != nullptr ? s->conv_input : 0;
}

TensorId DnnlOps::FusedInput(const graph::Node& op) const {
  const NodeState* s = impl_->Find(op);
  return s != nullptr ? s->add_other : TensorId{};
}

int DnnlOps::num_nodes() const { return static_cast<int>(impl_->nodes.size()); }
int DnnlOps::num_blocked_tensors() const { return impl_->blocked_tensors; }
int DnnlOps::num_xnnpack_nodes() const { return impl_->xnnpack_nodes; }

DnnlOps::ScopedTeamSize::ScopedTeamSize(int threads) : old_(omp_get_max_threads()) {
  omp_set_num_threads(threads);
}
DnnlOps::ScopedTeamSize::~ScopedTeamSize() { omp_set_num_threads(old_); }

namespace {
void PinCallingThread(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}
}  // namespace

void DnnlOps::BindTeam(const std::vector<int>& cores) {
#if defined(__SANITIZE_THREAD__)
  (void)cores;
  omp_set_num_threads(1);
#else
  const int n = cores.empty() ? 1 : static_cast<int>(cores.size());
  omp_set_num_threads(n);
  if (cores.empty()) return;
  PinCallingThread(cores[0]);
  // libgomp keeps a thread's team for its later parallel regions: pinning each team thread to
  // one core once keeps it there (the executor's threads persist across runs, so this runs once
  // per thread). Unpinned, two threads of a team could share a core while the other core runs
  // something else, and every barrier then waits for a time slice (24 ms per primitive measured
  // on a loaded 2-core VM, against microseconds pinned).
  thread_local std::vector<int> pinned;
  if (pinned == cores) return;
  pinned = cores;
#pragma omp parallel num_threads(n)
  if (omp_get_thread_num() > 0)
    PinCallingThread(cores[static_cast<size_t>(omp_get_thread_num()) % cores.size()]);
#endif
}

}  // namespace hx::exec

#if defined(__SANITIZE_ADDRESS__)
// LeakSanitizer: oneDNN keeps a few kilobytes for some kernels it has used and never frees them
// (9.7 kB once for a grouped convolution with asymmetric pads, not per run); not ours to fix.
extern "C" const char* __lsan_default_suppressions() { return "leak:libdnnl.so\n"; }
#endif
