#pragma once
// Clusters built from the papers' text and tables, and readers for user-written files.

#include <string>
#include <vector>

#include "hexplan/core/logger.h"
#include "hexplan/core/status.h"
#include "hexplan/hw/cluster.h"

namespace hx::hw {

struct PresetInfo {
  std::string name;
  std::string description;
  std::string source;  // paper section / table
};
const std::vector<PresetInfo>& ClusterPresets();

// A preset name ("sortinghat-v100", "asym:S3", "asym:nodes=8", "asym:gpus=1,1,2", "local-cpu", ...)
// or a path to a YAML/JSON cluster file, or an `nvidia-smi topo -m` capture (.txt). A capture
// names no GPU models: each GPU is taken as NvidiaSmiImportOptions::default_model, with a warning
// to `logger` (`hexplan topo --from-nvidia-smi FILE --gpu-names NAMES` imports the names too).
StatusOr<Cluster> LoadCluster(const std::string& spec, Logger* logger = nullptr);
StatusOr<Cluster> BuildPreset(const std::string& name);
StatusOr<Cluster> ReadClusterYaml(const std::string& text, const std::string& source_name);
StatusOr<Cluster> ReadClusterFile(const std::string& path, Logger* logger = nullptr);

}  // namespace hx::hw
