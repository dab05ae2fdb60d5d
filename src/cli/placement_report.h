#pragma once
// The `place --json` object (also each entry of `compare --json`'s `results`) and the shared
// planner options of `place` and `compare`.

#include <CLI/CLI.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/planning_inputs.h"
#include "hexplan/core/output_files.h"
#include "hexplan/place/planner.h"

namespace hx::cli {

// The planner flags of `place` and `compare`: the options every planner shares, bound to
// `options`, and each registered planner's own options (from the registry), kept as given.
struct PlannerFlags {
  place::PlannerOptions options;
  std::string coarsen;  // "", "none" or "fusion"
  bool no_warm_start = false;
  double warm = 0.0;                       // --warm: plan for warm runs (PlanRequest::warm)
  std::map<std::string, std::string> own;  // a planner option's flag name -> its text as given
  std::map<std::string, CLI::Option*> own_flags;

  // The shared options with --coarsen, --no-warm-start and --warm applied, and the given planner
  // options (resolved later against the planner that runs).
  Status Apply(place::PlanRequest* request) const;
};

// Adds --time-limit, --seed, --coarsen, --fusion-rules, --cpu-weights-in-place, --gap, --threads,
// --no-warm-start, --warm and every planner's own options, with defaults, bounds and owners in the
// help and a footer listing each planner's options.
void AddPlannerOptions(CLI::App* app, PlannerFlags& flags);

// Checks, before planning, that the solver exports the flags name (--export-lp, --export-mps) can
// be written. They are written while the solver builds its model and kept when the solve fails:
// they are the record for debugging that model.
Status ExpectPlannerOutputs(const PlannerFlags& flags, OutputFiles* outputs);

// Fields: algo, model, cluster, status, latency_ms, lower_bound_ms, lower_bound_ratio,
// planning_time_s, estimate_ms?, model_objective_ms?, bound_ms?, gap?, devices[{name, compute_ms,
// peak_memory_bytes, memory_capacity_bytes}], transfer_bytes, warm, warm_planning?{warm_planned_ms,
// cold_planned_ms?, kept}.
nlohmann::json PlacementJson(const place::PlacementOutcome& outcome, const PlanningInputs& inputs);

}  // namespace hx::cli
