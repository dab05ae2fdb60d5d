#include "hexplan/plan/plan_builder.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "hexplan/plan/task_graph.h"

namespace hx::plan {

std::string InQueueName(const hw::Cluster& cluster, DeviceId device) {
  return cluster.device(device).name + "/in";
}
std::string OutQueueName(const hw::Cluster& cluster, DeviceId device) {
  return cluster.device(device).name + "/out";
}
std::string ForwardQueueName(const hw::Cluster& cluster, DeviceId relay) {
  return cluster.device(relay).name + "/pt";
}

Status CompleteTransfers(Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster) {
  const size_t num_nodes = graph.num_nodes();
  std::vector<DeviceId> op_device(num_nodes);
  std::vector<int64_t> op_pos(num_nodes, -1);
  for (const DeviceSchedule& ds : plan.devices) {
    if (!ds.device.valid() || ds.device.index() >= cluster.num_devices())
      return InvalidArgument("plan schedules a device that is not in cluster '" + cluster.name() +
                             "'");
    int64_t pos = 0;
    for (const Subgraph& sg : ds.subgraphs)
      for (NodeId op : sg.ops) {
        if (!op.valid() || op.index() >= num_nodes || !graph.node(op).is_op())
          return InvalidArgument("plan schedules a node that is not an op of graph '" +
                                 graph.name() + "'");
        op_device[op.index()] = ds.device;
        op_pos[op.index()] = pos++;
      }
  }
  for (NodeId op : graph.Ops())
    if (!op_device[op.index()].valid())
      return InvalidArgument("op '" + graph.node(op).name + "' is on no device");

  // Existing placements and transfers.
  std::map<std::pair<uint32_t, uint32_t>, size_t> placement;  // (weight, device)
  for (size_t i = 0; i < plan.weights.size(); ++i)
    placement[{plan.weights[i].weight.value(), plan.weights[i].device.value()}] = i;
  std::set<std::tuple<int, uint32_t, uint32_t>> have;  // (kind, tensor, dst place)
  for (const Transfer& t : plan.transfers)
    have.insert({static_cast<int>(t.kind), t.tensor.value(), t.dst.value()});

  // First-need key of (weight, device): the position of the first reader there.
  std::map<std::pair<uint32_t, uint32_t>, int64_t> first_need;
  for (NodeId op : graph.Ops()) {
    const DeviceId d = op_device[op.index()];
    for (NodeId w : WeightInputs(graph, op)) {
      auto key = std::make_pair(w.value(), d.value());
      auto it = first_need.find(key);
      if (it == first_need.end() || op_pos[op.index()] < it->second)
        first_need[key] = op_pos[op.index()];
      if (!placement.count(key)) {
        WeightPlacement wp;
        wp.weight = w;
        wp.device = d;
        wp.mode = WeightMode::kLoad;
        placement[key] = plan.weights.size();
        plan.weights.push_back(wp);
      }
    }
  }

  struct Pending {
    int64_t key;
    uint32_t seq;
    Transfer transfer;
    std::string queue;
  };
  std::vector<Pending> pending;
  auto add = [&](TransferKind kind, TensorId tensor, PlaceId src, PlaceId dst, int64_t key,
                 const std::string& queue) {
    if (!have.insert({static_cast<int>(kind), tensor.value(), dst.value()}).second) return;
    Transfer t;
    t.kind = kind;
    t.tensor = tensor;
    t.src = src;
    t.dst = dst;
    t.route = cluster.GetRoute(src, dst).hops;
    pending.push_back({key, static_cast<uint32_t>(pending.size()), std::move(t), queue});
  };

  for (const WeightPlacement& wp : plan.weights) {
    if (wp.mode == WeightMode::kDha || wp.resident) continue;
    const TensorId tensor = graph.node(wp.weight).outputs[0];
    auto it = first_need.find({wp.weight.value(), wp.device.value()});
    const int64_t key = it == first_need.end() ? 0 : it->second;
    if (wp.mode == WeightMode::kLoad) {
      add(TransferKind::kWeightLoad, tensor, cluster.HostOf(wp.device), cluster.PlaceOf(wp.device),
          key, InQueueName(cluster, wp.device));
    } else {
      if (!wp.relay.valid() || wp.relay.index() >= cluster.num_devices())
        return InvalidArgument("weight '" + graph.node(wp.weight).name +
                               "' is relayed through a device that is not in the cluster");
      add(TransferKind::kWeightLoad, tensor, cluster.HostOf(wp.relay), cluster.PlaceOf(wp.relay),
          key, InQueueName(cluster, wp.relay));
      add(TransferKind::kWeightForward, tensor, cluster.PlaceOf(wp.relay),
          cluster.PlaceOf(wp.device), key, ForwardQueueName(cluster, wp.relay));
    }
  }
  for (NodeId op : graph.Ops()) {
    const DeviceId src = op_device[op.index()];
    for (TensorId t : graph.node(op).outputs) {
      std::set<uint32_t> dsts;
      for (NodeId c : graph.tensor(t).consumers)
        if (graph.node(c).is_op() && op_device[c.index()] != src)
          dsts.insert(op_device[c.index()].value());
      for (uint32_t d : dsts)
        add(TransferKind::kActivation, t, cluster.PlaceOf(src), cluster.PlaceOf(DeviceId(d)),
            op_pos[op.index()], OutQueueName(cluster, src));
    }
  }
  std::stable_sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) {
    return std::tie(a.key, a.seq) < std::tie(b.key, b.seq);
  });
  for (Pending& p : pending) plan.AddTransfer(std::move(p.transfer), p.queue);
  return Status::Ok();
}

