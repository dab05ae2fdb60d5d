#pragma once
// oneDNN kernels for the compute-heavy CNN ops: Conv (2-D; groups, depthwise, strides, pads,
// dilations, auto_pad, fused bias), MaxPool / AveragePool (2-D) and GlobalAveragePool. `Prepare`
// makes each supported node's primitive once per graph, and plans which activations stay in
// oneDNN's channel-blocked layout between them (src/exec/dnnl/layout.h); constant weights (graph
// initializers) are reordered into the primitive's layout at the node's first run and kept. Every
// other op, and any node `Prepare` did not see, runs on the kernels of kernels.h. Small elementwise
// ops (Sigmoid, Add, Sub, Mul, Div on fp32 in the plain layout, fused with no Conv) run on
// XNNPACK instead, whose call costs a third of oneDNN's (src/exec/xnn/xnn_eltwise.h).
//
// Threads: oneDNN parallelises a primitive over the calling thread's OpenMP team
// (omp_get_max_threads() of that thread: the CPU backend's BindThread gives each device thread a
// team of its core group's size, pinned core by core). A primitive is made on the thread that
// first runs it, for that team size.

#include <memory>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/exec/tensor.h"
#include "hexplan/graph/graph.h"

namespace hx::exec {

class DnnlOps {
 public:
  DnnlOps();
  ~DnnlOps();
  DnnlOps(const DnnlOps&) = delete;
  DnnlOps& operator=(const DnnlOps&) = delete;

  // Makes the primitives of `graph`'s supported ops (replacing what an earlier Prepare of a graph
  // at the same address made). Not concurrent with Run: call it before the runs start.
  void Prepare(const graph::Graph& graph);
  // Runs `op` when Prepare made a primitive for it and returns true; false when it did not (the
  // caller runs its kernels.h kernel). Safe from several threads at once.
  StatusOr<bool> Run(const graph::Node& op, const std::vector<TensorRef>& inputs,
                     const std::vector<TensorRef>& outputs);
  // Whether `op` may write its output over its input InPlaceInput(op) when it is that buffer's
  // last reader: the Relu/Clip a Conv applies as it writes, and the Add of a Conv's output and
  // another tensor that the Conv adds as it writes (then the op has nothing left to do).
  bool RunsInPlace(const graph::Node& op) const;
  size_t InPlaceInput(const graph::Node& op) const;
  // The Add's other input, for a Conv that adds it (DeviceBackend::FusedInput); invalid otherwise.
  TensorId FusedInput(const graph::Node& op) const;
  // How many nodes run on oneDNN, and how many tensors stay channel-blocked (tests, reports).
  int num_nodes() const;
  int num_blocked_tensors() const;
  // How many of the last prepared graph's nodes run on XNNPACK instead (src/exec/xnn).
  int num_xnnpack_nodes() const;

  // Gives the calling thread an OpenMP team of one thread per core of `cores` (one thread when
  // empty), each pinned to its core; the calling thread takes the first. oneDNN runs the
  // primitives this thread launches on that team.
  static void BindTeam(const std::vector<int>& cores);
  // Sets the calling thread's team size for its lifetime and restores the old one.
  class ScopedTeamSize {
   public:
    explicit ScopedTeamSize(int threads);
    ~ScopedTeamSize();
    ScopedTeamSize(const ScopedTeamSize&) = delete;
    ScopedTeamSize& operator=(const ScopedTeamSize&) = delete;

   private:
    int old_;
  };

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hx::exec
