#include "hexplan/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <unordered_map>

#include "hexplan/plan/task_graph.h"
#include "hexplan/sim/flow_network.h"

namespace hx::sim {

const char* CopyModeName(CopyMode mode) {
  return mode == CopyMode::kExclusiveBus ? "exclusive-bus" : "plan";
}

Status SimOptions::Validate() const {
  if (copy_mode != CopyMode::kPlanQueues && copy_mode != CopyMode::kExclusiveBus)
    return InvalidArgument("simulator options: unknown copy mode");
  return Status::Ok();
}

plan::Plan RegroupLoadsByBus(const plan::Plan& plan, const graph::Graph& graph,
                             const hw::Cluster& cluster) {
  using plan::TransferKind;
  plan::Plan out = plan;
  const size_t num_nodes = graph.num_nodes();
  // First subgraph (index in its device's order) reading each weight on each device.
  std::map<std::pair<uint32_t, uint32_t>, size_t> first_sg;  // (weight, device) -> subgraph
  for (const plan::DeviceSchedule& ds : plan.devices)
    for (size_t s = 0; s < ds.subgraphs.size(); ++s)
      for (NodeId op : ds.subgraphs[s].ops) {
        if (!op.valid() || op.index() >= num_nodes || !graph.node(op).is_op()) continue;
        for (NodeId w : plan::WeightInputs(graph, op))
          first_sg.emplace(std::make_pair(w.value(), ds.device.value()), s);
      }
  // The group of a load of weight w into device x: the first subgraph of any placement it serves.
  auto group_of = [&](NodeId w, DeviceId x) {
    size_t best = std::numeric_limits<size_t>::max();
    for (const plan::WeightPlacement& wp : plan.weights) {
      if (wp.weight != w) continue;
      const bool served = (wp.mode == plan::WeightMode::kLoad && wp.device == x) ||
                          (wp.mode == plan::WeightMode::kRelay && wp.relay == x);
      if (!served) continue;
      auto it = first_sg.find({w.value(), wp.device.value()});
      if (it != first_sg.end()) best = std::min(best, it->second);
    }
    return best;
  };
  struct Group {
    size_t key;
    std::vector<size_t> transfers;
  };
  // bus link -> destination place -> groups in order.
  std::map<uint32_t, std::map<uint32_t, std::vector<Group>>> buses;
  for (plan::CopyQueue& q : out.queues) {
    std::vector<size_t> keep;
    for (size_t t : q.transfers) {
      if (t >= out.transfers.size()) {
        keep.push_back(t);
        continue;
      }
      const plan::Transfer& tr = out.transfers[t];
      const bool load = tr.kind == TransferKind::kWeightLoad && !tr.route.empty() &&
                        tr.tensor.valid() && tr.tensor.index() < graph.num_tensors() &&
                        tr.dst.valid() && tr.dst.index() < cluster.num_places() &&
                        cluster.place(tr.dst).kind == hw::PlaceKind::kDevice;
      if (!load) {
        keep.push_back(t);
        continue;
      }
      const NodeId w = graph.tensor(tr.tensor).producer;
      const size_t key = group_of(w, cluster.place(tr.dst).device);
      auto& groups = buses[tr.route.front().link.value()][tr.dst.value()];
      if (groups.empty() || groups.back().key != key) groups.push_back({key, {}});
      groups.back().transfers.push_back(t);
    }
    q.transfers = std::move(keep);
  }
  std::vector<plan::CopyQueue> queues;
  for (plan::CopyQueue& q : out.queues)
    if (!q.transfers.empty()) queues.push_back(std::move(q));
  for (auto& [link, dsts] : buses) {
    plan::CopyQueue q;
    q.name = "bus " + cluster.link(LinkId(link)).name;
    std::vector<std::pair<std::vector<Group>*, size_t>> cursors;
    for (auto& [place, groups] : dsts) cursors.push_back({&groups, 0});
    bool any = true;
    while (any) {
      any = false;
      for (auto& [groups, next] : cursors) {
        if (next >= groups->size()) continue;
        any = true;
        for (size_t t : (*groups)[next].transfers) q.transfers.push_back(t);
        ++next;
      }
    }
    queues.push_back(std::move(q));
  }
  out.queues = std::move(queues);
  return out;
}

namespace {

using plan::kNoTask;
using plan::Task;
using plan::TaskGraph;

constexpr uint32_t kNone = ~0u;

struct OpInfo {
  NodeId op;
  double duration = 0.0;  // non-DHA: the op time; DHA: the DHA time
  bool dha = false;
  double dha_bytes = 0.0;
  double dha_flow_bytes = 0.0;  // dha_bytes / the mapped copies' fraction of the link
  double dha_latency = 0.0;
  double dha_tail = 0.0;  // DHA time beyond the uncontended read
  std::vector<uint32_t> dha_resources;
  int64_t workspace = 0;
  std::vector<uint32_t> alloc_at_start;     // buffers
  std::vector<uint32_t> release_at_finish;  // buffer references
};

struct Buffer {
  DeviceId device;
  int64_t bytes = 0;
  int refs = 0;
  bool pinned = false;
  bool allocated = false;
  bool freed = false;
};

struct Event {
  double time;
  uint64_t seq;
  uint8_t type;
  uint32_t a;
  uint32_t b;
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

enum EventType : uint8_t { kOpDone, kFlowStart, kFlowDone, kDelivered };

class Engine {
 public:
  Engine(const plan::Plan& plan, const cost::CostModel& cost, TaskGraph tg, SimObserver* observer)
      : plan_(plan),
        cost_(cost),
        graph_(cost.graph()),
        cluster_(cost.cluster()),
        tg_(std::move(tg)),
        observer_(observer),
        net_(Capacities(cost.cluster()), SharedEfficiencies(cost)) {}

