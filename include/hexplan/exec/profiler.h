#pragma once
// Measures every op of a graph on the devices of a CPU cluster, for the cost model: the graph runs
// once op by op (in topological order) on a thread pinned to the device's cores; each op is run
// `warmup` + `repeats` times back to back on its real inputs and its median time is kept.
// Intermediate tensors are freed after their last reader, so memory stays that of one inference.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/cost/profile.h"
#include "hexplan/exec/backend.h"
#include "hexplan/exec/tensor.h"
#include "hexplan/graph/graph.h"
#include "hexplan/hw/cluster.h"

namespace hx::exec {

struct ProfileOptions {
  int warmup = 1;
  int repeats = 5;
  // Seconds (0: none): each op's timed runs stop once it has used its share of half the budget
  // (at least one timed run), and the calibration runs are cut to one each. The whole profile takes
  // roughly the budget (more when a single run of every op already exceeds it).
  double budget_s = 0.0;
  // With two or more devices, also time every op on all devices at once and write the core-group
  // contention term (off by default: on the plans measured so far it overestimates, see
  // docs/runtime.md).
  bool contention = false;
  // With two or more devices of one model and without `contention`: run the graph twice side by
  // side in one executor, both copies on the first device and then one copy on each of the
  // first two, and write the contention term from the slowdown (what a plan's makespan sees of
  // core groups running together).
  bool concurrent_runs = true;
  Status Validate() const;
};

// Seconds per node (NodeId-indexed; 0 for non-ops) of running each op on backend device `device`.
StatusOr<std::vector<double>> MeasureOpTimes(const graph::Graph& graph,
                                             const std::vector<HostTensor>& weights,
                                             const std::map<std::string, HostTensor>& inputs,
                                             DeviceBackend& backend, int device,
                                             const ProfileOptions& options = {});

// Measures on the first device of each distinct device model of `cluster` (the backend's devices
// are the cluster's) and returns a profile keyed by node name and device model, so every device of
// that model uses it. Calibrated to the executor:
//  - each op time includes the executor's measured per-op dispatch cost (the whole graph run as a
//    one-device plan, minus the sum of the kernel times, spread over the ops);
//  - with two or more devices, every op's output gets an activation transfer time per device-model
//    pair: the measured cross-device hand-off (a ping-pong of tiny ops between two devices) plus
//    its bytes at the measured copy bandwidth;
//  - with two or more devices and `contention`, every op is timed again on all devices at once
//    (each device's copy of the op started together), and the time-weighted slowdown against the
//    sweep alone gives each device model's contention gamma (Profile::SetCpuContention), which the
//    simulator applies while several core groups of a node run ops.
//  - otherwise, with two or more devices of one model (ProfileOptions::concurrent_runs, on by
//    default), the first model's contention gamma comes from whole runs of the graph twice side
//    by side in one executor: one copy on each of two devices against both on one
//    (ProfileCalibration::alone_run_s / together_run_s).
// `calibration` (optional) receives the measured figures.
struct ProfileCalibration {
  double dispatch_s_per_op = 0.0;
  // Below 1 when the one-device run was faster than its ops timed one by one: the op times were
  // scaled by it (and dispatch_s_per_op is 0).
  double kernel_scale = 1.0;
  double subgraph_s = 0.0;  // starting a subgraph, beyond its ops (the first device model's)
  double handoff_s = 0.0;   // one cross-device hop (wake-ups and queue) without bytes
  // The device threads' own work per activation sent between two devices when neither waits
  // (backends whose copies run on the device threads): the sender's (its copy and marks) and the
  // receiver's (its first read of the tensor), measured in a steady exchange.
  double send_s = 0.0;
  double recv_s = 0.0;
  double copy_bytes_per_s = 0.0;         // memcpy bandwidth between two devices' buffers
  double kernel_sum_s = 0.0;             // sum of the op times on the first device
  double one_device_run_s = 0.0;         // the graph as a one-device plan, median
  double concurrent_kernel_sum_s = 0.0;  // the first device's op times with all devices busy
  double contention_gamma = 0.0;         // the first device model's measured gamma
  // ProfileOptions::concurrent_runs: per copy of the graph, half the median run of both copies
  // on one device, and the median run with one copy on each of two devices (weights in place);
  // contention_gamma is then the median over interleaved pairs of those runs of their ratio - 1.
  double alone_run_s = 0.0;
  double together_run_s = 0.0;
};
StatusOr<cost::Profile> ProfileGraph(const graph::Graph& graph, const hw::Cluster& cluster,
                                     const std::vector<HostTensor>& weights,
                                     const std::map<std::string, HostTensor>& inputs,
                                     DeviceBackend& backend, const ProfileOptions& options = {},
                                     ProfileCalibration* calibration = nullptr);

}  // namespace hx::exec
