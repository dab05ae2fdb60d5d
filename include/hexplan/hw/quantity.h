#pragma once
// Quantities with units as people write them in cluster files: "16GB/s", "900 GB/s", "100Gbps",
// "5us", "50 ns", "32GB", "15.7 TFLOPS". A bare number is in base units (bytes/s, seconds, bytes,
// FLOP/s). Bandwidth and FLOP prefixes are decimal (GB/s = 1e9 bytes/s, Gbps = 1e9 bits/s); memory
// sizes follow GPU datasheets, where "32GB" means 32 GiB (KiB/MiB/GiB/TiB are accepted too).

#include <cstdint>
#include <string>

#include "hexplan/core/status.h"

namespace hx::hw {

StatusOr<double> ParseBandwidth(const std::string& text);  // bytes per second
StatusOr<double> ParseSeconds(const std::string& text);
StatusOr<int64_t> ParseBytes(const std::string& text);
StatusOr<double> ParseFlops(const std::string& text);  // FLOP per second

// "15.75 GB/s", "5 us", "32 GiB", "19.5 TFLOP/s": short human-readable forms.
std::string FormatBandwidth(double bytes_per_s);
std::string FormatSeconds(double seconds);
std::string FormatBytes(int64_t bytes);
std::string FormatFlops(double flops);

}  // namespace hx::hw
