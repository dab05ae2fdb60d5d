#include "hexplan/hw/presets.h"

#include <sys/stat.h>

#include <exception>
#include <string>

#include "hexplan/core/file_util.h"
#include "hexplan/hw/nvidia_smi_topo.h"
#include "hw/preset_builders.h"

namespace hx::hw {

const std::vector<PresetInfo>& ClusterPresets() {
  static const std::vector<PresetInfo> presets = {
      {"sortinghat-v100",
       "4 x V100-32GB (DGX Station style): two PCIe gen3 buses each shared by two GPUs; NVLink "
       "2-way GPU1-GPU4 and GPU2-GPU3, 1-way the others",
       "SortingHat Table 2, Fig. 8(a), Sec. 2"},
      {"sortinghat-v100-hetero",
       "sortinghat-v100 with GPU2 and GPU3 at 135 MHz against 1500 MHz (clock_scale 0.09)",
       "SortingHat Table 2, Fig. 8(b), Sec. 5"},
      {"sortinghat-a6000", "3 x RTX A6000 on PCIe gen4, one 4-way NVLink bridge GPU2-GPU3",
       "SortingHat Table 2, Fig. 8(c)"},
      {"p4d-24xlarge", "AWS p4d.24xlarge: 8 x A100-40GB on NVSwitch, four PCIe gen4 buses",
       "SortingHat Sec. 6; AWS EC2 P4 instance page"},
      {"p4de-24xlarge", "AWS p4de.24xlarge: 8 x A100-80GB on NVSwitch, four PCIe gen4 buses",
       "ParvaGPU Sec. 5; AWS EC2 P4 instance page"},
      {"dgx-a100", "NVIDIA DGX A100: 8 x A100-80GB, NVSwitch (12 NVLinks per GPU), PCIe gen4",
       "NVIDIA DGX A100 user guide"},
      {"dgx-h100", "NVIDIA DGX H100: 8 x H100 SXM5, NVSwitch (18 NVLinks per GPU), PCIe gen5",
       "NVIDIA DGX H100 user guide"},
      {"dgx-a100:gpus=4", "the first N (1-8) GPUs of a DGX A100 (also dgx-h100:gpus=N)",
       "NVIDIA DGX A100 / H100 user guides"},
      {"moirai-inter",
       "RTX 2080 Ti, T4, P4, RTX 3060 Ti in four servers over InfiniBand, measured pairwise "
       "bandwidth",
       "MOIRAI Table III (inter-server)"},
      {"moirai-intra", "2 x V100 + 2 x P100 over NVLink + NVSwitch, measured pairwise bandwidth",
       "MOIRAI Table III (intra-server)"},
      {"chrion-1080ti", "GTX 1080 Ti + 12-core Xeon E5-2685 v3 as one CPU device",
       "Chrion Table 4"},
      {"asym:S8",
       "AsymGroup S<k>, k = 0..16: 16 A100 nodes, k with 2 GPUs and 16-k with 1 (asym:S0 ... "
       "asym:S16)",
       "AsymGroup Table 1, Sec. 5"},
      {"asym:nodes=4", "AsymGroup generator: N single-A100 nodes (asym:nodes=N)",
       "AsymGroup Sec. 5"},
      {"asym:gpus=1,1,2,3,3", "AsymGroup generator: A100s per node (asym:gpus=a,b,c,...)",
       "AsymGroup Fig. 4"},
      {"local-cpu",
       "this machine's CPU cores, detected; local-cpu:groups=K splits them into K core groups "
       "(cpu:0-1 style), local-cpu:cores=N overrides the detected count",
       "sysconf(_SC_NPROCESSORS_ONLN)"},
  };
  return presets;
}

namespace {

// N of `dgx-a100:gpus=N` / `dgx-h100:gpus=N`: 1..8.
StatusOr<int> DgxGpuCount(const std::string& name) {
  const std::string value = name.substr(name.find('=') + 1);
  int gpus = 0;
  size_t used = 0;
  try {
    gpus = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || gpus < 1 || gpus > 8)
    return InvalidArgument("cluster '" + name + "': gpus must be an integer 1..8, got '" + value +
                           "'");
  return gpus;
}

}  // namespace

StatusOr<Cluster> BuildPreset(const std::string& name) {
  Cluster c;
  if (name == "sortinghat-v100") {
    c = BuildSortingHatV100(false);
  } else if (name == "sortinghat-v100-hetero") {
    c = BuildSortingHatV100(true);
  } else if (name == "sortinghat-a6000") {
    c = BuildSortingHatA6000();
  } else if (name == "p4d-24xlarge") {
    c = BuildP4d(false);
  } else if (name == "p4de-24xlarge") {
    c = BuildP4d(true);
  } else if (name == "dgx-a100") {
    c = BuildDgxA100();
  } else if (name == "dgx-h100") {
    c = BuildDgxH100();
  } else if (name.rfind("dgx-a100:gpus=", 0) == 0 || name.rfind("dgx-h100:gpus=", 0) == 0) {
    HX_ASSIGN_OR_RETURN(int gpus, DgxGpuCount(name));
    c = name.rfind("dgx-a100", 0) == 0 ? BuildDgxA100(gpus) : BuildDgxH100(gpus);
  } else if (name == "moirai-inter") {
    c = BuildMoiraiInter();
  } else if (name == "moirai-intra") {
    c = BuildMoiraiIntra();
  } else if (name == "chrion-1080ti") {
    c = BuildChrion1080Ti();
  } else if (name.rfind("asym:", 0) == 0) {
    HX_ASSIGN_OR_RETURN(c, BuildAsymPreset(name.substr(5)));
  } else if (name == "local-cpu" || name.rfind("local-cpu:", 0) == 0) {
    HX_ASSIGN_OR_RETURN(c, BuildLocalCpu(name.size() > 10 ? name.substr(10) : ""));
  } else {
    std::string known;
    for (const PresetInfo& p : ClusterPresets()) known += (known.empty() ? "" : ", ") + p.name;
    return NotFound("unknown cluster '" + name +
                    "': not a file and not a preset (presets: " + known + ")");
  }
  Status status = c.Finalize();
  if (!status.ok()) return Internal("preset '" + name + "' is invalid: " + status.message());
  return c;
}

StatusOr<Cluster> ReadClusterFile(const std::string& path, Logger* logger) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  std::string ext = FileExtension(path);
  if (ext == "txt" || ext == "topo" || LooksLikeNvidiaSmiTopo(text)) {
    NvidiaSmiImportOptions options;
    HX_ASSIGN_OR_RETURN(Cluster cluster, ImportNvidiaSmiTopo(text, path, options));
    LogTo(logger, LogLevel::kWarning,
          path + ": a topology capture does not name the GPUs; every GPU is taken as " +
              options.default_model +
              " (to plan for other GPUs, describe them in a cluster YAML: docs/hardware.md)");
    return cluster;
  }
  return ReadClusterYaml(text, path);
}

StatusOr<Cluster> LoadCluster(const std::string& spec, Logger* logger) {
  struct stat st;
  if (::stat(spec.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return ReadClusterFile(spec, logger);
  bool looks_like_file = spec.find('/') != std::string::npos || FileExtension(spec) == "yaml" ||
                         FileExtension(spec) == "yml" || FileExtension(spec) == "json";
  if (looks_like_file) return NotFound(spec + ": cannot open cluster file");
  return BuildPreset(spec);
}

}  // namespace hx::hw
