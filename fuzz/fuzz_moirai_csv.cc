// libFuzzer target: ReadMoiraiCsv on arbitrary text must return a Status, never crash. A workload
// that reads must hold a valid graph. The reader takes a path: the input goes through a temp file.

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "hexplan/cost/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 16)) return 0;
  static const hx::fuzz::TempFile file("moirai.csv");
  auto workload = hx::cost::ReadMoiraiCsv(file.Write(hx::fuzz::ToString(data, size)));
  if (workload.ok() && !workload->graph.Validate().ok()) __builtin_trap();
  return 0;
}
