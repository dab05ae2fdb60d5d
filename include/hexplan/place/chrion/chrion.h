#pragma once
// Chrion (../shared/papers/002_8975da74b0ecb4f6.txt): CPU+GPU collaborative inference.
//  - Algorithm 1: a ready queue in BFS order; when an op is appended, a child whose only
//    predecessor it is follows it at once (and is kept on its device) when moving the data between
//    the GPU and the CPU would take longer than the child's mean execution time (DFS locality).
//  - Algorithm 2: for every number of CPU cores k' = 0..k, greedy earliest finish over the GPU and
//    k' cores, each op to the processor minimising EFT + alpha * (L0 / M0) * M, where M is the GPU
//    memory the op adds (Eq. 4: its outputs, workspace, weights not yet on the GPU, inputs copied
//    from the CPU) and L0, M0 are the latency and memory of the GPU-only schedule (k' = 0): memory
//    is priced so that the whole GPU-only footprint weighs as much as the GPU-only latency, which
//    makes alpha in [0, 1] span "latency only" to "memory as important as time". k* minimises
//    L / L0 + alpha * M / M0. CPU op times on a core come from cost::CpuCoreOpTime with k' busy.
// docs/placement.md ("chrion") says where this departs from the paper.

#include <cstdint>
#include <vector>

#include "hexplan/core/id.h"
#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/cost/cpu_contention.h"

namespace hx::place {

struct ChrionOrder {
  std::vector<NodeId> order;        // every op once, a topological order
  std::vector<NodeId> merged_into;  // per node: the parent it was merged with, or invalid
};

// Algorithm 1 for a GPU and a CPU device of the cluster.
StatusOr<ChrionOrder> ChrionTopologicalOrder(const cost::CostModel& cost, DeviceId gpu,
                                             DeviceId cpu,
                                             const cost::CpuContentionOptions& contention = {});

// Algorithm 2's schedule for one core count.
struct ChrionSchedule {
  int cores = 0;                 // k'
  std::vector<DeviceId> device;  // per node (ops only): the GPU or the CPU device of its core
  std::vector<int> processor;    // per node: 0 = GPU, 1..k' = CPU core, -1 = not an op
  std::vector<double> start;     // per node, seconds (the planner's model)
  std::vector<double> finish;    // per node
  double latency_s = 0.0;        // L: the last finish
  int64_t gpu_memory_bytes = 0;  // M: Eq. 4 summed over the ops on the GPU
  double cost = 0.0;             // L / L0 + alpha * M / M0
};

struct ChrionOptions {
  double alpha = 0.0;
  cost::CpuContentionOptions contention;
  Status Validate() const;
};

struct ChrionResult {
  ChrionOrder order;
  std::vector<ChrionSchedule> sweep;  // k' = 0..k
  int best = 0;                       // index into sweep: k*
  int total_cores = 0;                // k
  DeviceId gpu;
};

// Algorithms 1 and 2 on the fastest GPU and every CPU device of the cluster (k = their cores; core
// i of the sweep runs on CPU device i mod #CPUs while that device has cores left). Fails when the
// cluster has no GPU.
StatusOr<ChrionResult> RunChrion(const cost::CostModel& cost, const ChrionOptions& options);

}  // namespace hx::place
