// RunNode: one node's primitive on the executor's buffers, with the reorders it needs.

#include <array>
#include <atomic>

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

// NodePrimitive::memories by what each holds.
enum Slot {
  kUserSrc,
  kSrc,
  kUserDst,
  kDst,
  kPad,
  kWeights,
  kPackedWeights,
  kSrc1,
  kScale,
  kShift,
  kBias
};

// A node's memory objects for one run, pointed at this run's buffers: the node's own when no
// other run holds them (`share`), else objects of this run's own.
class Memories {
 public:
  explicit Memories(NodePrimitive& p, bool share = true)
      : p_(p), owned_(share && !p.memories_busy.test_and_set(std::memory_order_acquire)) {}
  ~Memories() {
    if (owned_) p_.memories_busy.clear(std::memory_order_release);
  }
  Memories(const Memories&) = delete;
  Memories& operator=(const Memories&) = delete;
  dnnl::memory& At(Slot slot, const dnnl::memory::desc& desc, void* data) {
    dnnl::memory& m = owned_ ? p_.memories[slot] : local_[slot];
    if (!m)
      m = dnnl::memory(desc, Engine(), data);
    else
      m.set_data_handle(data);
    return m;
  }

 private:
  NodePrimitive& p_;
  const bool owned_;
  std::array<dnnl::memory, 11> local_;
};

dnnl::memory Weights(NodePrimitive& p, const TensorRef& w, dnnl::stream& s, Memories& mem) {
  if (!p.w_reorder) return mem.At(kWeights, p.user_w, w.data);
  if (p.weights_from != nullptr) {
    Memories own(*p.weights_from, false);
    return Weights(*p.weights_from, w, s, own);
  }
  if (p.const_weights) {
    std::call_once(p.packed_once, [&] {
      dnnl::memory user(p.user_w, Engine(), w.data);
      p.packed_w = dnnl::memory(p.w, Engine());
      p.w_reorder.execute(s, user, p.packed_w);
      s.wait();
    });
    return p.packed_w;
  }
  dnnl::memory& user = mem.At(kWeights, p.user_w, w.data);
  dnnl::memory& packed = mem.At(kPackedWeights, p.w, ThreadScratch().Get(1, p.w.get_size()));
  p.w_reorder.execute(s, user, packed);
  return packed;
}

}  // namespace

Status RunNode(NodePrimitive& p, const std::vector<TensorRef>& in,
               const std::vector<TensorRef>& out) {
  try {
    dnnl::stream& s = ThreadStream();
    Scratch& scratch = ThreadScratch();
    void* const pad = scratch.Get(3, p.scratchpad_bytes);
    if (p.lstm) return RunLstm(p, in, out, s, scratch.Get(2, p.user_dst.get_size()), pad);
    Memories mem(p);
    void* const src0 = p.swap_sources ? in[1].data : in[0].data;
    dnnl::memory user_src = mem.At(kUserSrc, p.user_src, src0), src = user_src;
    if (p.src_reorder) {
      src = mem.At(kSrc, p.src, scratch.Get(0, p.src.get_size()));
      p.src_reorder.execute(s, user_src, src);
    }
    dnnl::memory user_dst = mem.At(kUserDst, p.user_dst, out[0].data), dst = user_dst;
    if (p.dst_reorder) dst = mem.At(kDst, p.dst, scratch.Get(2, p.dst.get_size()));
    // The C API's argument array: the C++ API's std::unordered_map costs allocations every run.
    std::array<dnnl_exec_arg_t, 8> args;
    int n = 0;
    const auto add = [&](int arg, const dnnl::memory& m) { args[n++] = {arg, m.get()}; };
    add(DNNL_ARG_SRC, src);
    add(DNNL_ARG_DST, dst);
    if (p.scratchpad_bytes > 0) add(DNNL_ARG_SCRATCHPAD, mem.At(kPad, p.scratchpad, pad));
    dnnl::memory weights;
    if (p.has_weights) add(DNNL_ARG_WEIGHTS, weights = Weights(p, in[1], s, mem));
    if (p.binary)
      add(DNNL_ARG_SRC_1, mem.At(kSrc1, p.src1, p.swap_sources ? in[0].data : in[1].data));
    if (p.norm) {
      add(DNNL_ARG_SCALE, mem.At(kScale, p.scale, in[1].data));
      if (p.has_shift) add(DNNL_ARG_SHIFT, mem.At(kShift, p.scale, in[2].data));
    }
    if (p.has_bias) add(DNNL_ARG_BIAS, mem.At(kBias, p.bias, in[2].data));
    if (dnnl_primitive_execute(p.prim.get(), s.get(), n, args.data()) != dnnl_success)
      return Internal("oneDNN: a primitive failed to run");
    if (p.dst_reorder) p.dst_reorder.execute(s, dst, user_dst);
    s.wait();
  } catch (const dnnl::error& e) {
    return Internal(std::string("oneDNN: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace hx::exec::dnnl_impl
