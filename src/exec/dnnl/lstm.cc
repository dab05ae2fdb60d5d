// ONNX LSTM (layout 0, one direction, default activations, no sequence_lens or peepholes) on
// oneDNN's LSTM primitive. ONNX orders the gates i, o, f, c and stores W as [4H, I]; oneDNN
// wants i, f, c, o as [I, 4, H] (ldigo) and one bias (Wb + Rb): the weights are rearranged into
// that, then reordered into the primitive's layout, once for constant weights.

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "exec/dnnl/primitives.h"

namespace hx::exec::dnnl_impl {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
constexpr int kOnnxGate[4] = {0, 2, 3, 1};  // oneDNN gate g is ONNX gate kOnnxGate[g]

memory::desc F32(memory::dims d, tag t) { return memory::desc(d, memory::data_type::f32, t); }

bool IsConstantInput(const graph::Graph& g, TensorId t) {
  for (int depth = 0; depth < 16 && t.valid(); ++depth) {
    const graph::Tensor& tensor = g.tensor(t);
    if (!tensor.producer.valid()) return false;
    const graph::Node& p = g.node(tensor.producer);
    if (p.kind == graph::NodeKind::kWeight || p.op_type == "Constant") return true;
    if (p.op_type != "Identity" || p.inputs.empty()) return false;
    t = p.inputs[0];
  }
  return false;
}

// Sets the calling thread's OpenMP team size while it lives.
class LstmTeamSize {
 public:
  explicit LstmTeamSize(int threads) : old_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~LstmTeamSize() { omp_set_num_threads(old_); }
  LstmTeamSize(const LstmTeamSize&) = delete;
  LstmTeamSize& operator=(const LstmTeamSize&) = delete;

 private:
  int old_;
};

// ONNX [4H, K] (gates i, o, f, c) -> oneDNN ldigo [K, 4, H] (gates i, f, c, o).
void ToLdigo(const float* w, int64_t K, int64_t H, float* out) {
  for (int64_t k = 0; k < K; ++k)
    for (int g = 0; g < 4; ++g)
      for (int64_t o = 0; o < H; ++o) out[(k * 4 + g) * H + o] = w[(kOnnxGate[g] * H + o) * K + k];
}

std::unique_ptr<NodePrimitive> MakeLstmParts(const graph::Graph& g, const graph::Node& op,
                                             std::unique_ptr<NodePrimitive> p, int64_t S, int64_t B,
                                             int64_t I, int64_t H);

}  // namespace

std::unique_ptr<NodePrimitive> MakeLstm(const graph::Graph& g, const graph::Node& op) {
  const std::string dir = op.attrs.GetString("direction", "forward");
  if ((dir != "forward" && dir != "reverse") || op.attrs.GetInt("layout", 0) != 0 ||
      op.attrs.Has("activations") || op.attrs.Has("clip") ||
      op.attrs.GetInt("input_forget", 0) != 0 || op.inputs.size() < 3)
    return nullptr;
  for (size_t i : {size_t{4}, size_t{7}})
    if (op.inputs.size() > i && op.inputs[i].valid()) return nullptr;
  for (TensorId t : op.inputs)
    if (t.valid() && g.tensor(t).dtype != graph::DType::kF32) return nullptr;
  const graph::Shape& xs = g.tensor(op.inputs[0]).shape;
  if (xs.size() != 3) return nullptr;
  const int64_t S = xs[0], B = xs[1], I = xs[2], H = g.tensor(op.inputs[2]).shape.back();
  if (g.tensor(op.inputs[1]).shape != graph::Shape{1, 4 * H, I} ||
      g.tensor(op.inputs[2]).shape != graph::Shape{1, 4 * H, H})
    return nullptr;
  auto p = std::make_unique<NodePrimitive>();
  p->lstm = true;
  p->threads = omp_get_max_threads();
  p->lstm_parts = p->threads > 1 && B % p->threads == 0 ? p->threads : 1;
  return MakeLstmParts(g, op, std::move(p), S, B / p->lstm_parts, I, H);
}

