// libFuzzer target: ReadGraphJson on arbitrary text must return a Status, never crash.

#include <cstddef>
#include <cstdint>
#include <string>

#include "hexplan/graph/json_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 16)) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto graph = hx::graph::ReadGraphJson(text, "fuzz.json");
  if (graph.ok()) {
    if (!graph->Validate().ok()) __builtin_trap();
    (void)hx::graph::WriteGraphJson(*graph);
  }
  return 0;
}
