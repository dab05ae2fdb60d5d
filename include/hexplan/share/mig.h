#pragma once
// MIG geometry: the GPU-instance profiles of MIG-capable GPUs and the placement rules, in memory
// slices, from NVIDIA's MIG user guide ("Supported MIG Profiles"). Every supported GPU here has 8
// memory slices and 7 GPCs:
//   1g: 1 memory slice,  starts 0..6      4g: 4 memory slices, starts 0
//   2g: 2 memory slices, starts 0, 2, 4   7g: 8 memory slices, starts 0
//   3g: 4 memory slices, starts 0, 4
// The GPC slots an instance covers on the 7-slot map are [start, start + gpcs).

#include <string>
#include <vector>

#include "hexplan/core/status.h"

namespace hx::share {

inline constexpr int kMemorySlices = 8;
inline constexpr int kGpcsPerGpu = 7;
// The instance sizes in GPCs, smallest first.
inline constexpr int kInstanceSizes[] = {1, 2, 3, 4, 7};
inline constexpr int kNumInstanceSizes = 5;
// Index of an instance size in kInstanceSizes, or -1.
int SizeIndex(int gpcs);

struct MigProfile {
  int gpcs = 0;
  int memory_slices = 0;
  double memory_gb = 0;
  int gi_profile_id = 0;    // the `nvidia-smi mig -lgip` id (19, 14, 9, 5, 0)
  std::string name;         // e.g. "3g.40gb"
  std::vector<int> starts;  // allowed start memory slices
};

struct GpuModel {
  std::string name;  // "a100-80gb"
  double memory_gb = 0;
  std::vector<MigProfile> profiles;  // one per instance size, smallest first

  // The profile with `gpcs` GPCs, or nullptr.
  const MigProfile* Find(int gpcs) const;
};

// The GPU models: a100-40gb, a100-80gb, h100-80gb, h200-141gb.
StatusOr<GpuModel> GetGpuModel(const std::string& name);
std::vector<std::string> GpuModelNames();

// One GPU instance on a GPU: its size and its start memory slice.
struct Instance {
  int gpcs = 0;
  int start = 0;
  bool operator==(const Instance&) const = default;
};

// The instances of one GPU, in any order.
using Layout = std::vector<Instance>;

// OK when every instance has a known profile, a start the profile allows, and no two instances
// share a memory slice (which also keeps the GPCs at 7 or fewer). The error names the instance.
Status ValidateLayout(const GpuModel& gpu, const Layout& layout);

// Every valid non-empty layout, each sorted by start; with `maximal_only`, only the layouts to
// which no instance can be added (the A100 has 19, the configurations of ParvaGPU's Fig. 1).
std::vector<Layout> EnumerateLayouts(const GpuModel& gpu, bool maximal_only);

// Instance sizes of a layout in start order, e.g. "4-2-1".
std::string LayoutString(const Layout& layout);

// Instance counts per size (index by SizeIndex).
struct SizeCounts {
  int n[kNumInstanceSizes] = {0, 0, 0, 0, 0};
  int Total() const;
  int Gpcs() const;
};

// The exact packer. Because the 7g instance needs a whole GPU and every other instance lives in
// one half of the memory slices (left: slices 0-3, 4 GPCs; right: 4-7, 3 GPCs) and the two halves
// are independent, a multiset of instances fits on G GPUs iff, with G' = G - n7 GPUs left after
// the 7g, b = min(n3, G') 3g in right halves and a = n3 - b in left halves:
//   n4 + a <= G', n2 <= 2 L + R, n1 + 2 n2 <= 4 L + 3 R, where L = G' - n4 - a, R = G' - b.
// (Putting a 3g in a right half never hurts: it frees 1 GPC and one 2g position.)
bool FitsOnGpus(const SizeCounts& counts, int gpus);
// The fewest GPUs that hold `counts`.
int MinGpus(const SizeCounts& counts);
// Layouts for MinGpus(counts) GPUs holding exactly `counts` (validated).
std::vector<Layout> PackExact(const SizeCounts& counts);

}  // namespace hx::share
