#pragma once
// The `place --json` object (also each entry of `compare --json`'s `results`) and the shared
// planner options of `place` and `compare`.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/planning_inputs.h"
#include "hexplan/place/planner.h"

namespace hx::cli {

// Adds --time-limit, --seed, --coarsen, --fusion-rules, --alpha, --gap, --threads, --q, --ndom,
// --submodel-time-limit and --ablation, bound to `options`.
void AddPlannerOptions(CLI::App* app, place::PlannerOptions& options);

// Fields: algo, model, cluster, status, latency_ms, lower_bound_ms, lower_bound_ratio,
// planning_time_s, estimate_ms?, model_objective_ms?, bound_ms?, gap?, devices[{name, compute_ms,
// peak_memory_bytes, memory_capacity_bytes}], transfer_bytes.
nlohmann::json PlacementJson(const place::PlacementOutcome& outcome, const PlanningInputs& inputs);

}  // namespace hx::cli
