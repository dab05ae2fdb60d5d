#pragma once
// Turns (graph, cluster, cost model) into a SchedulingProblem for the list schedulers, and a
// Schedule back into a Plan (per-device op order, one op per subgraph; weights loaded where they
// are read; transfers on the default copy queues).

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/place/scheduling_problem.h"
#include "hexplan/plan/plan.h"

namespace hx::place {

struct ProblemBuildOptions {
  // Model the cold start: an op waits for its weights to be loaded over its device's host route.
  bool cold_start_loads = true;
  // Memory kept free on each device for activations and workspace (fraction of capacity). Unset:
  // 0 when the workload states every op's footprint (MOIRAI, EfficientMIP: nothing else needs
  // room), else 0.1.
  std::optional<double> activation_reserve_fraction;
  // Give the problem the live activations and device capacities (list/live_memory.h), so that
  // the list schedulers count them: the list planners do (PlanWithinMemory, after its weight-only
  // tries); the exact planners' warm starts and models count weights only, as before.
  bool live_activations = false;
};

struct GraphProblem {
  SchedulingProblem problem{0, 1};
  std::vector<NodeId> task_node;  // per task: its op
  std::vector<int> node_task;     // per node: its task, or -1 (weights, inputs, outputs)
  std::vector<DeviceId> devices;  // per problem device index: the cluster device
};

StatusOr<GraphProblem> BuildGraphProblem(const cost::CostModel& cost,
                                         const ProblemBuildOptions& options = {});

// A plan running each op where the schedule put it, in start-time order per device.
StatusOr<plan::Plan> PlanFromSchedule(const GraphProblem& problem, const Schedule& schedule,
                                      const cost::CostModel& cost);

// Counts `plan`'s memory the way the validator does (plan::PlanMemoryBound: weights held, peak
// live activations, stated footprints) and, on each device it overflows, lowers that device's
// capacity in `problem` by `factor` times the overflow, so that scheduling again leaves the room
// the validator wants. Returns the number of devices lowered (0: the plan fits).
int ShrinkOverfullDevices(const plan::Plan& plan, const cost::CostModel& cost,
                          GraphProblem& problem, double factor = 1.05);

// Schedules `problem` with `schedule` and turns the schedule into a plan, lowering the capacities
// of the devices the plan overflows and scheduling again (ShrinkOverfullDevices) up to `rounds`
// times (the k-th try lowers by 1.05 k times the overflow). When that fails, the same from every
// device's capacity times 0.9, 0.85, 0.8, 0.75 and 0.7 (more room kept for activations on every
// device). These count the weights only while scheduling (the plans of hexplan before it counted
// live activations); when none fits, the same again with the problem's live activations counted
// while scheduling (list/live_memory.h: a task goes to the next-best device with room), and last
// with communication 10 and 100 times dearer (fewer tensors cross devices, and each one that does
// stays live on its producer's device). ResourceExhausted, with the validator's arithmetic (the
// first series'), when every last plan still overflows, or when `time_limit_s` is spent before
// the next try (the first always runs).
StatusOr<plan::Plan> PlanWithinMemory(
    GraphProblem& problem, const cost::CostModel& cost,
    const std::function<StatusOr<Schedule>(const SchedulingProblem&)>& schedule,
    const std::string& planner, int rounds = 5,
    double time_limit_s = std::numeric_limits<double>::infinity());

}  // namespace hx::place
