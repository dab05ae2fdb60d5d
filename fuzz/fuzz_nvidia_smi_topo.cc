// libFuzzer target: ImportNvidiaSmiTopo on arbitrary text must return a Status, never crash. The
// input is the `nvidia-smi topo -m` capture, then optionally a NUL byte and the GPU names CSV
// (`nvidia-smi --query-gpu=name --format=csv`), as the seeds in fuzz/corpus/nvidia_smi_topo/ are.

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "hexplan/hw/nvidia_smi_topo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 16)) return 0;
  auto [topo, names] = hx::fuzz::SplitAtNul(hx::fuzz::ToString(data, size));
  (void)hx::hw::LooksLikeNvidiaSmiTopo(topo);
  (void)hx::hw::ParseGpuNamesCsv(names, "names.csv");
  hx::hw::NvidiaSmiImportOptions options;
  options.gpu_names_csv = names;
  options.gpu_names_source = "names.csv";
  auto cluster = hx::hw::ImportNvidiaSmiTopo(topo, "topo.txt", options);
  (void)cluster;
  return 0;
}
