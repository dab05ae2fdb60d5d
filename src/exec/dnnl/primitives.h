#pragma once
// One node's oneDNN primitive and what running it needs: the layouts the executor's buffers are
// in (NCHW or channel-blocked, layout.h), the layouts the primitive chose, the reorders between
// them, and the weights reordered once. Built by MakeConv / MakePool, run by RunNode.

#include <array>
#include <atomic>
#include <dnnl.hpp>
#include <memory>
#include <mutex>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/exec/tensor.h"
#include "hexplan/graph/graph.h"

namespace hx::exec::dnnl_impl {

const dnnl::engine& Engine();

// Every primitive takes its scratchpad from RunNode (a per-thread buffer): oneDNN's own (library
// mode, as Debian builds it) is shared by all primitives, and a primitive must then run on the
// thread that made it, while ours run on whichever thread runs the node (the profiler measures a
// node on two threads at once: GPT-2's brgemm MatMuls crashed there).
dnnl::primitive_attr UserScratchpad();

struct NodePrimitive {
  // What every run reads comes first, together: a memory::desc is about half a KiB, and with the
  // descriptors first the flags and handles below sat kilobytes into the struct, a cache miss of
  // its own per op (a fifth of a small op's time on an unrolled LSTM's 1,449 nodes).
  //
  // oneDNN sizes a primitive's work split for the OpenMP team of the thread that creates it
  // (omp_get_max_threads()); it must run on a team of that size.
  int threads = 1;
  bool has_weights = false, has_bias = false;
  bool binary = false;        // a second source (src1): the same layout, or broadcast
  bool swap_sources = false;  // src is input 1, src1 input 0
  bool post_op = false;       // Conv: made with its fused activation (ConvPostOp)
  bool post_sum = false;      // Conv: adds its result to what its output buffer holds (ConvPostOp)
  // Layer normalisation: Scale (input 1) and, when has_shift, B (input 2), both of `scale`'s desc.
  bool norm = false, has_shift = false;
  bool lstm = false;
  bool const_weights = false;       // input 1 is a graph initializer: reorder it once
  float alpha = 0.0f, beta = 0.0f;  // eltwise: Clip's bounds the primitive was made with
  size_t scratchpad_bytes = 0;      // scratchpad.get_size(), set by Make
  dnnl::primitive prim;
  dnnl::reorder src_reorder, dst_reorder, w_reorder;  // empty when the layouts agree
  // RunNode's memory objects, made at the first run and pointed at each run's buffers
  // (set_data_handle): making them anew cost an aligned allocation each, several per op, a
  // third of a small op's time. `memories_busy` guards them (a run that finds them in use makes
  // its own).
  std::array<dnnl::memory, 11> memories;
  std::atomic_flag memories_busy = ATOMIC_FLAG_INIT;
  std::once_flag packed_once;
  dnnl::memory packed_w;
  // Another primitive of the same node (made for another team size), or of another node reading
  // the same constant weight, whose packed weights this one reads: same layout, packed once.
  std::shared_ptr<NodePrimitive> weights_from;
  // LSTM: {S, B, I, H}; the recurrent weights, states and packed weights and bias.
  std::vector<int64_t> lstm_dims;  // of one part: the batch is B / lstm_parts
  // Made for a team of n > 1 threads when n divides the batch: the batch is cut into n parts, and
  // each thread of the team runs the same one-thread primitive on its part (oneDNN's own
  // multi-threaded LSTM synchronises the team at every time step: 2x slower than one thread on
  // batch 8, hidden 64).
  int lstm_parts = 1;
  dnnl::memory packed_w_iter, packed_bias;

