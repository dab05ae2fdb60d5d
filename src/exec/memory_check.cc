#include "hexplan/exec/memory_check.h"

#include <fstream>
#include <sstream>
#include <string>

#include "hexplan/core/format_number.h"
#include "hexplan/plan/validator.h"

namespace hx::exec {
namespace {

std::string Gb(double bytes) { return FormatNumber(bytes / 1e9, 3) + " GB"; }

}  // namespace

std::optional<int64_t> AvailableHostMemoryBytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key, unit;
    int64_t kib = 0;
    if (fields >> key >> kib >> unit && key == "MemAvailable:" && unit == "kB") return kib * 1024;
  }
  return std::nullopt;
}

int64_t HostWeightBytes(const graph::Graph& graph) {
  int64_t total = 0;
  for (NodeId w : graph.Weights()) {
    for (TensorId t : graph.node(w).outputs) total += graph.tensor(t).Bytes();
  }
  return total;
}

Status CheckRunMemory(const plan::Plan& plan, const cost::CostModel& cost,
                      std::optional<int64_t> available_bytes) {
  const hw::Cluster& cluster = cost.cluster();
  // Doubles: a bound near int64's limit must not wrap when summed.
  double total = static_cast<double>(HostWeightBytes(cost.graph()));
  const double host_weights = total;
  for (const plan::DeviceMemoryBound& m : plan::PlanMemoryBound(plan, cost)) {
    const std::string& name = cluster.device(m.device).name;
    const double need = static_cast<double>(m.weight_bytes) +
                        static_cast<double>(m.peak_activation_bytes) +
                        static_cast<double>(m.stated_bytes);
    if (m.capacity_bytes > 0 && need > static_cast<double>(m.capacity_bytes)) {
      return InvalidArgument("device " + name + " needs up to " + Gb(need) + " (weights " +
                             Gb(static_cast<double>(m.weight_bytes)) + ", activations at peak " +
                             Gb(static_cast<double>(m.peak_activation_bytes)) +
                             ") but the cluster states " +
                             Gb(static_cast<double>(m.capacity_bytes)) + " of memory");
    }
    total += need;
  }
  if (available_bytes && total > static_cast<double>(*available_bytes)) {
    return InvalidArgument("the plan needs up to " + Gb(total) + " (host weights " +
                           Gb(host_weights) + " plus every device's weights and activations) " +
                           "but this machine has " + Gb(static_cast<double>(*available_bytes)) +
                           " available (MemAvailable in /proc/meminfo)");
  }
  return Status::Ok();
}

}  // namespace hx::exec
