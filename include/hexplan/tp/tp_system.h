#pragma once
// The view of a cluster that tensor parallelism needs: nodes (servers), their GPUs with relative
// capabilities, and the intra-node (NVLink) and inter-node (network) links.

#include <cstdint>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/cost/device_calibration.h"
#include "hexplan/hw/cluster.h"
#include "hexplan/hw/device_spec.h"

namespace hx::tp {

struct TpGpu {
  std::string name;
  double peak_flops = 0.0;        // for the model's dtype, after clock scaling
  double memory_bandwidth = 0.0;  // bytes/s
  int64_t memory_bytes = 0;
  double launch_overhead_s = 0.0;
  double capability = 0.0;  // peak_flops relative to the slowest GPU of the system
  // The shipped calibration of its device model (cost::BuiltinCalibrations), null where none;
  // the `calibrated` time preset times its kernels with the calibration's class curves.
  const cost::DeviceCalibration* calibration = nullptr;
};

struct TpNode {
  std::string name;
  std::vector<TpGpu> gpus;
  double capability = 0.0;       // c_n: sum of its GPUs' capabilities
  double intra_bandwidth = 0.0;  // bytes/s per direction between two of its GPUs
  double intra_latency_s = 0.0;
  double inter_bandwidth = 0.0;  // bytes/s per direction to other nodes
  double inter_latency_s = 0.0;
  int64_t memory_bytes() const;
};

struct TpSystem {
  std::string name;
  std::vector<TpNode> nodes;
  std::vector<double> Capabilities() const;
  int NumGpus() const;
  int64_t MemoryBytes() const;
  // Recomputes GPU and node capabilities relative to the slowest GPU (peak_flops).
  void NormalizeCapabilities();
  Status Validate() const;  // names a node with no GPU or a GPU with zero FLOP/s
};

// Builds the TP view of a finalized cluster: nodes from the devices' node names (GPU devices only,
// MIG instances count as GPUs), link figures from the cluster's routes (intra: between two GPUs of
// a node; inter: from a node's first GPU to the nearest GPU of another node).
StatusOr<TpSystem> TpSystemFromCluster(const hw::Cluster& cluster, const std::string& dtype);

// A system for tests and the paper's setup: node n has gpus_per_node[n] copies of `spec`.
struct UniformSystemOptions {
  double intra_bandwidth = 300e9;  // AsymGroup §VI-A: NVLink 600 GB/s bidirectional, 50 ns
  double intra_latency_s = 50e-9;
  double inter_bandwidth = 100e9;  // network 200 GB/s bidirectional, 200 ns
  double inter_latency_s = 200e-9;
};
TpSystem MakeUniformSystem(const std::vector<int>& gpus_per_node, const hw::DeviceSpec& spec,
                           const std::string& dtype, const UniformSystemOptions& options = {});

// Peak FLOP/s of `spec` for "fp16"/"bf16"/"fp32" (falls back to fp32 where the dtype is absent).
double PeakFlopsFor(const hw::DeviceSpec& spec, const std::string& dtype);

// A100-SXM4-80GB figures used when the hw table is not at hand (NVIDIA A100 datasheet: 312 TFLOP/s
// FP16 tensor, 2039 GB/s HBM2e, 80 GB).
hw::DeviceSpec A100Sxm80Spec();

}  // namespace hx::tp
