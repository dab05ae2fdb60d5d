#pragma once
// What the cluster drawings (DOT and SVG) share: a colour per link kind and per place kind, and the
// short bandwidth text links are labelled with.

#include <cstdio>
#include <string>

#include "hexplan/hw/cluster.h"

namespace hx::hw {

inline const char* LinkColor(LinkKind kind) {
  switch (kind) {
    case LinkKind::kPcie:
      return "#6b6b6b";
    case LinkKind::kNvlink:
      return "#2e9e3f";
    case LinkKind::kNvswitch:
      return "#1b6e2a";
    case LinkKind::kInfiniband:
      return "#2660b5";
    case LinkKind::kEthernet:
      return "#6a4cb5";
    case LinkKind::kMemoryBus:
      return "#a0672a";
  }
  return "#000000";
}

inline const char* PlaceColor(const Cluster& c, const Place& p) {
  if (p.kind == PlaceKind::kHostMemory) return "#f4e3c1";
  if (p.kind == PlaceKind::kSwitch) return "#e2e2e2";
  switch (c.device(p.device).kind) {
    case DeviceKind::kGpu:
      return "#c4e8b8";
    case DeviceKind::kCpu:
      return "#bcd4ee";
    case DeviceKind::kMig:
      return "#e6cbe6";
  }
  return "#ffffff";
}

// GB/s with 4 significant digits, no unit: "25", "31.5".
inline std::string ShortBandwidth(double bytes_per_s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", bytes_per_s / 1e9);
  return buf;
}

}  // namespace hx::hw
