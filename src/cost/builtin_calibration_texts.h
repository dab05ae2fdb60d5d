#pragma once
// The text of data/calibration/*.yaml, compiled into the library: CMake writes
// builtin_calibration_texts.cc from the files (CMakeLists.txt) and reconfigures when
// one of them changes.

#include <vector>

namespace hx::cost::internal {

struct CalibrationText {
  const char* file;  // "V100-SXM2-32GB.yaml"
  const char* yaml;
};

const std::vector<CalibrationText>& BuiltinCalibrationTexts();

}  // namespace hx::cost::internal
