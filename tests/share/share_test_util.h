#pragma once
// Helpers for the share tests: the ParvaGPU data set and hand-made profiles.
#include <string>
#include <vector>

#include "hexplan/share/planner.h"
#include "testing/test_paths.h"

namespace hx::share::testing {

inline std::string ParvaDir() { return hx::testing::SharedDataDir() + "/sharing/parvagpu"; }

inline ShareProblem Scenario(const std::string& k, const std::string& gpu = "a100-80gb") {
  auto profiles = ReadProfileDir(ParvaDir() + "/prof_data");
  HX_CHECK(profiles.ok());
  std::vector<std::string> models;
  for (const auto& p : *profiles) models.push_back(p.model);
  auto services = ReadSloScenario(ParvaDir() + "/SLO/SLO_req_rate.csv",
                                  ParvaDir() + "/SLO/SLO_latency.csv", k, models);
  HX_CHECK(services.ok());
  auto problem = MakeProblem(*GetGpuModel(gpu), *services, *profiles);
  HX_CHECK(problem.ok());
  return *problem;
}

// A profile whose throughput grows with size and batch: per process `per_gpc * gpcs * batch /
// (batch + 4)` samples/s at latency `batch * 2 / gpcs + processes` ms.
inline ServiceProfile MadeUpProfile(const std::string& model, double per_gpc) {
  ServiceProfile p;
  p.model = model;
  p.source = model + ".json";
  for (int gpcs : {1, 2, 3, 4, 7}) {
    for (int batch : {1, 2, 4, 8, 16}) {
      for (int procs = 1; procs <= 3; ++procs) {
        ProfilePoint q;
        q.gpcs = gpcs;
        q.batch = batch;
        q.processes = procs;
        q.throughput = procs * per_gpc * gpcs * batch / (batch + 4.0) / (1 + 0.3 * (procs - 1));
        q.latency_ms = batch * 2.0 / gpcs + procs;
        p.points.push_back(q);
      }
    }
  }
  return p;
}

}  // namespace hx::share::testing
