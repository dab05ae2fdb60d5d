// Softmax (over the last axis) and LayerNormalization (fp32, Y only, stash_type 1) on oneDNN's
// softmax and layer normalisation primitives, both on a 2-D [rows, n] view of the input: a
// softmax over the last axis reads the same on any opset (before 13 it flattened the axes from
// `axis` on, which for the last axis is that axis), and a LayerNormalization over the axes from
// `axis` on is one over the last axis of the flattened view, with Scale and B flattened too.

#include <omp.h>

#include "exec/dnnl/primitives.h"

namespace hx::exec::dnnl_impl {
namespace {

using dnnl::memory;

bool NormF32(const graph::Graph& g, TensorId t) {
  return t.valid() && g.tensor(t).dtype == graph::DType::kF32 && g.tensor(t).NumElements() > 0;
}

// The [rows, n] view of `s` split before `axis` (negative counts from the end); {} if out of range.
memory::dims NormRows(const graph::Shape& s, int64_t axis) {
  const int64_t rank = static_cast<int64_t>(s.size());
  if (axis < 0) axis += rank;
  if (rank == 0 || axis < 0 || axis >= rank) return {};
  int64_t rows = 1, n = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? rows : n) *= s[static_cast<size_t>(d)];
  return {rows, n};
}

}  // namespace

std::unique_ptr<NodePrimitive> MakeSoftmax(const graph::Graph& g, const graph::Node& op) {
  if (op.inputs.size() != 1 || op.outputs.size() != 1 || !NormF32(g, op.inputs[0]) ||
      !NormF32(g, op.outputs[0]))
    return nullptr;
  const graph::Shape& s = g.tensor(op.inputs[0]).shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  const int64_t axis = op.attrs.GetInt("axis", -1);
  if (rank == 0 || (axis != -1 && axis != rank - 1) || g.tensor(op.outputs[0]).shape != s)
    return nullptr;
  const memory::dims rows = NormRows(s, rank - 1);
  auto p = std::make_unique<NodePrimitive>();
  p->threads = omp_get_max_threads();
  p->user_src = p->src = p->user_dst = p->dst =
      memory::desc(rows, memory::data_type::f32, memory::format_tag::ab);
  try {
    dnnl::softmax_forward::primitive_desc pd(
        dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, p->src, 1),
        UserScratchpad(), Engine());
    p->scratchpad = pd.scratchpad_desc();
    p->prim = dnnl::softmax_forward(pd);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return p;
}

std::unique_ptr<NodePrimitive> MakeLayerNorm(const graph::Graph& g, const graph::Node& op) {
  if (op.inputs.size() < 2 || op.inputs.size() > 3 || op.outputs.empty() ||
      !NormF32(g, op.inputs[0]) || !NormF32(g, op.inputs[1]) || !NormF32(g, op.outputs[0]) ||
      op.attrs.GetInt("stash_type", 1) != 1)
    return nullptr;
  for (size_t i = 1; i < op.outputs.size(); ++i)
    if (op.outputs[i].valid()) return nullptr;  // Mean, InvStdDev
  const bool shift = op.inputs.size() == 3 && op.inputs[2].valid();
  const graph::Shape& s = g.tensor(op.inputs[0]).shape;
  const memory::dims rows = NormRows(s, op.attrs.GetInt("axis", -1));
  if (rows.empty() || g.tensor(op.outputs[0]).shape != s ||
      g.tensor(op.inputs[1]).NumElements() != rows[1] ||
      (shift && (!NormF32(g, op.inputs[2]) || g.tensor(op.inputs[2]).NumElements() != rows[1])))
    return nullptr;
  auto p = std::make_unique<NodePrimitive>();
  p->threads = omp_get_max_threads();
  p->user_src = p->src = p->user_dst = p->dst =
      memory::desc(rows, memory::data_type::f32, memory::format_tag::ab);
  p->norm = true;
  p->has_shift = shift;
  p->scale = memory::desc({rows[1]}, memory::data_type::f32, memory::format_tag::a);
  auto flags = dnnl::normalization_flags::use_scale;
  if (shift) flags = flags | dnnl::normalization_flags::use_shift;
  const float eps = static_cast<float>(op.attrs.GetFloat("epsilon", 1e-5));
  try {
    dnnl::layer_normalization_forward::primitive_desc pd(
        dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, p->src, eps,
                                                flags),
        UserScratchpad(), Engine());
    p->scratchpad = pd.scratchpad_desc();
    p->prim = dnnl::layer_normalization_forward(pd);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return p;
}

}  // namespace hx::exec::dnnl_impl