  SimResult Run();

 private:
  static std::vector<double> Capacities(const hw::Cluster& cluster) {
    std::vector<double> caps(2 * cluster.num_links(), 0.0);
    for (size_t l = 0; l < cluster.num_links(); ++l) {
      caps[2 * l] = cluster.link(LinkId(l)).bandwidth_bytes_per_s;
      caps[2 * l + 1] = cluster.link(LinkId(l)).bandwidth_bytes_per_s;
    }
    return caps;
  }
  // What two copies at once get of a link (the cost model's calibrations say; 1: all of it).
  static std::vector<double> SharedEfficiencies(const cost::CostModel& cost) {
    std::vector<double> eff(2 * cost.cluster().num_links(), 1.0);
    for (size_t l = 0; l < cost.cluster().num_links(); ++l)
      eff[2 * l] = eff[2 * l + 1] = cost.SharedBusEfficiency(LinkId(l));
    return eff;
  }
  uint32_t Resource(const hw::RouteHop& hop) const {
    const bool duplex = cluster_.link(hop.link).full_duplex;
    return 2 * hop.link.value() + ((duplex && !hop.forward) ? 1 : 0);
  }
  std::vector<uint32_t> Resources(const std::vector<hw::RouteHop>& route) const {
    std::vector<uint32_t> out;
    for (const auto& h : route) out.push_back(Resource(h));
    return out;
  }
  // The devices at both ends of a transfer between two devices (none when either end is not a
  // device: host memory, a switch).
  std::optional<std::pair<DeviceId, DeviceId>> DeviceEnds(const plan::Transfer& tr) const {
    const hw::Place& sp = cluster_.place(tr.src);
    const hw::Place& dp = cluster_.place(tr.dst);
    if (sp.kind != hw::PlaceKind::kDevice || dp.kind != hw::PlaceKind::kDevice) return std::nullopt;
    return std::make_pair(sp.device, dp.device);
  }
  // The latency of a route's hops of one kind: a network's (Ethernet, InfiniBand), which carries
  // several messages at once, or the rest, whose copy engine runs its copies one at a time.
  static double Latency(const hw::Cluster& cluster, const std::vector<hw::RouteHop>& route,
                        bool network) {
    double s = 0.0;
    for (const auto& h : route) {
      const hw::Link& link = cluster.link(h.link);
      const bool is_network =
          link.kind == hw::LinkKind::kEthernet || link.kind == hw::LinkKind::kInfiniband;
      if (is_network == network) s += link.latency_s;
    }
    return s;
  }

  // Receive costs not yet charged, by RecvKey(tensor, destination device): the first op there that
  // reads the tensor (in plan order) pays it.
  using RecvPending = std::unordered_map<uint64_t, double>;
  uint64_t RecvKey(TensorId t, DeviceId d) const {
    return uint64_t{t.value()} * cluster_.num_devices() + d.value();
  }

  // Setup, step by step: the static data of the run (what each task does and holds) and the
  // initial state.
  void Setup();
  void SetupResults();
  void SetupDependencies();
  void SetupTransfers(RecvPending& recv_pending);
  // A workload's measured time for activation transfer `i` (the profile's per-edge time, through
  // the cost model) splits into flow, latency and the work of the sending and receiving threads.
  void ApplyMeasuredCopyTime(size_t i, RecvPending& recv_pending);
  // Per subgraph task: its ops' times, memory and buffers. Returns the footprints the workload
  // states, per device (held for the whole run).
  std::vector<int64_t> SetupOps(RecvPending& recv_pending);
  OpInfo TimeOp(NodeId op, DeviceId dev) const;
  // Adds to `extra` the receive costs of the tensors `op` is the first reader of on `dev`.
  void ChargeRecvCosts(NodeId op, DeviceId dev, RecvPending& recv_pending, double* extra) const;
  void AttachOpBuffers(OpInfo& info, NodeId op, DeviceId dev);
  void SetupState();
  void SetupCpuContention();
  // Time zero: stated op footprints, resident weights and graph inputs.
  void SetupTimeZero(const std::vector<int64_t>& stated_bytes);
  void Push(double time, uint8_t type, uint32_t a, uint32_t b = 0) {
    events_.push(Event{time, seq_++, type, a, b});
  }
  void Emit(SimEvent e) {
    if (observer_) observer_->OnEvent(e);
  }
  uint32_t BufferFor(TensorId t, DeviceId d) {
    const uint64_t key = static_cast<uint64_t>(t.value()) * cluster_.num_devices() + d.value();
    auto it = buffer_of_.find(key);
    if (it != buffer_of_.end()) return it->second;
    const uint32_t id = static_cast<uint32_t>(buffers_.size());
    Buffer b;
    b.device = d;
    b.bytes = graph_.tensor(t).Bytes();
    // A workload that states its producer's footprint counts the tensor in it (see Setup).
    const NodeId producer = graph_.tensor(t).producer;
    if (producer.valid() && graph_.node(producer).is_op() &&
        cost_.StatedMemory(producer).has_value())
      b.bytes = 0;
    buffers_.push_back(b);
    buffer_of_.emplace(key, id);
    return id;
  }
  void ChangeMemory(DeviceId d, int64_t delta, double now);
  void Allocate(uint32_t buffer, double now);
  void Release(uint32_t buffer, double now);

  // CPU core-group contention (docs/runtime.md): the ops running on the CPU devices of one node
  // progress at rate 1 / (1 + gamma * (busy - 1)), re-rated whenever one starts or finishes.
  void Rerate(uint32_t group, double now);

