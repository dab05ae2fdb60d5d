#pragma once
// How long an op takes on ONE core of a CPU device while several of its cores run ops at once
// (Chrion §2.2 and Fig. 2/6: inter-operator parallelism over cores, slowed by the memory bandwidth
// and last-level cache the busy cores share). docs/cost-model.md, "CPU core contention":
//
//   t(op, busy) = launch + (T_dev(op) - launch) * n * (1 + gamma * (busy - 1))
//
// T_dev is the cost model's time for the op on the CPU device. Under the roofline its peak counts
// all `cores` cores on the one op, so one core does the same work n = cores times slower. A
// calibrated CPU (data/calibration/<model>.yaml) gives per-op times as a runtime runs them, small
// ops on one core: n = 1 (`op_cores`). Each further busy core slows every running op by `gamma`
// (shared DRAM bandwidth and LLC).

#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"

namespace hx::cost {

struct CpuContentionOptions {
  // Slowdown each additional busy core adds to every op running on the device's cores. 0.05 makes
  // 12 busy cores 1.55x slower per op: Chrion Fig. 6's per-cell latency grows with the cores used
  // (the figure's values are not given in the text; this is our calibration, not the paper's).
  double gamma = 0.05;
  // How many cores T_dev has the op on (n above): 0 = all the device's cores (the roofline's peak),
  // 1 = one (a calibrated CPU's per-op times). RunChrion sets 1 for a CPU whose times are
  // calibrated.
  int op_cores = 0;
  // The part of T_dev that does not scale (the per-op dispatch): < 0 = the device spec's
  // launch_overhead_s; a calibrated CPU's kernel_launch_s.
  double op_launch_s = -1.0;
  Status Validate() const;
};

// `options` with op_cores = 1 and op_launch_s = the calibration's dispatch when the cost model
// calibrates `cpu` (CostModel::CalibrationFor); unchanged otherwise.
CpuContentionOptions CpuContentionFor(const CostModel& cost, DeviceId cpu,
                                      CpuContentionOptions options = {});

// The slowdown factor 1 + gamma * (busy - 1) (busy < 1 counts as 1).
double CpuContentionSlowdown(int busy_cores, const CpuContentionOptions& options = {});

// The same from the op's time on the whole device (`device_seconds`, +infinity stays so).
double CpuCoreTimeFrom(double device_seconds, const hw::Device& cpu, int busy_cores,
                       const CpuContentionOptions& options = {});

// Seconds for `op` on one core of CPU device `cpu` while `busy_cores` of its cores run ops
// (with CpuContentionFor(cost, cpu, options)).
// Non-op nodes take 0; +infinity where the op is unsupported on the device.
double CpuCoreOpTime(const CostModel& cost, NodeId op, DeviceId cpu, int busy_cores,
                     const CpuContentionOptions& options = {});

}  // namespace hx::cost
