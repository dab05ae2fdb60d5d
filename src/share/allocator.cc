#include "hexplan/share/allocator.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace hx::share {
namespace {

// Memory slices taken on a GPU.
unsigned UsedSlices(const GpuModel& gpu, const GpuAssignment& g) {
  unsigned used = 0;
  for (const auto& s : g.segments) {
    const MigProfile* p = gpu.Find(s.triplet.gpcs);
    for (int k = 0; k < p->memory_slices; ++k) used |= 1u << (s.start + k);
  }
  return used;
}

// The first preferred start at which a `gpcs` instance fits on `g`, or -1.
int FindStart(const GpuModel& gpu, const GpuAssignment& g, int gpcs) {
  if (g.Gpcs() + gpcs > kGpcsPerGpu) return -1;
  const unsigned used = UsedSlices(gpu, g);
  const MigProfile* p = gpu.Find(gpcs);
  for (int start : PreferredStarts(gpcs)) {
    unsigned mask = 0;
    for (int k = 0; k < p->memory_slices; ++k) mask |= 1u << (start + k);
    if ((mask & used) == 0) return start;
  }
  return -1;
}

void RemoveEmpty(std::vector<GpuAssignment>* gpus) {
  gpus->erase(std::remove_if(gpus->begin(), gpus->end(),
                             [](const GpuAssignment& g) { return g.segments.empty(); }),
              gpus->end());
}

// SMALLSEGMENTS: 1g/2g segments of `t` that cover `rate` (Demand Matching over the two sizes).
std::vector<Triplet> SmallSegments(double rate, const TripletArray& t) {
  TripletArray small{};
  small[0] = t[0];
  small[1] = t[1];
  std::vector<Triplet> out;
  if (rate <= 1e-9) return out;
  for (const auto& s : DemandMatching(0, rate, small)) out.push_back(s.triplet);
  return out;
}

}  // namespace

const std::vector<int>& PreferredStarts(int gpcs) {
  static const std::vector<int> k7 = {0}, k4 = {0}, k3 = {4, 0}, k2 = {0, 2, 4},
                                k1 = {0, 1, 2, 3, 4, 5, 6}, none = {};
  switch (gpcs) {
    case 7:
      return k7;
    case 4:
      return k4;
    case 3:
      return k3;
    case 2:
      return k2;
    case 1:
      return k1;
    default:
      return none;
  }
}

void AllocateSegments(const GpuModel& gpu, std::vector<Segment> segments,
                      std::vector<GpuAssignment>* gpus) {
  std::stable_sort(segments.begin(), segments.end(), [](const Segment& a, const Segment& b) {
    return a.triplet.gpcs > b.triplet.gpcs;
  });
  for (const auto& seg : segments) {
    bool placed = false;
    for (auto& g : *gpus) {
      const int start = FindStart(gpu, g, seg.triplet.gpcs);
      if (start >= 0) {
        g.segments.push_back({seg.service, seg.triplet, start, seg.triplet.gpcs});
        placed = true;
        break;
      }
    }
    if (!placed) {
      GpuAssignment g;
      g.segments.push_back(
          {seg.service, seg.triplet, PreferredStarts(seg.triplet.gpcs).front(), seg.triplet.gpcs});
      gpus->push_back(std::move(g));
    }
  }
}

void OptimizeAllocation(const GpuModel& gpu, const std::vector<TripletArray>& triplets,
                        int threshold, std::vector<GpuAssignment>* gpus) {
  std::map<int, double> freed_rate;
  for (int i = static_cast<int>(gpus->size()) - 1; i >= 0; --i) {
    if (i >= static_cast<int>(gpus->size())) i = static_cast<int>(gpus->size()) - 1;
    if (i < 0) break;
    if ((*gpus)[i].Gpcs() > threshold) continue;
    const auto saved_gpus = *gpus;
    const auto saved_rate = freed_rate;
    std::vector<Segment> queue;
    for (const auto& s : (*gpus)[i].segments) {
      const TripletArray& t = triplets[s.service];
      if (!t[0].valid() && !t[1].valid()) {
        queue.push_back({s.service, s.triplet});  // cannot be split: re-place as it is
        continue;
      }
      freed_rate[s.service] += s.triplet.throughput;
      for (const auto& small : SmallSegments(freed_rate[s.service], t)) {
        freed_rate[s.service] -= small.throughput;
        queue.push_back({s.service, small});
      }
    }
    (*gpus)[i].segments.clear();
    AllocateSegments(gpu, queue, gpus);
    RemoveEmpty(gpus);
    if (gpus->size() > saved_gpus.size()) {  // the split needs more GPUs: keep the GPU as it was
      *gpus = saved_gpus;
      freed_rate = saved_rate;
    }
  }
}

}  // namespace hx::share