void StampPlan(Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster,
               const std::string& model_spec, const graph::ZooOptions& options,
               const std::string& cluster_spec) {
  plan.model.spec = model_spec;
  plan.model.options = options;
  plan.model.name = graph.name();
  plan.model.hash = GraphFingerprint(graph);
  plan.cluster.spec = cluster_spec;
  plan.cluster.name = cluster.name();
  plan.cluster.hash = ClusterFingerprint(cluster);
}

namespace {

// Drops the weight loads and forwards no placement needs any more (resident or DHA weights) and
// renumbers the queues.
bool ValidDevice(const hw::Cluster& cluster, DeviceId d) {
  return d.valid() && d.index() < cluster.num_devices();
}

// The weight's tensor, or an invalid id for a node that is not one.
TensorId WeightTensor(const graph::Graph& graph, NodeId w) {
  return (w.valid() && w.index() < graph.num_nodes() && !graph.node(w).outputs.empty())
             ? graph.node(w).outputs[0]
             : TensorId();
}

// Whether the placement's weight is copied during a run (a load, or a load and a forward): not
// read in place, not resident, and naming a real weight and device.
bool IsCopiedEachRun(const WeightPlacement& wp, const graph::Graph& graph,
                     const hw::Cluster& cluster) {
  return wp.mode != WeightMode::kDha && !wp.resident && WeightTensor(graph, wp.weight).valid() &&
         ValidDevice(cluster, wp.device);
}

void DropUnneededWeightTransfers(Plan& plan, const graph::Graph& graph,
                                 const hw::Cluster& cluster) {
  std::set<std::pair<uint32_t, uint32_t>> need_load, need_forward;  // (tensor, dst place)
  for (const WeightPlacement& wp : plan.weights) {
    if (!IsCopiedEachRun(wp, graph, cluster)) continue;
    const TensorId t = WeightTensor(graph, wp.weight);
    if (wp.mode == WeightMode::kLoad)
      need_load.insert({t.value(), cluster.PlaceOf(wp.device).value()});
    if (wp.mode == WeightMode::kRelay && ValidDevice(cluster, wp.relay)) {
      need_load.insert({t.value(), cluster.PlaceOf(wp.relay).value()});
      need_forward.insert({t.value(), cluster.PlaceOf(wp.device).value()});
    }
  }
  std::vector<size_t> new_index(plan.transfers.size(), ~size_t{0});
  std::vector<Transfer> kept;
  for (size_t i = 0; i < plan.transfers.size(); ++i) {
    const Transfer& t = plan.transfers[i];
    const auto key = std::make_pair(t.tensor.value(), t.dst.value());
    const bool keep = t.kind == TransferKind::kActivation ||
                      (t.kind == TransferKind::kWeightLoad && need_load.count(key)) ||
                      (t.kind == TransferKind::kWeightForward && need_forward.count(key));
    if (!keep) continue;
    new_index[i] = kept.size();
    kept.push_back(t);
  }
  plan.transfers = std::move(kept);
  for (CopyQueue& q : plan.queues) {
    std::vector<size_t> ts;
    for (size_t t : q.transfers)
      if (t < new_index.size() && new_index[t] != ~size_t{0}) ts.push_back(new_index[t]);
    q.transfers = std::move(ts);
  }
}

}  // namespace

