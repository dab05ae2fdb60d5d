#include "exec/xnn/xnn_eltwise.h"

#include <xnnpack.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <string>

namespace hx::exec::xnn_impl {
namespace {

// XNNPACK initialised once per process; false on a CPU it does not support.
bool Initialised() {
  static const bool ok = xnn_initialize(nullptr) == xnn_status_success;
  return ok;
}

bool Fp32(const graph::Graph& g, TensorId t) {
  return t.valid() && g.tensor(t).dtype == graph::DType::kF32 &&
         g.tensor(t).shape.size() <= XNN_MAX_TENSOR_DIMS;
}

// The dimensions of `shape` as XNNPACK takes them (a scalar is one element).
size_t Dims(const graph::Shape& shape, std::array<size_t, XNN_MAX_TENSOR_DIMS>& dims) {
  for (size_t i = 0; i < shape.size(); ++i) dims[i] = static_cast<size_t>(shape[i]);
  if (shape.empty()) dims[0] = 1;
  return shape.empty() ? 1 : shape.size();
}

// Whether `a` and `b` broadcast (NumPy rules) to exactly `out`: anything else is left to the
// reference kernel, which names the mismatch.
bool BroadcastsTo(const graph::Shape& a, const graph::Shape& b, const graph::Shape& out) {
  const size_t rank = std::max(a.size(), b.size());
  if (out.size() != rank) return false;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if ((x != y && x != 1 && y != 1) || out[i] != std::max(x, y) || std::min(x, y) < 1)
      return false;
  }
  return true;
}

}  // namespace

int XnnEltwise::Create(Kind kind, size_t channels, xnn_operator_t* made) {
  const float lo = -INFINITY, hi = INFINITY;
  switch (kind) {
    case Kind::kSigmoid:
      return xnn_create_sigmoid_nc_f32(channels, channels, channels, 0, made);
    case Kind::kAdd:
      return xnn_create_add_nd_f32(lo, hi, 0, made);
    case Kind::kSub:
      return xnn_create_subtract_nd_f32(lo, hi, 0, made);
    case Kind::kMul:
      return xnn_create_multiply_nd_f32(lo, hi, 0, made);
    default:
      return xnn_create_divide_nd_f32(lo, hi, 0, made);
  }
}

std::unique_ptr<XnnEltwise> XnnEltwise::Make(const graph::Graph& g, const graph::Node& op) {
  if (!op.is_op() || !(op.domain.empty() || op.domain == "ai.onnx") || op.outputs.size() != 1 ||
      !Fp32(g, op.outputs[0]) || g.tensor(op.outputs[0]).NumElements() <= 0)
    return nullptr;
  const std::string& t = op.op_type;
  Kind kind;
  size_t channels = 0;
  if (t == "Sigmoid" && op.inputs.size() == 1 && Fp32(g, op.inputs[0])) {
    kind = Kind::kSigmoid;
    channels = static_cast<size_t>(g.tensor(op.inputs[0]).NumElements());
  } else if ((t == "Add" || t == "Sub" || t == "Mul" || t == "Div") && op.inputs.size() == 2 &&
             Fp32(g, op.inputs[0]) && Fp32(g, op.inputs[1]) &&
             BroadcastsTo(g.tensor(op.inputs[0]).shape, g.tensor(op.inputs[1]).shape,
                          g.tensor(op.outputs[0]).shape)) {
    kind = t == "Add" ? Kind::kAdd : t == "Sub" ? Kind::kSub : t == "Mul" ? Kind::kMul : Kind::kDiv;
  } else {
    return nullptr;
  }
  xnn_operator_t made = nullptr;
  if (!Initialised() || Create(kind, channels, &made) != xnn_status_success || made == nullptr)
    return nullptr;
  return std::unique_ptr<XnnEltwise>(new XnnEltwise(kind, channels, made));
}

XnnEltwise::~XnnEltwise() {
  for (xnn_operator_t x_op : ops_)
    if (x_op != nullptr) xnn_delete_operator(x_op);
}

int XnnEltwise::SetupAndRun(xnn_operator_t x_op, const std::vector<TensorRef>& in,
                            const std::vector<TensorRef>& out) const {
  xnn_status status;
  if (kind_ == Kind::kSigmoid) {
    status = xnn_setup_sigmoid_nc_f32(x_op, 1, in[0].as<float>(), out[0].as<float>(), nullptr);
  } else {
    std::array<size_t, XNN_MAX_TENSOR_DIMS> a{}, b{};
    const size_t na = Dims(*in[0].shape, a), nb = Dims(*in[1].shape, b);
    const float* x = in[0].as<float>();
    const float* y = in[1].as<float>();
    float* z = out[0].as<float>();
    switch (kind_) {
      case Kind::kAdd:
        status = xnn_setup_add_nd_f32(x_op, na, a.data(), nb, b.data(), x, y, z, nullptr);
        break;
      case Kind::kSub:
        status = xnn_setup_subtract_nd_f32(x_op, na, a.data(), nb, b.data(), x, y, z, nullptr);
        break;
      case Kind::kMul:
        status = xnn_setup_multiply_nd_f32(x_op, na, a.data(), nb, b.data(), x, y, z, nullptr);
        break;
      default:
        status = xnn_setup_divide_nd_f32(x_op, na, a.data(), nb, b.data(), x, y, z, nullptr);
        break;
    }
  }
  return status == xnn_status_success ? xnn_run_operator(x_op, nullptr) : status;
}

Status XnnEltwise::Run(const graph::Node& op, const std::vector<TensorRef>& in,
                       const std::vector<TensorRef>& out) {
  int status = xnn_status_invalid_state;
  // The first operator no other thread is running (the profiler times a node on two threads at
  // once, and an operator holds the pointers of its last setup); the spare ones are made on first
  // use, and a call that finds every one busy makes its own for the call.
  bool ran = false;
  for (size_t k = 0; k < kOperators && !ran; ++k) {
    if (busy_[k].exchange(true, std::memory_order_acquire)) continue;
    status = ops_[k] != nullptr ? xnn_status_success : Create(kind_, channels_, &ops_[k]);
    if (status == xnn_status_success) status = SetupAndRun(ops_[k], in, out);
    busy_[k].store(false, std::memory_order_release);
    ran = true;
  }
  if (!ran) {
    xnn_operator_t own = nullptr;
    status = Create(kind_, channels_, &own);
    if (status == xnn_status_success) status = SetupAndRun(own, in, out);
    if (own != nullptr) xnn_delete_operator(own);
  }
  if (status != xnn_status_success)
    return Internal(op.op_type + " '" + op.name + "': XNNPACK failed (status " +
                    std::to_string(status) + ")");
  return Status::Ok();
}

}  // namespace hx::exec::xnn_impl
