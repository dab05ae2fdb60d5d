#pragma once
// Baechi's memory-constrained placers (Jeon et al., "Baechi: fast device placement of machine
// learning graphs", SoCC 2020), on a SchedulingProblem:
//   m-TOPO: operators in topological order fill one device up to an equal share of the total memory
//           (capped by the device's capacity), then the next device.
//   m-ETF:  earliest task first: repeatedly start the (ready task, device) pair that can start
//           earliest, among devices with memory left for the task.
//   m-SCT:  small communication times: an LP relaxation picks each task's favourite child (at most
//   one
//           per task and one favourite parent per task, Hanen and Munier's formulation); the
//           favourite child then runs on its parent's device, the rest as in m-ETF; when
//           following them leaves a task no room, the schedule without them.

#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/place/scheduling_problem.h"

namespace hx::place {

StatusOr<Schedule> ScheduleMTopo(const SchedulingProblem& problem);
StatusOr<Schedule> ScheduleMEtf(const SchedulingProblem& problem);
StatusOr<Schedule> ScheduleMSct(const SchedulingProblem& problem, double lp_time_limit_s = 10.0);
// m-SCT's schedule from favourite children already chosen (FavouriteChildren), so that the
// memory retries of a planner solve the LP once.
StatusOr<Schedule> ScheduleMSctWith(const SchedulingProblem& problem,
                                    const std::vector<int>& favourite_child);

// m-SCT's favourite child of every task (-1 when none), from the LP relaxation.
StatusOr<std::vector<int>> FavouriteChildren(const SchedulingProblem& problem,
                                             double lp_time_limit_s = 10.0);

}  // namespace hx::place
