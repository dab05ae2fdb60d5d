#pragma once
// Public figures of compute parts (docs/hardware.md cites each).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hx::hw {

struct DeviceSpec {
  std::string model;             // "V100-SXM2-32GB", "A100-SXM4-80GB", "Xeon E5-2685 v3", ...
  double peak_flops_fp32 = 0.0;  // FLOP/s (whole device; for CPUs all cores of the group)
  double peak_flops_fp16 = 0.0;  // FLOP/s with tensor cores where present
  double peak_flops_bf16 = 0.0;  // 0 where unsupported (falls back to fp32 rate)
  double memory_bandwidth_bytes_per_s = 0.0;
  int64_t memory_bytes = 0;
  double launch_overhead_s = 0.0;  // per kernel
  int cores = 0;                   // CPUs: cores in the group; GPUs: SMs
  // Peak FLOP/s for a dtype name ("fp32", "fp16", "bf16"); falls back to fp32.
  double PeakFlops(const std::string& dtype) const;
};

// The table of common parts. Names are matched case-insensitively ("v100", "a100-80gb", ...).
const std::vector<DeviceSpec>& KnownDeviceSpecs();
std::optional<DeviceSpec> FindDeviceSpec(const std::string& model);

// A GPU name as `nvidia-smi --query-gpu=name` prints it ("Tesla V100-SXM2-16GB",
// "NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX 2080 Ti") matched to the table.
std::optional<DeviceSpec> MatchGpuName(const std::string& name);

// `cores` cores of a CPU chip from the table (FLOP/s scale with the cores; the socket's memory
// bandwidth is shared, so it is kept).
DeviceSpec CpuCoresOf(const DeviceSpec& chip, int cores);
// A group of `cores` identical cores described per core (FLOP/s and bandwidth scale).
DeviceSpec CpuCoreGroupSpec(const DeviceSpec& per_core, int cores);

}  // namespace hx::hw
