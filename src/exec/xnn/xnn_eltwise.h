#pragma once
// Small elementwise ops on XNNPACK (Debian libxnnpack-dev): Sigmoid, and Add, Sub, Mul and Div
// with NumPy broadcasting, on fp32 tensors of up to six dimensions in their plain layout.
//
// Measured on this project's 2-core VM, one thread, 8x64 floats (the gates of Chrion's LSTM
// cells): oneDNN's eltwise and binary primitives take 410-460 ns a call, nearly all of it the
// call itself (argument maps, descriptor checks); XNNPACK's setup and run take 110-120 ns for Add
// and 200 ns for Sigmoid (a loop of the adds alone takes 40 ns). An unrolled LSTM runs 768 of
// these per inference. Tanh has no fp32 operator in Debian's XNNPACK (2022): oneDNN keeps it.

#include <array>
#include <atomic>
#include <memory>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/exec/tensor.h"
#include "hexplan/graph/graph.h"

struct xnn_operator;

namespace hx::exec::xnn_impl {

// One node's XNNPACK operator, made once (Make) and run on the calling thread (no thread pool).
// Safe from several threads at once: each call runs an operator no other thread is running.
class XnnEltwise {
 public:
  // The operator for `op` when XNNPACK takes it (its type, fp32 inputs and output, ranks up to
  // six, and XNNPACK initialised on this CPU); null otherwise.
  static std::unique_ptr<XnnEltwise> Make(const graph::Graph& g, const graph::Node& op);
  ~XnnEltwise();
  XnnEltwise(const XnnEltwise&) = delete;
  XnnEltwise& operator=(const XnnEltwise&) = delete;

  // Runs the op on the run's buffers (shapes as the graph gives them).
  Status Run(const graph::Node& op, const std::vector<TensorRef>& in,
             const std::vector<TensorRef>& out);

 private:
  enum class Kind { kSigmoid, kAdd, kSub, kMul, kDiv };
  XnnEltwise(Kind kind, size_t channels, xnn_operator* op) : kind_(kind), channels_(channels) {
    ops_[0] = op;
  }
  // An operator of `kind` (`channels`: Sigmoid's element count); XNNPACK's status, as an int.
  static int Create(Kind kind, size_t channels, xnn_operator** made);
  int SetupAndRun(xnn_operator* x_op, const std::vector<TensorRef>& in,
                  const std::vector<TensorRef>& out) const;
  Kind kind_;
  size_t channels_;
  // Operators for calls at once: the first made by Make, the others on first use; busy_[k]: a
  // thread is setting up and running ops_[k] (and, when null, making it).
  static constexpr size_t kOperators = 4;
  std::array<xnn_operator*, kOperators> ops_{};
  std::array<std::atomic<bool>, kOperators> busy_{};
};

}  // namespace hx::exec::xnn_impl
