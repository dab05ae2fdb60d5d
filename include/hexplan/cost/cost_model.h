#pragma once
// How long an operator takes on a device and a tensor between two places, and how much memory an op
// needs. A measured profile wins; otherwise a roofline:
//   time = max(FLOPs / (peak * compute_eff), bytes / (mem_bw * memory_eff)) / clock_scale + launch.
// Transfers: latency + bytes / bottleneck bandwidth of the route (contention is the simulator's
// job).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/cost/profile.h"
#include "hexplan/graph/graph.h"
#include "hexplan/graph/op_cost.h"
#include "hexplan/hw/cluster.h"

namespace hx::cost {

// Fractions of peak a device reaches (compute: FLOP/s, memory: bytes/s).
struct Efficiency {
  double compute = 0.0;
  double memory = 0.0;
};

struct CostModelOptions {
  double gpu_compute_efficiency = 0.6;  // fraction of peak FLOP/s a kernel reaches
  double gpu_memory_efficiency = 0.8;   // fraction of peak memory bandwidth
  double cpu_compute_efficiency = 0.5;
  double cpu_memory_efficiency = 0.7;
  // SortingHat §3.4 static adjustments for planners that assume no contention: DHA slowed by the
  // number of GPUs sharing the bus, x1.5 on a direct link, x(number of GPUs) without one.
  // (Paper: DHA x 2 x GPUs sharing the bus; GPU->GPU x1.5 over one direct link, x total GPUs
  // otherwise; host->device transfers unadjusted.)
  bool sortinghat_static_adjustments = false;
  // Per device model ("V100-SXM2-32GB"): overrides the kind defaults above. Calibrate() fills it.
  std::map<std::string, Efficiency> model_efficiency;
  Status Validate() const;
};

class CostModel {
 public:
  // The graph, cluster and profile must outlive the model. `profile` may be null.
  CostModel(const graph::Graph& graph, const hw::Cluster& cluster, CostModelOptions options = {},
            const Profile* profile = nullptr);

  const graph::Graph& graph() const { return *graph_; }
  const hw::Cluster& cluster() const { return *cluster_; }
  const CostModelOptions& options() const { return options_; }
  const Profile* profile() const { return profile_; }  // may be null

  // Seconds to run `op` on `device` with its weights in device memory. Non-op nodes take 0.
  double OpTime(NodeId op, DeviceId device) const;
  // Seconds to run `op` on `device` reading its weights from host memory over the PCIe route
  // (direct host access) instead of device memory.
  double OpTimeDha(NodeId op, DeviceId device) const;
  // Whether OpTimeDha is the op's measured time as it is: on a CPU device, "host memory" is the
  // memory the profiled kernel already read its weights from, so no route is crossed on top.
  bool DhaIsMeasured(NodeId op, DeviceId device) const;
  // Whether the op may run on the device at all (profiles may mark ops unsupported).
  bool Supports(NodeId op, DeviceId device) const;
  // The op's fastest device time over the cluster.
  double FastestOpTime(NodeId op) const;

  // Seconds to move `bytes` from `src` to `dst` with no contention.
  double TransferTime(int64_t bytes, PlaceId src, PlaceId dst) const;
  // Seconds to move `tensor` between the places of two devices (a profiled per-edge time wins).
  double TensorTransferTime(TensorId tensor, DeviceId src, DeviceId dst) const;
  // Seconds to load a weight from host memory into `device`.
  double WeightLoadTime(NodeId weight, DeviceId device) const;

  // Bytes of the weights an op reads, the activations it writes, and its total footprint on a
  // device (weights + outputs + workspace; a profiled memory figure wins).
  int64_t OpWeightBytes(NodeId op) const;
  int64_t OpOutputBytes(NodeId op) const;
  int64_t OpMemoryBytes(NodeId op) const;

  const graph::OpCost& op_cost(NodeId op) const { return op_costs_[op.index()]; }

  // ---- Pieces of the model (for planners, calibration and tests).
  // The roofline estimate alone (ignores the profile).
  double RooflineTime(NodeId op, DeviceId device) const;
  // The efficiencies used for a device: its model's entry in model_efficiency, else its kind's.
  Efficiency EfficiencyFor(DeviceId device) const;
  // Peak FLOP/s the op gets on the device: the rate of the op's dtype (OpComputeDType).
  double PeakFlopsFor(NodeId op, DeviceId device) const;
  // GPUs (kinds gpu and mig) whose host route shares the busiest PCIe link of this device's host
  // route (>= 1; SortingHat's "GPUs sharing the same PCIe bus").
  int HostBusSharing(DeviceId device) const;
  // Workspace an op needs besides its inputs and outputs: Conv's im2col buffer, else 0.
  int64_t OpWorkspaceBytes(NodeId op) const;
  // Footprint on a device: with `dha` the weights stay in host memory and are not counted.
  int64_t OpMemoryBytes(NodeId op, DeviceId device, bool dha) const;

 private:
  const graph::Graph* graph_;
  const hw::Cluster* cluster_;
  CostModelOptions options_;
  const Profile* profile_;
  std::vector<graph::OpCost> op_costs_;   // per node
  std::vector<std::string> dtype_of_op_;  // per node: dtype name used for peak FLOP/s
  std::vector<int> host_bus_sharing_;     // per device
  int num_gpus_ = 0;                      // devices of kind gpu or mig
  double ProfiledOrRoofline(NodeId op, DeviceId device) const;
  double AdjustGpuTransfer(double seconds, PlaceId src, PlaceId dst) const;
};

}  // namespace hx::cost
