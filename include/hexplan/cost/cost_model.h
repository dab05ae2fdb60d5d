#pragma once
// How long an operator takes on a device and a tensor between two places, and how much memory an op
// needs. A measured profile wins; otherwise, with the calibrated model (the default) and a
// calibration for the device's model (device_calibration.h, docs/cost-model.md "Calibrated model"):
//   time = fixed_s(class) + max((F + F_half) / (peak * compute_max),
//                               (B + B_half) / (mem_bw * memory_max)) / clock_scale + kernel_launch
// and else the plain roofline (CostModelKind::kRoofline, the model before calibrations):
//   time = max(FLOPs / (peak * compute_eff), bytes / (mem_bw * memory_eff)) / clock_scale + launch.
// Transfers: latency + bytes / bottleneck bandwidth of the route, calibrated: latency + fixed_s +
// bytes / (bottleneck * fraction) with the copy kind's fraction and fixed cost (contention is the
// simulator's job; it asks CopyCostFor and SharedBusEfficiency for the same numbers).

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/cost/device_calibration.h"
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

// Which model predicts what no profile measured.
enum class CostModelKind : uint8_t {
  kCalibrated,  // a device model's calibration where there is one, else the roofline
  kRoofline,    // the plain roofline and nominal link rates everywhere (the model before issue 21)
};
const char* CostModelKindName(CostModelKind kind);  // "calibrated", "roofline"
std::optional<CostModelKind> ParseCostModelKind(const std::string& name);

// What a copy of one kind reaches over a route: fraction of its bottleneck, fixed cost per copy.
struct CopyCost {
  double fraction = 1.0;
  double fixed_s = 0.0;
};

struct CostModelOptions {
  CostModelKind kind = CostModelKind::kCalibrated;
  // The user's calibrations (`--calibration FILE`), by model; they replace a builtin of the same
  // model (BuiltinCalibrations()).
  std::map<std::string, DeviceCalibration> calibrations;
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
  // A model listed here uses the roofline with these factors even when it has a calibration.
  std::map<std::string, Efficiency> model_efficiency;
  // Planning for warm runs (`place --warm F`): this fraction of every weight's bytes stays on its
  // device between requests, so WeightLoadTime is (1 - F) of a cold load. Memory is unchanged
  // (resident weights still occupy it), and the simulator never reads it: it copies what the
  // plan's transfers say.
  double resident_weight_fraction = 0.0;
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
  // Seconds to load a weight from host memory into `device`, scaled by (1 -
  // resident_weight_fraction): the part of a load a warm run still pays for.
  double WeightLoadTime(NodeId weight, DeviceId device) const;

  // Bytes of the weights an op reads, the activations it writes, and its total footprint on a
  // device (weights + outputs + workspace; a profiled memory figure wins).
  int64_t OpWeightBytes(NodeId op) const;
  int64_t OpOutputBytes(NodeId op) const;
  int64_t OpMemoryBytes(NodeId op) const;

  // ---- What a profile says beyond op times: the simulator and the validator ask these, never the
  // profile. Each is std::nullopt when there is no profile or it says nothing for these devices.
  // The footprint the workload states for a node (MOIRAI mi, EfficientMIP size). OpMemoryBytes
  // prefers it; callers that place an op's memory in time need to know whether it was stated.
  std::optional<int64_t> StatedMemory(NodeId node) const;
  // The measured time of an activation copy of `tensor` from device `src` to `dst` (MOIRAI's
  // pc_kk'): looked up by the tensor's name, then its producer's name; for each, by device names,
  // then models. Only a finite time counts; no SortingHat adjustment (TensorTransferTime adds it).
  std::optional<double> ProfiledTransferTime(TensorId tensor, DeviceId src, DeviceId dst) const;
  // What a transfer from `src` to `dst` costs the sending device's own thread (a CPU core group
  // copies what it produced), and what it costs the receiving device's thread (its first read of
  // the tensor). By device names, then models.
  std::optional<double> TransferSendCost(DeviceId src, DeviceId dst) const;
  std::optional<double> TransferRecvCost(DeviceId src, DeviceId dst) const;
  // What starting a subgraph costs the device's thread beyond its ops (the executor's bookkeeping).
  std::optional<double> SubgraphStartCost(DeviceId device) const;
  // The measured core-group contention gamma of a CPU device: an op runs 1 + gamma * (busy - 1)
  // times slower while `busy` core groups of its node run ops. std::nullopt for other kinds.
  std::optional<double> CpuContention(DeviceId device) const;

  const graph::OpCost& op_cost(NodeId op) const { return op_costs_[op.index()]; }

  // ---- Pieces of the model (for planners, calibration and tests).
  // The roofline estimate alone (ignores the profile).
  double RooflineTime(NodeId op, DeviceId device) const;
  // The efficiencies used for a device: its model's entry in model_efficiency, else its kind's.
  Efficiency EfficiencyFor(DeviceId device) const;
  // Peak FLOP/s the op gets on the device: the rate of the op's dtype (OpComputeDType).
  double PeakFlopsFor(NodeId op, DeviceId device) const;
  // The calibration the device's ops and copies use: null with kRoofline, for a device whose model
  // has none, and for a model with a model_efficiency entry.
  const DeviceCalibration* CalibrationFor(DeviceId device) const {
    return calibration_[device.index()];
  }
  // The calibrated estimate alone (ignores the profile); the roofline without a calibration.
  double ModelTime(NodeId op, DeviceId device) const;
  // The FLOPs the calibrated curve of `op`'s class counts (Winograd's for kWinogradConvolution).
  double CalibratedFlops(const DeviceCalibration& calibration, NodeId op) const;
  // Per-kernel launch cost: the calibration's kernel_launch_s, else the spec's launch_overhead_s.
  double LaunchCost(DeviceId device) const;
  // The operator class of each node (op_class.h).
  OpClass op_class(NodeId op) const { return op_class_[op.index()]; }
  // A copy from `src` to `dst` (host memory of kind `memory` at the host end): the fraction of the
  // route's bottleneck it reaches and its fixed cost, from the calibration of the GPU at the device
  // end (GPU to GPU: the peer fit of either, over the host: the slower of D2H and H2D). {1, 0}
  // with kRoofline or no calibration.
  CopyCost CopyCostFor(PlaceId src, PlaceId dst, HostMemory memory = HostMemory::kPinned) const;
  // Uncontended copy time: latency + fixed_s + bytes / (bottleneck * fraction).
  double CopyTime(int64_t bytes, PlaceId src, PlaceId dst,
                  HostMemory memory = HostMemory::kPinned) const;
  // While two or more copies share the link, the fraction of its capacity they get together: the
  // smallest shared_bus_efficiency of the calibrated GPUs whose host route crosses it; 1 otherwise.
  double SharedBusEfficiency(LinkId link) const { return shared_bus_efficiency_[link.index()]; }
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
  // Per device; null: roofline. Points into the builtins or into user_calibrations_, which copies
  // of the model share (so a copied model's pointers stay valid).
  std::vector<const DeviceCalibration*> calibration_;
  std::shared_ptr<const std::map<std::string, DeviceCalibration>> user_calibrations_;
  std::vector<OpClass> op_class_;              // per node
  std::vector<double> shared_bus_efficiency_;  // per link
  void SetupCalibrations();
  double ProfiledOrRoofline(NodeId op, DeviceId device) const;
  double DhaModelTime(NodeId op, DeviceId device) const;
  double AdjustGpuTransfer(double seconds, PlaceId src, PlaceId dst) const;
};

}  // namespace hx::cost
