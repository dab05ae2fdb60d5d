// libFuzzer target: ParseNpy on arbitrary bytes must return a Status, never crash. A tensor that
// parses must write .npy bytes that parse back to the same dtype and shape.

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "hexplan/exec/tensor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 16)) return 0;
  auto tensor = hx::exec::ParseNpy(hx::fuzz::ToString(data, size), "fuzz.npy");
  if (tensor.ok()) {
    auto back = hx::exec::ParseNpy(hx::exec::NpyBytes(*tensor), "back.npy");
    if (!back.ok() || back->dtype != tensor->dtype || back->shape != tensor->shape) {
      __builtin_trap();
    }
  }
  return 0;
}