  void TryStart(uint32_t stream, double now);
  void StartTask(uint32_t task, double now);
  void StartOp(uint32_t task, double now);
  void FinishOp(uint32_t task, double now);
  void ActivateFlow(uint32_t task, double now);
  // A transfer's bytes have left: its stream takes the next task, its dependents wait out the
  // route's latency.
  void TransferSent(uint32_t task, double now);
  // Frees `task`'s stream for its next task, once; true when this call freed it.
  bool FreeStream(uint32_t task, double now);
  void FinishTask(uint32_t task, double now);
  void AfterNetworkChange(double now);
  void AccountResource(uint32_t r, double now);

  const plan::Plan& plan_;
  const cost::CostModel& cost_;
  const graph::Graph& graph_;
  const hw::Cluster& cluster_;
  TaskGraph tg_;
  SimObserver* observer_;
  FlowNetwork net_;

  // Static data.
  std::vector<std::vector<uint32_t>> task_ops_;  // subgraph task -> indices into op_info_
  std::vector<OpInfo> op_info_;
  std::vector<std::vector<uint32_t>> dependents_;
  std::vector<uint32_t> stream_pred_;  // per task: the task before it on its stream
  // Per transfer: the time before its bytes flow that holds its stream (the per-copy setup and the
  // latency of the route's copy-engine hops, or a profile's measured residual), and the latency of
  // its network hops after them, which does not: a stream posts its next message while the last
  // is still in flight.
  std::vector<double> transfer_setup_;
  std::vector<double> transfer_propagation_;
  // Per transfer: 1 / the fraction of the links its copy kind reaches (the cost model's CopyCost):
  // the flow carries bytes * this over the nominal capacities.
  std::vector<double> transfer_flow_scale_;
  std::vector<double> send_cost_;  // per node: the profile's send costs of its outgoing copies
  std::vector<std::vector<uint32_t>> transfer_resources_;
  std::vector<uint32_t> transfer_alloc_;    // buffer allocated at start (or kNone)
  std::vector<uint32_t> transfer_release_;  // buffer reference released at finish (or kNone)
  std::vector<Buffer> buffers_;
  std::unordered_map<uint64_t, uint32_t> buffer_of_;

