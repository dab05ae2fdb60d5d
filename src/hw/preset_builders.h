#pragma once
// Builders of the preset clusters (presets_*.cc); BuildPreset in presets.cc dispatches to them.
// They return unfinalized clusters.

#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/hw/cluster.h"
#include "hexplan/hw/device_spec.h"

namespace hx::hw {

Cluster BuildSortingHatV100(bool hetero);
Cluster BuildSortingHatA6000();
Cluster BuildP4d(bool eighty_gb);
// gpus: the first 1..8 GPUs of the box (`dgx-a100:gpus=N`, a tensor-parallel group of N).
Cluster BuildDgxA100(int gpus = 8);
Cluster BuildDgxH100(int gpus = 8);
Cluster BuildMoiraiInter();
Cluster BuildMoiraiIntra();
Cluster BuildChrion1080Ti();

// AsymGroup: one A100 node per entry of gpus_per_node.
StatusOr<Cluster> BuildAsymCluster(const std::string& name, const std::vector<int>& gpus_per_node);
// "asym:S8", "asym:nodes=4", "asym:gpus=1,1,2,3,3" (the part after "asym:").
StatusOr<Cluster> BuildAsymPreset(const std::string& args);

// "local-cpu" options: "" or "groups=2", "cores=8,groups=4".
StatusOr<Cluster> BuildLocalCpu(const std::string& args);

}  // namespace hx::hw