Status ApplyWarmStart(Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster,
                      double fraction) {
  if (!(fraction >= 0.0 && fraction <= 1.0))
    return InvalidArgument("--warm: the fraction of resident parameters must be in [0, 1], got " +
                           std::to_string(fraction));
  // Queue position (position, queue) of every transfer.
  const std::pair<size_t, size_t> kNowhere{~size_t{0}, ~size_t{0}};
  std::vector<std::pair<size_t, size_t>> qpos(plan.transfers.size(), kNowhere);
  for (size_t q = 0; q < plan.queues.size(); ++q)
    for (size_t i = 0; i < plan.queues[q].transfers.size(); ++i)
      if (plan.queues[q].transfers[i] < qpos.size()) qpos[plan.queues[q].transfers[i]] = {i, q};
  std::map<std::pair<uint32_t, uint32_t>, size_t> load_of;  // (tensor, dst place) -> transfer
  for (size_t i = 0; i < plan.transfers.size(); ++i)
    if (plan.transfers[i].kind == TransferKind::kWeightLoad)
      load_of[{plan.transfers[i].tensor.value(), plan.transfers[i].dst.value()}] = i;

  // Loaded placements in the order their loads are queued.
  std::vector<std::tuple<size_t, size_t, size_t>> order;  // (position, queue, placement)
  double total = 0.0;
  std::vector<double> bytes(plan.weights.size(), 0.0);
  for (size_t p = 0; p < plan.weights.size(); ++p) {
    const WeightPlacement& wp = plan.weights[p];
    if (!IsCopiedEachRun(wp, graph, cluster)) continue;
    const TensorId t = WeightTensor(graph, wp.weight);
    const DeviceId lands = wp.mode == WeightMode::kRelay ? wp.relay : wp.device;
    if (!ValidDevice(cluster, lands)) continue;
    bytes[p] = static_cast<double>(graph.tensor(t).Bytes());
    total += bytes[p];
    auto it = load_of.find({t.value(), cluster.PlaceOf(lands).value()});
    const auto pos = it == load_of.end() ? kNowhere : qpos[it->second];
    order.push_back({pos.first, pos.second, p});
  }
  std::sort(order.begin(), order.end());
  const double budget = fraction * total;
  double done = 0.0;
  for (const auto& [pos, q, p] : order) {
    if (fraction < 1.0 && done + bytes[p] > budget + 1e-9) break;
    plan.weights[p].resident = true;
    done += bytes[p];
  }

  DropUnneededWeightTransfers(plan, graph, cluster);
  return Status::Ok();
}

void ReadCpuWeightsInPlace(Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster) {
  for (WeightPlacement& wp : plan.weights) {
    if (wp.mode != WeightMode::kLoad || !IsCopiedEachRun(wp, graph, cluster) ||
        cluster.device(wp.device).kind != hw::DeviceKind::kCpu)
      continue;
    wp.mode = WeightMode::kDha;
  }
  DropUnneededWeightTransfers(plan, graph, cluster);
}

}  // namespace hx::plan
