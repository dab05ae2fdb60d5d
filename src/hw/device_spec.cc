// The table of common parts. Every figure comes from the vendor's datasheet or architecture
// whitepaper named in docs/hardware.md ("Device specs"). GPU FLOP/s are at boost clock; fp16/bf16
// are dense tensor-core rates with fp32 accumulation where the part has tensor cores, else 0 (the
// fp32 rate is used). CPU FLOP/s are cores x base clock x fp32 FLOP per cycle (2 FMA units x 8
// lanes x 2 for AVX2; AVX-512 parts are listed with their AVX2 rate). Launch overhead is not a
// datasheet figure: 5 us per kernel for GPUs (a typical CUDA launch plus synchronisation), 1 us for
// CPUs.

#include "hexplan/hw/device_spec.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace hx::hw {
namespace {

constexpr double kT = 1e12;
constexpr double kG = 1e9;
constexpr int64_t kGiB = int64_t{1} << 30;
constexpr double kGpuLaunch = 5e-6;
constexpr double kCpuLaunch = 1e-6;

struct Entry {
  DeviceSpec spec;
  std::vector<std::string> aliases;
};

DeviceSpec Gpu(const std::string& model, double fp32, double fp16, double bf16, double bw,
               int64_t mem_gib, int sms) {
  DeviceSpec s;
  s.model = model;
  s.peak_flops_fp32 = fp32;
  s.peak_flops_fp16 = fp16;
  s.peak_flops_bf16 = bf16;
  s.memory_bandwidth_bytes_per_s = bw;
  s.memory_bytes = mem_gib * kGiB;
  s.launch_overhead_s = kGpuLaunch;
  s.cores = sms;
  return s;
}

// cores x GHz x 32 fp32 FLOP/cycle (two 256-bit FMA units).
DeviceSpec Cpu(const std::string& model, int cores, double base_ghz, double mem_bw) {
  DeviceSpec s;
  s.model = model;
  s.peak_flops_fp32 = cores * base_ghz * kG * 32.0;
  s.memory_bandwidth_bytes_per_s = mem_bw;
  s.memory_bytes = 0;  // host DRAM: the cluster sets it
  s.launch_overhead_s = kCpuLaunch;
  s.cores = cores;
  return s;
}

const std::vector<Entry>& Table() {
  static const std::vector<Entry> table = {
      // NVIDIA Tesla V100 datasheet (2020) and Volta whitepaper.
      {Gpu("V100-SXM2-16GB", 15.7 * kT, 125 * kT, 0, 900 * kG, 16, 80),
       {"v100-16gb", "tesla v100-sxm2-16gb"}},
      {Gpu("V100-SXM2-32GB", 15.7 * kT, 125 * kT, 0, 900 * kG, 32, 80),
       {"v100", "v100-32gb", "v100-dgxs-32gb", "tesla v100-sxm2-32gb", "tesla v100-dgxs-32gb"}},
      {Gpu("V100-PCIe-16GB", 14.0 * kT, 112 * kT, 0, 900 * kG, 16, 80),
       {"v100-pcie", "tesla v100-pcie-16gb"}},
      {Gpu("V100-PCIe-32GB", 14.0 * kT, 112 * kT, 0, 900 * kG, 32, 80),
       {"tesla v100-pcie-32gb", "v100s-pcie-32gb"}},
      // NVIDIA Tesla P100 datasheet (2016); fp16 is the packed half2 rate (no tensor cores).
      {Gpu("P100-SXM2-16GB", 10.6 * kT, 21.2 * kT, 0, 732 * kG, 16, 56),
       {"p100", "tesla p100-sxm2-16gb"}},
      {Gpu("P100-PCIe-16GB", 9.3 * kT, 18.7 * kT, 0, 732 * kG, 16, 56),
       {"p100-pcie", "tesla p100-pcie-16gb"}},
      // NVIDIA T4 datasheet (2019).
      {Gpu("T4", 8.1 * kT, 65 * kT, 0, 320 * kG, 16, 40), {"tesla t4"}},
      // NVIDIA Tesla P4 datasheet (2016): no fast fp16.
      {Gpu("P4", 5.5 * kT, 0, 0, 192 * kG, 8, 20), {"tesla p4"}},
      // NVIDIA Turing architecture whitepaper, Table 1 (reference RTX 2080 Ti): fp16 tensor with
      // fp32 accumulate 53.8 TFLOPS.
      {Gpu("RTX-2080-Ti", 13.4 * kT, 53.8 * kT, 0, 616 * kG, 11, 68),
       {"2080ti", "rtx 2080 ti", "geforce rtx 2080 ti"}},
      // NVIDIA Ampere GA102 whitepaper / GeForce RTX 3060 Ti specifications: 4864 CUDA cores at
      // 1.665 GHz; fp16 tensor with fp32 accumulate is half the fp16-accumulate 64.8 TFLOPS.
      {Gpu("RTX-3060-Ti", 16.2 * kT, 32.4 * kT, 32.4 * kT, 448 * kG, 8, 38),
       {"3060ti", "rtx 3060 ti", "geforce rtx 3060 ti"}},
      // NVIDIA GeForce GTX 1080 Ti specifications / Pascal GP102: no fast fp16.
      {Gpu("GTX-1080-Ti", 11.3 * kT, 0, 0, 484 * kG, 11, 28),
       {"1080ti", "gtx 1080 ti", "geforce gtx 1080 ti", "rtx 1080ti"}},
      // NVIDIA RTX A6000 datasheet (2022): 38.7 TFLOPS fp32, 309.7 TFLOPS tensor with sparsity.
      {Gpu("RTX-A6000", 38.7 * kT, 154.8 * kT, 154.8 * kT, 768 * kG, 48, 84),
       {"a6000", "rtx a6000", "nvidia rtx a6000"}},
      // NVIDIA A100 Tensor Core GPU datasheet (2021), SXM4 columns.
      {Gpu("A100-SXM4-40GB", 19.5 * kT, 312 * kT, 312 * kT, 1555 * kG, 40, 108),
       {"a100-40gb", "a100", "nvidia a100-sxm4-40gb"}},
      {Gpu("A100-SXM4-80GB", 19.5 * kT, 312 * kT, 312 * kT, 2039 * kG, 80, 108),
       {"a100-80gb", "nvidia a100-sxm4-80gb"}},
      // NVIDIA H100 Tensor Core GPU datasheet (2023), SXM column (dense tensor rates).
      {Gpu("H100-SXM5-80GB", 67 * kT, 989.4 * kT, 989.4 * kT, 3350 * kG, 80, 132),
       {"h100", "h100-sxm", "nvidia h100 80gb hbm3"}},
      // NVIDIA H200 Tensor Core GPU datasheet (2024), SXM column.
      {Gpu("H200-SXM-141GB", 67 * kT, 989.4 * kT, 989.4 * kT, 4800 * kG, 141, 132),
       {"h200", "nvidia h200"}},
      // Intel ARK: Xeon E5-2698 v4 (20 cores, 2.2 GHz, 4 x DDR4-2400 = 76.8 GB/s).
      {Cpu("Xeon E5-2698 v4", 20, 2.2, 76.8 * kG), {"e5-2698v4", "e5-2698 v4"}},
      // Intel ARK: Xeon E5-2685 v3 (12 cores, 2.6 GHz, 4 x DDR4-2133 = 68 GB/s).
      {Cpu("Xeon E5-2685 v3", 12, 2.6, 68 * kG), {"e5-2685v3", "e5-2685 v3"}},
      // AMD EPYC 7262 product page (8 cores, 3.2 GHz, 8 x DDR4-3200 = 204.8 GB/s).
      {Cpu("EPYC 7262", 8, 3.2, 204.8 * kG), {"epyc7262", "amd epyc 7262"}},
      // A generic x86 core: 2.5 GHz AVX2 (80 GFLOP/s fp32), 10 GB/s of DRAM bandwidth.
      {Cpu("cpu-core", 1, 2.5, 10 * kG), {"generic-cpu", "cpu"}},
  };
  return table;
}

// Lower case, without spaces, dashes, underscores and the vendor words nvidia-smi prints.
std::string Normalize(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* word : {"nvidia", "tesla", "geforce", "intel(r)", "(r)"}) {
    for (size_t pos; (pos = s.find(word)) != std::string::npos;) s.erase(pos, std::strlen(word));
  }
  std::string out;
  for (char c : s) {
    if (c != ' ' && c != '-' && c != '_' && c != '(' && c != ')') out.push_back(c);
  }
  return out;
}

}  // namespace