namespace {

// The rest of MakeLstm: `p`'s primitive for a batch of B (a part of the node's batch).
std::unique_ptr<NodePrimitive> MakeLstmParts(const graph::Graph& g, const graph::Node& op,
                                             std::unique_ptr<NodePrimitive> p, int64_t S, int64_t B,
                                             int64_t I, int64_t H) {
  const std::string dir = op.attrs.GetString("direction", "forward");
  auto has = [&](size_t i) { return op.inputs.size() > i && op.inputs[i].valid(); };
  auto has_out = [&](size_t i) { return op.outputs.size() > i && op.outputs[i].valid(); };
  p->lstm_dims = {S, B, I, H};
  p->const_weights = IsConstantInput(g, op.inputs[1]) && IsConstantInput(g, op.inputs[2]) &&
                     (!has(3) || IsConstantInput(g, op.inputs[3]));
  const memory::desc iter = F32({1, 1, B, H}, tag::ldnc);
  p->user_src = F32({S, B, I}, tag::tnc);
  p->user_dst = F32({S, B, H}, tag::tnc);
  p->user_w = F32({1, 1, I, 4, H}, tag::ldigo);
  p->user_w_iter = F32({1, 1, H, 4, H}, tag::ldigo);
  p->bias = F32({1, 1, 4, H}, tag::ldgo);
  p->src_iter = has(5) ? iter : memory::desc();
  p->src_iter_c = has(6) ? iter : memory::desc();
  p->dst_iter = has_out(1) ? iter : memory::desc();
  p->dst_iter_c = has_out(2) ? iter : memory::desc();
  try {
    dnnl::lstm_forward::desc d(dnnl::prop_kind::forward_inference,
                               dir == "forward" ? dnnl::rnn_direction::unidirectional_left2right
                                                : dnnl::rnn_direction::unidirectional_right2left,
                               p->user_src, p->src_iter, p->src_iter_c,
                               F32({1, 1, I, 4, H}, tag::any), F32({1, 1, H, 4, H}, tag::any),
                               p->bias, p->user_dst, p->dst_iter, p->dst_iter_c);
    // A split LSTM's parts each run on one thread of the team.
    const LstmTeamSize one_thread(p->lstm_parts > 1 ? 1 : omp_get_max_threads());
    dnnl::lstm_forward::primitive_desc pd(d, UserScratchpad(), Engine());
    p->scratchpad = pd.scratchpad_desc();
    p->w = pd.weights_layer_desc();
    p->w_iter = pd.weights_iter_desc();
    p->prim = dnnl::lstm_forward(pd);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return p;
}

// W, R and the summed bias in the primitive's layouts, into `p.packed_*`.
void PackLstm(NodePrimitive& p, const std::vector<TensorRef>& in, dnnl::stream& s) {
  const dnnl::engine& eng = Engine();
  const int64_t I = p.lstm_dims[2], H = p.lstm_dims[3];
  std::vector<float> w(static_cast<size_t>(I * 4 * H)), r(static_cast<size_t>(H * 4 * H));
  ToLdigo(in[1].as<float>(), I, H, w.data());
  ToLdigo(in[2].as<float>(), H, H, r.data());
  p.packed_w = dnnl::memory(p.w, eng);
  p.packed_w_iter = dnnl::memory(p.w_iter, eng);
  dnnl::memory user_w(p.user_w, eng, w.data()), user_r(p.user_w_iter, eng, r.data());
  dnnl::reorder(user_w, p.packed_w).execute(s, user_w, p.packed_w);
  dnnl::reorder(user_r, p.packed_w_iter).execute(s, user_r, p.packed_w_iter);
  p.packed_bias = dnnl::memory(p.bias, eng);
  float* bias = static_cast<float*>(p.packed_bias.get_data_handle());
  const float* onnx = in.size() > 3 && in[3].data != nullptr ? in[3].as<float>() : nullptr;
  for (int gate = 0; gate < 4; ++gate)
    for (int64_t o = 0; o < H; ++o) {
      const int64_t j = kOnnxGate[gate] * H + o;
      bias[gate * H + o] = onnx == nullptr ? 0.0f : onnx[j] + onnx[4 * H + j];
    }
  s.wait();
}

}  // namespace

namespace {

// Where one part of the batch reads and writes: X and Y rows gathered into / scattered from
// contiguous buffers, the states' rows in place ([1, B, H]: a part's rows are contiguous).
struct LstmPartPointers {
  const void* x = nullptr;
  void* y = nullptr;
  const void *h0 = nullptr, *c0 = nullptr;
  void *hn = nullptr, *cn = nullptr;
  void* scratchpad = nullptr;
};

void RunLstmPart(NodePrimitive& p, const LstmPartPointers& ptr, dnnl::stream& s) {
  const dnnl::engine& eng = Engine();
  auto arg = [&](const memory::desc& md, const void* q) {
    return dnnl::memory(md, eng, const_cast<void*>(q));
  };
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC_LAYER, arg(p.user_src, ptr.x)},
                                             {DNNL_ARG_WEIGHTS_LAYER, p.packed_w},
                                             {DNNL_ARG_WEIGHTS_ITER, p.packed_w_iter},
                                             {DNNL_ARG_BIAS, p.packed_bias},
                                             {DNNL_ARG_DST_LAYER, arg(p.user_dst, ptr.y)}};
  if (!p.src_iter.is_zero()) args.emplace(DNNL_ARG_SRC_ITER, arg(p.src_iter, ptr.h0));
  if (!p.src_iter_c.is_zero()) args.emplace(DNNL_ARG_SRC_ITER_C, arg(p.src_iter_c, ptr.c0));
  if (!p.dst_iter.is_zero()) args.emplace(DNNL_ARG_DST_ITER, arg(p.dst_iter, ptr.hn));
  if (!p.dst_iter_c.is_zero()) args.emplace(DNNL_ARG_DST_ITER_C, arg(p.dst_iter_c, ptr.cn));
  if (p.scratchpad.get_size() > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(p.scratchpad, eng, ptr.scratchpad));
  p.prim.execute(s, args);
  s.wait();
}

