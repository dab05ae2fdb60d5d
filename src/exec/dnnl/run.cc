// RunNode: one node's primitive on the executor's buffers, with the reorders it needs.

#include <unordered_map>

#include "exec/dnnl/primitives.h"

namespace hx::exec::dnnl_impl {
namespace {

// Per-thread scratch for reordered activations and non-constant weights: grown, never shrunk,
// so after the first run nothing is allocated.
struct Scratch {
  std::vector<char> slot[4];  // src, weights, dst reorders; the primitive's scratchpad
  void* Get(int i, size_t bytes) {
    if (slot[i].size() < bytes) slot[i].resize(bytes);
    return slot[i].data();
  }
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

dnnl::stream& ThreadStream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

dnnl::memory Weights(NodePrimitive& p, const TensorRef& w, dnnl::stream& s) {
  const dnnl::engine& eng = Engine();
  dnnl::memory user(p.user_w, eng, w.data);
  if (!p.w_reorder) return user;
  if (p.weights_from != nullptr) return Weights(*p.weights_from, w, s);
  if (p.const_weights) {
    std::call_once(p.packed_once, [&] {
      p.packed_w = dnnl::memory(p.w, eng);
      p.w_reorder.execute(s, user, p.packed_w);
      s.wait();
    });
    return p.packed_w;
  }
  dnnl::memory packed(p.w, eng, ThreadScratch().Get(1, p.w.get_size()));
  p.w_reorder.execute(s, user, packed);
  return packed;
}

}  // namespace

Status RunNode(NodePrimitive& p, const std::vector<TensorRef>& in,
               const std::vector<TensorRef>& out) {
  try {
    const dnnl::engine& eng = Engine();
    dnnl::stream& s = ThreadStream();
    Scratch& scratch = ThreadScratch();
    void* const pad = scratch.Get(3, p.scratchpad.get_size());
    if (p.lstm) return RunLstm(p, in, out, s, scratch.Get(2, p.user_dst.get_size()), pad);
    void* const src0 = p.swap_sources ? in[1].data : in[0].data;
    dnnl::memory user_src(p.user_src, eng, src0), src = user_src;
    if (p.src_reorder) {
      src = dnnl::memory(p.src, eng, scratch.Get(0, p.src.get_size()));
      p.src_reorder.execute(s, user_src, src);
    }
    dnnl::memory user_dst(p.user_dst, eng, out[0].data), dst = user_dst;
    if (p.dst_reorder) dst = dnnl::memory(p.dst, eng, scratch.Get(2, p.dst.get_size()));
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    if (p.scratchpad.get_size() > 0)
      args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(p.scratchpad, eng, pad));
    if (p.has_weights) args.emplace(DNNL_ARG_WEIGHTS, Weights(p, in[1], s));
    if (p.binary)
      args.emplace(DNNL_ARG_SRC_1,
                   dnnl::memory(p.src1, eng, p.swap_sources ? in[0].data : in[1].data));
    if (p.norm) {
      args.emplace(DNNL_ARG_SCALE, dnnl::memory(p.scale, eng, in[1].data));
      if (p.has_shift) args.emplace(DNNL_ARG_SHIFT, dnnl::memory(p.scale, eng, in[2].data));
    }
    if (p.has_bias) args.emplace(DNNL_ARG_BIAS, dnnl::memory(p.bias, eng, in[2].data));
    p.prim.execute(s, args);
    if (p.dst_reorder) p.dst_reorder.execute(s, dst, user_dst);
    s.wait();
  } catch (const dnnl::error& e) {
    return Internal(std::string("oneDNN: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace hx::exec::dnnl_impl
