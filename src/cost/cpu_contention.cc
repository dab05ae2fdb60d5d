#include "hexplan/cost/cpu_contention.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hx::cost {

Status CpuContentionOptions::Validate() const {
  if (!(gamma >= 0.0) || !std::isfinite(gamma))
    return InvalidArgument("cpu contention: gamma must be a finite number >= 0, got " +
                           std::to_string(gamma));
  if (op_cores < 0)
    return InvalidArgument("cpu contention: op_cores must be 0 (all cores) or more, got " +
                           std::to_string(op_cores));
  if (!std::isfinite(op_launch_s))
    return InvalidArgument("cpu contention: op_launch_s must be finite, got " +
                           std::to_string(op_launch_s));
  return Status::Ok();
}

double CpuContentionSlowdown(int busy_cores, const CpuContentionOptions& options) {
  return 1.0 + options.gamma * static_cast<double>(std::max(busy_cores, 1) - 1);
}

double CpuCoreTimeFrom(double device_seconds, const hw::Device& cpu, int busy_cores,
                       const CpuContentionOptions& options) {
  if (!std::isfinite(device_seconds)) return device_seconds;
  const double dispatch =
      options.op_launch_s >= 0.0 ? options.op_launch_s : cpu.spec.launch_overhead_s;
  const double launch = std::min(std::max(dispatch, 0.0), device_seconds);
  const int cores = std::max(cpu.spec.cores, 1);
  const double n = options.op_cores > 0 ? std::min(options.op_cores, cores) : cores;
  return launch + (device_seconds - launch) * n * CpuContentionSlowdown(busy_cores, options);
}

double CpuCoreOpTime(const CostModel& cost, NodeId op, DeviceId cpu, int busy_cores,
                     const CpuContentionOptions& options) {
  if (!cost.graph().node(op).is_op()) return 0.0;
  if (!cost.Supports(op, cpu)) return std::numeric_limits<double>::infinity();
  return CpuCoreTimeFrom(cost.OpTime(op, cpu), cost.cluster().device(cpu), busy_cores,
                         CpuContentionFor(cost, cpu, options));
}

CpuContentionOptions CpuContentionFor(const CostModel& cost, DeviceId cpu,
                                      CpuContentionOptions options) {
  if (cost.CalibrationFor(cpu) == nullptr) return options;
  options.op_cores = 1;
  options.op_launch_s = cost.LaunchCost(cpu);
  return options;
}

}  // namespace hx::cost
