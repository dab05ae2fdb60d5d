#pragma once
// Numbers in human output: fixed-point with `decimals` digits ("12.345"), but scientific notation
// ("1.235e+300") once the magnitude reaches kFixedLimit, so a huge time or size never prints as a
// 300-digit number. Infinity and NaN print as "inf" and "nan".
#include <cmath>
#include <cstdio>
#include <string>

namespace hx {

inline constexpr double kFixedLimit = 1e9;

inline std::string FormatNumber(double v, int decimals = 3) {
  char buf[64];
  if (std::isfinite(v) && std::fabs(v) >= kFixedLimit)
    std::snprintf(buf, sizeof buf, "%.*e", decimals, v);
  else
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace hx
