#include "hexplan/plan/task_graph.h"

#include <algorithm>
#include <map>
#include <set>

namespace hx::plan {
namespace {

bool IsDevicePlace(const hw::Cluster& cluster, PlaceId p) {
  return p.valid() && p.index() < cluster.num_places() &&
         cluster.place(p).kind == hw::PlaceKind::kDevice;
}

std::string PlaceName(const hw::Cluster& cluster, PlaceId p) {
  if (!p.valid() || p.index() >= cluster.num_places()) return "<bad place>";
  return cluster.place(p).name;
}

std::string DeviceName(const hw::Cluster& cluster, DeviceId d) {
  if (!d.valid() || d.index() >= cluster.num_devices()) return "<bad device>";
  return cluster.device(d).name;
}

}  // namespace

int TaskGraph::PlacementOf(NodeId weight, DeviceId device) const {
  if (!weight.valid() || weight.index() >= weight_placements.size()) return -1;
  for (const auto& [d, p] : weight_placements[weight.index()])
    if (d == device) return static_cast<int>(p);
  return -1;
}

std::vector<NodeId> WeightInputs(const graph::Graph& graph, NodeId op) {
  std::vector<NodeId> out;
  for (TensorId t : graph.node(op).inputs) {
    if (!t.valid()) continue;
    NodeId p = graph.tensor(t).producer;
    if (!p.valid() || graph.node(p).kind != graph::NodeKind::kWeight) continue;
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

std::string CheckRoute(const hw::Cluster& cluster, PlaceId src, PlaceId dst,
                       const std::vector<hw::RouteHop>& route) {
  if (src == dst) return "source and destination are the same place";
  if (route.empty()) return "empty route between different places";
  PlaceId at = src;
  for (size_t i = 0; i < route.size(); ++i) {
    const auto& hop = route[i];
    if (!hop.link.valid() || hop.link.index() >= cluster.num_links())
      return "hop " + std::to_string(i) + " names no link of the cluster";
    const hw::Link& l = cluster.link(hop.link);
    PlaceId from = hop.forward ? l.a : l.b;
    PlaceId to = hop.forward ? l.b : l.a;
    if (from != at)
      return "hop " + std::to_string(i) + " (" + l.name + ") starts at " +
             PlaceName(cluster, from) + ", not at " + PlaceName(cluster, at);
    at = to;
  }
  if (at != dst)
    return "route ends at " + PlaceName(cluster, at) + ", not at " + PlaceName(cluster, dst);
  return "";
}

TaskGraph BuildTaskGraph(const Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster,
                         std::vector<std::string>* violations) {
  auto violate = [&](std::string message) { violations->push_back(std::move(message)); };
  const size_t num_nodes = graph.num_nodes();
  TaskGraph tg;
  tg.op_task.assign(num_nodes, kNoTask);
  tg.op_device.assign(num_nodes, DeviceId());
  tg.op_position.assign(num_nodes, 0);
  tg.weight_placements.assign(num_nodes, {});
  tg.transfer_task.assign(plan.transfers.size(), kNoTask);

  // ---- Compute streams and subgraph tasks.
  std::vector<bool> device_seen(cluster.num_devices(), false);
  std::vector<uint32_t> op_subgraph_pos(num_nodes, 0);  // position inside its subgraph
  for (size_t si = 0; si < plan.devices.size(); ++si) {
    const DeviceSchedule& ds = plan.devices[si];
    if (!ds.device.valid() || ds.device.index() >= cluster.num_devices()) {
      violate("devices[" + std::to_string(si) + "]: not a device of cluster '" + cluster.name() +
              "'");
      continue;
    }
    const std::string dname = cluster.device(ds.device).name;
    if (device_seen[ds.device.index()]) {
      violate("devices[" + std::to_string(si) + "]: device " + dname + " has two schedules");
      continue;
    }
    device_seen[ds.device.index()] = true;
    Stream stream;
    stream.name = "compute " + dname;
    stream.compute = true;
    stream.device = ds.device;
    const uint32_t stream_index = static_cast<uint32_t>(tg.streams.size());
    uint32_t position = 0;
    for (size_t gi = 0; gi < ds.subgraphs.size(); ++gi) {
      const uint32_t task_index = static_cast<uint32_t>(tg.tasks.size());
      Task task;
      task.kind = Task::Kind::kSubgraph;
      task.stream = stream_index;
      task.schedule = static_cast<uint32_t>(si);
      task.subgraph = static_cast<uint32_t>(gi);
      tg.tasks.push_back(task);
      stream.tasks.push_back(task_index);
      uint32_t in_sg = 0;
      for (NodeId op : ds.subgraphs[gi].ops) {
        if (!op.valid() || op.index() >= num_nodes) {
          violate("device " + dname + " subgraph " + std::to_string(gi) + ": node id " +
                  std::to_string(op.value()) + " is not in graph '" + graph.name() + "'");
          continue;
        }
        const graph::Node& n = graph.node(op);
        if (!n.is_op()) {
          violate("device " + dname + " subgraph " + std::to_string(gi) + ": '" + n.name +
                  "' is a " + graph::NodeKindName(n.kind) + ", not an operator");
          continue;
        }
        if (tg.op_task[op.index()] != kNoTask) {
          violate("op '" + n.name + "' is placed twice (on " +
                  DeviceName(cluster, tg.op_device[op.index()]) + " and " + dname + ")");
          continue;
        }
        tg.op_task[op.index()] = task_index;
        tg.op_device[op.index()] = ds.device;
        tg.op_position[op.index()] = position++;
        op_subgraph_pos[op.index()] = in_sg++;
      }
    }
    tg.streams.push_back(std::move(stream));
  }
  for (NodeId op : graph.Ops())
    if (tg.op_task[op.index()] == kNoTask)
      violate("op '" + graph.node(op).name + "' is not placed on any device");

  // ---- Weight placements.
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    const WeightPlacement& wp = plan.weights[i];
    const std::string where = "weights[" + std::to_string(i) + "]";
    if (!wp.weight.valid() || wp.weight.index() >= num_nodes ||
        graph.node(wp.weight).kind != graph::NodeKind::kWeight) {
      violate(where + ": not a weight node of graph '" + graph.name() + "'");
      continue;
    }
    const std::string wname = graph.node(wp.weight).name;
    if (!wp.device.valid() || wp.device.index() >= cluster.num_devices()) {
      violate(where + " (" + wname + "): not a device of cluster '" + cluster.name() + "'");
      continue;
    }
    if (tg.PlacementOf(wp.weight, wp.device) >= 0) {
      violate("weight '" + wname + "' has two placements for " + cluster.device(wp.device).name);
      continue;
    }
    if (wp.mode == WeightMode::kRelay) {
      if (!wp.relay.valid() || wp.relay.index() >= cluster.num_devices() || wp.relay == wp.device) {
        violate("weight '" + wname + "' for " + cluster.device(wp.device).name +
                ": relay must be another device of the cluster");
        continue;
      }
    }
    if (wp.mode == WeightMode::kDha && wp.resident)
      violate("weight '" + wname + "' for " + cluster.device(wp.device).name +
              ": a DHA weight stays in host memory and cannot be resident");
    tg.weight_placements[wp.weight.index()].push_back({wp.device, static_cast<uint32_t>(i)});
  }

  // ---- Transfers: index by (tensor, destination device).
  std::map<std::pair<uint32_t, uint32_t>, size_t> load_of;     // (weight node, device) -> transfer
  std::map<std::pair<uint32_t, uint32_t>, size_t> forward_of;  // (weight node, device)
  std::map<std::pair<uint32_t, uint32_t>, size_t> activation_of;  // (tensor, device)
  for (size_t i = 0; i < plan.transfers.size(); ++i) {
    const Transfer& tr = plan.transfers[i];
    const std::string where = "transfers[" + std::to_string(i) + "]";
    if (!tr.tensor.valid() || tr.tensor.index() >= graph.num_tensors()) {
      violate(where + ": not a tensor of graph '" + graph.name() + "'");
      continue;
    }
    const graph::Tensor& t = graph.tensor(tr.tensor);
    const std::string label = where + " (" + TransferKindName(tr.kind) + " of '" + t.name + "')";
    if (!tr.src.valid() || tr.src.index() >= cluster.num_places() || !tr.dst.valid() ||
        tr.dst.index() >= cluster.num_places()) {
      violate(label + ": source or destination is not a place of cluster '" + cluster.name() + "'");
      continue;
    }
    std::string route_problem = CheckRoute(cluster, tr.src, tr.dst, tr.route);
    if (!route_problem.empty()) {
      violate(label + ": no route " + PlaceName(cluster, tr.src) + " -> " +
              PlaceName(cluster, tr.dst) + ": " + route_problem);
      continue;
    }
    if (!IsDevicePlace(cluster, tr.dst)) {
      violate(label + ": destination " + PlaceName(cluster, tr.dst) + " is not a device");
      continue;
    }
    const DeviceId dst = cluster.place(tr.dst).device;
    const NodeId producer = t.producer;
    const bool is_weight =
        producer.valid() && graph.node(producer).kind == graph::NodeKind::kWeight;
    const auto key = std::make_pair(
        tr.kind == TransferKind::kActivation ? tr.tensor.value() : producer.value(), dst.value());
    switch (tr.kind) {
      case TransferKind::kWeightLoad:
        if (!is_weight) {
          violate(label + ": the tensor is not a weight");
          continue;
        }
        if (cluster.place(tr.src).kind != hw::PlaceKind::kHostMemory) {
          violate(label + ": a weight load starts in host memory, not at " +
                  PlaceName(cluster, tr.src));
          continue;
        }
        if (!load_of.emplace(key, i).second) {
          violate(label + ": weight loaded twice into " + cluster.device(dst).name);
          continue;
        }
        break;
      case TransferKind::kWeightForward:
        if (!is_weight) {
          violate(label + ": the tensor is not a weight");
          continue;
        }
        if (!IsDevicePlace(cluster, tr.src)) {
          violate(label + ": a weight forward starts at a relay device, not at " +
                  PlaceName(cluster, tr.src));
          continue;
        }
        if (!forward_of.emplace(key, i).second) {
          violate(label + ": weight forwarded twice into " + cluster.device(dst).name);
          continue;
        }
        break;
      case TransferKind::kActivation:
        if (!producer.valid() || !graph.node(producer).is_op()) {
          violate(label + ": an activation transfer moves the output of an operator");
          continue;
        }
        if (tg.op_device[producer.index()].valid() &&
            (!IsDevicePlace(cluster, tr.src) ||
             cluster.place(tr.src).device != tg.op_device[producer.index()])) {
          violate(label + ": starts at " + PlaceName(cluster, tr.src) + " but its producer '" +
                  graph.node(producer).name + "' runs on " +
                  DeviceName(cluster, tg.op_device[producer.index()]));
          continue;
        }
        if (!activation_of.emplace(key, i).second) {
          violate(label + ": tensor copied twice into " + cluster.device(dst).name);
          continue;
        }
        break;
    }
    Task task;
    task.kind = Task::Kind::kTransfer;
    task.transfer = static_cast<uint32_t>(i);
    tg.transfer_task[i] = static_cast<uint32_t>(tg.tasks.size());
    tg.tasks.push_back(task);
  }

  // ---- Copy queues.
  std::vector<int> queue_of(plan.transfers.size(), -1);
  for (size_t q = 0; q < plan.queues.size(); ++q) {
    const CopyQueue& cq = plan.queues[q];
    Stream stream;
    stream.name = cq.name;
    stream.queue = static_cast<uint32_t>(q);
    const uint32_t stream_index = static_cast<uint32_t>(tg.streams.size());
    for (size_t ti : cq.transfers) {
      if (ti >= plan.transfers.size()) {
        violate("queue '" + cq.name + "': transfer index " + std::to_string(ti) + " out of range");
        continue;
      }
      if (queue_of[ti] >= 0) {
        violate("transfers[" + std::to_string(ti) + "] is on two queues ('" +
                plan.queues[queue_of[ti]].name + "' and '" + cq.name + "')");
        continue;
      }
      queue_of[ti] = static_cast<int>(q);
      if (tg.transfer_task[ti] == kNoTask) continue;
      tg.tasks[tg.transfer_task[ti]].stream = stream_index;
      stream.tasks.push_back(tg.transfer_task[ti]);
    }
    tg.streams.push_back(std::move(stream));
  }
  for (size_t i = 0; i < plan.transfers.size(); ++i)
    if (queue_of[i] < 0)
      violate("transfers[" + std::to_string(i) + "] ('" +
              (plan.transfers[i].tensor.valid() &&
                       plan.transfers[i].tensor.index() < graph.num_tensors()
                   ? graph.tensor(plan.transfers[i].tensor).name
                   : std::string("?")) +
              "') is on no copy queue");

  // ---- Dependencies of subgraphs.
  std::set<std::pair<uint32_t, uint32_t>> used_loads, used_forwards, used_activations;
  std::vector<bool> placement_used(plan.weights.size(), false);
  auto need_weight_on = [&](NodeId w, DeviceId dev, std::vector<uint32_t>* deps,
                            const std::string& who) {
    const int p = tg.PlacementOf(w, dev);
    if (p < 0) {
      violate(who + " on " + cluster.device(dev).name + " reads weight '" + graph.node(w).name +
              "' but the plan gives it no placement there");
      return;
    }
    placement_used[p] = true;
    const WeightPlacement& wp = plan.weights[p];
    if (wp.mode == WeightMode::kDha || wp.resident) return;
    const auto key = std::make_pair(w.value(), dev.value());
    if (wp.mode == WeightMode::kLoad) {
      auto it = load_of.find(key);
      if (it == load_of.end()) {
        violate("weight '" + graph.node(w).name + "' (load into " + cluster.device(dev).name +
                ") has no weight_load transfer");
        return;
      }
      used_loads.insert(key);
      if (tg.transfer_task[it->second] != kNoTask) deps->push_back(tg.transfer_task[it->second]);
    } else {
      auto it = forward_of.find(key);
      if (it == forward_of.end()) {
        violate("weight '" + graph.node(w).name + "' (relayed to " + cluster.device(dev).name +
                ") has no weight_forward transfer");
        return;
      }
      used_forwards.insert(key);
      if (tg.transfer_task[it->second] != kNoTask) deps->push_back(tg.transfer_task[it->second]);
    }
  };

  for (uint32_t ti = 0; ti < tg.tasks.size(); ++ti) {
    Task& task = tg.tasks[ti];
    if (task.kind != Task::Kind::kSubgraph) continue;
    const DeviceSchedule& ds = plan.devices[task.schedule];
    const DeviceId dev = ds.device;
    std::vector<uint32_t> deps;
    for (NodeId op : ds.subgraphs[task.subgraph].ops) {
      if (!op.valid() || op.index() >= num_nodes || tg.op_task[op.index()] != ti) continue;
      const std::string who = "op '" + graph.node(op).name + "'";
      for (NodeId w : WeightInputs(graph, op)) need_weight_on(w, dev, &deps, who);
      for (TensorId t : graph.node(op).inputs) {
        if (!t.valid()) continue;
        const NodeId p = graph.tensor(t).producer;
        if (!p.valid() || !graph.node(p).is_op()) continue;
        const uint32_t ptask = tg.op_task[p.index()];
        if (ptask == kNoTask) continue;  // reported as unplaced
        if (tg.op_device[p.index()] == dev) {
          if (ptask == ti) {
            if (op_subgraph_pos[p.index()] >= op_subgraph_pos[op.index()])
              violate(who + " comes before its input's producer '" + graph.node(p).name +
                      "' in the same subgraph");
          } else {
            deps.push_back(ptask);
          }
          continue;
        }
        const auto key = std::make_pair(t.value(), dev.value());
        auto it = activation_of.find(key);
        if (it == activation_of.end()) {
          violate(who + " on " + cluster.device(dev).name + " reads '" + graph.tensor(t).name +
                  "' from " + cluster.device(tg.op_device[p.index()]).name +
                  " but no activation transfer brings it");
          continue;
        }
        used_activations.insert(key);
        if (tg.transfer_task[it->second] != kNoTask) deps.push_back(tg.transfer_task[it->second]);
      }
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    task.deps = std::move(deps);
  }

  // ---- Dependencies of transfers; superfluous ones.
  for (size_t i = 0; i < plan.transfers.size(); ++i) {
    const uint32_t ti = tg.transfer_task[i];
    if (ti == kNoTask) continue;
    const Transfer& tr = plan.transfers[i];
    const DeviceId dst = cluster.place(tr.dst).device;
    const NodeId producer = graph.tensor(tr.tensor).producer;
    const std::string label = "transfers[" + std::to_string(i) + "] (" + TransferKindName(tr.kind) +
                              " of '" + graph.tensor(tr.tensor).name + "' to " +
                              cluster.device(dst).name + ")";
    switch (tr.kind) {
      case TransferKind::kWeightLoad: {
        const auto key = std::make_pair(producer.value(), dst.value());
        bool needed = used_loads.count(key) > 0;
        // A relay load is needed by a relayed placement through this device.
        for (const auto& [dev, p] : tg.weight_placements[producer.index()]) {
          const WeightPlacement& wp = plan.weights[p];
          if (wp.mode == WeightMode::kRelay && wp.relay == dst && !wp.resident) needed = true;
        }
        if (!needed) violate(label + ": no placement needs it");
        break;
      }
      case TransferKind::kWeightForward: {
        const auto key = std::make_pair(producer.value(), dst.value());
        if (!used_forwards.count(key)) {
          violate(label + ": no placement needs it");
          break;
        }
        const int p = tg.PlacementOf(producer, dst);
        const WeightPlacement& wp = plan.weights[p];
        if (cluster.place(tr.src).device != wp.relay) {
          violate(label + ": starts at " + cluster.place(tr.src).name + " but the relay is " +
                  DeviceName(cluster, wp.relay));
          break;
        }
        const int rp = tg.PlacementOf(producer, wp.relay);
        if (rp >= 0 && plan.weights[rp].mode == WeightMode::kLoad && plan.weights[rp].resident)
          break;  // already on the relay
        auto it = load_of.find(std::make_pair(producer.value(), wp.relay.value()));
        if (it == load_of.end()) {
          violate(label + ": relay " + DeviceName(cluster, wp.relay) +
                  " never loads the weight (no weight_load into it)");
          break;
        }
        if (tg.transfer_task[it->second] != kNoTask)
          tg.tasks[ti].deps.push_back(tg.transfer_task[it->second]);
        break;
      }
      case TransferKind::kActivation: {
        const auto key = std::make_pair(tr.tensor.value(), dst.value());
        if (!used_activations.count(key)) {
          violate(label + ": no op on the destination reads it");
          break;
        }
        if (tg.op_task[producer.index()] != kNoTask)
          tg.tasks[ti].deps.push_back(tg.op_task[producer.index()]);
        break;
      }
    }
  }
  for (size_t p = 0; p < plan.weights.size(); ++p) {
    const WeightPlacement& wp = plan.weights[p];
    if (placement_used[p] || !wp.weight.valid() || wp.weight.index() >= num_nodes ||
        !wp.device.valid() || wp.device.index() >= cluster.num_devices())
      continue;
    if (tg.PlacementOf(wp.weight, wp.device) != static_cast<int>(p)) continue;  // duplicate
    violate("weights[" + std::to_string(p) + "]: no op on " + cluster.device(wp.device).name +
            " reads '" + graph.node(wp.weight).name + "'");
  }
  return tg;
}

std::vector<uint32_t> FindDeadlock(const TaskGraph& tg) {
  const size_t n = tg.tasks.size();
  // Successor lists: deps and stream order.
  std::vector<std::vector<uint32_t>> succ(n);
  std::vector<uint32_t> indegree(n, 0);
  for (uint32_t t = 0; t < n; ++t)
    for (uint32_t d : tg.tasks[t].deps) {
      succ[d].push_back(t);
      ++indegree[t];
    }
  for (const Stream& s : tg.streams)
    for (size_t i = 1; i < s.tasks.size(); ++i) {
      succ[s.tasks[i - 1]].push_back(s.tasks[i]);
      ++indegree[s.tasks[i]];
    }
  std::vector<uint32_t> ready;
  for (uint32_t t = 0; t < n; ++t)
    if (indegree[t] == 0) ready.push_back(t);
  size_t done = 0;
  while (!ready.empty()) {
    uint32_t t = ready.back();
    ready.pop_back();
    ++done;
    for (uint32_t s : succ[t])
      if (--indegree[s] == 0) ready.push_back(s);
  }
  if (done == n) return {};
  // Walk predecessors among the blocked tasks until one repeats: that is a cycle.
  std::vector<std::vector<uint32_t>> pred(n);
  for (uint32_t t = 0; t < n; ++t)
    for (uint32_t s : succ[t]) pred[s].push_back(t);
  uint32_t start = 0;
  while (indegree[start] == 0) ++start;
  std::vector<int> seen_at(n, -1);
  std::vector<uint32_t> walk;
  uint32_t at = start;
  while (seen_at[at] < 0) {
    seen_at[at] = static_cast<int>(walk.size());
    walk.push_back(at);
    for (uint32_t p : pred[at])
      if (indegree[p] > 0) {
        at = p;
        break;
      }
  }
  std::vector<uint32_t> cycle(walk.begin() + seen_at[at], walk.end());
  std::reverse(cycle.begin(), cycle.end());
  return cycle;
}

std::string DescribeTask(const TaskGraph& tg, uint32_t task, const Plan& plan,
                         const graph::Graph& graph, const hw::Cluster& cluster) {
  const Task& t = tg.tasks[task];
  if (t.kind == Task::Kind::kSubgraph) {
    const DeviceSchedule& ds = plan.devices[t.schedule];
    const auto& ops = ds.subgraphs[t.subgraph].ops;
    std::string s =
        "subgraph " + std::to_string(t.subgraph) + " of " + DeviceName(cluster, ds.device);
    if (!ops.empty() && ops.front().valid() && ops.front().index() < graph.num_nodes()) {
      s += " (" + graph.node(ops.front()).name;
      if (ops.size() > 1 && ops.back().valid() && ops.back().index() < graph.num_nodes())
        s += " .. " + graph.node(ops.back()).name;
      s += ")";
    }
    return s;
  }
  const Transfer& tr = plan.transfers[t.transfer];
  std::string s = "transfer " + std::to_string(t.transfer) + " (" + TransferKindName(tr.kind) +
                  " '" + graph.tensor(tr.tensor).name + "' " + PlaceName(cluster, tr.src) + " -> " +
                  PlaceName(cluster, tr.dst);
  if (t.stream < tg.streams.size()) s += " on " + tg.streams[t.stream].name;
  return s + ")";
}

}  // namespace hx::plan
