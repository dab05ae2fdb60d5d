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

// The first of `starts` at which a `gpcs` instance fits on `g`, or -1.
int FindStart(const GpuModel& gpu, const GpuAssignment& g, int gpcs,
              const std::vector<int>& starts) {
  if (g.Gpcs() + gpcs > kGpcsPerGpu) return -1;
  const unsigned used = UsedSlices(gpu, g);
  const MigProfile* p = gpu.Find(gpcs);
  for (int start : starts) {
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

// The published implementation's start slots, in its order.
const std::vector<int>& PublishedStarts(int gpcs) {
  static const std::vector<int> k0 = {0}, k3 = {4}, k2 = {0, 4, 2}, k1 = {0, 6, 4, 1, 2, 3, 5},
                                none = {};
  switch (gpcs) {
    case 7:
    case 4:
      return k0;
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

bool HasAt(const GpuAssignment& g, int gpcs, int start) {
  return std::any_of(g.segments.begin(), g.segments.end(), [&](const PlacedSegment& s) {
    return s.triplet.gpcs == gpcs && s.start == start;
  });
}

// Best fit as published: the GPU with the fewest GPCs left after the instance, first on ties,
// skipping its two exclusions and (here) GPUs with no free start for it.
void PlaceBestFit(const GpuModel& gpu, const Segment& seg, std::vector<GpuAssignment>* gpus) {
  const int gpcs = seg.triplet.gpcs;
  int best = -1, best_left = kGpcsPerGpu + 1, best_start = -1;
  for (size_t i = 0; i < gpus->size(); ++i) {
    const GpuAssignment& g = (*gpus)[i];
    const int left = kGpcsPerGpu - g.Gpcs() - gpcs;
    if (left < 0 || left >= best_left) continue;
    if (gpcs == 3 && HasAt(g, 3, 4)) continue;
    if (gpcs == 1 && HasAt(g, 3, 0) && HasAt(g, 3, 4)) continue;
    const int start = FindStart(gpu, g, gpcs, PublishedStarts(gpcs));
    if (start < 0) continue;
    best = static_cast<int>(i);
    best_left = left;
    best_start = start;
  }
  if (best < 0) {
    gpus->emplace_back();
    best = static_cast<int>(gpus->size()) - 1;
    best_start = PublishedStarts(gpcs).front();
  }
  (*gpus)[best].segments.push_back({seg.service, seg.triplet, best_start, gpcs});
}

// The published re-cover of a service's carried rate by 1g/2g segments (see the header).
std::vector<Segment> PublishedSplit(int service, const TripletArray& t, double* carried) {
  std::vector<Segment> out;
  auto add = [&](const Triplet& x, double count) {
    for (int k = 0; k < static_cast<int>(count); ++k) {
      out.push_back({service, x});
      *carried -= x.throughput;
    }
  };
  const Triplet &one = t[0], &two = t[1];
  if (!two.valid()) {
    add(one, std::ceil(*carried / one.throughput));
  } else if (!one.valid()) {
    add(two, std::ceil(*carried / two.throughput));
  } else if (two.throughput / 2 > one.throughput) {
    add(two, std::floor(*carried / two.throughput));
    add(one, std::ceil(*carried / one.throughput));
  } else {
    add(one, std::ceil(*carried / one.throughput));
  }
  return out;
}

}  // namespace

void AllocateBestFit(const GpuModel& gpu, std::vector<Segment> segments,
                     std::vector<GpuAssignment>* gpus) {
  std::stable_sort(segments.begin(), segments.end(), [](const Segment& a, const Segment& b) {
    return a.triplet.gpcs > b.triplet.gpcs;
  });
  for (const auto& seg : segments) PlaceBestFit(gpu, seg, gpus);
}

void OptimizeAllocationPublished(const GpuModel& gpu, const std::vector<TripletArray>& triplets,
                                 int threshold, std::vector<GpuAssignment>* gpus) {
  std::map<int, double> carried;
  for (int i = static_cast<int>(gpus->size()) - 1; i >= 0; --i) {
    if ((*gpus)[i].Gpcs() > threshold) continue;
    for (int slot = 0; slot < kGpcsPerGpu; ++slot) {
      auto& segs = (*gpus)[i].segments;
      auto it = std::find_if(segs.begin(), segs.end(),
                             [&](const PlacedSegment& s) { return s.start == slot; });
      if (it == segs.end()) continue;
      const PlacedSegment freed = *it;
      segs.erase(it);
      const TripletArray& t = triplets[freed.service];
      if (!t[0].valid() && !t[1].valid()) {  // cannot be split: back as it was (the published
        PlaceBestFit(gpu, {freed.service, freed.triplet}, gpus);  // code drops it)
        continue;
      }
      carried[freed.service] += freed.triplet.throughput;
      for (const auto& seg : PublishedSplit(freed.service, t, &carried[freed.service])) {
        PlaceBestFit(gpu, seg, gpus);
      }
    }
  }
  RemoveEmpty(gpus);
}

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
      const int start = FindStart(gpu, g, seg.triplet.gpcs, PreferredStarts(seg.triplet.gpcs));
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
