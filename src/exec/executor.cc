#include "hexplan/exec/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include "hexplan/exec/values.h"

namespace hx::exec {

using Clock = std::chrono::steady_clock;
using graph::NodeKind;

const char* CopyOrderName(CopyOrder order) {
  return order == CopyOrder::kPlan ? "plan" : "round-robin";
}

Status ExecOptions::Validate() const {
  if (chunk_bytes < 1) return InvalidArgument("exec options: chunk_bytes must be >= 1");
  if (!(watchdog_s >= 0.0)) return InvalidArgument("exec options: watchdog_s must be >= 0");
  return Status::Ok();
}

struct Executor::RunState {
  // One mutex guards the marks; each stream sleeps on its own condition variable and a finished
  // task wakes only the streams that wait for it (no thundering herd on few cores).
  std::mutex mu;
  std::vector<std::unique_ptr<std::condition_variable>> stream_cv;  // per stream
  std::condition_variable watchdog_cv;
  const std::vector<std::vector<uint32_t>>* waiters = nullptr;  // per task: streams to wake
  std::vector<uint8_t> done;                                    // per task, guarded by mu
  size_t finished = 0;
  size_t total = 0;
  bool go = false;
  // Written under mu (the condition variables' protocol); atomic so that a device thread can
  // check it before every op without taking the lock.
  std::atomic<bool> failed{false};
  Status error;
  Clock::time_point t0;
  Clock::time_point last_done;
  size_t num_devices = 0;
  std::vector<DeviceBuffer> slots;  // tensor * num_devices + device
  std::unique_ptr<std::atomic<int32_t>[]> refs;
  std::vector<int64_t> copied;  // per transfer: bytes copied so far
  const std::map<std::string, HostTensor>* inputs = nullptr;
  std::vector<std::vector<sim::SimEvent>> events;  // per stream
  std::atomic<uint64_t> ops_run{0};
  std::atomic<uint64_t> transfers_run{0};

  size_t Slot(TensorId t, int device) const { return t.value() * num_devices + device; }
  // Ready for a new run of `e`: no task done, every slot empty, reference counts from the plan.
  void Reset(const Executor& e, const std::map<std::string, HostTensor>& run_inputs) {
    const size_t num_tasks = e.tasks_.tasks.size();
    done.assign(num_tasks, 0);
    total = num_tasks;
    if (refs == nullptr) refs.reset(new std::atomic<int32_t>[e.initial_refs_.size()]);
    for (size_t i = 0; i < e.initial_refs_.size(); ++i)
      refs[i].store(e.initial_refs_[i], std::memory_order_relaxed);
    num_devices = e.cluster_->num_devices();
    slots.assign(e.graph_->num_tensors() * num_devices, DeviceBuffer{});
    copied.assign(e.plan_->transfers.size(), 0);
    events.resize(e.tasks_.streams.size());
    for (auto& stream_events : events) stream_events.clear();
    while (stream_cv.size() < e.tasks_.streams.size())
      stream_cv.push_back(std::make_unique<std::condition_variable>());
    waiters = &e.waiters_;
    inputs = &run_inputs;
    finished = 0;
    go = false;
    failed = false;
    error = Status::Ok();
    ops_run.store(0, std::memory_order_relaxed);
    transfers_run.store(0, std::memory_order_relaxed);
  }
  double Now() const { return std::chrono::duration<double>(Clock::now() - t0).count(); }
  void WakeAll() {
    for (auto& cv : stream_cv) cv->notify_all();
    watchdog_cv.notify_all();
  }
  void Fail(const Status& status) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!failed) {
        failed = true;
        error = status;
      }
    }
    WakeAll();
  }
  void MarkDone(uint32_t task) {
    bool all;
    {
      std::lock_guard<std::mutex> lock(mu);
      done[task] = 1;
      ++finished;
      all = finished == total;
      last_done = Clock::now();
    }
    for (uint32_t stream : (*waiters)[task]) stream_cv[stream]->notify_all();
    if (all) watchdog_cv.notify_all();
  }
  bool Ready(const plan::Task& task) const {
    for (uint32_t d : task.deps)
      if (!done[d]) return false;
    return true;
  }
  // Waits for the task's dependencies; false when the run failed meanwhile.
  bool WaitDeps(const plan::Task& task) {
    std::unique_lock<std::mutex> lock(mu);
    stream_cv[task.stream]->wait(lock, [&] { return failed || Ready(task); });
    return !failed;
  }
  bool WaitGo(uint32_t stream) {
    std::unique_lock<std::mutex> lock(mu);
    stream_cv[stream]->wait(lock, [&] { return go || failed; });
    return !failed;
  }
};

