#include "hexplan/place/list/live_memory.h"

#include <algorithm>
#include <cmath>

namespace hx::place {

LiveMemory::LiveMemory(const SchedulingProblem& problem)
    : p_(&problem),
      peak_(problem.num_devices(), 0.0),
      live_(problem.num_devices(), 0.0),
      last_(problem.num_devices()),
      used_(problem.num_devices(), false),
      device_of_(problem.num_tasks(), -1) {
  bool limited = false;
  for (int d = 0; d < problem.num_devices(); ++d)
    limited = limited || !std::isinf(problem.device_capacity(d));
  bool counts = !problem.live_tensors().empty();
  for (int t = 0; t < problem.num_tasks() && !counts; ++t) counts = problem.workspace(t) > 0;
  active_ = limited && counts;
  if (!active_) return;
  const std::vector<LiveTensor>& tensors = problem.live_tensors();
  on_.resize(problem.num_devices());
  position_.assign(problem.num_tasks(), -1);
  seen_.assign(tensors.size(), 0);
  unplaced_readers_.resize(tensors.size());
  escaped_.resize(tensors.size());
  arrived_on_.resize(tensors.size());
  for (size_t k = 0; k < tensors.size(); ++k) {
    unplaced_readers_[k] = static_cast<int>(tensors[k].readers.size());
    escaped_[k] = tensors[k].graph_output;
  }
}

bool LiveMemory::Appends(int device, TaskSlot slot) const {
  if (!used_[device]) return true;
  const TaskSlot& last = last_[device];
  return slot.start > last.start || (slot.start == last.start && slot.finish > last.finish);
}

bool LiveMemory::ArrivedOn(int tensor, int device) const {
  const std::vector<int>& on = arrived_on_[tensor];
  return std::find(on.begin(), on.end(), device) != on.end();
}

double LiveMemory::Arrivals(int task, int device) const {
  double bytes = 0.0;
  for (int k : p_->tensors_read(task)) {
    const LiveTensor& tensor = p_->live_tensors()[k];
    const bool local = tensor.producer >= 0 && device_of_[tensor.producer] == device;
    if (!local && !ArrivedOn(k, device)) bytes += tensor.bytes;
  }
  return bytes;
}

double LiveMemory::PeakWith(int task, int device, TaskSlot slot) const {
  if (!active_) return 0.0;
  const double arrivals = Arrivals(task, device);
  double own = p_->workspace(task);
  for (int k : p_->tensors_written(task)) own += p_->live_tensors()[k].bytes;
  const double before = peak_[device] + arrivals + (Appends(device, slot) ? 0.0 : own);
  return std::max(before, live_[device] + arrivals + own);
}

void LiveMemory::Place(int task, int device, TaskSlot slot, double budget) {
  if (!active_) {
    device_of_[task] = device;
    return;
  }
  double peak = PeakWith(task, device, slot);
  if (peak > budget) peak = std::min(peak, ExactPeakWith(task, device, slot));
  peak_[device] = peak;
  device_of_[task] = device;
  on_[device].push_back({slot, task});
  if (Appends(device, slot)) last_[device] = slot;
  used_[device] = true;
  const std::vector<LiveTensor>& tensors = p_->live_tensors();
  for (int k : p_->tensors_written(task))
    if (!tensors[k].readers.empty() || tensors[k].graph_output) live_[device] += tensors[k].bytes;
  for (int k : p_->tensors_read(task)) {
    const LiveTensor& tensor = tensors[k];
    const bool local = tensor.producer >= 0 && device_of_[tensor.producer] == device;
    if (!local) {
      escaped_[k] = true;
      if (!ArrivedOn(k, device)) {
        arrived_on_[k].push_back(device);
        live_[device] += tensor.bytes;
      }
    }
    if (--unplaced_readers_[k] == 0) Close(k);
  }
}

void LiveMemory::Close(int k) {
  const LiveTensor& tensor = p_->live_tensors()[k];
  if (tensor.producer >= 0 && !escaped_[k] && device_of_[tensor.producer] >= 0)
    live_[device_of_[tensor.producer]] -= tensor.bytes;
  for (int d : arrived_on_[k]) live_[d] -= tensor.bytes;
}

double LiveMemory::ExactPeakWith(int task, int device, TaskSlot slot) const {
  if (!active_) return 0.0;
  std::vector<std::pair<TaskSlot, int>> order = on_[device];
  order.push_back({slot, task});
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    if (a.first.start != b.first.start) return a.first.start < b.first.start;
    if (a.first.finish != b.first.finish) return a.first.finish < b.first.finish;
    return a.second < b.second;
  });
  const int n = static_cast<int>(order.size());
  for (int i = 0; i < n; ++i) position_[order[i].second] = i;
  auto on_device = [&](int t) { return t == task ? device : device_of_[t]; };
  // The last position a tensor is read here (n - 1 while a reader is still unplaced).
  auto last_local_read = [&](const LiveTensor& k, int from) {
    int end = from;
    for (int r : k.readers) {
      if (on_device(r) < 0) return n - 1;
      if (on_device(r) == device) end = std::max(end, position_[r]);
    }
    return end;
  };
  std::vector<double> delta(n + 1, 0.0);
  auto live = [&](int begin, int end, double bytes) {
    delta[begin] += bytes;
    delta[std::max(begin, end) + 1] -= bytes;
  };
  ++stamp_;
  const std::vector<LiveTensor>& tensors = p_->live_tensors();
  for (int i = 0; i < n; ++i) {
    const int u = order[i].second;
    live(i, i, p_->workspace(u));
    for (int k : p_->tensors_written(u)) {
      const LiveTensor& tensor = tensors[k];
      bool elsewhere = tensor.graph_output || escaped_[k];
      for (int r : tensor.readers)
        elsewhere = elsewhere || (on_device(r) >= 0 && on_device(r) != device);
      live(i, elsewhere ? n - 1 : last_local_read(tensor, i), tensor.bytes);
    }
    for (int k : p_->tensors_read(u)) {
      const LiveTensor& tensor = tensors[k];
      if ((tensor.producer >= 0 && on_device(tensor.producer) == device) || seen_[k] == stamp_)
        continue;
      seen_[k] = stamp_;
      live(0, last_local_read(tensor, 0), tensor.bytes);
    }
  }
  for (int i = 0; i < n; ++i) position_[order[i].second] = -1;
  double running = 0.0, peak = 0.0;
  for (int i = 0; i < n; ++i) {
    running += delta[i];
    peak = std::max(peak, running);
  }
  return peak;
}

}  // namespace hx::place
