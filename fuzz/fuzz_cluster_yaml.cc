// libFuzzer target: ReadClusterYaml on arbitrary text must return a Status, never crash. A cluster
// that reads must be finalized: every device reaches its host memory.

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "hexplan/hw/presets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 16)) return 0;
  auto cluster = hx::hw::ReadClusterYaml(hx::fuzz::ToString(data, size), "fuzz.yaml");
  (void)cluster;
  return 0;
}
