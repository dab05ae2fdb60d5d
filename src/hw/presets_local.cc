// `local-cpu`: this machine's CPU cores, detected, split into core groups ("cpu:0-1", "cpu:2-3").
// Each group is a generic x86 core (device_spec.cc "cpu-core") times its cores, with an equal share
// of the machine's DRAM, joined to host memory by a memory-bus link of its cores' bandwidth.

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "hw/link_rates.h"
#include "hw/preset_builders.h"

namespace hx::hw {
namespace {

StatusOr<int> ParseOption(const std::string& value, const std::string& key) {
  char* end = nullptr;
  long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || v < 1 || v > 4096) {
    return InvalidArgument("local-cpu: " + key + " must be a positive integer, got '" + value +
                           "'");
  }
  return static_cast<int>(v);
}

}  // namespace

StatusOr<Cluster> BuildLocalCpu(const std::string& args) {
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  int cores = online > 0 ? static_cast<int>(online) : 1;
  int groups = 1;
  size_t start = 0;
  while (start < args.size()) {
    size_t comma = args.find(',', start);
    std::string item =
        args.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t eq = item.find('=');
    std::string key = item.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "groups") {
      HX_ASSIGN_OR_RETURN(groups, ParseOption(value, key));
    } else if (key == "cores") {
      HX_ASSIGN_OR_RETURN(cores, ParseOption(value, key));
    } else {
      return InvalidArgument("local-cpu: unknown option '" + key +
                             "' (expected groups=K or cores=N, e.g. local-cpu:groups=2)");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (groups > cores) {
    return InvalidArgument("local-cpu: groups=" + std::to_string(groups) + " exceeds the " +
                           std::to_string(cores) + " cores");
  }
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  int64_t memory = pages > 0 && page_size > 0 ? int64_t{pages} * page_size : int64_t{8} << 30;
  auto per_core = FindDeviceSpec("cpu-core");
  HX_CHECK(per_core.has_value());

  Cluster c(args.empty() ? "local-cpu" : "local-cpu:" + args);
  const std::string node = "local";
  PlaceId host = c.AddHostMemory(node);
  int first = 0;
  for (int g = 0; g < groups; ++g) {
    int n = cores / groups + (g < cores % groups ? 1 : 0);
    std::string name = "cpu:" + std::to_string(first) + "-" + std::to_string(first + n - 1);
    DeviceSpec spec = CpuCoreGroupSpec(*per_core, n);
    spec.memory_bytes = memory / groups;
    DeviceId d = c.AddDevice(name, DeviceKind::kCpu, node, spec);
    c.AddLink("membus:" + name, LinkKind::kMemoryBus, host, c.PlaceOf(d),
              spec.memory_bandwidth_bytes_per_s, kMemoryBusLatency);
    first += n;
  }
  return c;
}

}  // namespace hx::hw
