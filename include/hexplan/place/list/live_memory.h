#pragma once
// Counts, while a list scheduler places tasks, a bound on each device's live activations that the
// plan validator's count (plan/validator.h) never exceeds: the plan built from the schedule orders
// each device's tasks by start time, and for that order
//   - a tensor stays live on its producer's device from the producer until every reader is placed
//     (for good once a reader runs elsewhere or it is a graph output);
//   - a tensor read on another device is live there from the start of that device's order until
//     every reader is placed;
//   - a task's workspace and outputs count while it runs.
// A task appended at the end of a device's order adds its arrivals to the device's peak so far
// (they are live from the start) and sets the peak at its own position to what is live then; a
// task inserted into an idle gap (HEFT, PEFT) may sit inside any live range, so everything it adds
// counts on top of the peak. Waiting for every reader (not only the local ones) keeps the count
// an upper bound without knowing where later readers go.

#include <vector>

#include "hexplan/place/scheduling_problem.h"

namespace hx::place {

// Where a task would sit on a device: appended (it starts after every task already there) or
// inserted into a gap.
struct TaskSlot {
  double start = 0.0;
  double finish = 0.0;
};

class LiveMemory {
 public:
  explicit LiveMemory(const SchedulingProblem& problem);

  // The problem states live tensors or workspaces and some device's capacity.
  bool active() const { return active_; }
  // True when a task in `slot` on `device` comes after every task placed there so far in the
  // plan's order (start, then finish).
  bool Appends(int device, TaskSlot slot) const;
  // A bound on the device's activation peak once `task` runs there in `slot`: exact (in the
  // sense above) for an appended task, in O(its inputs and outputs); for an inserted one, the
  // peak so far plus everything it adds.
  double PeakWith(int task, int device, TaskSlot slot) const;
  // The same counted over the device's whole order again (the validator's sweep, with readers
  // not yet placed counted as reading at the end): tighter for an inserted task, O(the device's
  // tasks and their tensors).
  double ExactPeakWith(int task, int device, TaskSlot slot) const;
  double peak(int device) const { return peak_[device]; }
  // Records `task`; when the bound exceeds `budget` (the room the caller has for activations),
  // the device's peak is counted over its whole order instead.
  void Place(int task, int device, TaskSlot slot, double budget);

 private:
  // Bytes of the tensors `task` reads that are not yet live on `device`.
  double Arrivals(int task, int device) const;
  bool ArrivedOn(int tensor, int device) const;
  void Close(int tensor);

  const SchedulingProblem* p_;
  bool active_ = false;
  std::vector<double> peak_, live_;           // per device
  std::vector<TaskSlot> last_;                // per device: the last slot in the plan's order
  std::vector<bool> used_;                    // per device: a task placed there
  std::vector<int> device_of_;                // per task, -1 while unplaced
  std::vector<int> unplaced_readers_;         // per tensor
  std::vector<bool> escaped_;                 // per tensor: live for good on its producer's device
  std::vector<std::vector<int>> arrived_on_;  // per tensor: devices where it arrived
  std::vector<std::vector<std::pair<TaskSlot, int>>> on_;  // per device: its tasks and slots
  mutable std::vector<int> position_;  // per task: position in ExactPeakWith's order, else -1
  mutable std::vector<int> seen_;      // per tensor: ExactPeakWith's stamp
  mutable int stamp_ = 0;
};

}  // namespace hx::place
