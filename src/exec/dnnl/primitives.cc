#include "exec/dnnl/primitives.h"

#include <omp.h>

#include "exec/dnnl/geometry.h"

namespace hx::exec::dnnl_impl {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

memory::dims Dims(const graph::Shape& s) { return memory::dims(s.begin(), s.end()); }

memory::desc ActivationDesc(const graph::Shape& s, Layout layout, tag blocked) {
  return memory::desc(Dims(s), memory::data_type::f32,
                      layout == Layout::kNchw ? tag::nchw : blocked);
}

bool IsF32(const graph::Graph& g, TensorId t) {
  return t.valid() && g.tensor(t).dtype == graph::DType::kF32 && g.tensor(t).NumElements() > 0;
}

// A graph initializer, a Constant's output, or one of those passed through Identity ops (PyTorch
// exports read many weights through an Identity): its values are the same in every run.
bool IsConstant(const graph::Graph& g, TensorId t) {
  for (int depth = 0; depth < 16; ++depth) {
    const graph::Tensor& tensor = g.tensor(t);
    if (!tensor.producer.valid()) return false;
    const graph::Node& producer = g.node(tensor.producer);
    if (producer.kind == graph::NodeKind::kWeight || producer.op_type == "Constant") return true;
    if (producer.op_type != "Identity" || producer.inputs.empty() || !producer.inputs[0].valid())
      return false;
    t = producer.inputs[0];
  }
  return false;
}

// Reorders between the executor's layouts and the primitive's, where they differ.
void AddReorders(NodePrimitive& p) {
  const dnnl::engine& eng = Engine();
  if (p.src != p.user_src)
    p.src_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(eng, p.user_src, eng, p.src));
  if (p.dst != p.user_dst)
    p.dst_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(eng, p.dst, eng, p.user_dst));
  if (p.has_weights && p.w != p.user_w)
    p.w_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(eng, p.user_w, eng, p.w));
}

memory::desc ConvWeightsDesc(const graph::Shape& w, int64_t group) {
  if (group == 1) return memory::desc(Dims(w), memory::data_type::f32, tag::oihw);
  return memory::desc({group, w[0] / group, w[1], w[2], w[3]}, memory::data_type::f32, tag::goihw);
}

}  // namespace

bool IsConstantValue(const graph::Graph& graph, TensorId t) { return IsConstant(graph, t); }

dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

const dnnl::engine& Engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

