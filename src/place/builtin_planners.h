#pragma once
// Factories of the planners built into the registry (src/place/planner.cc lists them).

#include <memory>

#include "hexplan/place/planner.h"

namespace hx::place {

// `single`: every op on the fastest device that fits (src/place/list/single_planner.cc).
std::unique_ptr<Planner> MakeSinglePlanner();

// List schedulers on the abstract scheduling problem (src/place/list/list_planners.cc).
std::unique_ptr<Planner> MakeHeftPlanner();
std::unique_ptr<Planner> MakePeftPlanner();
std::unique_ptr<Planner> MakeMTopoPlanner();
std::unique_ptr<Planner> MakeMEtfPlanner();
std::unique_ptr<Planner> MakeMSctPlanner();
// `moirai`: GCOF, then MOIRAI's MILP on the exact skeleton (src/place/exact/moirai_planner.cc).
std::unique_ptr<Planner> MakeMoiraiPlanner();
// `getf`: GETF (Su et al. 2020), its group assignment MILP (src/place/exact/getf_planner.cc).
std::unique_ptr<Planner> MakeGetfPlanner();

// DeepPlan on one GPU: DHA and parallel transmission (src/place/deepplan/deepplan_planner.cc).
std::unique_ptr<Planner> MakeDeepPlanPlanner();
// Chrion's CPU+GPU BFS/DFS order and greedy device selection (src/place/chrion/chrion_planner.cc).
std::unique_ptr<Planner> MakeChrionPlanner();
// `pipeline`: contiguous stages of a topological order, cut by simulation
// (src/place/pipeline/pipeline_planner.cc).
std::unique_ptr<Planner> MakePipelinePlanner();
// `auto`: the fast planners within the time limit, then the exact ones (src/place/auto_planner.cc).
std::unique_ptr<Planner> MakeAutoPlanner();
// EfficientMIP's latency IP with its greedy, a DP and local search
// (src/place/efficientmip/efficientmip_planner.cc).
std::unique_ptr<Planner> MakeEfficientMipPlanner();
// `sortinghat`: SortingHat (ICS'25) end to end (src/place/sortinghat/sortinghat_planner.cc).
std::unique_ptr<Planner> MakeSortingHatPlanner();

}  // namespace hx::place
