#include "hexplan/plan/validator.h"

#include <algorithm>
#include <optional>
#include <set>

#include "hexplan/plan/task_graph.h"

namespace hx::plan {
namespace {

std::string Bytes(int64_t b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f GB (%lld B)", static_cast<double>(b) / 1e9,
                static_cast<long long>(b));
  return buf;
}

}  // namespace

std::vector<DeviceMemoryBound> PlanMemoryBound(const Plan& plan, const cost::CostModel& cost) {
  const graph::Graph& g = cost.graph();
  const hw::Cluster& cluster = cost.cluster();
  const std::vector<DeviceId> op_device = plan.OpDevices(g.num_nodes());
  std::vector<DeviceMemoryBound> out(cluster.num_devices());
  for (size_t d = 0; d < cluster.num_devices(); ++d) {
    out[d].device = DeviceId(d);
    out[d].capacity_bytes = cluster.device(DeviceId(d)).memory_bytes();
  }
  // Weights: one copy per (weight, device) held.
  std::vector<std::set<uint32_t>> held(cluster.num_devices());
  for (const WeightPlacement& wp : plan.weights) {
    if (!wp.weight.valid() || wp.weight.index() >= g.num_nodes()) continue;
    if (wp.device.valid() && wp.device.index() < held.size() && wp.mode != WeightMode::kDha)
      held[wp.device.index()].insert(wp.weight.value());
    if (wp.mode == WeightMode::kRelay && !wp.resident && wp.relay.valid() &&
        wp.relay.index() < held.size())
      held[wp.relay.index()].insert(wp.weight.value());
  }
  for (size_t d = 0; d < held.size(); ++d)
    for (uint32_t w : held[d]) {
      const graph::Node& n = g.node(NodeId(w));
      if (!n.outputs.empty()) out[d].weight_bytes += g.tensor(n.outputs[0]).Bytes();
    }

  // Activations along each device's flattened order.
  for (const DeviceSchedule& ds : plan.devices) {
    if (!ds.device.valid() || ds.device.index() >= cluster.num_devices()) continue;
    std::vector<NodeId> order;
    for (const Subgraph& sg : ds.subgraphs)
      for (NodeId op : sg.ops)
        if (op.valid() && op.index() < g.num_nodes() && g.node(op).is_op() &&
            op_device[op.index()] == ds.device)
          order.push_back(op);
    const int64_t n = static_cast<int64_t>(order.size());
    if (n == 0) continue;
    std::vector<int64_t> pos(g.num_nodes(), -1);
    for (int64_t i = 0; i < n; ++i)
      if (pos[order[i].index()] < 0) pos[order[i].index()] = i;
    std::vector<int64_t> delta(n + 1, 0);
    auto live = [&](int64_t begin, int64_t end, int64_t bytes) {
      if (bytes <= 0) return;
      begin = std::clamp<int64_t>(begin, 0, n - 1);
      end = std::clamp<int64_t>(end, begin, n - 1);
      delta[begin] += bytes;
      delta[end + 1] -= bytes;
    };
    std::set<uint32_t> arriving;  // tensors produced elsewhere (or inputs) read here
    for (int64_t i = 0; i < n; ++i) {
      const NodeId op = order[i];
      const graph::Node& node = g.node(op);
      // A workload's stated footprint of the op (MOIRAI mi, EfficientMIP size), when it gives one.
      const std::optional<int64_t> stated = cost.StatedMemory(op);
      if (stated) {
        out[ds.device.index()].stated_bytes += std::max<int64_t>(0, *stated);
      } else {
        const int64_t workspace = std::max<int64_t>(
            0, cost.OpMemoryBytes(op) - cost.OpWeightBytes(op) - cost.OpOutputBytes(op));
        live(i, i, workspace);
      }
      for (TensorId t : node.outputs) {
        if (stated) break;  // the outputs of an op with a stated footprint are part of it
        const graph::Tensor& tensor = g.tensor(t);
        int64_t end = i;
        for (NodeId c : tensor.consumers) {
          const graph::Node& cn = g.node(c);
          if (!cn.is_op() || op_device[c.index()] != ds.device) {
            end = n - 1;  // sent elsewhere or a graph output
          } else if (pos[c.index()] >= 0) {
            end = std::max(end, pos[c.index()]);
          }
        }
        live(i, end, tensor.Bytes());
      }
      for (TensorId t : node.inputs) {
        if (!t.valid()) continue;
        const NodeId p = g.tensor(t).producer;
        if (!p.valid()) continue;
        const graph::Node& pn = g.node(p);
        const bool remote = pn.is_op() && op_device[p.index()] != ds.device;
        if (pn.kind == graph::NodeKind::kInput || remote) arriving.insert(t.value());
      }
    }
    for (uint32_t tv : arriving) {
      const graph::Tensor& tensor = g.tensor(TensorId(tv));
      if (tensor.producer.valid() && g.node(tensor.producer).is_op() &&
          cost.StatedMemory(tensor.producer).has_value())
        continue;  // counted in its producer's stated footprint
      int64_t end = 0;
      for (NodeId c : tensor.consumers)
        if (c.index() < pos.size() && pos[c.index()] >= 0 && op_device[c.index()] == ds.device)
          end = std::max(end, pos[c.index()]);
      live(0, end, tensor.Bytes());
    }
    int64_t running = 0, peak = 0;
    for (int64_t i = 0; i < n; ++i) {
      running += delta[i];
      peak = std::max(peak, running);
    }
    out[ds.device.index()].peak_activation_bytes = peak;
  }
  return out;
}

