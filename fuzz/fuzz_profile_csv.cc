// libFuzzer target: Profile::FromCsv on arbitrary text must return a Status, never crash. A profile
// that reads must write CSV (its JSON-only sections aside, which CSV cannot hold).

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "hexplan/cost/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 16)) return 0;
  auto profile = hx::cost::Profile::FromCsv(hx::fuzz::ToString(data, size), "fuzz.csv");
  if (profile.ok()) (void)profile->ToCsv();
  return 0;
}
