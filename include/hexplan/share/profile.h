#pragma once
// Profiles of DNN services on MIG instances with MPS, and the SLO scenarios that ask for them.
//
// Two profile formats (docs/sharing.md):
//  - ParvaGPU's CSV (`Mig instance,Batch size,Workload Number,Throughput,Latency`): throughput per
//    MPS process in samples/s, latency per batch in seconds, `0,0` = not measured (skipped).
//  - hexplan's JSON: {"model": NAME, "points": [{"gpcs", "batch", "processes", "throughput",
//    "latency_ms"}]} with throughput the whole segment's samples/s (all processes together).

#include <string>
#include <vector>

#include "hexplan/core/status.h"

namespace hx::share {

// One measured point: `processes` MPS processes of one model, each running batches of `batch`, in
// a MIG instance of `gpcs` GPCs.
struct ProfilePoint {
  int gpcs = 0;
  int batch = 0;
  int processes = 0;
  double throughput = 0;  // samples/s of the whole segment (all processes)
  double latency_ms = 0;  // per batch
};

struct ServiceProfile {
  std::string model;
  std::string source;  // the file it came from
  std::vector<ProfilePoint> points;
};

// A service to plan: a model with its request rate and SLO latency.
struct Service {
  std::string name;  // the service's unique id: its model, or `model#k` (AssignServiceIds)
  double rate = 0;   // requests/s
  double slo_ms = 0;
  std::string model;  // the model whose profile serves it; empty: `name`
  const std::string& Model() const { return model.empty() ? name : model; }
};

// Gives every service a unique id: a model served once keeps its name; a model served n > 1 times
// gives `model#1` .. `model#n` in order (e.g. `bert#2` when --scale repeats a scenario).
void AssignServiceIds(std::vector<Service>* services);

StatusOr<ServiceProfile> ReadParvaProfileCsv(const std::string& path);
StatusOr<ServiceProfile> ReadHexplanProfileJson(const std::string& path);
// Every *.csv (ParvaGPU) and *.json (hexplan) file of `dir`, sorted by model name.
StatusOr<std::vector<ServiceProfile>> ReadProfileDir(const std::string& dir);
// hexplan's JSON text of a profile (round-trips through ReadHexplanProfileJson).
std::string ProfileToJson(const ServiceProfile& profile);

// ParvaGPU's SLO files: one row per scenario, one column per model (in `models` order, which is the
// alphabetical order of the profile files), `N/A` = the model is not in the scenario. `scenario` is
// "S3", "s3" or "3" (1-based).
StatusOr<std::vector<Service>> ReadSloScenario(const std::string& rates_path,
                                               const std::string& latency_path,
                                               const std::string& scenario,
                                               const std::vector<std::string>& models);
// Number of rows (scenarios) in an SLO file.
StatusOr<int> CountSloScenarios(const std::string& path);

}  // namespace hx::share
