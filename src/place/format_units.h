#pragma once
// Amounts in planners' messages: memory as "1.23 GB", or plain bytes below a megabyte (workloads
// state small abstract units); times as "12.345 ms". Huge amounts print in scientific notation
// ("1.000e+300 ms"), never as hundreds of digits.
#include <cstdint>
#include <cstdio>
#include <string>

#include "hexplan/core/format_number.h"

namespace hx::place {

inline std::string FormatBytes(int64_t bytes) {
  if (bytes >= 1000000) return FormatNumber(static_cast<double>(bytes) / 1e9, 2) + " GB";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  return buf;
}

inline std::string FormatMs(double seconds) { return FormatNumber(seconds * 1e3) + " ms"; }

}  // namespace hx::place