double DeviceSpec::PeakFlops(const std::string& dtype) const {
  if ((dtype == "fp16" || dtype == "float16") && peak_flops_fp16 > 0) return peak_flops_fp16;
  if ((dtype == "bf16" || dtype == "bfloat16") && peak_flops_bf16 > 0) return peak_flops_bf16;
  return peak_flops_fp32;
}

const std::vector<DeviceSpec>& KnownDeviceSpecs() {
  static const std::vector<DeviceSpec> specs = [] {
    std::vector<DeviceSpec> out;
    for (const Entry& e : Table()) out.push_back(e.spec);
    return out;
  }();
  return specs;
}

std::optional<DeviceSpec> FindDeviceSpec(const std::string& model) {
  std::string key = Normalize(model);
  if (key.empty()) return std::nullopt;
  for (const Entry& e : Table()) {
    if (Normalize(e.spec.model) == key) return e.spec;
    for (const std::string& alias : e.aliases) {
      if (Normalize(alias) == key) return e.spec;
    }
  }
  return std::nullopt;
}

std::optional<DeviceSpec> MatchGpuName(const std::string& name) {
  if (auto exact = FindDeviceSpec(name)) return exact;
  std::string key = Normalize(name);
  auto has = [&](const char* s) { return key.find(s) != std::string::npos; };
  const char* model = nullptr;
  if (has("h200"))
    model = "H200-SXM-141GB";
  else if (has("h100"))
    model = "H100-SXM5-80GB";
  else if (has("a100"))
    model = has("80gb") ? "A100-SXM4-80GB" : "A100-SXM4-40GB";
  else if (has("a6000"))
    model = "RTX-A6000";
  else if (has("v100")) {
    bool pcie = has("pcie");
    bool big = has("32gb");
    model = pcie ? (big ? "V100-PCIe-32GB" : "V100-PCIe-16GB")
                 : (big ? "V100-SXM2-32GB" : "V100-SXM2-16GB");
  } else if (has("p100"))
    model = has("pcie") ? "P100-PCIe-16GB" : "P100-SXM2-16GB";
  else if (has("2080ti"))
    model = "RTX-2080-Ti";
  else if (has("3060ti"))
    model = "RTX-3060-Ti";
  else if (has("1080ti"))
    model = "GTX-1080-Ti";
  else if (has("t4"))
    model = "T4";
  else if (has("p4"))
    model = "P4";
  if (model == nullptr) return std::nullopt;
  return FindDeviceSpec(model);
}

DeviceSpec CpuCoreGroupSpec(const DeviceSpec& per_core, int cores) {
  DeviceSpec s = per_core;
  s.peak_flops_fp32 = per_core.peak_flops_fp32 * cores;
  s.peak_flops_fp16 = per_core.peak_flops_fp16 * cores;
  s.peak_flops_bf16 = per_core.peak_flops_bf16 * cores;
  s.memory_bandwidth_bytes_per_s = per_core.memory_bandwidth_bytes_per_s * cores;
  s.cores = cores;
  return s;
}

DeviceSpec CpuCoresOf(const DeviceSpec& chip, int cores) {
  if (chip.cores <= 0 || cores <= 0) return chip;
  DeviceSpec s = chip;
  double f = static_cast<double>(cores) / chip.cores;
  s.peak_flops_fp32 = chip.peak_flops_fp32 * f;
  s.peak_flops_fp16 = chip.peak_flops_fp16 * f;
  s.peak_flops_bf16 = chip.peak_flops_bf16 * f;
  // Memory bandwidth is shared by the socket; a group of its cores can still draw all of it.
  s.cores = cores;
  return s;
}

}  // namespace hx::hw