Executor::~Executor() = default;

int Executor::DeviceOfPlace(PlaceId place) const {
  const hw::Place& p = cluster_->place(place);
  return p.kind == hw::PlaceKind::kDevice ? static_cast<int>(p.device.value()) : -1;
}

const plan::WeightPlacement* Executor::PlacementFor(NodeId weight, DeviceId device) const {
  int index = tasks_.PlacementOf(weight, device);
  return index < 0 ? nullptr : &plan_->weights[static_cast<size_t>(index)];
}

StatusOr<std::unique_ptr<Executor>> Executor::Create(
    const plan::Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster,
    DeviceBackend* backend, const std::vector<HostTensor>* weights, const ExecOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  if (backend == nullptr || weights == nullptr)
    return InvalidArgument("executor: no backend or no weights");
  if (backend->num_devices() != static_cast<int>(cluster.num_devices()))
    return InvalidArgument("executor: the " + backend->name() + " backend has " +
                           std::to_string(backend->num_devices()) + " devices, cluster '" +
                           cluster.name() + "' " + std::to_string(cluster.num_devices()));
  std::unique_ptr<Executor> e(new Executor());
  e->plan_ = &plan;
  e->graph_ = &graph;
  e->cluster_ = &cluster;
  e->backend_ = backend;
  e->options_ = options;
  std::vector<std::string> violations;
  e->tasks_ = plan::BuildTaskGraph(plan, graph, cluster, &violations);
  if (violations.empty()) {
    std::vector<uint32_t> cycle = plan::FindDeadlock(e->tasks_);
    if (!cycle.empty()) {
      std::string msg = "the plan deadlocks:";
      for (uint32_t t : cycle)
        msg += "\n  - " + plan::DescribeTask(e->tasks_, t, plan, graph, cluster);
      violations.push_back(msg);
    }
  }
  if (!violations.empty()) {
    std::string msg =
        "executor: invalid plan (" + std::to_string(violations.size()) + " violations):";
    for (size_t i = 0; i < violations.size() && i < 20; ++i) msg += "\n  - " + violations[i];
    return InvalidArgument(msg);
  }
  // Every op needs a kernel; every weight read needs a value.
  for (NodeId op : graph.Ops()) {
    const graph::Node& node = graph.node(op);
    if (!backend->Supports(node))
      return Unimplemented("op '" + node.name + "': the " + backend->name() +
                           " backend has no kernel for op type '" +
                           (node.domain.empty() ? "" : node.domain + ".") + node.op_type + "'");
  }
  for (NodeId w : graph.Weights()) {
    const graph::Tensor& t = graph.tensor(graph.node(w).outputs.at(0));
    if (w.value() >= weights->size() ||
        static_cast<int64_t>((*weights)[w.value()].bytes.size()) != t.Bytes())
      return InvalidArgument("executor: weight '" + graph.node(w).name + "' has no value of " +
                             std::to_string(t.Bytes()) + " bytes");
  }
  e->weights_ = weights;

  const size_t D = cluster.num_devices();
  e->track_names_ = std::make_shared<std::vector<std::string>>();
  for (const plan::Stream& s : e->tasks_.streams) e->track_names_->push_back(s.name);
  e->transfer_src_.assign(plan.transfers.size(), -1);
  e->transfer_dst_.assign(plan.transfers.size(), -1);
  for (size_t i = 0; i < plan.transfers.size(); ++i) {
    e->transfer_src_[i] = e->DeviceOfPlace(plan.transfers[i].src);
    e->transfer_dst_[i] = e->DeviceOfPlace(plan.transfers[i].dst);
    if (e->transfer_dst_[i] < 0)
      return InvalidArgument("executor: transfer " + std::to_string(i) + " of '" +
                             graph.tensor(plan.transfers[i].tensor).name +
                             "' does not end on a device");
  }

  // Reference counts: readers of each (tensor, device) buffer.
  e->initial_refs_.assign(graph.num_tensors() * D, 0);
  e->input_slots_.assign(D, {});
  std::vector<std::set<uint32_t>> inputs_on(D);
  for (NodeId op : graph.Ops()) {
    const DeviceId dev = e->tasks_.op_device[op.value()];
    if (!dev.valid()) continue;
    const graph::Node& node = graph.node(op);
    std::set<uint32_t> seen;
    for (TensorId t : node.inputs) {
      if (!t.valid() || !seen.insert(t.value()).second) continue;
      const NodeId producer = graph.tensor(t).producer;
      const graph::Node& p = graph.node(producer);
      if (p.kind == NodeKind::kWeight) {
        const plan::WeightPlacement* wp = e->PlacementFor(producer, dev);
        if (wp != nullptr && wp->mode == plan::WeightMode::kDha) continue;
      }
      if (p.kind == NodeKind::kInput) inputs_on[dev.value()].insert(t.value());
      ++e->initial_refs_[t.value() * D + dev.value()];
    }
  }
  for (size_t i = 0; i < plan.transfers.size(); ++i)
    if (e->transfer_src_[i] >= 0)
      ++e->initial_refs_[plan.transfers[i].tensor.value() * D +
                         static_cast<size_t>(e->transfer_src_[i])];
  for (NodeId out : graph.Outputs()) {
    const TensorId t = graph.node(out).inputs.at(0);
    const NodeId producer = graph.tensor(t).producer;
    if (graph.node(producer).is_op() && e->tasks_.op_device[producer.value()].valid())
      ++e->initial_refs_[t.value() * D + e->tasks_.op_device[producer.value()].value()];
  }
  for (size_t d = 0; d < D; ++d)
    for (uint32_t t : inputs_on[d]) e->input_slots_[d].push_back(TensorId(t));
  // Who waits for each task: the streams of the tasks that depend on it, and its own stream (the
  // round-robin copy loop waits for its own earlier transfers too).
  e->waiters_.assign(e->tasks_.tasks.size(), {});
  for (const plan::Task& t : e->tasks_.tasks)
    for (uint32_t dep : t.deps) e->waiters_[dep].push_back(t.stream);
  for (size_t k = 0; k < e->tasks_.tasks.size(); ++k) {
    auto& w = e->waiters_[k];
    w.push_back(e->tasks_.tasks[k].stream);
    std::sort(w.begin(), w.end());
    w.erase(std::unique(w.begin(), w.end()), w.end());
  }
  // The devices each copy stream copies to (its thread is bound near them, BindCopyThread).
  e->stream_destinations_.assign(e->tasks_.streams.size(), {});
  for (size_t k = 0; k < e->tasks_.streams.size(); ++k) {
    std::set<int> destinations;
    for (uint32_t task : e->tasks_.streams[k].tasks)
      if (e->tasks_.tasks[task].kind == plan::Task::Kind::kTransfer)
        destinations.insert(e->transfer_dst_[e->tasks_.tasks[task].transfer]);
    e->stream_destinations_[k].assign(destinations.begin(), destinations.end());
  }
  return e;
}

