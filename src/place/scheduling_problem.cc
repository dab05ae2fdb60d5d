#include "hexplan/place/scheduling_problem.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <sstream>

namespace hx::place {

SchedulingProblem::SchedulingProblem(int num_tasks, int num_devices)
    : num_devices_(num_devices),
      cost_(num_tasks, std::vector<double>(num_devices, 0.0)),
      names_(num_tasks),
      out_(num_tasks),
      in_(num_tasks),
      latency_(static_cast<size_t>(num_devices) * num_devices, 0.0),
      seconds_per_unit_(static_cast<size_t>(num_devices) * num_devices, 0.0),
      task_memory_(num_tasks, 0.0),
      device_memory_(num_devices, std::numeric_limits<double>::infinity()),
      device_capacity_(num_devices, std::numeric_limits<double>::infinity()) {
  for (int t = 0; t < num_tasks; ++t) names_[t] = "t" + std::to_string(t);
}

int SchedulingProblem::AddEdge(int src, int dst, double volume) {
  edges_.push_back(SchedulingEdge{src, dst, volume, {}});
  int e = static_cast<int>(edges_.size()) - 1;
  if (src >= 0 && src < num_tasks() && dst >= 0 && dst < num_tasks()) {
    out_[src].push_back(e);
    in_[dst].push_back(e);
  }
  return e;
}

int SchedulingProblem::AddEdgeWithPairTimes(int src, int dst, std::vector<double> pair_time) {
  int e = AddEdge(src, dst, 0.0);
  edges_[e].pair_time = std::move(pair_time);
  return e;
}

int SchedulingProblem::AddLiveTensor(LiveTensor tensor) {
  if (written_.empty()) {
    written_.resize(cost_.size());
    read_.resize(cost_.size());
  }
  const int k = static_cast<int>(live_tensors_.size());
  if (tensor.producer >= 0 && tensor.producer < num_tasks()) written_[tensor.producer].push_back(k);
  for (int r : tensor.readers)
    if (r >= 0 && r < num_tasks()) read_[r].push_back(k);
  live_tensors_.push_back(std::move(tensor));
  return k;
}

const std::vector<int>& SchedulingProblem::tensors_written(int task) const {
  static const std::vector<int> kNoLiveTensors;
  return written_.empty() ? kNoLiveTensors : written_[task];
}

const std::vector<int>& SchedulingProblem::tensors_read(int task) const {
  static const std::vector<int> kNoLiveTensorsRead;
  return read_.empty() ? kNoLiveTensorsRead : read_[task];
}

void SchedulingProblem::SetWorkspace(int task, double bytes) {
  if (workspace_.empty()) workspace_.assign(cost_.size(), 0.0);
  workspace_[task] = bytes;
}

void SchedulingProblem::SetLink(int d1, int d2, double latency, double seconds_per_unit) {
  latency_[static_cast<size_t>(d1) * num_devices_ + d2] = latency;
  seconds_per_unit_[static_cast<size_t>(d1) * num_devices_ + d2] = seconds_per_unit;
}

void SchedulingProblem::SetLoadTime(int task, int device, double seconds) {
  if (load_time_.empty()) load_time_.assign(cost_.size() * static_cast<size_t>(num_devices_), 0.0);
  load_time_[static_cast<size_t>(task) * num_devices_ + device] = seconds;
}

void SchedulingProblem::ScaleCommunication(double factor) {
  for (SchedulingEdge& e : edges_)
    for (double& t : e.pair_time) t *= factor;
  for (double& l : latency_) l *= factor;
  for (double& s : seconds_per_unit_) s *= factor;
}

double SchedulingProblem::CommTime(int e, int d1, int d2) const {
  if (d1 == d2) return 0.0;
  const SchedulingEdge& edge = edges_[e];
  const size_t k = static_cast<size_t>(d1) * num_devices_ + d2;
  if (!edge.pair_time.empty()) return edge.pair_time[k];
  return latency_[k] + edge.volume * seconds_per_unit_[k];
}

double SchedulingProblem::MeanCommTime(int e) const {
  if (num_devices_ < 2) return 0.0;
  double sum = 0.0;
  for (int a = 0; a < num_devices_; ++a)
    for (int b = 0; b < num_devices_; ++b)
      if (a != b) sum += CommTime(e, a, b);
  return sum / (num_devices_ * (num_devices_ - 1));
}

double SchedulingProblem::MeanCost(int task) const {
  double sum = 0.0;
  int n = 0;
  for (double c : cost_[task]) {
    if (std::isinf(c)) continue;
    sum += c;
    ++n;
  }
  return n ? sum / n : kUnsupported;
}

std::vector<int> SchedulingProblem::TopologicalOrder() const {
  std::vector<int> indeg(num_tasks(), 0);
  for (const auto& e : edges_) indeg[e.dst]++;
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int t = 0; t < num_tasks(); ++t)
    if (indeg[t] == 0) ready.push(t);
  std::vector<int> order;
  while (!ready.empty()) {
    int t = ready.top();
    ready.pop();
    order.push_back(t);
    for (int e : out_[t])
      if (--indeg[edges_[e].dst] == 0) ready.push(edges_[e].dst);
  }
  return order;
}

