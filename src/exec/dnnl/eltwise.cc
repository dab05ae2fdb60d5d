// Elementwise ops on oneDNN: Relu, Clip, Sigmoid and Tanh (eltwise) and Add/Sub/Mul/Div of two
// equal shapes (binary). They see tensors as flat arrays, so they run on any layout (layout.h).

#include <omp.h>

#include <limits>

#include "exec/dnnl/primitives.h"

namespace hx::exec::dnnl_impl {
namespace {

using dnnl::memory;

memory::desc Flat(int64_t n) {
  return memory::desc({n}, memory::data_type::f32, memory::format_tag::a);
}

bool SameF32(const graph::Graph& g, TensorId a, TensorId b) {
  return a.valid() && b.valid() && g.tensor(a).dtype == graph::DType::kF32 &&
         g.tensor(b).dtype == graph::DType::kF32 && g.tensor(a).shape == g.tensor(b).shape &&
         g.tensor(a).NumElements() > 0;
}

std::unique_ptr<NodePrimitive> Finish(std::unique_ptr<NodePrimitive> p,
                                      const dnnl::primitive_desc_base& pd) {
  p->scratchpad = pd.scratchpad_desc();
  p->threads = omp_get_max_threads();
  return p;
}

}  // namespace

std::pair<float, float> ClipBounds(const graph::Node& op, const std::vector<TensorRef>* in) {
  float lo = static_cast<float>(op.attrs.GetFloat("min", -std::numeric_limits<float>::infinity()));
  float hi = static_cast<float>(op.attrs.GetFloat("max", std::numeric_limits<float>::infinity()));
  if (in != nullptr && in->size() > 1 && (*in)[1].data != nullptr) lo = (*in)[1].as<float>()[0];
  if (in != nullptr && in->size() > 2 && (*in)[2].data != nullptr) hi = (*in)[2].as<float>()[0];
  return {lo, hi};
}

std::unique_ptr<NodePrimitive> MakeEltwise(const graph::Graph& g, const graph::Node& op,
                                           const std::vector<TensorRef>* in) {
  if (op.inputs.empty() || op.outputs.size() != 1 || !SameF32(g, op.inputs[0], op.outputs[0]))
    return nullptr;
  for (size_t i = 1; i < op.inputs.size(); ++i)  // Clip's bounds: fp32 scalars
    if (op.inputs[i].valid() && (g.tensor(op.inputs[i]).dtype != graph::DType::kF32 ||
                                 g.tensor(op.inputs[i]).NumElements() != 1))
      return nullptr;
  auto p = std::make_unique<NodePrimitive>();
  p->user_src = p->src = p->user_dst = p->dst = Flat(g.tensor(op.outputs[0]).NumElements());
  dnnl::algorithm algo = dnnl::algorithm::eltwise_relu;
  if (op.op_type == "Sigmoid") algo = dnnl::algorithm::eltwise_logistic;
  if (op.op_type == "Tanh") algo = dnnl::algorithm::eltwise_tanh;
  if (op.op_type == "Clip") {
    algo = dnnl::algorithm::eltwise_clip_v2;
    std::tie(p->alpha, p->beta) = ClipBounds(op, in);
  }
  try {
    dnnl::eltwise_forward::primitive_desc pd(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, algo, p->src, p->alpha,
                                    p->beta),
        UserScratchpad(), Engine());
    p->prim = dnnl::eltwise_forward(pd);
    return Finish(std::move(p), pd);
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

namespace {

// Row-major (plain) descriptor of `dims`.
memory::desc Plain(const memory::dims& dims) {
  static const memory::format_tag tags[] = {memory::format_tag::a,     memory::format_tag::ab,
                                            memory::format_tag::abc,   memory::format_tag::abcd,
                                            memory::format_tag::abcde, memory::format_tag::abcdef};
  return memory::desc(dims, memory::data_type::f32, tags[dims.size() - 1]);
}

// `s` right-aligned to `rank` dims with leading 1s; empty when it does not broadcast to `out`.
memory::dims Broadcast(const graph::Shape& s, const graph::Shape& out) {
  if (s.size() > out.size()) return {};
  memory::dims d(out.size() - s.size(), 1);
  d.insert(d.end(), s.begin(), s.end());
  for (size_t k = 0; k < out.size(); ++k)
    if (d[k] != out[k] && d[k] != 1) return {};
  return d;
}

}  // namespace

std::unique_ptr<NodePrimitive> MakeBinary(const graph::Graph& g, const graph::Node& op) {
  if (op.inputs.size() != 2 || op.outputs.size() != 1) return nullptr;
  for (TensorId t : {op.inputs[0], op.inputs[1], op.outputs[0]})
    if (!t.valid() || g.tensor(t).dtype != graph::DType::kF32 || g.tensor(t).NumElements() == 0)
      return nullptr;
  const graph::Shape& out = g.tensor(op.outputs[0]).shape;
  const graph::Shape& a = g.tensor(op.inputs[0]).shape;
  const graph::Shape& b = g.tensor(op.inputs[1]).shape;
  // oneDNN broadcasts only its second source: the first must have the output's shape (or, for
  // Add and Mul, the second, and the sources swap).
  const bool commutes = op.op_type == "Add" || op.op_type == "Mul";
  const bool swap = a != out && b == out && commutes;
  if ((swap ? b : a) != out || out.empty() || out.size() > 6) return nullptr;
  const memory::dims other = Broadcast(swap ? a : b, out);
  if (other.empty()) return nullptr;
  dnnl::algorithm algo = dnnl::algorithm::binary_add;
  if (op.op_type == "Sub") algo = dnnl::algorithm::binary_sub;
  if (op.op_type == "Mul") algo = dnnl::algorithm::binary_mul;
  if (op.op_type == "Div") algo = dnnl::algorithm::binary_div;
  auto p = std::make_unique<NodePrimitive>();
  const bool same = a == out && b == out;  // flat views: any layout (layout.h)
  p->user_src = p->src = p->user_dst = p->dst =
      same ? Flat(graph::NumElements(out)) : Plain(memory::dims(out.begin(), out.end()));
  p->src1 = same ? p->src : Plain(other);
  p->binary = true;
  p->swap_sources = swap;
  try {
    dnnl::binary::primitive_desc pd(dnnl::binary::desc(algo, p->src, p->src1, p->dst),
                                    UserScratchpad(), Engine());
    p->prim = dnnl::binary(pd);
    return Finish(std::move(p), pd);
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

}  // namespace hx::exec::dnnl_impl
