// libFuzzer target: ReadParvaProfileCsv (ParvaGPU's per-model MIG/MPS profile) on arbitrary text
// must return a Status, never crash. The reader takes a path: the input goes through a temp file.

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "hexplan/share/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 16)) return 0;
  static const hx::fuzz::TempFile file("model.csv");
  auto profile = hx::share::ReadParvaProfileCsv(file.Write(hx::fuzz::ToString(data, size)));
  if (profile.ok()) (void)hx::share::ProfileToJson(*profile);
  return 0;
}
