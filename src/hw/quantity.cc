#include "hexplan/hw/quantity.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace hx::hw {
namespace {

// Splits "16 GB/s" into 16 and "gb/s" (lower case, no spaces).
StatusOr<std::pair<double, std::string>> Split(const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  double value = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(value)) {
    return InvalidArgument("expected a number with a unit, got '" + text + "'");
  }
  std::string unit;
  for (const char* p = end; *p; ++p) {
    if (!std::isspace(static_cast<unsigned char>(*p))) {
      unit.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(*p))));
    }
  }
  return std::make_pair(value, unit);
}

StatusOr<double> Scaled(const std::string& text,
                        const std::vector<std::pair<std::string, double>>& units,
                        const std::string& examples) {
  HX_ASSIGN_OR_RETURN(auto split, Split(text));
  for (const auto& [unit, factor] : units) {
    if (split.second == unit) return split.first * factor;
  }
  return InvalidArgument("unknown unit '" + split.second + "' in '" + text + "' (use " + examples +
                         ")");
}

std::string Format(double v, const char* const* units, int n, double step) {
  int i = 0;
  double a = std::fabs(v);
  while (i + 1 < n && a >= step) {
    a /= step;
    v /= step;
    ++i;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4g %s", v, units[i]);
  return buf;
}

}  // namespace

StatusOr<double> ParseBandwidth(const std::string& text) {
  static const std::vector<std::pair<std::string, double>> units = {{"", 1},
                                                                    {"b/s", 1},
                                                                    {"kb/s", 1e3},
                                                                    {"mb/s", 1e6},
                                                                    {"gb/s", 1e9},
                                                                    {"tb/s", 1e12},
                                                                    {"kib/s", 1024.0},
                                                                    {"mib/s", 1048576.0},
                                                                    {"gib/s", 1073741824.0},
                                                                    {"bps", 1.0 / 8},
                                                                    {"kbps", 1e3 / 8},
                                                                    {"mbps", 1e6 / 8},
                                                                    {"gbps", 1e9 / 8},
                                                                    {"tbps", 1e12 / 8},
                                                                    {"gbit/s", 1e9 / 8},
                                                                    {"mbit/s", 1e6 / 8},
                                                                    {"tbit/s", 1e12 / 8}};
  // "Gb/s" (bits) and "GB/s" (bytes) differ only in case: check the original spelling.
  for (const char* bits : {"Gb/s", "Mb/s", "Tb/s", "Kb/s"}) {
    if (text.find(bits) != std::string::npos) {
      HX_ASSIGN_OR_RETURN(auto split, Split(text));
      double f = bits[0] == 'G' ? 1e9 : bits[0] == 'M' ? 1e6 : bits[0] == 'T' ? 1e12 : 1e3;
      return split.first * f / 8;
    }
  }
  return Scaled(text, units, "e.g. 16GB/s, 900 GB/s, 100Gbps, 25Gb/s");
}

StatusOr<double> ParseSeconds(const std::string& text) {
  static const std::vector<std::pair<std::string, double>> units = {
      {"", 1},      {"s", 1},     {"ms", 1e-3}, {"us", 1e-6}, {"\xc2\xb5s", 1e-6},
      {"ns", 1e-9}, {"ps", 1e-12}};
  return Scaled(text, units, "e.g. 5us, 50ns, 1ms");
}

StatusOr<int64_t> ParseBytes(const std::string& text) {
  static const std::vector<std::pair<std::string, double>> units = {{"", 1},
                                                                    {"b", 1},
                                                                    {"kb", 1024.0},
                                                                    {"mb", 1048576.0},
                                                                    {"gb", 1073741824.0},
                                                                    {"tb", 1099511627776.0},
                                                                    {"kib", 1024.0},
                                                                    {"mib", 1048576.0},
                                                                    {"gib", 1073741824.0},
                                                                    {"tib", 1099511627776.0}};
  HX_ASSIGN_OR_RETURN(double v, Scaled(text, units, "e.g. 32GB, 80 GiB, 512MB"));
  if (v < 0 || v > 9e18) return InvalidArgument("size out of range: '" + text + "'");
  return static_cast<int64_t>(std::llround(v));
}

StatusOr<double> ParseFlops(const std::string& text) {
  static const std::vector<std::pair<std::string, double>> units = {
      {"", 1},           {"flops", 1},     {"flop/s", 1},     {"gflops", 1e9},
      {"gflop/s", 1e9},  {"tflops", 1e12}, {"tflop/s", 1e12}, {"pflops", 1e15},
      {"pflop/s", 1e15}, {"g", 1e9},       {"t", 1e12}};
  return Scaled(text, units, "e.g. 15.7 TFLOPS, 800 GFLOPS");
}

std::string FormatBandwidth(double bytes_per_s) {
  static const char* const units[] = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s"};
  if (std::isinf(bytes_per_s)) return "inf";
  return Format(bytes_per_s, units, 5, 1000.0);
}

std::string FormatSeconds(double seconds) {
  if (std::isinf(seconds)) return "inf";
  char buf[64];
  double a = std::fabs(seconds);
  if (a == 0) return "0 s";
  if (a < 1e-6)
    std::snprintf(buf, sizeof(buf), "%.4g ns", seconds * 1e9);
  else if (a < 1e-3)
    std::snprintf(buf, sizeof(buf), "%.4g us", seconds * 1e6);
  else if (a < 1)
    std::snprintf(buf, sizeof(buf), "%.4g ms", seconds * 1e3);
  else
    std::snprintf(buf, sizeof(buf), "%.4g s", seconds);
  return buf;
}

std::string FormatBytes(int64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  return Format(static_cast<double>(bytes), units, 5, 1024.0);
}

std::string FormatFlops(double flops) {
  static const char* const units[] = {"FLOP/s",  "KFLOP/s", "MFLOP/s",
                                      "GFLOP/s", "TFLOP/s", "PFLOP/s"};
  return Format(flops, units, 6, 1000.0);
}

}  // namespace hx::hw