std::unique_ptr<NodePrimitive> MakeConv(const graph::Graph& g, const graph::Node& op,
                                        const Layouts& layouts, const ConvPostOp* post) {
  if (op.inputs.size() < 2 || op.outputs.size() != 1 || !IsF32(g, op.inputs[0]) ||
      !IsF32(g, op.inputs[1]) || !IsF32(g, op.outputs[0]))
    return nullptr;
  const bool bias = op.inputs.size() > 2 && op.inputs[2].valid();
  if (bias && !IsF32(g, op.inputs[2])) return nullptr;
  const graph::Shape& x = g.tensor(op.inputs[0]).shape;
  const graph::Shape& w = g.tensor(op.inputs[1]).shape;
  const graph::Shape& y = g.tensor(op.outputs[0]).shape;
  const int64_t group = op.attrs.GetInt("group", 1);
  if (w.size() != 4 || x.size() != 4 || y.size() != 4 || group < 1 || x[1] != w[1] * group ||
      y[1] != w[0] || w[0] % group != 0 || x[0] != y[0])
    return nullptr;
  if (bias && g.tensor(op.inputs[2]).shape != graph::Shape{w[0]}) return nullptr;
  const std::optional<Window2d> win = ReadWindow2d(op, x, y, {w[2], w[3]});
  if (!win) return nullptr;
  auto p = std::make_unique<NodePrimitive>();
  p->threads = omp_get_max_threads();
  p->user_src = ActivationDesc(x, layouts.src, layouts.blocked);
  p->user_dst = ActivationDesc(y, layouts.dst, layouts.blocked);
  p->user_w = ConvWeightsDesc(w, group);
  p->has_weights = true;
  p->has_bias = bias;
  p->const_weights = IsConstant(g, op.inputs[1]);
  const memory::desc any_src(Dims(x), memory::data_type::f32, tag::any);
  const memory::desc any_dst(Dims(y), memory::data_type::f32, tag::any);
  const memory::desc any_w(p->user_w.dims(), memory::data_type::f32, tag::any);
  if (bias) p->bias = memory::desc({w[0]}, memory::data_type::f32, tag::x);
  try {
    dnnl::convolution_forward::desc d(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        layouts.src == Layout::kBlocked ? p->user_src : any_src, any_w,
        bias ? p->bias : memory::desc(), layouts.dst == Layout::kBlocked ? p->user_dst : any_dst,
        win->strides, win->dilations, win->pad_l, win->pad_r);
    dnnl::primitive_attr attr = UserScratchpad();
    if (post != nullptr) {
      dnnl::post_ops ops;
      if (post->sum) {
        ops.append_sum(1.0f);
        p->post_sum = true;
      } else {
        ops.append_eltwise(
            1.0f, post->relu ? dnnl::algorithm::eltwise_relu : dnnl::algorithm::eltwise_clip_v2,
            post->alpha, post->beta);
        p->post_op = true;
      }
      attr.set_post_ops(ops);
    }
    dnnl::convolution_forward::primitive_desc pd(d, attr, Engine());
    // The sum reads the primitive's own output: it must be the executor's buffer, not a scratch
    // buffer reordered afterwards. And oneDNN's reference convolution takes any post-op, at many
    // times the time: an Add stays unfused rather than make the Conv run there.
    if (p->post_sum &&
        (pd.dst_desc() != p->user_dst || std::string(pd.impl_info_str()).rfind("ref", 0) == 0))
      return nullptr;
    p->scratchpad = pd.scratchpad_desc();
    p->src = pd.src_desc();
    p->dst = pd.dst_desc();
    p->w = pd.weights_desc();
    p->prim = dnnl::convolution_forward(pd);
    AddReorders(*p);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return p;
}

namespace {

// The pooling algorithm and window of a MaxPool / AveragePool / GlobalAveragePool node.
std::optional<std::pair<dnnl::algorithm, Window2d>> PoolWindow(const graph::Node& op,
                                                               const graph::Shape& x,
                                                               const graph::Shape& y) {
  if (op.op_type == "GlobalAveragePool") {
    if (x.size() != 4) return std::nullopt;
    Window2d w{{x[2], x[3]}, {1, 1}, {0, 0}, {0, 0}, {0, 0}};
    return std::make_pair(dnnl::algorithm::pooling_avg_exclude_padding, w);
  }
  if (op.attrs.GetInt("storage_order", 0) != 0) return std::nullopt;
  for (int64_t d : op.attrs.GetInts("dilations", {1, 1}))
    if (d != 1) return std::nullopt;
  std::optional<Window2d> w = ReadWindow2d(op, x, y, op.attrs.GetInts("kernel_shape"));
  if (!w) return std::nullopt;
  if (op.op_type == "MaxPool") return std::make_pair(dnnl::algorithm::pooling_max, *w);
  if (op.attrs.GetInt("count_include_pad", 0) == 0)
    return std::make_pair(dnnl::algorithm::pooling_avg_exclude_padding, *w);
  // Counting the padding matches the reference only when no window reaches past it.
  if (w->pad_l != w->pad_r) return std::nullopt;
  return std::make_pair(dnnl::algorithm::pooling_avg_include_padding, *w);
}

}  // namespace

std::unique_ptr<NodePrimitive> MakePool(const graph::Graph& g, const graph::Node& op,
                                        const Layouts& layouts) {
  if (op.inputs.size() != 1 || op.outputs.empty() || !IsF32(g, op.inputs[0]) ||
      !IsF32(g, op.outputs[0]))
    return nullptr;
  for (size_t i = 1; i < op.outputs.size(); ++i)
    if (op.outputs[i].valid()) return nullptr;  // MaxPool's Indices
  const graph::Shape& x = g.tensor(op.inputs[0]).shape;
  const graph::Shape& y = g.tensor(op.outputs[0]).shape;
  if (x.size() != 4 || y.size() != 4 || x[0] != y[0] || x[1] != y[1]) return nullptr;
  auto window = PoolWindow(op, x, y);
  if (!window) return nullptr;
  const auto& [algo, win] = *window;
  auto p = std::make_unique<NodePrimitive>();
  p->threads = omp_get_max_threads();
  // The output in the input's layout (oneDNN's fast pooling keeps it), reordered if need be.
  p->user_src = p->src = ActivationDesc(x, layouts.src, layouts.blocked);
  p->user_dst = ActivationDesc(y, layouts.dst, layouts.blocked);
  p->dst = ActivationDesc(y, layouts.src, layouts.blocked);
  try {
    dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, algo, p->src, p->dst,
                                  win.strides, win.kernel, win.pad_l, win.pad_r);
    dnnl::pooling_forward::primitive_desc pd(d, UserScratchpad(), Engine());
    p->scratchpad = pd.scratchpad_desc();
    p->prim = dnnl::pooling_forward(pd);
    AddReorders(*p);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return p;
}

PreferredLayout PreferredActivationLayout() {
  try {
    const memory::desc src({1, 64, 28, 28}, memory::data_type::f32, tag::any);
    const memory::desc w({64, 64, 3, 3}, memory::data_type::f32, tag::any);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                      dnnl::algorithm::convolution_direct, src, w, memory::desc(),
                                      src, {1, 1}, {0, 0}, {1, 1}, {1, 1});
    const memory::desc chosen = dnnl::convolution_forward::primitive_desc(d, Engine()).src_desc();
    for (auto [t, block] : {std::pair{tag::acdb, 1}, {tag::aBcd8b, 8}, {tag::aBcd16b, 16}})
      if (chosen == memory::desc({1, 64, 28, 28}, memory::data_type::f32, t)) return {t, block};
  } catch (const dnnl::error&) {
  }
  return {};
}

}  // namespace hx::exec::dnnl_impl