Status Executor::RunOp(RunState& s, int device, NodeId op) {
  const graph::Node& node = graph_->node(op);
  // Per-thread scratch: an op's argument lists without a heap allocation per op.
  thread_local std::vector<TensorRef> in, out;
  thread_local std::vector<uint8_t> from_host;
  in.assign(node.inputs.size(), TensorRef{});
  out.assign(node.outputs.size(), TensorRef{});
  from_host.assign(node.inputs.size(), 0);
  bool dha = false;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const TensorId t = node.inputs[i];
    if (!t.valid()) continue;
    const graph::Tensor& tensor = graph_->tensor(t);
    in[i].dtype = tensor.dtype;
    in[i].shape = &tensor.shape;
    const graph::Node& p = graph_->node(tensor.producer);
    if (p.kind == NodeKind::kWeight) {
      const plan::WeightPlacement* wp = PlacementFor(tensor.producer, DeviceId(device));
      if (wp != nullptr && wp->mode == plan::WeightMode::kDha) {
        // Kernels only read their inputs.
        in[i].data = const_cast<uint8_t*>((*weights_)[tensor.producer.value()].bytes.data());
        from_host[i] = 1;
        dha = true;
        continue;
      }
    }
    in[i].data = s.slots[s.Slot(t, device)].ptr;
    if (in[i].data == nullptr && tensor.Bytes() > 0)
      return Internal("op '" + node.name + "': input '" + tensor.name + "' is not on device '" +
                      cluster_->device(DeviceId(device)).name + "'");
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const TensorId t = node.outputs[i];
    if (!t.valid()) continue;
    const graph::Tensor& tensor = graph_->tensor(t);
    auto buffer = backend_->Allocate(device, tensor.Bytes());
    if (!buffer.ok())
      return buffer.status().WithContext("op '" + node.name + "' output '" + tensor.name + "'");
    s.slots[s.Slot(t, device)] = *buffer;
    out[i] = TensorRef{tensor.dtype, &tensor.shape, buffer->ptr};
  }
  const uint32_t stream = tasks_.op_task[op.value()] == plan::kNoTask
                              ? 0
                              : tasks_.tasks[tasks_.op_task[op.value()]].stream;
  sim::SimEvent ev;
  if (options_.record_events) {
    ev.kind = sim::SimEvent::Kind::kOpStart;
    ev.time = s.Now();
    ev.op = op;
    ev.device = DeviceId(device);
    ev.dha = dha;
    ev.track = (*track_names_)[stream];
    s.events[stream].push_back(ev);
  }
  Status st = backend_->Launch(device, node, in, out);
  if (!st.ok()) {
    const std::string& m = st.message();
    return m.find("'" + node.name + "'") != std::string::npos
               ? st
               : st.WithContext("op '" + node.name + "' on '" +
                                cluster_->device(DeviceId(device)).name + "'");
  }
  HX_RETURN_IF_ERROR(backend_->WaitEvent(backend_->RecordEvent(device)));
  if (options_.record_events) {
    ev.kind = sim::SimEvent::Kind::kOpFinish;
    ev.time = s.Now();
    s.events[stream].push_back(ev);
  }
  s.ops_run.fetch_add(1, std::memory_order_relaxed);
  // Release what this op read, and outputs nobody reads here.
  auto release = [&](TensorId t) {
    const size_t k = s.Slot(t, device);
    if (s.refs[k].fetch_sub(1) == 1) {
      backend_->Free(device, s.slots[k]);
      s.slots[k] = DeviceBuffer{};
    }
  };
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const TensorId t = node.inputs[i];
    if (!t.valid() || from_host[i]) continue;
    // An input read twice (Mul(x, x)) is released once.
    if (std::find(node.inputs.begin(), node.inputs.begin() + static_cast<std::ptrdiff_t>(i), t) !=
        node.inputs.begin() + static_cast<std::ptrdiff_t>(i))
      continue;
    release(t);
  }
  for (TensorId t : node.outputs) {
    if (!t.valid()) continue;
    const size_t k = s.Slot(t, device);
    if (s.refs[k].load() == 0) {
      backend_->Free(device, s.slots[k]);
      s.slots[k] = DeviceBuffer{};
    }
  }
  return Status::Ok();
}