  dnnl::memory::desc scratchpad;  // what the primitive needs (UserScratchpad); may be empty
  dnnl::memory::desc user_src, user_dst, user_w, bias;  // the executor's buffers
  dnnl::memory::desc src, dst, w;                       // what the primitive reads and writes
  dnnl::memory::desc src1;
  dnnl::memory::desc scale;
  dnnl::memory::desc user_w_iter, w_iter, src_iter, src_iter_c, dst_iter, dst_iter_c;
};

// `layout`: the tensor's layout in the executor's buffers; kBlocked needs C % block == 0.
enum class Layout : uint8_t { kNchw, kBlocked };

struct Layouts {
  Layout src = Layout::kNchw, dst = Layout::kNchw;
  dnnl::memory::format_tag blocked = dnnl::memory::format_tag::undef;  // what kBlocked means
};

// What a Conv applies to its output as it writes it: an activation (a oneDNN eltwise post-op),
// Relu or Clip to [alpha, beta]; or, when `sum`, the addition of what the output buffer already
// holds (a sum post-op: the executor gave the Conv its Add's other input's buffer).
struct ConvPostOp {
  bool relu = false;
  float alpha = 0.0f, beta = 0.0f;
  bool sum = false;
};

// nullptr when oneDNN cannot run the node as given (unsupported attribute, dtype or shape).
std::unique_ptr<NodePrimitive> MakeConv(const graph::Graph& graph, const graph::Node& op,
                                        const Layouts& layouts, const ConvPostOp* post = nullptr);
std::unique_ptr<NodePrimitive> MakePool(const graph::Graph& graph, const graph::Node& op,
                                        const Layouts& layouts);

// Relu, Clip (eltwise; `in`, when given, holds Clip's bound inputs) on flat views of their
// tensors; Add/Sub/Mul/Div (binary) of equal shapes on flat views, or with one input broadcast
// (numpy rules) to the other's shape, the output's, on row-major views.
std::unique_ptr<NodePrimitive> MakeEltwise(const graph::Graph& graph, const graph::Node& op,
                                           const std::vector<TensorRef>* in);
std::unique_ptr<NodePrimitive> MakeBinary(const graph::Graph& graph, const graph::Node& op);
// MatMul (fp32, ranks >= 2, batch dims broadcast; constant 2-D weights packed once), Softmax
// over the last axis, LayerNormalization (Y only): matmul.cc, norm.cc.
std::unique_ptr<NodePrimitive> MakeMatMul(const graph::Graph& graph, const graph::Node& op);
// ONNX Gemm with a constant B packed once: alpha 1, A not transposed and of two rows or more (one
// row is a GEMV: OpenBLAS, split over the team, kernels.cc), C absent or a bias of N values.
std::unique_ptr<NodePrimitive> MakeGemm(const graph::Graph& graph, const graph::Node& op);
std::unique_ptr<NodePrimitive> MakeSoftmax(const graph::Graph& graph, const graph::Node& op);
std::unique_ptr<NodePrimitive> MakeLayerNorm(const graph::Graph& graph, const graph::Node& op);
// A graph initializer, a Constant's output, or one of those passed through Identity ops.
bool IsConstantValue(const graph::Graph& graph, TensorId t);
// ONNX LSTM (one direction, default activations; sequence_lens and peepholes refused).
std::unique_ptr<NodePrimitive> MakeLstm(const graph::Graph& graph, const graph::Node& op);
Status RunLstm(NodePrimitive& p, const std::vector<TensorRef>& inputs,
               const std::vector<TensorRef>& outputs, dnnl::stream& stream, void* dst_scratch,
               void* scratchpad);
// Clip's bounds: its attributes (opset < 11) or its inputs 1 and 2 when `in` has them.
std::pair<float, float> ClipBounds(const graph::Node& op, const std::vector<TensorRef>* in);

// The activation layout oneDNN's convolutions prefer on this CPU (nChw8c on AVX2, nChw16c or NHWC
// on AVX-512): its format tag and the channel count it needs to be a multiple of (so that a
// tensor's bytes equal NCHW's). tag::undef when they keep NCHW.
struct PreferredLayout {
  dnnl::memory::format_tag tag = dnnl::memory::format_tag::undef;
  int64_t block = 1;
};
PreferredLayout PreferredActivationLayout();

Status RunNode(NodePrimitive& node, const std::vector<TensorRef>& inputs,
               const std::vector<TensorRef>& outputs);

}  // namespace hx::exec::dnnl_impl
