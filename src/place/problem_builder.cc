#include "hexplan/place/problem_builder.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

#include "hexplan/core/stopwatch.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/plan/validator.h"

namespace hx::place {

namespace {

// The activations the validator counts (plan::PlanMemoryBound): every tensor an op or a graph input
// writes that ops read or that leaves the graph, and each op's workspace; not those of ops whose
// footprint the workload states (it holds them).
void AddLiveActivations(const cost::CostModel& cost, GraphProblem& out) {
  const graph::Graph& g = cost.graph();
  SchedulingProblem& p = out.problem;
  auto stated = [&](NodeId op) { return cost.StatedMemory(op).has_value(); };
  for (size_t i = 0; i < g.num_nodes(); ++i) {
    const NodeId id(static_cast<uint32_t>(i));
    const graph::Node& node = g.node(id);
    const bool op = node.is_op();
    if (!(op || node.kind == graph::NodeKind::kInput) || (op && stated(id))) continue;
    if (op) {
      const int64_t workspace =
          cost.OpMemoryBytes(id) - cost.OpWeightBytes(id) - cost.OpOutputBytes(id);
      if (workspace > 0) p.SetWorkspace(out.node_task[i], static_cast<double>(workspace));
    }
    for (TensorId t : node.outputs) {
      LiveTensor live;
      live.producer = op ? out.node_task[i] : -1;
      live.bytes = static_cast<double>(g.tensor(t).Bytes());
      for (NodeId c : g.tensor(t).consumers) {
        const int task = out.node_task[c.index()];
        if (task < 0) {
          live.graph_output = true;
        } else if (std::find(live.readers.begin(), live.readers.end(), task) ==
                   live.readers.end()) {
          live.readers.push_back(task);
        }
      }
      if (live.bytes > 0 && (live.producer >= 0 || !live.readers.empty()))
        p.AddLiveTensor(std::move(live));
    }
  }
}

}  // namespace

StatusOr<GraphProblem> BuildGraphProblem(const cost::CostModel& cost,
                                         const ProblemBuildOptions& options) {
  const graph::Graph& g = cost.graph();
  const hw::Cluster& cluster = cost.cluster();
  GraphProblem out;
  out.devices = cluster.DeviceIds();
  const int D = static_cast<int>(out.devices.size());
  if (D == 0) return InvalidArgument("cluster '" + cluster.name() + "' has no devices");
  out.node_task.assign(g.num_nodes(), -1);
  for (NodeId id : g.Ops()) {
    out.node_task[id.index()] = static_cast<int>(out.task_node.size());
    out.task_node.push_back(id);
  }
  const int n = static_cast<int>(out.task_node.size());
  out.problem = SchedulingProblem(n, D);
  SchedulingProblem& p = out.problem;
  for (int t = 0; t < n; ++t) {
    NodeId op = out.task_node[t];
    p.SetName(t, g.node(op).name);
    // What stays resident: a workload's stated footprint, else the op's weights (activations are
    // transient and covered by the reserve).
    const std::optional<int64_t> stated = cost.StatedMemory(op);
    p.SetTaskMemory(t, static_cast<double>(stated ? *stated : cost.OpWeightBytes(op)));
    for (int d = 0; d < D; ++d) {
      DeviceId dev = out.devices[d];
      p.SetCost(t, d, cost.Supports(op, dev) ? cost.OpTime(op, dev) : kUnsupported);
      if (options.cold_start_loads) {
        double load = 0.0;
        for (TensorId in : g.node(op).inputs) {
          if (!in.valid()) continue;
          NodeId producer = g.tensor(in).producer;
          if (producer.valid() && g.node(producer).kind == graph::NodeKind::kWeight)
            load += cost.WeightLoadTime(producer, dev);
        }
        if (load > 0) p.SetLoadTime(t, d, load);
      }
    }
  }
  bool all_stated = n > 0;
  for (int t = 0; t < n && all_stated; ++t)
    all_stated = cost.StatedMemory(out.task_node[t]).has_value();
  const double reserve = options.activation_reserve_fraction.value_or(all_stated ? 0.0 : 0.1);
  if (!(reserve >= 0.0 && reserve < 1.0))
    return InvalidArgument("activation reserve must be in [0, 1), got " + std::to_string(reserve));
  for (int d = 0; d < D; ++d) {
    const double capacity = static_cast<double>(cluster.device(out.devices[d]).memory_bytes());
    if (capacity <= 0) continue;
    p.SetDeviceMemory(d, capacity * (1.0 - reserve));
    if (options.live_activations) p.SetDeviceCapacity(d, capacity);
  }
  if (options.live_activations) AddLiveActivations(cost, out);
  // One edge per (tensor, consumer op) between ops, with per-device-pair times.
  for (const graph::Edge& e : g.Edges()) {
    int src = out.node_task[e.src.index()], dst = out.node_task[e.dst.index()];
    if (src < 0 || dst < 0) continue;
    std::vector<double> pair(static_cast<size_t>(D) * D, 0.0);
    for (int a = 0; a < D; ++a)
      for (int b = 0; b < D; ++b)
        if (a != b)
          pair[static_cast<size_t>(a) * D + b] =
              cost.TensorTransferTime(e.tensor, out.devices[a], out.devices[b]);
    p.AddEdgeWithPairTimes(src, dst, std::move(pair));
  }
  HX_RETURN_IF_ERROR(p.Validate());
  return out;
}

StatusOr<plan::Plan> PlanFromSchedule(const GraphProblem& problem, const Schedule& schedule,
                                      const cost::CostModel& cost) {
  const int n = problem.problem.num_tasks();
  if (static_cast<int>(schedule.device.size()) != n)
    return Internal("schedule does not match its problem");
  plan::Plan plan;
  std::vector<std::vector<int>> per_device(problem.devices.size());
  for (int t = 0; t < n; ++t) per_device[schedule.device[t]].push_back(t);
  // Ties in start time (zero-length tasks) by finish, then in topological order: a task index
  // order could queue a reader before its zero-length producer (a deadlock in the plan).
  std::vector<int> topo_pos(n);
  {
    const std::vector<int> topo = problem.problem.TopologicalOrder();
    for (int i = 0; i < n; ++i) topo_pos[topo[i]] = i;
  }
  for (size_t d = 0; d < per_device.size(); ++d) {
    auto& tasks = per_device[d];
    if (tasks.empty()) continue;
    std::stable_sort(tasks.begin(), tasks.end(), [&](int a, int b) {
      if (schedule.start[a] != schedule.start[b]) return schedule.start[a] < schedule.start[b];
      const bool a_finish = schedule.finish.size() == static_cast<size_t>(n);
      if (a_finish && schedule.finish[a] != schedule.finish[b])
        return schedule.finish[a] < schedule.finish[b];
      return topo_pos[a] < topo_pos[b];
    });
    plan::DeviceSchedule ds;
    ds.device = problem.devices[d];
    for (int t : tasks) ds.subgraphs.push_back(plan::Subgraph{{problem.task_node[t]}});
    plan.devices.push_back(std::move(ds));
  }
  plan.estimate_ms = schedule.makespan * 1e3;
  HX_RETURN_IF_ERROR(plan::CompleteTransfers(plan, cost.graph(), cost.cluster()));
  return plan;
}

int ShrinkOverfullDevices(const plan::Plan& plan, const cost::CostModel& cost,
                          GraphProblem& problem, double factor) {
  int lowered = 0;
  for (const plan::DeviceMemoryBound& m : plan::PlanMemoryBound(plan, cost)) {
    if (m.capacity_bytes <= 0 || m.total() <= m.capacity_bytes) continue;
    for (size_t d = 0; d < problem.devices.size(); ++d) {
      if (problem.devices[d] != m.device) continue;
      const double over = static_cast<double>(m.total() - m.capacity_bytes);
      const double now = problem.problem.device_memory(static_cast<int>(d));
      problem.problem.SetDeviceMemory(static_cast<int>(d),
                                      std::max(0.0, now - over * factor - 1.0));
      ++lowered;
    }
  }
  return lowered;
}

namespace {

// PlanWithinMemory's time limit: a new try starts only while it lasts.
struct MemoryTriesClock {
  Stopwatch clock;
  double limit_s;
  bool Spent() const { return clock.ElapsedSeconds() > limit_s; }
};

// PlanWithinMemory's feedback loop from the problem's capacities as they are.
StatusOr<plan::Plan> ShrinkUntilThePlanFits(
    GraphProblem& problem, const cost::CostModel& cost,
    const std::function<StatusOr<Schedule>(const SchedulingProblem&)>& schedule,
    const std::string& planner, int rounds, const MemoryTriesClock& clock) {
  for (int round = 1;; ++round) {
    StatusOr<Schedule> scheduled = schedule(problem.problem);
    if (!scheduled.ok() && round > 1 &&
        scheduled.status().code() == StatusCode::kResourceExhausted) {
      return ResourceExhausted(planner +
                               ": no schedule fits the devices' memory once the plan's "
                               "activations are counted as the validator counts them (try " +
                               std::to_string(round) + ", with the room left for them: " +
                               scheduled.status().message() + ")");
    }
    HX_ASSIGN_OR_RETURN(Schedule s, std::move(scheduled));
    HX_ASSIGN_OR_RETURN(plan::Plan plan, PlanFromSchedule(problem, s, cost));
    if (ShrinkOverfullDevices(plan, cost, problem, 1.05 * round) == 0) return plan;
    if (round >= rounds || clock.Spent()) {
      const Status why = plan::CheckPlan(plan, cost, planner);
      return ResourceExhausted(
          planner + ": no schedule found whose plan fits the devices' memory (" +
          std::to_string(round) +
          " tries, each leaving more room on the "
          "devices the last overflowed" +
          (round < rounds ? ", until the time limit" : "") + "); the last: " + why.message());
    }
  }
}

}  // namespace

namespace {

// The feedback loop from the problem's weight budgets, then from every device's capacity times
// 0.9 ... 0.7: lowering only the devices that overflowed can push the weights onto devices that
// then overflow in turn (activations dominate on swin-6.6b), so keep a larger share of every device
// for the activations instead, and the weights spread in proportion to the devices' memories.
StatusOr<plan::Plan> ShrinkOrKeepShares(
    GraphProblem& problem, const cost::CostModel& cost, const std::vector<double>& budget,
    const std::function<StatusOr<Schedule>(const SchedulingProblem&)>& schedule,
    const std::string& planner, int rounds, const MemoryTriesClock& clock) {
  SchedulingProblem& p = problem.problem;
  for (int d = 0; d < p.num_devices(); ++d) p.SetDeviceMemory(d, budget[d]);
  StatusOr<plan::Plan> first =
      ShrinkUntilThePlanFits(problem, cost, schedule, planner, rounds, clock);
  for (double keep : {0.9, 0.85, 0.8, 0.75, 0.7}) {
    if (first.ok() || first.status().code() != StatusCode::kResourceExhausted || clock.Spent())
      break;
    for (int d = 0; d < p.num_devices(); ++d) p.SetDeviceMemory(d, budget[d] * keep);
    StatusOr<plan::Plan> again =
        ShrinkUntilThePlanFits(problem, cost, schedule, planner, rounds, clock);
    if (again.ok()) return again;
  }
  return first;
}

}  // namespace

StatusOr<plan::Plan> PlanWithinMemory(
    GraphProblem& problem, const cost::CostModel& cost,
    const std::function<StatusOr<Schedule>(const SchedulingProblem&)>& schedule,
    const std::string& planner, int rounds, double time_limit_s) {
  const MemoryTriesClock clock{Stopwatch(), time_limit_s};
  SchedulingProblem& p = problem.problem;
  std::vector<double> budget, capacity;
  for (int d = 0; d < p.num_devices(); ++d) {
    budget.push_back(p.device_memory(d));
    capacity.push_back(p.device_capacity(d));
  }
  // 1. Weights only (live activations not counted while scheduling, the validator's count fed
  //    back): where it fits, the plans of the planners before live activations were counted.
  GraphProblem weights_only = problem;
  for (int d = 0; d < p.num_devices(); ++d)
    weights_only.problem.SetDeviceCapacity(d, std::numeric_limits<double>::infinity());
  StatusOr<plan::Plan> first =
      ShrinkOrKeepShares(weights_only, cost, budget, schedule, planner, rounds, clock);
  if (first.ok() || first.status().code() != StatusCode::kResourceExhausted || clock.Spent())
    return first;
  // 2. Live activations counted while scheduling (LiveMemory): a task whose best device has no
  //    room for them goes to the next best.
  StatusOr<plan::Plan> live =
      ShrinkOrKeepShares(problem, cost, budget, schedule, planner, rounds, clock);
  if (live.ok()) return live;
  // 3. A tensor sent to another device stays live on its producer's to the end of that device's
  //    order (the validator's count), so a schedule that crosses devices often fills them with
  //    activations (swin-6.6b on moirai-inter). Last: communication made 10, then 100 times dearer
  //    in the schedule, so that tasks follow their inputs and memory decides the cuts; the plan
  //    keeps the schedule's devices and order (its estimate, in the dearer times, is dropped).
  for (double dearer : {10.0, 100.0}) {
    if (clock.Spent()) break;
    GraphProblem scaled = problem;
    scaled.problem.ScaleCommunication(dearer);
    for (int d = 0; d < p.num_devices(); ++d) scaled.problem.SetDeviceMemory(d, budget[d]);
    StatusOr<plan::Plan> again =
        ShrinkUntilThePlanFits(scaled, cost, schedule, planner, rounds, clock);
    if (!again.ok()) continue;
    again->estimate_ms.reset();
    return again;
  }
  return first;
}

}  // namespace hx::place
