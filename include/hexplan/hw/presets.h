#pragma once
// Clusters built from the papers' text and tables, and readers for user-written files.

#include <string>
#include <vector>

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
// or a path to a YAML/JSON cluster file, or an `nvidia-smi topo -m` capture (.txt).
StatusOr<Cluster> LoadCluster(const std::string& spec);
StatusOr<Cluster> BuildPreset(const std::string& name);
StatusOr<Cluster> ReadClusterYaml(const std::string& text, const std::string& source_name);
StatusOr<Cluster> ReadClusterFile(const std::string& path);

}  // namespace hx::hw
