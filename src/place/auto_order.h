#pragma once
// The order of `auto`'s members (auto_planner.cc), apart for the tests.

#include <string>
#include <vector>

#include "hexplan/sim/simulator.h"

namespace hx::place {

// The fast planners in the order `auto` runs them; `hybrid`: the cluster has CPUs and GPUs.
std::vector<std::string> AutoFastOrder(bool hybrid);

// How many of AutoFastOrder's first members are cheap (about linear in the ops: single, DeepPlan
// and HEFT; on a CPU+GPU cluster single, HEFT and PEFT): after them, a load-bound run gives
// SortingHat its share of the time before the other fast members.
size_t AutoCheapMembers();

// True when `sim`'s plan is bound by moving data (weights, activations), not by computing: its
// busiest device computes for less than half of the makespan.
bool LoadBound(const sim::SimResult& sim);

// The registered exact planners (of `registered`) in the order they get the time left, after the
// fast round won by `fast_winner` with the plan simulated in `best` (null: none).
std::vector<std::string> AutoExactOrder(const std::vector<std::string>& registered,
                                        const std::string& fast_winner, const sim::SimResult* best);

}  // namespace hx::place
