// libFuzzer target: Profile::FromJson on arbitrary text must return a Status, never crash. A
// profile that reads must write JSON that reads back to the same number of entries.

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "hexplan/cost/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 16)) return 0;
  auto profile = hx::cost::Profile::FromJson(hx::fuzz::ToString(data, size), "fuzz.json");
  if (profile.ok()) {
    auto back = hx::cost::Profile::FromJson(profile->ToJson(), "back.json");
    if (!back.ok() || back->num_entries() != profile->num_entries()) __builtin_trap();
  }
  return 0;
}
