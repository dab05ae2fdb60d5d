#pragma once
// The order of `auto`'s members (auto_planner.cc), apart for the tests.

#include <string>
#include <vector>

#include "hexplan/plan/plan.h"
#include "hexplan/sim/simulator.h"

namespace hx::place {

// The fast planners in the order `auto` runs them; `hybrid`: the cluster has CPUs and GPUs.
std::vector<std::string> AutoFastOrder(bool hybrid);

// How many of AutoFastOrder's first members are cheap (about linear in the ops: single, DeepPlan
// and HEFT; on a CPU+GPU cluster single, HEFT and PEFT): after them, a load-bound run gives
// SortingHat its share of the time before the other fast members.
size_t AutoCheapMembers();

// True when `plan`, simulated in `sim`, is bound by loading weights: the weight loads and
// forwards on its critical path take at least half of the makespan (the OpenLLaMA cases of
// SortingHat's Fig. 9; not a stacked LSTM whose critical path is small ops and activations).
bool LoadBound(const plan::Plan& plan, const sim::SimResult& sim);

// The registered exact planners (of `registered`) in the order they get the time left, after the
// fast round won by `fast_winner`, whose plan is `load_bound` (LoadBound) or not.
std::vector<std::string> AutoExactOrder(const std::vector<std::string>& registered,
                                        const std::string& fast_winner, bool load_bound);

}  // namespace hx::place
