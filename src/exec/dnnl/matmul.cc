// ONNX MatMul (fp32, both inputs of rank >= 2, numpy broadcasting of the batch dims) and Gemm on
// oneDNN's matmul primitive. A constant second input (a weight) without batch dims is reordered
// once into the layout the primitive picks (packed for its GEMM kernel), and the first input's
// batch dims are folded into its rows: [.., M, K] x [K, N] runs as one [B*M, K] x [K, N] product.

#include <omp.h>

#include "exec/dnnl/primitives.h"

namespace hx::exec::dnnl_impl {
namespace {

using dnnl::memory;

memory::desc MatMulPlain(const memory::dims& dims) {
  static const memory::format_tag tags[] = {memory::format_tag::a,     memory::format_tag::ab,
                                            memory::format_tag::abc,   memory::format_tag::abcd,
                                            memory::format_tag::abcde, memory::format_tag::abcdef};
  return memory::desc(dims, memory::data_type::f32, tags[dims.size() - 1]);
}

// `s` with leading 1s up to `rank` dims.
memory::dims MatMulPadded(const graph::Shape& s, size_t rank) {
  memory::dims d(rank - s.size(), 1);
  d.insert(d.end(), s.begin(), s.end());
  return d;
}

// Whether the batch dims (all but the last two) of `d` are `out`'s or 1 (broadcast).
bool MatMulBatchFits(const memory::dims& d, const memory::dims& out, bool* all_ones,
                     bool* all_equal) {
  *all_ones = *all_equal = true;
  for (size_t k = 0; k + 2 < out.size(); ++k) {
    if (d[k] != out[k] && d[k] != 1) return false;
    *all_ones = *all_ones && d[k] == 1;
    *all_equal = *all_equal && d[k] == out[k];
  }
  return true;
}

bool MatMulF32(const graph::Graph& g, TensorId t) {
  return t.valid() && g.tensor(t).dtype == graph::DType::kF32 && g.tensor(t).NumElements() > 0;
}

// The matmul primitive `desc(p)` describes, its weights' layout, and the reorder into it when
// that differs from the executor's; null when oneDNN refuses it.
template <class Desc>
std::unique_ptr<NodePrimitive> FinishMatMul(std::unique_ptr<NodePrimitive> p, const Desc& desc) {
  try {
    dnnl::matmul::primitive_desc pd(desc(*p), UserScratchpad(), Engine());
    p->scratchpad = pd.scratchpad_desc();
    p->w = pd.weights_desc();
    p->prim = dnnl::matmul(pd);
    if (p->w != p->user_w)
      p->w_reorder =
          dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), p->user_w, Engine(), p->w));
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return p;
}

}  // namespace

std::unique_ptr<NodePrimitive> MakeMatMul(const graph::Graph& g, const graph::Node& op) {
  if (op.inputs.size() != 2 || op.outputs.size() != 1) return nullptr;
  for (TensorId t : {op.inputs[0], op.inputs[1], op.outputs[0]})
    if (!MatMulF32(g, t)) return nullptr;
  const graph::Shape& as = g.tensor(op.inputs[0]).shape;
  const graph::Shape& bs = g.tensor(op.inputs[1]).shape;
  const graph::Shape& ys = g.tensor(op.outputs[0]).shape;
  if (as.size() < 2 || bs.size() < 2 || ys.size() > 6 ||
      ys.size() != std::max(as.size(), bs.size()))
    return nullptr;
  const size_t r = ys.size();
  memory::dims a = MatMulPadded(as, r), b = MatMulPadded(bs, r), y(ys.begin(), ys.end());
  bool a_ones = false, a_equal = false, b_ones = false, b_equal = false;
  if (!MatMulBatchFits(a, y, &a_ones, &a_equal) || !MatMulBatchFits(b, y, &b_ones, &b_equal) ||
      a[r - 1] != b[r - 2] || y[r - 2] != a[r - 2] || y[r - 1] != b[r - 1])
    return nullptr;
  if (b_ones && a_equal) {  // fold A's batch dims into its rows
    const int64_t rows = graph::NumElements(ys) / y[r - 1];
    a = {rows, a[r - 1]};
    b = {b[r - 2], b[r - 1]};
    y = {rows, y[r - 1]};
  }
  auto p = std::make_unique<NodePrimitive>();
  p->threads = omp_get_max_threads();
  p->user_src = p->src = MatMulPlain(a);
  p->user_dst = p->dst = MatMulPlain(y);
  p->user_w = p->w = MatMulPlain(b);
  p->has_weights = true;
  p->const_weights = b_ones && IsConstantValue(g, op.inputs[1]);
  const memory::desc w_any(b, memory::data_type::f32, memory::format_tag::any);
  return FinishMatMul(std::move(p), [&](const NodePrimitive& q) {
    return dnnl::matmul::desc(q.src, q.const_weights ? w_any : q.user_w, q.dst);
  });
}

std::unique_ptr<NodePrimitive> MakeGemm(const graph::Graph& g, const graph::Node& op) {
  if (op.inputs.size() < 2 || op.inputs.size() > 3 || op.outputs.size() != 1) return nullptr;
  const bool has_c = op.inputs.size() == 3 && op.inputs[2].valid();
  for (TensorId t : {op.inputs[0], op.inputs[1], op.outputs[0]})
    if (!MatMulF32(g, t)) return nullptr;
  const graph::Shape& as = g.tensor(op.inputs[0]).shape;
  const graph::Shape& bs = g.tensor(op.inputs[1]).shape;
  const auto& at = op.attrs;
  if (as.size() != 2 || bs.size() != 2 || at.GetInt("transA", 0) != 0 ||
      at.GetFloat("alpha", 1.0) != 1.0 || (has_c && at.GetFloat("beta", 1.0) != 1.0) || as[0] < 2 ||
      !IsConstantValue(g, op.inputs[1]))
    return nullptr;
  const bool tb = at.GetInt("transB", 0) != 0;
  const int64_t M = as[0], K = as[1], N = tb ? bs[0] : bs[1];
  if ((tb ? bs[1] : bs[0]) != K || g.tensor(op.outputs[0]).shape != graph::Shape{M, N})
    return nullptr;
  if (has_c && (!MatMulF32(g, op.inputs[2]) || g.tensor(op.inputs[2]).NumElements() != N ||
                g.tensor(op.inputs[2]).shape.back() != N))
    return nullptr;
  auto p = std::make_unique<NodePrimitive>();
  p->threads = omp_get_max_threads();
  p->user_src = p->src = MatMulPlain({M, K});
  p->user_dst = p->dst = MatMulPlain({M, N});
  p->user_w = p->w = memory::desc({K, N}, memory::data_type::f32,
                                  tb ? memory::format_tag::ba : memory::format_tag::ab);
  p->has_weights = p->const_weights = true;
  p->has_bias = has_c;
  if (has_c) p->bias = MatMulPlain({1, N});
  const memory::desc w_any({K, N}, memory::data_type::f32, memory::format_tag::any);
  return FinishMatMul(std::move(p), [&](const NodePrimitive& q) {
    return has_c ? dnnl::matmul::desc(q.src, w_any, q.bias, q.dst)
                 : dnnl::matmul::desc(q.src, w_any, q.dst);
  });
}

}  // namespace hx::exec::dnnl_impl
