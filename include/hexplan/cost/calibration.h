#pragma once
// Fits the roofline's efficiency factors to a profile: per device model, the compute and memory
// efficiencies that make max(FLOPs/(peak*ec), bytes/(bw*em)) / clock_scale + launch closest to the
// profiled times of the ops the profile covers (least squares on relative errors).

#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/cost/profile.h"
#include "hexplan/graph/graph.h"
#include "hexplan/hw/cluster.h"

namespace hx::cost {

struct CalibrationOptions {
  int max_iterations = 100;  // alternating classify / refit rounds per starting point
  // Profile entries keyed by device kind or "*" describe no particular model: ignored unless true.
  bool use_kind_entries = false;
  Status Validate() const;
};

struct ModelCalibration {
  std::string model;
  Efficiency efficiency;            // the fitted factors (a side with no ops keeps its default)
  int num_ops = 0;                  // profiled (op, device) samples used
  int compute_bound_ops = 0;        // samples the fit explains by the compute term
  int memory_bound_ops = 0;         // ... by the memory term
  double rms_relative_error = 0.0;  // of the fitted model over the samples
};

// Fits every device model of `cluster` that has profiled ops with FLOPs or bytes in `graph`, stores
// the factors in options->model_efficiency, and returns one entry per fitted model.
StatusOr<std::vector<ModelCalibration>> Calibrate(const graph::Graph& graph,
                                                  const hw::Cluster& cluster,
                                                  const Profile& profile, CostModelOptions* options,
                                                  const CalibrationOptions& calibration = {});

}  // namespace hx::cost