Status Executor::RunComputeStream(RunState& s, uint32_t stream) {
  const plan::Stream& st = tasks_.streams[stream];
  const int device = static_cast<int>(st.device.value());
  HX_RETURN_IF_ERROR(backend_->BindThread(device));
  if (!s.WaitGo(stream)) return Status::Ok();
  for (uint32_t task : st.tasks) {
    const plan::Task& t = tasks_.tasks[task];
    if (!s.WaitDeps(t)) return Status::Ok();
    const plan::Subgraph& sg = plan_->devices[t.schedule].subgraphs[t.subgraph];
    for (NodeId op : sg.ops) {
      if (s.failed.load(std::memory_order_acquire)) return Status::Ok();
      HX_RETURN_IF_ERROR(RunOp(s, device, op));
    }
    s.MarkDone(task);
  }
  return Status::Ok();
}

Status Executor::RunTransferChunk(RunState& s, uint32_t task, int64_t offset, int64_t bytes) {
  const uint32_t index = tasks_.tasks[task].transfer;
  const plan::Transfer& tr = plan_->transfers[index];
  const graph::Tensor& tensor = graph_->tensor(tr.tensor);
  const int src = transfer_src_[index], dst = transfer_dst_[index];
  const int64_t total = tensor.Bytes();
  const size_t dst_slot = s.Slot(tr.tensor, dst);
  const uint32_t stream = tasks_.tasks[task].stream;
  auto describe = [&] {
    return "transfer " + std::to_string(index) + " (" + plan::TransferKindName(tr.kind) + " '" +
           tensor.name + "' " + cluster_->place(tr.src).name + "->" + cluster_->place(tr.dst).name +
           ")";
  };
  if (offset == 0) {
    if (s.slots[dst_slot].ptr != nullptr)
      return Internal(describe() + ": the tensor is already on its destination");
    auto buffer = backend_->Allocate(dst, total);
    if (!buffer.ok()) return buffer.status().WithContext(describe());
    s.slots[dst_slot] = *buffer;
    if (options_.record_events) {
      sim::SimEvent ev;
      ev.kind = sim::SimEvent::Kind::kTransferStart;
      ev.time = s.Now();
      ev.transfer = index;
      ev.value = static_cast<double>(total);
      ev.track = (*track_names_)[stream];
      s.events[stream].push_back(ev);
    }
  }
  Status st;
  if (src < 0) {
    const graph::Node& producer = graph_->node(tensor.producer);
    const void* host = nullptr;
    if (producer.kind == NodeKind::kWeight) {
      host = (*weights_)[tensor.producer.value()].bytes.data();
    } else if (producer.kind == NodeKind::kInput) {
      host = s.inputs->at(producer.name).bytes.data();
    } else {
      return Internal(describe() + ": an op's output cannot come from host memory");
    }
    st = backend_->CopyHostToDevice(dst, host, s.slots[dst_slot], offset, bytes);
  } else {
    const DeviceBuffer from = s.slots[s.Slot(tr.tensor, src)];
    if (from.ptr == nullptr && total > 0)
      return Internal(describe() + ": the tensor is not on its source device");
    st = backend_->CopyDeviceToDevice(src, from, dst, s.slots[dst_slot], offset, bytes);
  }
  if (!st.ok()) return st.WithContext(describe());
  if (offset + bytes >= total) {
    if (options_.record_events) {
      sim::SimEvent ev;
      ev.kind = sim::SimEvent::Kind::kTransferFinish;
      ev.time = s.Now();
      ev.transfer = index;
      ev.value = static_cast<double>(total);
      ev.track = (*track_names_)[stream];
      s.events[stream].push_back(ev);
    }
    if (src >= 0) {
      const size_t k = s.Slot(tr.tensor, src);
      if (s.refs[k].fetch_sub(1) == 1) {
        backend_->Free(src, s.slots[k]);
        s.slots[k] = DeviceBuffer{};
      }
    }
    s.transfers_run.fetch_add(1, std::memory_order_relaxed);
  }
  return Status::Ok();
}

