// Elementwise ops on oneDNN: Relu and Clip (eltwise) and Add/Sub/Mul/Div of two equal shapes
// (binary). They see tensors as flat arrays, so they run on any layout (layout.h).

#include <limits>

#include "exec/dnnl/primitives.h"

#include <omp.h>

namespace hx::exec::dnnl_impl {
namespace {

using dnnl::memory;

memory::desc Flat(int64_t n) { return memory::desc({n}, memory::data_type::f32, memory::format_tag::a); }

bool SameF32(const graph::Graph& g, TensorId a, TensorId b) {
  return a.valid() && b.valid() && g.tensor(a).dtype == graph::DType::kF32 &&
         g.tensor(b).dtype == graph::DType::kF32 && g.tensor(a).shape == g.tensor(b).shape &&
         g.tensor(a).NumElements() > 0;
}

std::unique_ptr<NodePrimitive> Finish(std::unique_ptr<NodePrimitive> p,
                                      const dnnl::primitive_desc_base& pd) {
  (void)pd;
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
  if (op.op_type == "Clip") {
    algo = dnnl::algorithm::eltwise_clip_v2;
    std::tie(p->alpha, p->beta) = ClipBounds(op, in);
  }
  try {
    dnnl::eltwise_forward::primitive_desc pd(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, algo, p->src, p->alpha,
                                    p->beta),
        Engine());
    p->prim = dnnl::eltwise_forward(pd);
    return Finish(std::move(p), pd);
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

std::unique_ptr<NodePrimitive> MakeBinary(const graph::Graph& g, const graph::Node& op) {
  if (op.inputs.size() != 2 || op.outputs.size() != 1 || !SameF32(g, op.inputs[0], op.outputs[0]) ||
      !SameF32(g, op.inputs[1], op.outputs[0]))
    return nullptr;
  dnnl::algorithm algo = dnnl::algorithm::binary_add;
  if (op.op_type == "Sub") algo = dnnl::algorithm::binary_sub;
  if (op.op_type == "Mul") algo = dnnl::algorithm::binary_mul;
  if (op.op_type == "Div") algo = dnnl::algorithm::binary_div;
  auto p = std::make_unique<NodePrimitive>();
  p->user_src = p->src = p->user_dst = p->dst = p->src1 =
      Flat(g.tensor(op.outputs[0]).NumElements());
  p->binary = true;
  try {
    dnnl::binary::primitive_desc pd(dnnl::binary::desc(algo, p->src, p->src1, p->dst), Engine());
    p->prim = dnnl::binary(pd);
    return Finish(std::move(p), pd);
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

}  // namespace hx::exec::dnnl_impl
