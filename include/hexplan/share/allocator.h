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

// ParvaGPU's allocator as published (github.com/MunQ-Lee/ParvaGPU_SC24, src/allocator.c), with
// valid layouts: best fit (the GPU with the fewest free GPCs that still has room, first on ties;
// a new GPU when none has), starts 7g/4g: 0, 3g: 4 only, 2g: 0, 4, 2, 1g: 0, 6, 4, 1, 2, 3, 5; a
// GPU holding a 3g at 4 takes no other 3g, one holding 3g at 0 and at 4 no 1g. Where the published
// code counts a slot as free when no instance starts there (so instances overlap), this checks the
// memory slices; on S1-S6 the GPU counts are the same.
void AllocateBestFit(const GpuModel& gpu, std::vector<Segment> segments,
                     std::vector<GpuAssignment>* gpus);

// Its Allocation Optimization: from the last GPU to the first, on each GPU holding at most
// `threshold` GPCs, each instance in slot order is freed, its throughput added to its service's
// carried rate, and the carried rate re-covered at once (best fit) by 2g segments (floor) then 1g
// (ceil) when a 2g's throughput per GPC beats a 1g's, else by 1g only, the surplus carried on.
// Steps are never undone. Empty GPUs are dropped at the end.
void OptimizeAllocationPublished(const GpuModel& gpu, const std::vector<TripletArray>& triplets,
                                 int threshold, std::vector<GpuAssignment>* gpus);

}  // namespace hx::share
