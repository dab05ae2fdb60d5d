#include "hexplan/place/list/memory_reservation.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace hx::place {
namespace {
constexpr double kSlack = 1e-9;  // relative tolerance on byte sums held in doubles
}  // namespace

MemoryReservation::MemoryReservation(const SchedulingProblem& problem)
    : p_(&problem),
      live_(problem),
      reserved_(problem.num_tasks(), -1),
      used_(problem.num_devices(), 0.0),
      held_(problem.num_devices(), 0.0) {
  const int n = problem.num_tasks(), D = problem.num_devices();
  bool bounded = false;
  for (int d = 0; d < D; ++d) bounded = bounded || !std::isinf(problem.device_memory(d));
  if (!bounded) return;
  by_size_.resize(n);
  std::iota(by_size_.begin(), by_size_.end(), 0);
  std::stable_sort(by_size_.begin(), by_size_.end(),
                   [&](int a, int b) { return problem.task_memory(a) > problem.task_memory(b); });
  std::vector<double> room(D);
  for (int d = 0; d < D; ++d) room[d] = problem.device_memory(d);
  for (bool best_fit : {true, false}) {
    std::vector<int> packing;
    if (!Pack(room, -1, best_fit, packing)) continue;
    reserved_ = std::move(packing);
    for (int t = 0; t < n; ++t) held_[reserved_[t]] += problem.task_memory(t);
    active_ = true;
    return;
  }
}

double MemoryReservation::Free(int d) const {
  return p_->device_memory(d) * (1 + kSlack) - used_[d];
}

bool MemoryReservation::Pack(std::vector<double> room, int skip, bool best_fit,
                             std::vector<int>& out) const {
  out.assign(p_->num_tasks(), -1);
  for (int t : by_size_) {
    if (t == skip || (!reserved_.empty() && active_ && reserved_[t] < 0)) continue;
    const double need = p_->task_memory(t);
    int chosen = -1;
    for (int d = 0; d < p_->num_devices(); ++d) {
      if (std::isinf(p_->cost(t, d)) || room[d] < need) continue;
      if (chosen < 0 || (best_fit && room[d] < room[chosen])) chosen = d;
      if (!best_fit) break;
    }
    if (chosen < 0) return false;
    out[t] = chosen;
    room[chosen] -= need;
  }
  return true;
}

bool MemoryReservation::HasCapacity(int task, int device, TaskSlot slot, double held) const {
  if (!live_.active()) return true;
  const double capacity = p_->device_capacity(device);
  if (std::isinf(capacity)) return true;
  const double room = capacity * (1 + kSlack) - used_[device] - held - p_->task_memory(task);
  if (live_.PeakWith(task, device, slot) <= room) return true;
  return !live_.Appends(device, slot) && live_.ExactPeakWith(task, device, slot) <= room;
}

bool MemoryReservation::Fits(int task, int device, TaskSlot slot) const {
  return !std::isinf(p_->cost(task, device)) && p_->task_memory(task) <= Free(device) &&
         HasCapacity(task, device, slot, 0.0);
}

bool MemoryReservation::Allows(int task, int device, TaskSlot slot) const {
  if (!Fits(task, device, slot)) return false;
  if (!active_) return true;
  // The weights reserved here for other tasks (the task's own reservation is part of held_).
  const double others = held_[device] - (reserved_[task] == device ? p_->task_memory(task) : 0.0);
  if (!HasCapacity(task, device, slot, others)) return false;
  if (reserved_[task] == device) return true;
  return held_[device] + p_->task_memory(task) <= Free(device);
}

bool MemoryReservation::TryRepack(int task, int device, TaskSlot slot) {
  if (!active_ || repacks_ >= kMaxRepacks || std::isinf(p_->cost(task, device))) return false;
  ++repacks_;
  std::vector<double> room(p_->num_devices());
  for (int d = 0; d < p_->num_devices(); ++d) {
    room[d] = Free(d);
    if (live_.active() && !std::isinf(p_->device_capacity(d)))
      room[d] = std::min(room[d], p_->device_capacity(d) - used_[d] - live_.peak(d));
  }
  if (live_.active() && !std::isinf(p_->device_capacity(device)))
    room[device] = std::min(room[device], p_->device_capacity(device) - used_[device] -
                                              live_.PeakWith(task, device, slot));
  room[device] -= p_->task_memory(task);
  if (room[device] < 0) return false;
  for (bool best_fit : {true, false}) {
    std::vector<int> packing;
    if (!Pack(room, task, best_fit, packing)) continue;
    std::fill(held_.begin(), held_.end(), 0.0);
    for (int t = 0; t < p_->num_tasks(); ++t) {
      if (reserved_[t] < 0) continue;  // placed already
      reserved_[t] = t == task ? device : packing[t];
      held_[reserved_[t]] += p_->task_memory(t);
    }
    return true;
  }
  return false;
}

void MemoryReservation::Place(int task, int device, TaskSlot slot) {
  const double need = p_->task_memory(task);
  live_.Place(task, device, slot, p_->device_capacity(device) - used_[device] - need);
  if (active_ && reserved_[task] >= 0) held_[reserved_[task]] -= need;
  reserved_[task] = -1;
  used_[device] += need;
}

}  // namespace hx::place
