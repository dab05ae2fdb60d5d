#pragma once
// Factories of the planners built into the registry (src/place/planner.cc lists them).

#include <memory>

#include "hexplan/place/planner.h"

namespace hx::place {

// `single`: every op on the fastest device that fits (src/place/single_planner.cc).
std::unique_ptr<Planner> MakeSinglePlanner();

// List schedulers and the MILP on the abstract scheduling problem (src/place/list_planners.cc).
std::unique_ptr<Planner> MakeHeftPlanner();
std::unique_ptr<Planner> MakePeftPlanner();
std::unique_ptr<Planner> MakeMTopoPlanner();
std::unique_ptr<Planner> MakeMEtfPlanner();
std::unique_ptr<Planner> MakeMSctPlanner();
std::unique_ptr<Planner> MakeMoiraiPlanner();

}  // namespace hx::place
