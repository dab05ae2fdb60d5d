// libFuzzer target: ReadEfficientMipJson on arbitrary text must return a Status, never crash; a
// workload that reads must hold a valid graph, and then the cost layer's import of the same file
// (graph, profile and the cluster it implies) must return a Status too.

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "hexplan/cost/workload.h"
#include "hexplan/graph/efficientmip_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 16)) return 0;
  static const hx::fuzz::TempFile file("efficientmip.json");
  const std::string text = hx::fuzz::ToString(data, size);
  (void)hx::graph::LooksLikeEfficientMipJson(text);
  auto workload = hx::graph::ReadEfficientMipJson(text, "fuzz.json");
  if (!workload.ok()) return 0;
  if (!workload->graph.Validate().ok()) __builtin_trap();
  auto imported = hx::cost::ReadEfficientMipWorkload(file.Write(text));
  (void)imported;
  return 0;
}
