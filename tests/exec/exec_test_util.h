#pragma once
// Helpers for the exec tests: CPU clusters of core groups and hand-made plans that spread ops over
// devices with chosen weight modes.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hexplan/exec/cpu_backend.h"
#include "hexplan/exec/executor.h"
#include "hexplan/exec/values.h"
#include "hexplan/graph/analysis.h"
#include "hexplan/graph/graph.h"
#include "hexplan/hw/cluster.h"
#include "hexplan/hw/device_spec.h"
#include "hexplan/plan/plan.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/plan/task_graph.h"

namespace hx::exec::testing {

// A plan that puts op k (in topological order) on device device_of(k), cuts each device's order
// into subgraphs of up to `ops_per_subgraph` ops, and places every weight read on a device with
// weight_mode(weight, device) (relay: relay_of(weight, device)); transfers and queues by
// plan::CompleteTransfers.
struct PlanSpec {
  std::function<int(size_t)> device_of = [](size_t) { return 0; };
  size_t ops_per_subgraph = 4;
  std::function<plan::WeightMode(NodeId, int)> weight_mode = [](NodeId, int) {
    return plan::WeightMode::kLoad;
  };
  std::function<int(NodeId, int)> relay_of = [](NodeId, int) { return -1; };
};

// `n` CPU devices "cpu:0".."cpu:{n-1}" of one core each, `memory` bytes each, on host memory.

inline hw::Cluster CpuCluster(int n, int64_t memory = int64_t{4} << 30) {
  hw::Cluster c("test-cpu");
  PlaceId host = c.AddHostMemory("local");
  hw::DeviceSpec spec = hw::CpuCoreGroupSpec(*hw::FindDeviceSpec("cpu-core"), 1);
  spec.memory_bytes = memory;
  for (int k = 0; k < n; ++k) {
    std::string name = "cpu:" + std::to_string(k);
    DeviceId d = c.AddDevice(name, hw::DeviceKind::kCpu, "local", spec);
    c.AddLink("membus:" + name, hw::LinkKind::kMemoryBus, host, c.PlaceOf(d),
              spec.memory_bandwidth_bytes_per_s, 1e-7);
  }
  HX_CHECK(c.Finalize().ok());
  return c;
}

inline plan::Plan MakePlan(const graph::Graph& graph, const hw::Cluster& cluster,
                           const PlanSpec& spec) {
  plan::Plan p;
  p.algo = "test";
  auto order = graph::TopologicalOrder(graph);
  HX_CHECK(order.ok());
  // Ops consecutive in the topological order and on one device form a subgraph (at most
  // ops_per_subgraph long), so that a subgraph's outside inputs all come from earlier subgraphs.
  std::vector<std::vector<NodeId>> per_device(cluster.num_devices());
  std::vector<plan::DeviceSchedule> schedules(cluster.num_devices());
  size_t k = 0;
  int last = -1;
  for (NodeId id : *order) {
    if (!graph.node(id).is_op()) continue;
    const int d = spec.device_of(k++);
    per_device[static_cast<size_t>(d)].push_back(id);
    auto& subgraphs = schedules[static_cast<size_t>(d)].subgraphs;
    if (d != last || subgraphs.back().ops.size() >= spec.ops_per_subgraph) subgraphs.emplace_back();
    subgraphs.back().ops.push_back(id);
    last = d;
  }
  for (size_t d = 0; d < schedules.size(); ++d) {
    if (schedules[d].subgraphs.empty()) continue;
    schedules[d].device = DeviceId(d);
    p.devices.push_back(std::move(schedules[d]));
  }
  for (size_t d = 0; d < per_device.size(); ++d) {
    std::vector<bool> placed(graph.num_nodes(), false);
    for (NodeId op : per_device[d]) {
      for (NodeId w : plan::WeightInputs(graph, op)) {
        if (placed[w.value()]) continue;
        placed[w.value()] = true;
        plan::WeightPlacement wp;
        wp.weight = w;
        wp.device = DeviceId(static_cast<uint32_t>(d));
        wp.mode = spec.weight_mode(w, static_cast<int>(d));
        if (wp.mode == plan::WeightMode::kRelay)
          wp.relay = DeviceId(static_cast<uint32_t>(spec.relay_of(w, static_cast<int>(d))));
        p.weights.push_back(wp);
      }
    }
  }
  Status s = plan::CompleteTransfers(p, graph, cluster);
  HX_CHECK_MSG(s.ok(), s.ToString());
  return p;
}

inline StatusOr<ExecResult> RunPlan(const plan::Plan& plan, const graph::Graph& graph,
                                    const hw::Cluster& cluster,
                                    const std::vector<HostTensor>& weights,
                                    const std::map<std::string, HostTensor>& inputs,
                                    const ExecOptions& options = {}) {
  HX_ASSIGN_OR_RETURN(auto backend, CpuBackend::Create(cluster));
  HX_ASSIGN_OR_RETURN(auto executor,
                      Executor::Create(plan, graph, cluster, backend.get(), &weights, options));
  return executor->Run(inputs);
}

}  // namespace hx::exec::testing