Status Executor::RunCopyStream(RunState& s, uint32_t stream) {
  const plan::Stream& st = tasks_.streams[stream];
  HX_RETURN_IF_ERROR(backend_->BindCopyThread(stream_destinations_[stream]));
  if (!s.WaitGo(stream)) return Status::Ok();
  if (options_.copy_order == CopyOrder::kPlan) {
    for (uint32_t task : st.tasks) {
      if (!s.WaitDeps(tasks_.tasks[task])) return Status::Ok();
      const plan::Transfer& tr = plan_->transfers[tasks_.tasks[task].transfer];
      HX_RETURN_IF_ERROR(RunTransferChunk(s, task, 0, graph_->tensor(tr.tensor).Bytes()));
      s.MarkDone(task);
    }
    return Status::Ok();
  }
  // Round-robin between destination devices, one chunk per turn, each destination's transfers in
  // plan order; a destination whose next transfer waits for something is skipped.
  std::vector<int> dests;
  std::map<int, std::deque<uint32_t>> queues;
  for (uint32_t task : st.tasks) {
    const int dst = transfer_dst_[tasks_.tasks[task].transfer];
    if (!queues.count(dst)) dests.push_back(dst);
    queues[dst].push_back(task);
  }
  size_t cursor = 0, remaining = st.tasks.size();
  while (remaining > 0) {
    uint32_t task = plan::kNoTask;
    auto pick = [&] {
      for (size_t k = 0; k < dests.size(); ++k) {
        const size_t d = (cursor + k) % dests.size();
        const auto& q = queues[dests[d]];
        if (!q.empty() && s.Ready(tasks_.tasks[q.front()])) {
          task = q.front();
          cursor = d;
          return true;
        }
      }
      return false;
    };
    {
      std::unique_lock<std::mutex> lock(s.mu);
      s.stream_cv[stream]->wait(lock, [&] { return s.failed || pick(); });
      if (s.failed) return Status::Ok();
    }
    const uint32_t index = tasks_.tasks[task].transfer;
    const int64_t total = graph_->tensor(plan_->transfers[index].tensor).Bytes();
    const int64_t offset = s.copied[index];
    const int64_t bytes = std::min(options_.chunk_bytes, total - offset);
    HX_RETURN_IF_ERROR(RunTransferChunk(s, task, offset, bytes));
    s.copied[index] = offset + bytes;
    if (offset + bytes >= total) {
      queues[dests[cursor]].pop_front();
      --remaining;
      s.MarkDone(task);
    }
    cursor = (cursor + 1) % dests.size();
  }
  return Status::Ok();
}