Status SchedulingProblem::Validate() const {
  if (num_devices_ < 1) return InvalidArgument("scheduling problem: no devices");
  for (int t = 0; t < num_tasks(); ++t) {
    bool supported = false;
    for (double c : cost_[t]) {
      if (c < 0 || std::isnan(c))
        return InvalidArgument("task '" + names_[t] + "': negative or NaN cost");
      supported |= !std::isinf(c);
    }
    if (!supported) return InvalidArgument("task '" + names_[t] + "' runs on no device");
  }
  for (const auto& e : edges_) {
    if (e.src < 0 || e.src >= num_tasks() || e.dst < 0 || e.dst >= num_tasks())
      return InvalidArgument("scheduling problem: an edge names a task out of range");
    if (!e.pair_time.empty() &&
        e.pair_time.size() != static_cast<size_t>(num_devices_) * num_devices_)
      return InvalidArgument("edge " + names_[e.src] + "->" + names_[e.dst] +
                             ": pair times need one value per device pair");
  }
  for (const LiveTensor& k : live_tensors_) {
    bool in_range = k.producer >= -1 && k.producer < num_tasks() && k.bytes >= 0;
    for (int r : k.readers) in_range = in_range && r >= 0 && r < num_tasks();
    if (!in_range)
      return InvalidArgument("scheduling problem: a live tensor names a task out of range");
  }
  if (static_cast<int>(TopologicalOrder().size()) != num_tasks())
    return InvalidArgument("scheduling problem: the task graph has a cycle");
  return Status::Ok();
}

double MakespanLowerBound(const SchedulingProblem& p) {
  const int n = p.num_tasks();
  std::vector<double> cheapest(n, kUnsupported), finish(n, 0.0);
  double work = 0.0, path = 0.0;
  for (int t = 0; t < n; ++t) {
    for (int d = 0; d < p.num_devices(); ++d) cheapest[t] = std::min(cheapest[t], p.cost(t, d));
    if (std::isinf(cheapest[t])) return 0.0;  // an invalid problem bounds nothing
    work += cheapest[t];
  }
  for (int t : p.TopologicalOrder()) {
    double ready = 0.0;
    for (int e : p.in_edges(t)) ready = std::max(ready, finish[p.edges()[e].src]);
    finish[t] = ready + cheapest[t];
    path = std::max(path, finish[t]);
  }
  return std::max(path, work / std::max(1, p.num_devices()));
}

std::string Schedule::Check(const SchedulingProblem& p, double tol) const {
  const int n = p.num_tasks();
  if (static_cast<int>(device.size()) != n || static_cast<int>(start.size()) != n ||
      static_cast<int>(finish.size()) != n)
    return "schedule size does not match the problem";
  std::vector<double> used(p.num_devices(), 0.0);
  double latest = 0.0;
  for (int t = 0; t < n; ++t) {
    int d = device[t];
    if (d < 0 || d >= p.num_devices()) return "task " + p.name(t) + " has no device";
    if (std::isinf(p.cost(t, d))) return "task " + p.name(t) + " on an unsupported device";
    if (std::abs(finish[t] - start[t] - p.cost(t, d)) > tol * std::max(1.0, finish[t]))
      return "task " + p.name(t) + " has the wrong duration";
    if (start[t] < -tol) return "task " + p.name(t) + " starts before 0";
    used[d] += p.task_memory(t);
    latest = std::max(latest, finish[t]);
  }
  for (int d = 0; d < p.num_devices(); ++d)
    if (used[d] > p.device_memory(d) * (1 + 1e-12))
      return "device " + std::to_string(d) + " memory exceeded";
  for (int e = 0; e < static_cast<int>(p.edges().size()); ++e) {
    const auto& edge = p.edges()[e];
    double ready = finish[edge.src] + p.CommTime(e, device[edge.src], device[edge.dst]);
    if (start[edge.dst] + tol * std::max(1.0, ready) < ready)
      return "task " + p.name(edge.dst) + " starts before its input from " + p.name(edge.src) +
             " arrives";
  }
  std::vector<std::vector<int>> per_device(p.num_devices());
  for (int t = 0; t < n; ++t) per_device[device[t]].push_back(t);
  for (auto& tasks : per_device) {
    // Ties by finish: a zero-length task at the start of another does not overlap it.
    std::sort(tasks.begin(), tasks.end(), [&](int a, int b) {
      return start[a] != start[b] ? start[a] < start[b] : finish[a] < finish[b];
    });
    for (size_t i = 1; i < tasks.size(); ++i)
      if (start[tasks[i]] + tol * std::max(1.0, finish[tasks[i - 1]]) < finish[tasks[i - 1]])
        return "tasks " + p.name(tasks[i - 1]) + " and " + p.name(tasks[i]) + " overlap";
  }
  if (std::abs(latest - makespan) > tol * std::max(1.0, latest)) return "wrong makespan";
  return "";
}

}  // namespace hx::place
