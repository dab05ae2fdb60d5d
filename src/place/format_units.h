#pragma once
// Amounts in planners' messages: memory as "1.23 GB", or plain bytes below a megabyte (workloads
// state small abstract units); times as "12.345 ms".
#include <cstdint>
#include <cstdio>
#include <string>

namespace hx::place {

inline std::string FormatBytes(int64_t bytes) {
  char buf[32];
  if (bytes < 1000000)
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.2f GB", static_cast<double>(bytes) / 1e9);
  return buf;
}

inline std::string FormatMs(double seconds) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f ms", seconds * 1e3);
  return buf;
}

}  // namespace hx::place