std::vector<std::string> ValidatePlan(const Plan& plan, const cost::CostModel& cost) {
  const graph::Graph& g = cost.graph();
  const hw::Cluster& cluster = cost.cluster();
  std::vector<std::string> violations;
  TaskGraph tg = BuildTaskGraph(plan, g, cluster, &violations);

  for (NodeId op : g.Ops()) {
    const DeviceId d = tg.op_device[op.index()];
    if (d.valid() && !cost.Supports(op, d))
      violations.push_back("op '" + g.node(op).name + "' cannot run on " + cluster.device(d).name +
                           " (the profile marks it unsupported)");
  }

  std::vector<uint32_t> cycle = FindDeadlock(tg);
  if (!cycle.empty()) {
    std::string s = "deadlock: these tasks wait on each other in a cycle: ";
    const size_t shown = std::min<size_t>(cycle.size(), 6);
    for (size_t i = 0; i < shown; ++i) {
      if (i) s += " <- ";
      s += DescribeTask(tg, cycle[i], plan, g, cluster);
    }
    if (shown < cycle.size()) s += " <- ... (" + std::to_string(cycle.size()) + " tasks)";
    violations.push_back(s);
  }

  for (const DeviceMemoryBound& m : PlanMemoryBound(plan, cost)) {
    if (m.capacity_bytes > 0 && m.total() > m.capacity_bytes)
      violations.push_back(
          "memory: " + cluster.device(m.device).name + " needs up to " + Bytes(m.total()) +
          " (weights " + Bytes(m.weight_bytes) + ", activations " + Bytes(m.peak_activation_bytes) +
          (m.stated_bytes > 0 ? ", stated op footprints " + Bytes(m.stated_bytes) : std::string()) +
          ") but has " + Bytes(m.capacity_bytes));
  }

  if (!plan.submodels.empty()) {
    std::vector<int> count(g.num_nodes(), 0);
    for (size_t s = 0; s < plan.submodels.size(); ++s)
      for (NodeId op : plan.submodels[s].ops) {
        if (!op.valid() || op.index() >= g.num_nodes() || !g.node(op).is_op()) {
          violations.push_back("submodels[" + std::to_string(s) + "] ('" + plan.submodels[s].name +
                               "') lists a node that is not an op");
          continue;
        }
        ++count[op.index()];
      }
    for (NodeId op : g.Ops())
      if (count[op.index()] != 1)
        violations.push_back("op '" + g.node(op).name + "' is in " +
                             std::to_string(count[op.index()]) +
                             " submodels (expected exactly one)");
  }
  return violations;
}

Status CheckPlan(const Plan& plan, const cost::CostModel& cost, const std::string& source) {
  std::vector<std::string> v = ValidatePlan(plan, cost);
  if (v.empty()) return Status::Ok();
  std::string msg = source + ": invalid plan (" + std::to_string(v.size()) + " violation" +
                    (v.size() == 1 ? "" : "s") + "):";
  for (const auto& s : v) msg += "\n  - " + s;
  return InvalidArgument(msg);
}

}  // namespace hx::plan
