#pragma once
// Published profiled workloads imported as graph + profile (+ the implicit cluster they assume), so
// they can be planned as they are: EfficientMIP JSON, MOIRAI CSV, PipeDream graph.txt.

#include <optional>
#include <string>

#include "hexplan/core/status.h"
#include "hexplan/cost/profile.h"
#include "hexplan/graph/graph.h"
#include "hexplan/hw/cluster.h"

namespace hx::cost {

struct Workload {
  std::string name;
  graph::Graph graph;
  Profile profile;
  std::optional<hw::Cluster> cluster;  // the devices the file describes, when it does
  std::string format;                  // "efficientmip", "moirai", "pipedream"
};

// Detects the format from the extension and contents.
StatusOr<Workload> ReadWorkloadFile(const std::string& path);
StatusOr<Workload> ReadMoiraiCsv(const std::string& path);
StatusOr<Workload> ReadEfficientMipWorkload(const std::string& path);
StatusOr<Workload> ReadPipeDreamGraph(const std::string& path);
bool IsWorkloadFile(const std::string& path);

}  // namespace hx::cost
