#pragma once
// Import of `nvidia-smi topo -m` (the GPU/NIC matrix of X, NV#, PIX, PXB, PHB, NODE, SYS) plus the
// GPU names of `nvidia-smi --query-gpu=name --format=csv`, so a user describes their own server
// with one command: `hexplan topo --from-nvidia-smi topo.txt --gpu-names names.csv`.
//
// Model (docs/hardware.md): one node; one root complex per CPU socket (GPUs grouped by NUMA
// affinity, else by non-SYS relationships); GPUs related by PIX/PXB (directly or through a common
// NIC) share a PCIe switch behind one bus; NV# pairs get NVLink links of # bricks, or one NVSwitch
// when a GPU's NV counts add up to more links than its generation has.

#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/hw/cluster.h"

namespace hx::hw {

struct NvidiaSmiImportOptions {
  // Contents of `nvidia-smi --query-gpu=name --format=csv` (header optional); empty: every GPU is
  // `default_model`.
  std::string gpu_names_csv;
  std::string gpu_names_source = "gpu names";
  std::string default_model = "A100-SXM4-80GB";
  std::string node = "node0";
  Status Validate() const;
};

// True when `text` looks like `nvidia-smi topo -m` output (a header row starting with GPU0).
bool LooksLikeNvidiaSmiTopo(const std::string& text);

// The GPU names, one per GPU in index order.
StatusOr<std::vector<std::string>> ParseGpuNamesCsv(const std::string& text,
                                                    const std::string& source_name);

// Builds and finalizes the cluster. Errors name `source_name` and the line.
StatusOr<Cluster> ImportNvidiaSmiTopo(const std::string& topo_text, const std::string& source_name,
                                      const NvidiaSmiImportOptions& options);

}  // namespace hx::hw
