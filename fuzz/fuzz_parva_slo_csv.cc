// libFuzzer target: ParvaGPU's SLO files (request rates, then a NUL byte, then latencies) read with
// CountSloScenarios and ReadSloScenario must return a Status, never crash. The readers take paths:
// the two texts go through temp files.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "hexplan/share/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 16)) return 0;
  static const hx::fuzz::TempFile rates_file("SLO_req_rate.csv");
  static const hx::fuzz::TempFile latency_file("SLO_latency.csv");
  // ParvaGPU's eleven models, in the alphabetical order of its profile files.
  static const std::vector<std::string> models = {
      "bert",      "densenet121", "densenet169", "densenet201", "inceptionv3", "mobilenetv2",
      "resnet101", "resnet152",   "resnet50",    "vgg16",       "vgg19"};
  auto [rates, latency] = hx::fuzz::SplitAtNul(hx::fuzz::ToString(data, size));
  const std::string& rates_path = rates_file.Write(rates);
  const std::string& latency_path = latency_file.Write(latency);
  auto count = hx::share::CountSloScenarios(rates_path);
  const int scenarios = count.ok() ? *count : 1;
  for (int s = 1; s <= scenarios && s <= 8; ++s) {
    (void)hx::share::ReadSloScenario(rates_path, latency_path, "S" + std::to_string(s), models);
  }
  return 0;
}