  // Dynamic state.
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  uint64_t seq_ = 0;
  uint64_t num_events_ = 0;
  std::vector<int> remaining_deps_;
  std::vector<double> start_, finish_;
  std::vector<double> stream_free_;  // per task: when its stream took the next task (or -1)
  std::vector<uint8_t> done_;
  std::vector<uint32_t> crit_pred_;
  std::vector<uint32_t> next_op_;  // subgraph tasks: index into task_ops_ of the running op
  std::vector<double> op_start_;   // subgraph tasks: start of the running op
  std::vector<uint32_t> head_;     // per stream
  std::vector<uint8_t> busy_;      // per stream
  std::vector<uint32_t> flow_owner_;
  std::vector<uint32_t> flow_version_;
  std::vector<uint32_t> task_flow_;
  std::vector<double> res_rate_, res_last_, res_busy_, res_bytes_;
  std::vector<int64_t> mem_now_;
  std::vector<double> cpu_gamma_;                    // per device: measured contention, or 0
  std::vector<uint32_t> cpu_group_;                  // per device: its node's group, or kNone
  std::vector<std::vector<uint32_t>> group_tasks_;   // per group: tasks running a contended op
  std::vector<uint8_t> op_shared_;                   // per task: its running op is contended
  std::vector<double> op_work_, op_rate_, op_last_;  // per task: seconds of work left at rate 1
  std::vector<uint32_t> op_version_;
  SimResult result_;
};

void Engine::Setup() {
  SetupResults();
  SetupDependencies();
  // Buffers: weights.
  for (const plan::WeightPlacement& wp : plan_.weights) {
    if (wp.mode == plan::WeightMode::kDha) continue;
    const TensorId t = graph_.node(wp.weight).outputs[0];
    const uint32_t b = BufferFor(t, wp.device);
    buffers_[b].pinned = true;
  }
  RecvPending recv_pending;
  SetupTransfers(recv_pending);
  const std::vector<int64_t> stated_bytes = SetupOps(recv_pending);
  SetupState();
  SetupCpuContention();
  SetupTimeZero(stated_bytes);
}

void Engine::SetupResults() {
  const size_t num_devices = cluster_.num_devices();
  result_.ops.assign(graph_.num_nodes(), OpRecord{});
  result_.transfers.assign(plan_.transfers.size(), TransferRecord{});
  result_.devices.resize(num_devices);
  for (size_t d = 0; d < num_devices; ++d) {
    result_.devices[d].device = DeviceId(d);
    result_.devices[d].name = cluster_.device(DeviceId(d)).name;
    result_.devices[d].capacity_bytes = cluster_.device(DeviceId(d)).memory_bytes();
    result_.devices[d].memory.push_back({0.0, 0});
  }
  mem_now_.assign(num_devices, 0);
}

void Engine::SetupDependencies() {
  const size_t num_tasks = tg_.tasks.size();
  dependents_.assign(num_tasks, {});
  remaining_deps_.assign(num_tasks, 0);
  for (uint32_t t = 0; t < num_tasks; ++t) {
    remaining_deps_[t] = static_cast<int>(tg_.tasks[t].deps.size());
    for (uint32_t d : tg_.tasks[t].deps) dependents_[d].push_back(t);
  }
  stream_pred_.assign(num_tasks, kNone);
  for (const plan::Stream& s : tg_.streams)
    for (size_t i = 1; i < s.tasks.size(); ++i) stream_pred_[s.tasks[i]] = s.tasks[i - 1];
}

void Engine::SetupTransfers(RecvPending& recv_pending) {
  const size_t nt = plan_.transfers.size();
  transfer_setup_.assign(nt, 0.0);
  transfer_propagation_.assign(nt, 0.0);
  transfer_flow_scale_.assign(nt, 1.0);
  send_cost_.assign(graph_.num_nodes(), 0.0);
  transfer_resources_.assign(nt, {});
  transfer_alloc_.assign(nt, kNone);
  transfer_release_.assign(nt, kNone);
  for (size_t i = 0; i < nt; ++i) {
    const plan::Transfer& tr = plan_.transfers[i];
    transfer_setup_[i] = Latency(cluster_, tr.route, /*network=*/false);
    transfer_propagation_[i] = Latency(cluster_, tr.route, /*network=*/true);
    transfer_resources_[i] = Resources(tr.route);
    if (!tr.route.empty()) {
      const cost::CopyCost copy = cost_.CopyCostFor(tr.src, tr.dst, cost::HostMemory::kPinned);
      transfer_setup_[i] += copy.fixed_s;
      transfer_flow_scale_[i] = 1.0 / copy.fraction;
    }
    if (tr.kind == plan::TransferKind::kActivation) ApplyMeasuredCopyTime(i, recv_pending);
    const DeviceId dst = cluster_.place(tr.dst).device;
    transfer_alloc_[i] = BufferFor(tr.tensor, dst);
    if (tr.kind != plan::TransferKind::kWeightLoad) {
      const DeviceId src = cluster_.place(tr.src).device;
      const uint32_t sb = BufferFor(tr.tensor, src);
      ++buffers_[sb].refs;
      transfer_release_[i] = sb;
    }
  }
}

void Engine::ApplyMeasuredCopyTime(size_t i, RecvPending& recv_pending) {
  const plan::Transfer& tr = plan_.transfers[i];
  const std::optional<std::pair<DeviceId, DeviceId>> ends = DeviceEnds(tr);
  if (!ends) return;
  const auto [a, b] = *ends;
  // A workload's measured per-edge time (MOIRAI's pc_kk') is how long the copy takes without
  // contention: the bytes still flow over the route, the rest of the time is latency.
  const std::optional<double> measured = cost_.ProfiledTransferTime(tr.tensor, a, b);
  if (!measured) return;
  double flow = 0.0;
  double bottleneck = std::numeric_limits<double>::infinity();
  for (const hw::RouteHop& h : tr.route)
    bottleneck = std::min(bottleneck, cluster_.link(h.link).bandwidth_bytes_per_s);
  const double bytes = static_cast<double>(graph_.tensor(tr.tensor).Bytes());
  if (bytes > 0.0 && bottleneck > 0.0 && std::isfinite(bottleneck))
    flow = bytes * transfer_flow_scale_[i] / bottleneck;
  // The part the sender's thread does itself (a CPU core group copies what it produced)
  // keeps the producing op's device busy; the rest is latency.
  // The part the receiver's thread does (its first read of the tensor) lengthens the op
  // that reads it there.
  const double send = std::min(*measured, cost_.TransferSendCost(a, b).value_or(0.0));
  const double recv = std::min(*measured - send, cost_.TransferRecvCost(a, b).value_or(0.0));
  const NodeId producer = graph_.tensor(tr.tensor).producer;
  if (send > 0.0 && producer.valid()) send_cost_[producer.index()] += send;
  if (recv > 0.0) recv_pending[RecvKey(tr.tensor, cluster_.place(tr.dst).device)] += recv;
  // The residual is latency; what it adds to the route's own holds the stream.
  transfer_setup_[i] =
      std::max(transfer_setup_[i], *measured - flow - send - recv - transfer_propagation_[i]);
}

std::vector<int64_t> Engine::SetupOps(RecvPending& recv_pending) {
  std::vector<int64_t> stated_bytes(cluster_.num_devices(), 0);
  task_ops_.assign(tg_.tasks.size(), {});
  for (uint32_t ti = 0; ti < tg_.tasks.size(); ++ti) {
    const Task& task = tg_.tasks[ti];
    if (task.kind != Task::Kind::kSubgraph) continue;
    const plan::DeviceSchedule& ds = plan_.devices[task.schedule];
    const DeviceId dev = ds.device;
    // The executor's cost of starting the subgraph, on its first op.
    double start_cost = cost_.SubgraphStartCost(dev).value_or(0.0);
    for (NodeId op : ds.subgraphs[task.subgraph].ops) {
      OpInfo info = TimeOp(op, dev);
      // Sending its output to other devices keeps the op's device busy after the kernel; the
      // first read of a tensor received from another device makes the kernel longer; the
      // subgraph's start is paid by its first op.
      double extra = send_cost_[op.index()] + start_cost;
      start_cost = 0.0;
      ChargeRecvCosts(op, dev, recv_pending, &extra);
      info.duration += extra;
      if (info.dha) info.dha_tail += extra;
      // A footprint the workload states (MOIRAI mi, EfficientMIP size) is held on the device for
      // the whole run (as the validator's bound counts it); otherwise the op's workspace lives
      // while it runs.
      if (const std::optional<int64_t> stated = cost_.StatedMemory(op)) {
        stated_bytes[dev.index()] += std::max<int64_t>(0, *stated);
        info.workspace = 0;
      } else {
        info.workspace = std::max<int64_t>(
            0, cost_.OpMemoryBytes(op) - cost_.OpWeightBytes(op) - cost_.OpOutputBytes(op));
      }
      AttachOpBuffers(info, op, dev);
      task_ops_[ti].push_back(static_cast<uint32_t>(op_info_.size()));
      op_info_.push_back(std::move(info));
    }
  }
  return stated_bytes;
}

OpInfo Engine::TimeOp(NodeId op, DeviceId dev) const {
  OpInfo info;
  info.op = op;
  for (NodeId w : plan::WeightInputs(graph_, op)) {
    const int p = tg_.PlacementOf(w, dev);
    if (p >= 0 && plan_.weights[p].mode == plan::WeightMode::kDha) {
      info.dha = true;
      info.dha_bytes += static_cast<double>(graph_.tensor(graph_.node(w).outputs[0]).Bytes());
    }
  }
  if (!info.dha) {
    info.duration = cost_.OpTime(op, dev);
    return info;
  }
  info.duration = cost_.OpTimeDha(op, dev);
  const hw::Route& route = cluster_.HostToDevice(dev);
  info.dha_resources = Resources(route.hops);
  // Mapped reads reach a fraction of the route and pay a fixed cost (the cost model's numbers).
  const cost::CopyCost copy = cost_.CopyCostFor(route.src, route.dst, cost::HostMemory::kMapped);
  info.dha_flow_bytes = info.dha_bytes / copy.fraction;
  info.dha_latency = route.latency_s + copy.fixed_s;
  const double uncontended =
      info.dha_latency +
      (route.bottleneck_bytes_per_s > 0 ? info.dha_flow_bytes / route.bottleneck_bytes_per_s : 0.0);
  info.dha_tail = std::max(0.0, info.duration - uncontended);
  if (info.dha_resources.empty() || info.dha_bytes <= 0.0 || cost_.DhaIsMeasured(op, dev)) {
    info.dha_resources.clear();
    info.dha_bytes = 0.0;
    info.dha_flow_bytes = 0.0;
    info.dha_latency = 0.0;
    info.dha_tail = info.duration;
  }
  return info;
}

void Engine::ChargeRecvCosts(NodeId op, DeviceId dev, RecvPending& recv_pending,
                             double* extra) const {
  if (recv_pending.empty()) return;
  for (TensorId t : graph_.node(op).inputs) {
    if (!t.valid()) continue;
    auto it = recv_pending.find(RecvKey(t, dev));
    if (it == recv_pending.end()) continue;
    *extra += it->second;
    recv_pending.erase(it);
  }
}

void Engine::AttachOpBuffers(OpInfo& info, NodeId op, DeviceId dev) {
  // Outputs: the producer holds a reference until it finishes.
  for (TensorId t : graph_.node(op).outputs) {
    const uint32_t b = BufferFor(t, dev);
    info.alloc_at_start.push_back(b);
    info.release_at_finish.push_back(b);
    ++buffers_[b].refs;
    for (NodeId c : graph_.tensor(t).consumers)
      if (!graph_.node(c).is_op()) buffers_[b].pinned = true;  // a graph output
  }
  // Inputs (activations and graph inputs, once per distinct tensor).
  std::vector<TensorId> seen;
  for (TensorId t : graph_.node(op).inputs) {
    if (!t.valid() || std::find(seen.begin(), seen.end(), t) != seen.end()) continue;
    seen.push_back(t);
    const NodeId p = graph_.tensor(t).producer;
    if (!p.valid() || graph_.node(p).kind == graph::NodeKind::kWeight) continue;
    const uint32_t b = BufferFor(t, dev);
    ++buffers_[b].refs;
    info.release_at_finish.push_back(b);
  }
}

void Engine::SetupState() {
  const size_t num_tasks = tg_.tasks.size();
  start_.assign(num_tasks, 0.0);
  finish_.assign(num_tasks, 0.0);
  stream_free_.assign(num_tasks, -1.0);
  done_.assign(num_tasks, 0);
  crit_pred_.assign(num_tasks, kNone);
  next_op_.assign(num_tasks, 0);
  op_start_.assign(num_tasks, 0.0);
  task_flow_.assign(num_tasks, kNone);
  head_.assign(tg_.streams.size(), 0);
  busy_.assign(tg_.streams.size(), 0);
  const size_t nr = 2 * cluster_.num_links();
  res_rate_.assign(nr, 0.0);
  res_last_.assign(nr, 0.0);
  res_busy_.assign(nr, 0.0);
  res_bytes_.assign(nr, 0.0);
  op_shared_.assign(num_tasks, 0);
  op_work_.assign(num_tasks, 0.0);
  op_rate_.assign(num_tasks, 1.0);
  op_last_.assign(num_tasks, 0.0);
  op_version_.assign(num_tasks, 0);
}

void Engine::SetupCpuContention() {
  const size_t num_devices = cluster_.num_devices();
  cpu_gamma_.assign(num_devices, 0.0);
  cpu_group_.assign(num_devices, kNone);
  // The CPU devices of one node with a measured contention share a group.
  std::map<std::string, uint32_t> group_of_node;
  for (size_t d = 0; d < num_devices; ++d) {
    const std::optional<double> gamma = cost_.CpuContention(DeviceId(d));
    if (!gamma || !(*gamma > 0.0)) continue;
    cpu_gamma_[d] = *gamma;
    cpu_group_[d] =
        group_of_node
            .emplace(cluster_.device(DeviceId(d)).node, static_cast<uint32_t>(group_of_node.size()))
            .first->second;
  }
  group_tasks_.assign(group_of_node.size(), {});
}

void Engine::SetupTimeZero(const std::vector<int64_t>& stated_bytes) {
  const size_t num_devices = cluster_.num_devices();
  // Stated op footprints, resident weights and graph inputs.
  for (size_t d = 0; d < num_devices; ++d) ChangeMemory(DeviceId(d), stated_bytes[d], 0.0);
  for (const plan::WeightPlacement& wp : plan_.weights)
    if (wp.mode != plan::WeightMode::kDha && wp.resident)
      Allocate(BufferFor(graph_.node(wp.weight).outputs[0], wp.device), 0.0);
  for (NodeId in : graph_.Inputs())
    for (TensorId t : graph_.node(in).outputs)
      for (size_t d = 0; d < num_devices; ++d) {
        const uint64_t key = static_cast<uint64_t>(t.value()) * num_devices + d;
        auto it = buffer_of_.find(key);
        if (it != buffer_of_.end()) Allocate(it->second, 0.0);
      }
}

void Engine::ChangeMemory(DeviceId d, int64_t delta, double now) {
  if (delta == 0) return;
  mem_now_[d.index()] += delta;
  DeviceStats& ds = result_.devices[d.index()];
  ds.peak_memory_bytes = std::max(ds.peak_memory_bytes, mem_now_[d.index()]);
  if (!ds.memory.empty() && ds.memory.back().time == now)
    ds.memory.back().bytes = mem_now_[d.index()];
  else
    ds.memory.push_back({now, mem_now_[d.index()]});
  SimEvent e;
  e.kind = SimEvent::Kind::kMemory;
  e.time = now;
  e.device = d;
  e.value = static_cast<double>(mem_now_[d.index()]);
  e.track = ds.name;
  Emit(e);
}

void Engine::Allocate(uint32_t buffer, double now) {
  Buffer& b = buffers_[buffer];
  if (b.allocated) return;
  b.allocated = true;
  ChangeMemory(b.device, b.bytes, now);
}

void Engine::Release(uint32_t buffer, double now) {
  Buffer& b = buffers_[buffer];
  if (--b.refs > 0 || b.pinned || b.freed || !b.allocated) return;
  b.freed = true;
  ChangeMemory(b.device, -b.bytes, now);
}

void Engine::TryStart(uint32_t stream, double now) {
  if (busy_[stream]) return;
  const plan::Stream& s = tg_.streams[stream];
  if (head_[stream] >= s.tasks.size()) return;
  const uint32_t task = s.tasks[head_[stream]];
  if (remaining_deps_[task] > 0) return;
  busy_[stream] = 1;
  StartTask(task, now);
}

void Engine::StartTask(uint32_t task, double now) {
  ++num_events_;
  start_[task] = now;
  // The binding predecessor: whichever of the stream predecessor and the dependencies finished
  // last.
  uint32_t best = stream_pred_[task];
  double best_finish = best == kNone ? -1.0 : finish_[best];
  for (uint32_t d : tg_.tasks[task].deps)
    if (finish_[d] > best_finish || (finish_[d] == best_finish && best != kNone && d > best)) {
      best = d;
      best_finish = finish_[d];
    }
  crit_pred_[task] = best;
  const Task& t = tg_.tasks[task];
  if (t.kind == Task::Kind::kSubgraph) {
    next_op_[task] = 0;
    if (task_ops_[task].empty()) {
      FinishTask(task, now);
      return;
    }
    StartOp(task, now);
    return;
  }
  const uint32_t i = t.transfer;
  TransferRecord& rec = result_.transfers[i];
  rec.start = now;
  rec.bytes = graph_.tensor(plan_.transfers[i].tensor).Bytes();
  rec.queue = tg_.streams[t.stream].name;
  if (transfer_alloc_[i] != kNone) Allocate(transfer_alloc_[i], now);
  SimEvent e;
  e.kind = SimEvent::Kind::kTransferStart;
  e.time = now;
  e.transfer = i;
  e.value = static_cast<double>(rec.bytes);
  e.track = tg_.streams[t.stream].name;
  Emit(e);
  if (transfer_setup_[i] > 0.0)
    Push(now + transfer_setup_[i], kFlowStart, task);
  else
    ActivateFlow(task, now);
}

void Engine::StartOp(uint32_t task, double now) {
  ++num_events_;
  const OpInfo& info = op_info_[task_ops_[task][next_op_[task]]];
  const DeviceId dev = plan_.devices[tg_.tasks[task].schedule].device;
  op_start_[task] = now;
  for (uint32_t b : info.alloc_at_start) Allocate(b, now);
  ChangeMemory(dev, info.workspace, now);
  SimEvent e;
  e.kind = SimEvent::Kind::kOpStart;
  e.time = now;
  e.op = info.op;
  e.device = dev;
  e.dha = info.dha;
  e.track = tg_.streams[tg_.tasks[task].stream].name;
  Emit(e);
  if (info.dha && info.dha_bytes > 0.0) {
    if (info.dha_latency > 0.0)
      Push(now + info.dha_latency, kFlowStart, task);
    else
      ActivateFlow(task, now);
  } else if (cpu_group_[dev.index()] != kNone) {
    op_shared_[task] = 1;
    op_work_[task] = info.duration;
    op_last_[task] = now;
    op_rate_[task] = 1.0;
    group_tasks_[cpu_group_[dev.index()]].push_back(task);
    Rerate(cpu_group_[dev.index()], now);
  } else {
    Push(now + info.duration, kOpDone, task);
  }
}

void Engine::Rerate(uint32_t group, double now) {
  std::vector<uint32_t>& tasks = group_tasks_[group];
  const double busy = static_cast<double>(tasks.size());
  for (uint32_t t : tasks) {
    op_work_[t] = std::max(0.0, op_work_[t] - (now - op_last_[t]) * op_rate_[t]);
    op_last_[t] = now;
    const DeviceId dev = plan_.devices[tg_.tasks[t].schedule].device;
    op_rate_[t] = 1.0 / (1.0 + cpu_gamma_[dev.index()] * (busy - 1.0));
    Push(now + op_work_[t] / op_rate_[t], kOpDone, t, ++op_version_[t]);
  }
}

void Engine::FinishOp(uint32_t task, double now) {
  const OpInfo& info = op_info_[task_ops_[task][next_op_[task]]];
  const DeviceId dev = plan_.devices[tg_.tasks[task].schedule].device;
  OpRecord& rec = result_.ops[info.op.index()];
  rec.op = info.op;
  rec.device = dev;
  rec.start = op_start_[task];
  rec.finish = now;
  rec.dha = info.dha;
  if (info.dha) result_.dha_bytes += static_cast<int64_t>(info.dha_bytes);
  SimEvent e;
  e.kind = SimEvent::Kind::kOpFinish;
  e.time = now;
  e.op = info.op;
  e.device = dev;
  e.dha = info.dha;
  e.track = tg_.streams[tg_.tasks[task].stream].name;
  Emit(e);
  ChangeMemory(dev, -info.workspace, now);
  if (op_shared_[task]) {
    op_shared_[task] = 0;
    ++op_version_[task];
    std::vector<uint32_t>& running = group_tasks_[cpu_group_[dev.index()]];
    running.erase(std::find(running.begin(), running.end(), task));
    Rerate(cpu_group_[dev.index()], now);
  }
  for (uint32_t b : info.release_at_finish) Release(b, now);
  if (++next_op_[task] < task_ops_[task].size())
    StartOp(task, now);
  else
    FinishTask(task, now);
}

void Engine::ActivateFlow(uint32_t task, double now) {
  const Task& t = tg_.tasks[task];
  double bytes;
  const std::vector<uint32_t>* resources;
  if (t.kind == Task::Kind::kTransfer) {
    bytes =
        static_cast<double>(result_.transfers[t.transfer].bytes) * transfer_flow_scale_[t.transfer];
    resources = &transfer_resources_[t.transfer];
  } else {
    const OpInfo& info = op_info_[task_ops_[task][next_op_[task]]];
    bytes = info.dha_flow_bytes;
    resources = &info.dha_resources;
  }
  if (bytes <= 0.0 || resources->empty()) {
    if (t.kind == Task::Kind::kTransfer)
      TransferSent(task, now);
    else
      Push(now + op_info_[task_ops_[task][next_op_[task]]].dha_tail, kOpDone, task);
    return;
  }
  const uint32_t f = net_.Add(now, bytes, *resources);
  if (f >= flow_owner_.size()) {
    flow_owner_.resize(f + 1, kNone);
    flow_version_.resize(f + 1, 0);
  }
  flow_owner_[f] = task;
  task_flow_[task] = f;
  AfterNetworkChange(now);
}

void Engine::AccountResource(uint32_t r, double now) {
  const double dt = now - res_last_[r];
  if (res_rate_[r] > 0.0) {
    res_busy_[r] += dt;
    res_bytes_[r] += res_rate_[r] * dt;
  }
  res_last_[r] = now;
}

void Engine::AfterNetworkChange(double now) {
  for (uint32_t f : net_.changed_flows()) {
    ++flow_version_[f];
    Push(net_.FinishTime(f), kFlowDone, f, flow_version_[f]);
  }
  for (uint32_t r : net_.changed_resources()) {
    AccountResource(r, now);
    res_rate_[r] = net_.used(r);
    SimEvent e;
    e.kind = SimEvent::Kind::kLinkRate;
    e.time = now;
    e.link = LinkId(r / 2);
    e.forward = (r % 2) == 0;
    e.value = res_rate_[r];
    e.track = cluster_.link(e.link).name;
    Emit(e);
  }
}

void Engine::TransferSent(uint32_t task, double now) {
  const double propagation = transfer_propagation_[tg_.tasks[task].transfer];
  if (propagation <= 0.0) {
    FinishTask(task, now);
    return;
  }
  if (FreeStream(task, now)) TryStart(tg_.tasks[task].stream, now);
  Push(now + propagation, kDelivered, task);
}

bool Engine::FreeStream(uint32_t task, double now) {
  if (stream_free_[task] >= 0.0) return false;
  stream_free_[task] = now;
  const uint32_t stream = tg_.tasks[task].stream;
  busy_[stream] = 0;
  ++head_[stream];
  return true;
}

void Engine::FinishTask(uint32_t task, double now) {
  ++num_events_;
  finish_[task] = now;
  done_[task] = 1;
  const Task& t = tg_.tasks[task];
  if (t.kind == Task::Kind::kTransfer) {
    const uint32_t i = t.transfer;
    result_.transfers[i].finish = now;
    const plan::Transfer& tr = plan_.transfers[i];
    const int64_t bytes = result_.transfers[i].bytes;
    result_.transfer_bytes += bytes;
    if (tr.kind == plan::TransferKind::kActivation)
      result_.activation_bytes += bytes;
    else if (tr.kind == plan::TransferKind::kWeightLoad)
      result_.weight_load_bytes += bytes;
    SimEvent e;
    e.kind = SimEvent::Kind::kTransferFinish;
    e.time = now;
    e.transfer = i;
    e.value = static_cast<double>(bytes);
    e.track = tg_.streams[t.stream].name;
    Emit(e);
    if (transfer_release_[i] != kNone) Release(transfer_release_[i], now);
  }
  const bool held = FreeStream(task, now);
  for (uint32_t d : dependents_[task])
    if (--remaining_deps_[d] == 0) TryStart(tg_.tasks[d].stream, now);
  if (held) TryStart(t.stream, now);
}

SimResult Engine::Run() {
  Setup();
  for (uint32_t s = 0; s < tg_.streams.size(); ++s) TryStart(s, 0.0);
  double now = 0.0;
  while (!events_.empty()) {
    const Event ev = events_.top();
    events_.pop();
    if (ev.type == kFlowDone && flow_version_[ev.a] != ev.b) continue;  // superseded
    // A contended op's completion re-rated since (its events carry a version; others carry 0).
    if (ev.type == kOpDone && ev.b != 0 && op_version_[ev.a] != ev.b) continue;
    ++num_events_;
    now = ev.time;
    switch (ev.type) {
      case kOpDone:
        FinishOp(ev.a, now);
        break;
      case kFlowStart:
        ActivateFlow(ev.a, now);
        break;
      case kDelivered:
        FinishTask(ev.a, now);
        break;
      case kFlowDone: {
        const uint32_t f = ev.a;
        const uint32_t task = flow_owner_[f];
        ++flow_version_[f];
        task_flow_[task] = kNone;
        net_.Remove(now, f);
        AfterNetworkChange(now);
        if (tg_.tasks[task].kind == Task::Kind::kTransfer)
          TransferSent(task, now);
        else
          Push(now + op_info_[task_ops_[task][next_op_[task]]].dha_tail, kOpDone, task);
        break;
      }
    }
  }
  // Makespan and statistics.
  double makespan = 0.0;
  uint32_t last = kNone;
  for (uint32_t t = 0; t < tg_.tasks.size(); ++t)
    if (last == kNone || finish_[t] >= makespan) {
      makespan = finish_[t];
      last = t;
    }
  result_.makespan_s = makespan;
  result_.num_events = num_events_;
  for (uint32_t s = 0; s < tg_.streams.size(); ++s) {
    const plan::Stream& st = tg_.streams[s];
    StreamStats ss;
    ss.name = st.name;
    ss.compute = st.compute;
    ss.device = st.device;
    for (uint32_t t : st.tasks) ss.busy_s += stream_free_[t] - start_[t];
    ss.utilisation = makespan > 0 ? ss.busy_s / makespan : 0.0;
    if (st.compute) {
      DeviceStats& ds = result_.devices[st.device.index()];
      ds.compute_s = ss.busy_s;
      ds.utilisation = ss.utilisation;
    }
    result_.streams.push_back(std::move(ss));
  }
  for (uint32_t r = 0; r < res_rate_.size(); ++r) {
    AccountResource(r, makespan);
    if (res_bytes_[r] <= 0.0) continue;
    LinkStats ls;
    ls.link = LinkId(r / 2);
    const hw::Link& link = cluster_.link(ls.link);
    ls.forward = (r % 2) == 0;
    ls.name = link.name + (ls.forward ? "" : " (reverse)");
    ls.busy_s = res_busy_[r];
    ls.bytes = res_bytes_[r];
    ls.utilisation = makespan > 0 ? ls.bytes / (link.bandwidth_bytes_per_s * makespan) : 0.0;
    result_.links.push_back(std::move(ls));
  }
  for (DeviceStats& ds : result_.devices)
    if (ds.capacity_bytes > 0 && ds.peak_memory_bytes > ds.capacity_bytes)
      result_.memory_overflows.push_back(ds.name + " uses " + std::to_string(ds.peak_memory_bytes) +
                                         " B of " + std::to_string(ds.capacity_bytes) + " B");
  // Critical path: walk the binding predecessors back from the last task to finish.
  std::vector<uint32_t> chain;
  for (uint32_t t = last; t != kNone; t = crit_pred_[t]) chain.push_back(t);
  std::reverse(chain.begin(), chain.end());
  for (uint32_t t : chain) {
    if (tg_.tasks[t].kind == Task::Kind::kTransfer) {
      CriticalStep step;
      step.is_op = false;
      step.transfer = tg_.tasks[t].transfer;
      step.start = start_[t];
      step.finish = finish_[t];
      result_.critical_path.push_back(step);
      continue;
    }
    for (uint32_t oi : task_ops_[t]) {
      const OpRecord& rec = result_.ops[op_info_[oi].op.index()];
      CriticalStep step;
      step.op = rec.op;
      step.start = rec.start;
      step.finish = rec.finish;
      result_.critical_path.push_back(step);
    }
  }
  return std::move(result_);
}

}  // namespace

StatusOr<SimResult> Simulate(const plan::Plan& plan, const cost::CostModel& cost,
                             const SimOptions& options, SimObserver* observer) {
  HX_RETURN_IF_ERROR(options.Validate());
  const graph::Graph& graph = cost.graph();
  const hw::Cluster& cluster = cost.cluster();
  plan::Plan regrouped;
  const plan::Plan* run = &plan;
  if (options.copy_mode == CopyMode::kExclusiveBus) {
    regrouped = RegroupLoadsByBus(plan, graph, cluster);
    run = &regrouped;
  }
  std::vector<std::string> violations;
  TaskGraph tg = plan::BuildTaskGraph(*run, graph, cluster, &violations);
  if (violations.empty()) {
    std::vector<uint32_t> cycle = plan::FindDeadlock(tg);
    if (!cycle.empty()) {
      std::string s = "deadlock: ";
      for (size_t i = 0; i < cycle.size() && i < 6; ++i)
        s += (i ? " <- " : "") + plan::DescribeTask(tg, cycle[i], *run, graph, cluster);
      violations.push_back(s);
    }
  }
  if (!violations.empty()) {
    std::string msg =
        "cannot simulate an invalid plan (" + std::to_string(violations.size()) + " violations):";
    for (size_t i = 0; i < violations.size() && i < 20; ++i) msg += "\n  - " + violations[i];
    if (violations.size() > 20) msg += "\n  - ...";
    return InvalidArgument(msg);
  }
  Engine engine(*run, cost, std::move(tg), observer);
  return engine.Run();
}

}  // namespace hx::sim