StatusOr<ExecResult> Executor::Run(const std::map<std::string, HostTensor>& inputs) {
  HX_RETURN_IF_ERROR(CheckGraphInputsGiven(*graph_, inputs));
  const size_t D = cluster_->num_devices();
  // The run's state lives as long as the executor: its arrays (a slot per tensor and device) are
  // allocated once, so a run does not map and fault in fresh pages for them.
  if (state_ == nullptr) state_ = std::make_unique<RunState>();
  RunState& s = *state_;
  s.Reset(*this, inputs);
  backend_->ResetPeakMemory();

  auto free_all = [&] {
    for (size_t k = 0; k < s.slots.size(); ++k)
      if (s.slots[k].ptr != nullptr || s.slots[k].bytes > 0) {
        backend_->Free(static_cast<int>(k % D), s.slots[k]);
        s.slots[k] = DeviceBuffer{};
      }
  };
  // Before the clock: graph inputs on the devices that read them, resident weights.
  Status setup;
  for (size_t d = 0; d < D && setup.ok(); ++d) {
    for (TensorId t : input_slots_[d]) {
      const graph::Tensor& tensor = graph_->tensor(t);
      auto buffer = backend_->Allocate(static_cast<int>(d), tensor.Bytes());
      if (!buffer.ok()) {
        setup = buffer.status().WithContext("graph input '" + tensor.name + "'");
        break;
      }
      s.slots[s.Slot(t, static_cast<int>(d))] = *buffer;
      setup = backend_->CopyHostToDevice(static_cast<int>(d),
                                         inputs.at(graph_->node(tensor.producer).name).bytes.data(),
                                         *buffer, 0, tensor.Bytes());
      if (!setup.ok()) break;
    }
  }
  for (const plan::WeightPlacement& wp : plan_->weights) {
    if (!setup.ok()) break;
    if (!wp.resident || wp.mode == plan::WeightMode::kDha) continue;
    const TensorId t = graph_->node(wp.weight).outputs.at(0);
    const int d = static_cast<int>(wp.device.value());
    if (s.slots[s.Slot(t, d)].ptr != nullptr) continue;
    const int64_t bytes = graph_->tensor(t).Bytes();
    auto buffer = backend_->Allocate(d, bytes);
    if (!buffer.ok()) {
      setup = buffer.status().WithContext("resident weight '" + graph_->node(wp.weight).name + "'");
      break;
    }
    s.slots[s.Slot(t, d)] = *buffer;
    setup = backend_->CopyHostToDevice(d, (*weights_)[wp.weight.value()].bytes.data(), *buffer, 0,
                                       bytes);
  }
  if (!setup.ok()) {
    free_all();
    return setup;
  }

  std::vector<std::thread> threads;
  threads.reserve(tasks_.streams.size());
  for (uint32_t k = 0; k < tasks_.streams.size(); ++k) {
    threads.emplace_back([this, &s, k] {
      Status st = tasks_.streams[k].compute ? RunComputeStream(s, k) : RunCopyStream(s, k);
      if (!st.ok()) s.Fail(st);
    });
  }
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.go = true;
    s.t0 = Clock::now();
    s.last_done = s.t0;
  }
  s.WakeAll();
  // Watchdog: the run fails when no task finishes for options_.watchdog_s.
  {
    std::unique_lock<std::mutex> lock(s.mu);
    size_t seen = s.finished;
    Clock::time_point progress = Clock::now();
    while (!s.failed && s.finished < tasks_.tasks.size()) {
      s.watchdog_cv.wait_for(lock, std::chrono::milliseconds(50));
      if (s.finished != seen) {
        seen = s.finished;
        progress = Clock::now();
      } else if (options_.watchdog_s > 0.0 &&
                 std::chrono::duration<double>(Clock::now() - progress).count() >
                     options_.watchdog_s) {
        std::string msg = "executor: watchdog: no task finished for " +
                          std::to_string(options_.watchdog_s) + " s; waiting:";
        for (const plan::Stream& st : tasks_.streams)
          for (uint32_t t : st.tasks)
            if (!s.done[t]) {
              msg += "\n  - " + plan::DescribeTask(tasks_, t, *plan_, *graph_, *cluster_);
              break;
            }
        s.failed = true;
        s.error = Internal(msg);
        lock.unlock();
        s.WakeAll();
        lock.lock();
      }
    }
  }
  for (std::thread& t : threads) t.join();
  if (s.failed) {
    free_all();
    return s.error;
  }

  ExecResult result;
  result.latency_s = std::chrono::duration<double>(s.last_done - s.t0).count();
  result.ops_run = s.ops_run.load();
  result.transfers_run = s.transfers_run.load();
  for (size_t d = 0; d < D; ++d)
    result.peak_memory_bytes.push_back(backend_->PeakMemory(static_cast<int>(d)));
  for (NodeId out : graph_->Outputs()) {
    const TensorId t = graph_->node(out).inputs.at(0);
    const graph::Tensor& tensor = graph_->tensor(t);
    const graph::Node& producer = graph_->node(tensor.producer);
    HostTensor value(tensor.dtype, tensor.shape);
    if (producer.kind == NodeKind::kInput) {
      value = inputs.at(producer.name);
    } else if (producer.kind == NodeKind::kWeight) {
      value = (*weights_)[tensor.producer.value()];
    } else {
      const int d = static_cast<int>(tasks_.op_device[tensor.producer.value()].value());
      const size_t k = s.Slot(t, d);
      Status st = backend_->CopyDeviceToHost(d, s.slots[k], 0, value.bytes.data(), tensor.Bytes());
      if (!st.ok()) {
        free_all();
        return st.WithContext("graph output '" + tensor.name + "'");
      }
      if (s.refs[k].fetch_sub(1) == 1) {
        backend_->Free(d, s.slots[k]);
        s.slots[k] = DeviceBuffer{};
      }
    }
    result.output_names.push_back(graph_->node(out).name);
    result.outputs.push_back(std::move(value));
  }
  free_all();
  if (options_.record_events) {
    result.track_names = track_names_;
    for (const auto& stream_events : s.events)
      result.events.insert(result.events.end(), stream_events.begin(), stream_events.end());
    std::stable_sort(
        result.events.begin(), result.events.end(),
        [](const sim::SimEvent& a, const sim::SimEvent& b) { return a.time < b.time; });
  }
  return result;
}

}  // namespace hx::exec
