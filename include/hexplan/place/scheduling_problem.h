#pragma once
// The abstract problem list schedulers (HEFT, PEFT, ETF, ...) solve: tasks with a cost per device
// and edges whose communication time depends on the two devices. It is derived from a (graph,
// cluster, cost model) triple, or written down directly for the literature's worked examples, and
// its schedules become plans through the plan layer.

#include <limits>
#include <string>
#include <vector>

#include "hexplan/core/status.h"

namespace hx::place {

inline constexpr double kUnsupported = std::numeric_limits<double>::infinity();

struct SchedulingEdge {
  int src = 0;
  int dst = 0;
  // Communication time when src and dst run on different devices d1 != d2:
  //   pair_time[d1 * num_devices + d2] when given, else latency[d1][d2] + volume *
  //   seconds_per_unit[d1][d2].
  double volume = 0.0;
  std::vector<double> pair_time;  // optional, num_devices^2
};

// An activation as the plan validator counts it (plan/validator.h): on its producer's device from
// the producer to its last reader there, for the whole run once a reader runs elsewhere or it
// leaves the graph; on every other device that reads it, from the start of that device's order to
// its last reader there. Graph inputs have no producer.
struct LiveTensor {
  int producer = -1;  // a task, or -1 for a graph input
  double bytes = 0.0;
  bool graph_output = false;
  std::vector<int> readers;  // tasks, each once
};

class SchedulingProblem {
 public:
  SchedulingProblem(int num_tasks, int num_devices);

  int num_tasks() const { return static_cast<int>(cost_.size()); }
  int num_devices() const { return num_devices_; }

  // Cost of `task` on `device` (kUnsupported when it cannot run there).
  void SetCost(int task, int device, double cost) { cost_[task][device] = cost; }
  double cost(int task, int device) const { return cost_[task][device]; }
  void SetName(int task, std::string name) { names_[task] = std::move(name); }
  const std::string& name(int task) const { return names_[task]; }

  int AddEdge(int src, int dst, double volume);
  int AddEdgeWithPairTimes(int src, int dst, std::vector<double> pair_time);
  const std::vector<SchedulingEdge>& edges() const { return edges_; }
  const std::vector<int>& out_edges(int task) const { return out_[task]; }
  const std::vector<int>& in_edges(int task) const { return in_[task]; }

  // The link model between devices (used by edges without pair times). Default: free.
  void SetLink(int d1, int d2, double latency, double seconds_per_unit);
  // Time to move edge `e` from d1 to d2 (0 on the same device).
  double CommTime(int e, int d1, int d2) const;
  // Multiplies every communication time (pair times and the link model) by `factor`.
  void ScaleCommunication(double factor);
  // Mean over ordered device pairs d1 != d2 (HEFT's c-bar); 0 with one device.
  double MeanCommTime(int e) const;
  // Mean cost over the devices that support the task (HEFT's w-bar).
  double MeanCost(int task) const;

  // Memory (Baechi's memory-constrained schedulers): per task and per device capacity (inf: none).
  void SetTaskMemory(int task, double bytes) { task_memory_[task] = bytes; }
  double task_memory(int task) const { return task_memory_[task]; }
  void SetDeviceMemory(int device, double bytes) { device_memory_[device] = bytes; }
  double device_memory(int device) const { return device_memory_[device]; }

  // Live activations (optional; list/live_memory.h counts them): the tensors tasks write and read,
  // each task's workspace while it runs, and each device's whole memory, which the task memories
  // (weights) and the live activations share (inf: not limited). `device_memory` stays what the
  // task memories alone may take of it.
  int AddLiveTensor(LiveTensor tensor);
  const std::vector<LiveTensor>& live_tensors() const { return live_tensors_; }
  const std::vector<int>& tensors_written(int task) const;
  const std::vector<int>& tensors_read(int task) const;
  void SetWorkspace(int task, double bytes);
  double workspace(int task) const { return workspace_.empty() ? 0.0 : workspace_[task]; }
  void SetDeviceCapacity(int device, double bytes) { device_capacity_[device] = bytes; }
  double device_capacity(int device) const { return device_capacity_[device]; }

  // Cold start: time to bring the task's weights to `device` before it can run. Loads into one
  // device run one after another in the order tasks are scheduled there (one host-to-device copy
  // engine).
  void SetLoadTime(int task, int device, double seconds);
  double load_time(int task, int device) const {
    return load_time_.empty() ? 0.0 : load_time_[static_cast<size_t>(task) * num_devices_ + device];
  }

  // Every task supported somewhere, edges in range, acyclic, non-negative costs.
  Status Validate() const;
  // A topological order (smallest index first among ready tasks).
  std::vector<int> TopologicalOrder() const;

 private:
  int num_devices_;
  std::vector<std::vector<double>> cost_;
  std::vector<std::string> names_;
  std::vector<SchedulingEdge> edges_;
  std::vector<std::vector<int>> out_, in_;
  std::vector<double> latency_, seconds_per_unit_;  // num_devices^2
  std::vector<double> task_memory_, device_memory_, device_capacity_;
  std::vector<LiveTensor> live_tensors_;
  std::vector<std::vector<int>> written_, read_;  // per task, empty until a live tensor is added
  std::vector<double> workspace_;                 // per task, empty when no task has one
  std::vector<double> load_time_;                 // tasks x devices, empty when no task has loads
};

// A bound no schedule of `problem` beats, without a solver: the longest path at each task's
// cheapest cost (communication and loads free), and the cheapest total work spread evenly over
// the devices. What an exact planner reports when its MILP stops before the solver has a bound.
double MakespanLowerBound(const SchedulingProblem& problem);

// A schedule: each task's device and time window.
struct Schedule {
  std::vector<int> device;
  std::vector<double> start;
  std::vector<double> finish;
  double makespan = 0.0;

  // Empty when valid; else the first violation: a task on an unsupported device, a task starting
  // before an input arrives (finish + comm), two tasks overlapping on a device, a wrong duration,
  // or a device's memory exceeded (sum of its tasks' memory).
  std::string Check(const SchedulingProblem& problem, double tolerance = 1e-9) const;
};

}  // namespace hx::place