// A team thread's own stream and buffers for its part of a split LSTM (grown, never shrunk).
struct LstmPartScratch {
  dnnl::stream stream{Engine()};
  std::vector<float> x, y;
  std::vector<char> pad;
};

// Part `part` of a split LSTM, on the calling team thread.
void RunLstmSplitPart(NodePrimitive& p, const std::vector<TensorRef>& in,
                      const std::vector<TensorRef>& out, int part) {
  thread_local LstmPartScratch scratch;
  const int64_t S = p.lstm_dims[0], b = p.lstm_dims[1], I = p.lstm_dims[2], H = p.lstm_dims[3];
  const int64_t B = b * p.lstm_parts, row0 = b * part;
  scratch.x.resize(static_cast<size_t>(S * b * I));
  scratch.y.resize(static_cast<size_t>(S * b * H));
  scratch.pad.resize(p.scratchpad.get_size());
  const float* x = in[0].as<float>();
  for (int64_t t = 0; t < S; ++t)
    std::copy_n(x + (t * B + row0) * I, b * I, scratch.x.data() + t * b * I);
  auto rows = [&](const std::vector<TensorRef>& v, size_t i) -> float* {
    if (v.size() <= i || v[i].data == nullptr) return nullptr;
    return static_cast<float*>(v[i].data) + row0 * H;
  };
  LstmPartPointers ptr{scratch.x.data(), scratch.y.data(), rows(in, 5),       rows(in, 6),
                       rows(out, 1),     rows(out, 2),     scratch.pad.data()};
  RunLstmPart(p, ptr, scratch.stream);
  if (out.empty() || out[0].data == nullptr) return;
  float* y = static_cast<float*>(out[0].data);
  for (int64_t t = 0; t < S; ++t)
    std::copy_n(scratch.y.data() + t * b * H, b * H, y + (t * B + row0) * H);
}

// Every part on its own thread of the calling thread's team.
Status RunLstmSplit(NodePrimitive& p, const std::vector<TensorRef>& in,
                    const std::vector<TensorRef>& out) {
  std::atomic<bool> failed{false};
  std::string message;
#pragma omp parallel num_threads(p.lstm_parts)
  {
    const int part = omp_get_thread_num();
    try {
      if (omp_get_num_threads() == p.lstm_parts) {
        RunLstmSplitPart(p, in, out, part);
      } else {  // a smaller team than asked for: this thread runs the parts in turn
        for (int k = part; k < p.lstm_parts; k += omp_get_num_threads())
          RunLstmSplitPart(p, in, out, k);
      }
    } catch (const std::exception& e) {  // dnnl::error, or no memory for the part's buffers
      if (!failed.exchange(true)) message = e.what();
    }
  }
  if (failed.load()) return Internal(std::string("oneDNN LSTM: ") + message);
  return Status::Ok();
}

}  // namespace

Status RunLstm(NodePrimitive& p, const std::vector<TensorRef>& in,
               const std::vector<TensorRef>& out, dnnl::stream& s, void* dst_scratch,
               void* scratchpad) {
  if (p.const_weights) {
    std::call_once(p.packed_once, [&] { PackLstm(p, in, s); });
  } else {
    PackLstm(p, in, s);  // a primitive made per thread: its packed copies are this run's
  }
  if (p.lstm_parts > 1) return RunLstmSplit(p, in, out);
  auto data = [](const std::vector<TensorRef>& v, size_t i) -> void* {
    return v.size() > i ? v[i].data : nullptr;
  };
  void* y = data(out, 0) != nullptr ? out[0].data : dst_scratch;
  RunLstmPart(p,
              LstmPartPointers{in[0].data, y, data(in, 5), data(in, 6), data(out, 1), data(out, 2),
                               scratchpad},
              s);
  return Status::Ok();
}

}  // namespace hx::exec::dnnl_impl
