#pragma once
// List schedulers on a SchedulingProblem.
//   HEFT: Topcuoglu, Hariri and Wu, "Performance-effective and low-complexity task scheduling for
//         heterogeneous computing", IEEE TPDS 13(3), 2002. Upward rank with mean costs;
//         insertion-based earliest finish time.
//   PEFT: Arabnejad and Barbosa, "List scheduling algorithm for heterogeneous systems by an
//   optimistic
//         cost table", IEEE TPDS 25(3), 2014. Rank = mean OCT; device minimises EFT + OCT.
// Both honour device memory when the problem gives it, through a MemoryReservation
// (memory_reservation.h): a task goes only where every task still to come keeps a place, so when
// a packing of all tasks exists they never run out of memory; without one, a device whose memory
// the task would overflow is skipped, and when none fits the call fails naming the task.

#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/place/scheduling_problem.h"

namespace hx::place {

// HEFT's upward ranks: rank_u(t) = w-bar(t) + max over successors (c-bar + rank_u(s)).
std::vector<double> UpwardRanks(const SchedulingProblem& problem);
// PEFT's optimistic cost table OCT[t][d] (exit tasks 0).
std::vector<std::vector<double>> OptimisticCostTable(const SchedulingProblem& problem);

StatusOr<Schedule> ScheduleHeft(const SchedulingProblem& problem);
StatusOr<Schedule> SchedulePeft(const SchedulingProblem& problem);
// Schedules tasks in the given priority order (a topological order) with insertion-based EFT,
// choosing per task the device minimising EFT + extra[t][d] (extra may be empty).
StatusOr<Schedule> ScheduleInOrder(const SchedulingProblem& problem, const std::vector<int>& order,
                                   const std::vector<std::vector<double>>& extra);

}  // namespace hx::place
