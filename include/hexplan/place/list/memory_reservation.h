#pragma once
// Keeps a list scheduler's memory choices feasible. A greedy scheduler that places each task on
// the device where it finishes first can fill the devices so that a later task fits nowhere, even
// when a packing of all tasks exists (MOIRAI's example-1.csv: 44 bytes of tasks in 14 + 14 + 16).
// MemoryReservation holds a packing of the tasks not yet placed into the devices' free memory
// (best-fit or first-fit decreasing, whichever packs) and lets a task go to its reserved device or
// to any device with unreserved room for it; either way the tasks still to come keep a place, so
// the scheduler never runs out of memory when the packing exists. When the device a scheduler
// prefers has no unreserved room, `TryRepack` looks for another packing of the rest that leaves
// room there (a bounded number of times, so the cost stays near linear).
//
// When the problem states live activations (LiveMemory), a task also needs its device's whole
// capacity to hold the weights placed there, the weights reserved there (for Allows) and the
// activation peak with the task in its slot; the packing of weights cannot foresee activations, so
// a scheduler whose task no reservation allows moves it to the best device it Fits instead.

#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/place/list/live_memory.h"
#include "hexplan/place/scheduling_problem.h"

namespace hx::place {

class MemoryReservation {
 public:
  // Packs every task of `problem`. Without a packing (the heuristics found none, or no device
  // memory is given) the reservation is inactive and `Allows` checks the device's free memory only.
  explicit MemoryReservation(const SchedulingProblem& problem);

  bool active() const { return active_; }
  // `task` is supported on `device` and fits in its free memory (ignoring the reservation), in
  // `slot` (where it would sit in the device's order, for the live activations).
  bool Fits(int task, int device, TaskSlot slot) const;
  // `task` may run on `device`: it Fits, and placing it keeps every unplaced task a place.
  bool Allows(int task, int device, TaskSlot slot) const;
  // Looks for a packing of the unplaced tasks other than `task` that leaves `task` room on
  // `device`; adopts it and returns true when found (at most kMaxRepacks times per schedule).
  bool TryRepack(int task, int device, TaskSlot slot);
  // Records `task` on `device` in `slot` (the caller checked Fits, Allows or TryRepack).
  void Place(int task, int device, TaskSlot slot);
  // TryRepack may still succeed (the reservation is active and its budget not spent).
  bool CanRepack() const { return active_ && repacks_ < kMaxRepacks; }

  static constexpr int kMaxRepacks = 64;

 private:
  // Packs the unplaced tasks (except `skip`) into free memory `room`; returns false when a task
  // fits nowhere. `best_fit`: the device with the least room that fits, else the first.
  bool Pack(std::vector<double> room, int skip, bool best_fit, std::vector<int>& out) const;
  double Free(int device) const;
  // The device's capacity left for `task` and `held` more bytes, with the task in `slot`.
  bool HasCapacity(int task, int device, TaskSlot slot, double held) const;

  const SchedulingProblem* p_;
  LiveMemory live_;
  bool active_ = false;
  int repacks_ = 0;
  std::vector<int> by_size_;   // tasks by decreasing memory (ties by index)
  std::vector<int> reserved_;  // task -> device it is reserved on (-1 once placed)
  std::vector<double> used_;   // placed bytes per device
  std::vector<double> held_;   // reserved bytes per device
};

}  // namespace hx::place
