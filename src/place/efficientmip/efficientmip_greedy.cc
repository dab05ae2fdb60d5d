// EfficientMIP's greedy latency baseline (the paper's Appendix F; latency-greedy/greedy.cpp in its
// repository): blocks in topological order fill accelerators one after another up to their memory.

#include <cmath>

#include "place/efficientmip/efficientmip_internal.h"

namespace hx::place {

StatusOr<EfficientMipSplit> EfficientMipGreedy(const EfficientMipInstance& inst) {
  HX_RETURN_IF_ERROR(inst.Validate());
  const efficientmip_internal::Blocks blocks = efficientmip_internal::ComputeBlocks(inst);
  const int num = static_cast<int>(blocks.nodes.size());
  auto fits_alone = [&](int b) {
    if (blocks.size_bytes[b] > inst.accelerator_memory_bytes) return false;
    for (int v : blocks.nodes[b])
      if (!std::isfinite(inst.accelerator_latency_s[v])) return false;
    return true;
  };
  EfficientMipSplit split;
  split.subgraph_of.assign(inst.num_nodes(), EfficientMipSplit::kCpu);
  int next = 0;
  while (next < num) {
    if (!fits_alone(next) || split.num_subgraphs() == inst.num_accelerators) {
      for (int v : blocks.nodes[next]) {
        if (!inst.has_cpu || !std::isfinite(inst.cpu_latency_s[v]))
          return ResourceExhausted(
              inst.name + ": greedy: node '" + inst.node_names[v] +
              "' fits on no accelerator left (block of " + std::to_string(blocks.size_bytes[next]) +
              " bytes, accelerator memory " + std::to_string(inst.accelerator_memory_bytes) +
              " bytes, " + std::to_string(inst.num_accelerators) +
              " accelerators) and there is no CPU that runs it");
      }
      ++next;  // stays on the CPU
      continue;
    }
    const int s = split.num_subgraphs();
    split.subgraph_device.push_back(s);
    int64_t used = 0;
    while (next < num && fits_alone(next) &&
           used + blocks.size_bytes[next] <= inst.accelerator_memory_bytes) {
      used += blocks.size_bytes[next];
      for (int v : blocks.nodes[next]) split.subgraph_of[v] = s;
      ++next;
    }
  }
  return split;
}

}  // namespace hx::place
