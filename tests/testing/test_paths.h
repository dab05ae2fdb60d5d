#pragma once
// Paths the tests need, fixed at configure time.
#include <string>

namespace hx::testing {
inline std::string SourceDir() { return HX_SOURCE_DIR; }
inline std::string SharedDataDir() { return HX_SHARED_DATA_DIR; }
inline std::string CliPath() { return HX_CLI_PATH; }
}  // namespace hx::testing
