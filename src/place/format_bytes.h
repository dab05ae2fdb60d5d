#pragma once
// Memory amounts in planners' messages: "1.23 GB", or plain bytes below a megabyte (workloads
// state small abstract units).
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

}  // namespace hx::place
