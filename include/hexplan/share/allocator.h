#pragma once
// ParvaGPU's Segment Allocator (Algorithm 2): Segment Relocation (largest first, with the slot
// preferences of §III-E) and Allocation Optimization.

#include <vector>

#include "hexplan/share/configurator.h"

namespace hx::share {

// The start slots ParvaGPU tries for an instance size, in order: 7g and 4g at 0; 3g at 4 then 0;
// 2g at 0, 2, then 4; 1g at 0-3 then 4-6.
const std::vector<int>& PreferredStarts(int gpcs);

// ALLOCATION: places `segments` largest size first (stable within a size) on the first GPU of
// `gpus` that can take it at a preferred start, opening GPUs as needed.
void AllocateSegments(const GpuModel& gpu, std::vector<Segment> segments,
                      std::vector<GpuAssignment>* gpus);

// ALLOCATIONOPTIMIZATION: from the last GPU to the first, a GPU holding at most `threshold` GPCs
// has its segments freed and replaced by 1g/2g segments covering the freed rate (surplus carried
// per service), which are re-allocated. A step that would add a GPU is undone.
void OptimizeAllocation(const GpuModel& gpu, const std::vector<TripletArray>& triplets,
                        int threshold, std::vector<GpuAssignment>* gpus);

}  // namespace hx::share
