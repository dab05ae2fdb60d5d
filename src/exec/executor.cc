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

namespace {

// A hint to the core that this thread is polling (lets a sibling hyperthread run).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

const char* CopyOrderName(CopyOrder order) {
  return order == CopyOrder::kPlan ? "plan" : "round-robin";
}

Status ExecOptions::Validate() const {
  // The messages name `hexplan run`'s flags, which set these options one to one.
  if (chunk_bytes < 1)
    return InvalidArgument("--chunk-bytes: expected >= 1, got " + std::to_string(chunk_bytes));
  if (!(watchdog_s >= 0.0)) return InvalidArgument("--watchdog: expected seconds >= 0");
  if (!(spin_us >= 0.0 && spin_us <= 1e6))
    return InvalidArgument("--spin-us: expected microseconds in [0, 1e6]");
  if (communicator != nullptr && copy_order != CopyOrder::kPlan)
    return InvalidArgument("--copy-order: only 'plan' runs across ranks (mpirun)");
  return Status::Ok();
}

struct Executor::RunState {
  // Marks are atomics, so finishing a task and finding one ready take no lock. A thread that runs
  // out of work polls for a while (ExecOptions::spin_us), then sleeps on its stream's condition
  // variable after raising its `sleeping` flag; a finished task takes the mutex only to wake a
  // stream whose flag is up (and only the streams that wait for it). The flag and the mark are
  // each stored before the other is read (sequentially consistent), so either the sleeper sees
  // the mark or the finisher sees the flag.
  std::mutex mu;
  std::vector<std::unique_ptr<std::condition_variable>> stream_cv;  // per stream
  std::unique_ptr<std::atomic<uint8_t>[]> sleeping;                 // per stream
  std::condition_variable watchdog_cv;
  const std::vector<std::vector<uint32_t>>* waiters = nullptr;  // per task: streams to wake
  const std::vector<uint32_t>* done_index = nullptr;            // Executor::done_index_
  // Per task at Executor::done_index_[task]: each stream's marks are in cache lines of their
  // own, so threads finishing tasks of different streams do not write the same lines.
  std::unique_ptr<std::atomic<uint8_t>[]> done;
  // What one stream's tasks write as they finish, in a cache line of its own.
  struct alignas(64) StreamProgress {
    std::atomic<uint32_t> completed{0};  // its tasks done (one writer at a time)
    Clock::time_point last_done;         // when its last task finished
    uint64_t ops = 0, transfers = 0;
    // Compute streams: activation copies this stream's thread ran for thread-less queues, and
    // the time they took (copy and marks).
    uint64_t inline_copies = 0;
    double inline_copy_s = 0.0;
    std::vector<sim::SimEvent> events;
  };
  std::vector<StreamProgress> progress;  // per stream
  std::atomic<size_t> streams_done{0};
  size_t num_tensors = 0;
  // Copy streams run by no thread of their own (Executor::inline_stream_): the position of the
  // next transfer no thread has claimed yet.
  std::unique_ptr<std::atomic<uint32_t>[]> next_unclaimed;  // per stream
  bool go = false;                                          // guarded by mu
  // Written under mu; atomic so that a device thread can check it before every op.
  std::atomic<bool> failed{false};
  Status error;
  Clock::time_point t0;
  size_t num_devices = 0;
  std::vector<DeviceBuffer> slots;  // device * num_tensors + tensor (device-major: fewer shared
                                    // cache lines between device threads)
  std::vector<uint8_t> borrowed;    // per slot: its buffer is owned by another slot (FreeSlot)
  std::unique_ptr<std::atomic<int32_t>[]> refs;
  std::vector<int64_t> copied;  // per transfer: bytes copied so far
  const std::map<std::string, HostTensor>* inputs = nullptr;
  // Across ranks: the posted receives (one per task of the receive stream, in its order) and the
  // sends in flight with the (tensor, device) slot each reads, released once it completes.
  struct SendInFlight {
    std::unique_ptr<PendingTransfer> transfer;
    size_t slot = 0;
    int device = -1;
  };
  std::vector<std::unique_ptr<PendingTransfer>> receives;
  std::mutex sends_mu;
  std::vector<SendInFlight> sends;  // guarded by sends_mu

  size_t Slot(TensorId t, int device) const {
    return static_cast<size_t>(device) * num_tensors + t.value();
  }
  // Ready for a new run of `e`: no task done, every slot empty, reference counts from the plan.
  void Reset(const Executor& e, const std::map<std::string, HostTensor>& run_inputs) {
    const size_t num_streams = e.tasks_.streams.size();
    if (done == nullptr) {
      done.reset(new std::atomic<uint8_t>[e.done_slots_]);
      progress = std::vector<StreamProgress>(num_streams);
      sleeping.reset(new std::atomic<uint8_t>[num_streams]);
      next_unclaimed.reset(new std::atomic<uint32_t>[num_streams]);
    }
    for (size_t k = 0; k < e.done_slots_; ++k) done[k].store(0, std::memory_order_relaxed);
    size_t empty_streams = 0;
    for (size_t k = 0; k < num_streams; ++k) {
      sleeping[k].store(0, std::memory_order_relaxed);
      next_unclaimed[k].store(0, std::memory_order_relaxed);
      StreamProgress& p = progress[k];
      p.completed.store(0, std::memory_order_relaxed);
      p.last_done = Clock::time_point{};
      p.ops = p.transfers = p.inline_copies = 0;
      p.inline_copy_s = 0.0;
      p.events.clear();
      if (e.tasks_.streams[k].tasks.empty()) ++empty_streams;
    }
    streams_done.store(empty_streams, std::memory_order_relaxed);
    if (refs == nullptr) refs.reset(new std::atomic<int32_t>[e.initial_refs_.size()]);
    for (size_t i = 0; i < e.initial_refs_.size(); ++i)
      refs[i].store(e.initial_refs_[i], std::memory_order_relaxed);
    num_devices = e.cluster_->num_devices();
    num_tensors = e.graph_->num_tensors();
    slots.assign(num_tensors * num_devices, DeviceBuffer{});
    borrowed.assign(num_tensors * num_devices, 0);
    copied.assign(e.plan_->transfers.size(), 0);
    while (stream_cv.size() < e.tasks_.streams.size())
      stream_cv.push_back(std::make_unique<std::condition_variable>());
    waiters = &e.waiters_;
    done_index = &e.done_index_;
    inputs = &run_inputs;
    DropTransfers();
    go = false;
    failed = false;
    error = Status::Ok();
  }
  // Across ranks: forgets the posted receives (cancelled) and sends (before their buffers go).
  void DropTransfers() {
    receives.clear();
    std::lock_guard<std::mutex> lock(sends_mu);
    sends.clear();
  }
  // Tasks finished so far (the watchdog's measure of progress).
  size_t Finished() const {
    size_t n = 0;
    for (const StreamProgress& p : progress) n += p.completed.load(std::memory_order_relaxed);
    return n;
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
  // Marks `task` finished and wakes the sleeping streams that wait for it. The next transfers of
  // thread-less streams that this made ready are claimed (`e.ClaimReadyInline`) and appended to
  // `claimed`: the caller runs them.
  void MarkDone(const Executor& e, uint32_t task, std::vector<uint32_t>* claimed) {
    // The stream's progress first: once the mark is out, another thread may run the stream's
    // next task (a thread-less copy stream's) and count it.
    const uint32_t stream = e.tasks_.tasks[task].stream;
    StreamProgress& p = progress[stream];
    const uint32_t completed = p.completed.load(std::memory_order_relaxed) + 1;
    p.completed.store(completed, std::memory_order_relaxed);
    if (completed == e.tasks_.streams[stream].tasks.size()) {
      p.last_done = Clock::now();
      if (streams_done.fetch_add(1, std::memory_order_acq_rel) + 1 == progress.size()) {
        { std::lock_guard<std::mutex> lock(mu); }
        watchdog_cv.notify_all();
      }
    }
    done[e.done_index_[task]].store(1, std::memory_order_seq_cst);
    for (uint32_t waiter : (*waiters)[task]) {
      if (e.inline_stream_[waiter]) {
        e.ClaimReadyInline(*this, waiter, claimed);
      } else if (sleeping[waiter].load(std::memory_order_seq_cst)) {
        // The sleeper raised its flag holding the mutex and releases it only by waiting: once
        // the mutex is ours it waits (or has seen the mark). Notify outside it, or the woken
        // thread would block on the mutex at once and need a second wake-up.
        { std::lock_guard<std::mutex> lock(mu); }
        stream_cv[waiter]->notify_all();
      }
    }
  }
  bool Done(uint32_t task) const {
    return done[(*done_index)[task]].load(std::memory_order_seq_cst) != 0;
  }
  bool Ready(const plan::Task& task) const {
    for (uint32_t d : task.deps)
      if (!Done(d)) return false;
    return true;
  }
  // Sleeps on the stream's condition variable until `ready()` (which reads only marks) holds or
  // the run failed; false when it failed.
  template <typename Pred>
  bool Sleep(uint32_t stream, Pred ready) {
    std::unique_lock<std::mutex> lock(mu);
    sleeping[stream].store(1, std::memory_order_seq_cst);
    stream_cv[stream]->wait(lock, [&] { return failed || ready(); });
    sleeping[stream].store(0, std::memory_order_relaxed);
    return !failed;
  }
  // Waits for the task's dependencies, polling for up to `spin` before it sleeps; false when the
  // run failed meanwhile.
  bool WaitDeps(const plan::Task& task, Clock::duration spin = Clock::duration::zero()) {
    if (Ready(task)) return !failed.load(std::memory_order_acquire);
    if (spin > Clock::duration::zero()) {
      const Clock::time_point until = Clock::now() + spin;
      for (uint32_t k = 1; !Ready(task); ++k) {
        if (failed.load(std::memory_order_relaxed)) return false;
        if (k % 64 == 0 && Clock::now() >= until)
          return Sleep(task.stream, [&] { return Ready(task); });
        CpuRelax();
      }
      return !failed.load(std::memory_order_acquire);
    }
    return Sleep(task.stream, [&] { return Ready(task); });
  }
  bool WaitGo(uint32_t stream) {
    std::unique_lock<std::mutex> lock(mu);
    stream_cv[stream]->wait(lock, [&] { return go || failed; });
    return !failed;
  }
};

Executor::~Executor() {
  for (const KeptConstant& c : kept_constants_)
    if (c.made) backend_->Free(c.device, c.value);
}

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
  HX_RETURN_IF_ERROR(e->SplitAcrossRanks());
  // Every op needs a kernel; every weight read needs a value (across ranks: this rank's ops).
  std::vector<uint8_t> needed;
  if (options.communicator != nullptr)
    needed = WeightsReadOnRank(plan, graph, options.device_rank, options.communicator->rank());
  for (NodeId op : graph.Ops()) {
    const graph::Node& node = graph.node(op);
    const DeviceId dev = e->tasks_.op_device[op.value()];
    if (dev.valid() && !e->local_device_[dev.value()]) continue;
    if (!backend->Supports(node))
      return Unimplemented("op '" + node.name + "': the " + backend->name() +
                           " backend has no kernel for op type '" +
                           (node.domain.empty() ? "" : node.domain + ".") + node.op_type + "'");
  }
  for (NodeId w : graph.Weights()) {
    if (!needed.empty() && !needed[w.value()]) continue;
    const graph::Tensor& t = graph.tensor(graph.node(w).outputs.at(0));
    if (w.value() >= weights->size() ||
        static_cast<int64_t>((*weights)[w.value()].bytes.size()) != t.Bytes())
      return InvalidArgument("executor: weight '" + graph.node(w).name + "' has no value of " +
                             std::to_string(t.Bytes()) + " bytes");
  }
  e->weights_ = weights;
  backend->PrepareGraph(graph);  // per-node kernel state (oneDNN primitives), made once

  e->track_names_ = std::make_shared<std::vector<std::string>>();
  for (const plan::Stream& s : e->tasks_.streams) e->track_names_->push_back(s.name);

  e->CountBufferReferences();
  e->FindFusedInputs();
  e->IndexWaitersAndMarks();
  e->ChooseInlineCopyStreams();
  return e;
}

std::vector<uint8_t> WeightsReadOnRank(const plan::Plan& plan, const graph::Graph& graph,
                                       const std::vector<int>& device_rank, int rank) {
  std::vector<uint8_t> read(graph.num_nodes(), 0);
  auto on_rank = [&](DeviceId d) {
    return d.valid() && d.index() < device_rank.size() && device_rank[d.index()] == rank;
  };
  const std::vector<DeviceId> op_device = plan.OpDevices(graph.num_nodes());
  for (NodeId op : graph.Ops())
    if (on_rank(op_device[op.value()]))
      for (NodeId w : plan::WeightInputs(graph, op)) read[w.value()] = 1;
  // A relay loads a weight for another device's ops (parallel transmission).
  for (const plan::WeightPlacement& wp : plan.weights)
    if (wp.mode == plan::WeightMode::kRelay && on_rank(wp.relay)) read[wp.weight.value()] = 1;
  // Rank 0 writes the outputs, a weight among them too.
  for (NodeId out : graph.Outputs()) {
    const NodeId producer = graph.tensor(graph.node(out).inputs.at(0)).producer;
    if (rank == 0 && graph.node(producer).kind == NodeKind::kWeight) read[producer.value()] = 1;
  }
  return read;
}

Status Executor::SplitAcrossRanks() {
  local_device_.assign(cluster_->num_devices(), 1);
  task_role_.assign(tasks_.tasks.size(), TaskRole::kLocal);
  const Communicator* comm = options_.communicator;
  if (comm == nullptr) return Status::Ok();
  if (options_.device_rank.size() != cluster_->num_devices())
    return InvalidArgument("executor: " + std::to_string(options_.device_rank.size()) +
                           " device ranks for the " + std::to_string(cluster_->num_devices()) +
                           " devices of cluster '" + cluster_->name() + "'");
  for (size_t d = 0; d < local_device_.size(); ++d) {
    const int r = options_.device_rank[d];
    if (r < 0 || r >= comm->size())
      return InvalidArgument("executor: device '" + cluster_->device(DeviceId(d)).name +
                             "' is on rank " + std::to_string(r) + " of " +
                             std::to_string(comm->size()));
    local_device_[d] = r == comm->rank() ? 1 : 0;
  }
  for (size_t k = 0; k < tasks_.tasks.size(); ++k) {
    const plan::Task& t = tasks_.tasks[k];
    if (t.kind == plan::Task::Kind::kSubgraph) {
      const DeviceId dev = plan_->devices[t.schedule].device;
      task_role_[k] = local_device_[dev.index()] ? TaskRole::kLocal : TaskRole::kRemote;
      continue;
    }
    const int src = transfer_src_[t.transfer], dst = transfer_dst_[t.transfer];
    const bool dst_here = local_device_[static_cast<size_t>(dst)] != 0;
    const bool src_here = src < 0 ? dst_here : local_device_[static_cast<size_t>(src)] != 0;
    task_role_[k] = src_here && dst_here ? TaskRole::kLocal
                    : src_here           ? TaskRole::kSend
                    : dst_here           ? TaskRole::kReceive
                                         : TaskRole::kRemote;
  }
  // The streams keep this rank's tasks in their order; the receives move to a stream of their
  // own (in transfer order), whose thread completes them as they arrive.
  plan::Stream receive;
  receive.name = "receive from other ranks";
  for (plan::Stream& st : tasks_.streams) {
    std::vector<uint32_t> kept;
    for (uint32_t task : st.tasks) {
      const TaskRole role = task_role_[task];
      if (role == TaskRole::kLocal || role == TaskRole::kSend) kept.push_back(task);
      if (role == TaskRole::kReceive) receive.tasks.push_back(task);
      num_sends_ += role == TaskRole::kSend ? 1 : 0;
    }
    st.tasks = std::move(kept);
  }
  std::sort(receive.tasks.begin(), receive.tasks.end(), [&](uint32_t a, uint32_t b) {
    return tasks_.tasks[a].transfer < tasks_.tasks[b].transfer;
  });
  // A receive waits only for its message; no task waits for another rank's.
  for (size_t k = 0; k < tasks_.tasks.size(); ++k) {
    std::vector<uint32_t>& deps = tasks_.tasks[k].deps;
    if (task_role_[k] == TaskRole::kReceive || task_role_[k] == TaskRole::kRemote) deps.clear();
    std::erase_if(deps, [&](uint32_t d) { return task_role_[d] == TaskRole::kRemote; });
  }
  if (!receive.tasks.empty() || num_sends_ > 0) {
    receive_stream_ = static_cast<uint32_t>(tasks_.streams.size());
    for (uint32_t task : receive.tasks) tasks_.tasks[task].stream = receive_stream_;
    tasks_.streams.push_back(std::move(receive));
  }
  return Status::Ok();
}

void Executor::FindFusedInputs() {
  const graph::Graph& graph = *graph_;
  fused_input_.assign(graph.num_nodes(), TensorId{});
  in_place_input_.assign(graph.num_nodes(), -1);
  kept_constants_.assign(graph.num_nodes(), KeptConstant{});
  for (NodeId op : graph.Ops()) {
    const graph::Node& node = graph.node(op);
    kept_constants_[op.value()].kept =
        node.op_type == "Constant" && (node.domain.empty() || node.domain == "ai.onnx") &&
        node.outputs.size() == 1 && node.outputs[0].valid() &&
        std::none_of(node.inputs.begin(), node.inputs.end(), [](TensorId t) { return t.valid(); });
    if (backend_->RunsInPlace(node))
      in_place_input_[op.value()] = static_cast<int32_t>(backend_->InPlaceInput(node));
    const TensorId t = backend_->FusedInput(node);
    const DeviceId dev = tasks_.op_device[op.value()];
    if (!t.valid() || !dev.valid()) continue;
    // Written on this device before `op` runs (the backend asks for an ancestor's output), and
    // kept until `op`'s readers, which read it too, are done.
    const NodeId producer = graph.tensor(t).producer;
    bool one_device = graph.node(producer).is_op() && tasks_.op_device[producer.value()] == dev &&
                      node.outputs.size() == 1 && node.outputs[0].valid() &&
                      graph.tensor(t).Bytes() == graph.tensor(node.outputs[0]).Bytes();
    for (TensorId out : node.outputs)
      if (out.valid())
        for (NodeId reader : graph.tensor(out).consumers)
          one_device =
              one_device && graph.node(reader).is_op() && tasks_.op_device[reader.value()] == dev &&
              std::count(graph.node(reader).inputs.begin(), graph.node(reader).inputs.end(), t) > 0;
    if (one_device) fused_input_[op.value()] = t;
  }
}

void Executor::CountBufferReferences() {
  const plan::Plan& plan = *plan_;
  const graph::Graph& graph = *graph_;
  const size_t D = cluster_->num_devices();
  // Reference counts: readers of each (tensor, device) buffer, device-major like RunState::slots.
  const size_t T = graph.num_tensors();
  initial_refs_.assign(D * T, 0);
  input_slots_.assign(D, {});
  std::vector<std::set<uint32_t>> inputs_on(D);
  for (NodeId op : graph.Ops()) {
    const DeviceId dev = tasks_.op_device[op.value()];
    if (!dev.valid()) continue;
    const graph::Node& node = graph.node(op);
    std::set<uint32_t> seen;
    for (TensorId t : node.inputs) {
      if (!t.valid() || !seen.insert(t.value()).second) continue;
      const NodeId producer = graph.tensor(t).producer;
      const graph::Node& p = graph.node(producer);
      if (p.kind == NodeKind::kWeight) {
        const plan::WeightPlacement* wp = PlacementFor(producer, dev);
        if (wp != nullptr && wp->mode == plan::WeightMode::kDha) continue;
      }
      if (p.kind == NodeKind::kInput) inputs_on[dev.value()].insert(t.value());
      ++initial_refs_[dev.value() * T + t.value()];
    }
  }
  for (size_t i = 0; i < plan.transfers.size(); ++i)
    if (transfer_src_[i] >= 0)
      ++initial_refs_[static_cast<size_t>(transfer_src_[i]) * T + plan.transfers[i].tensor.value()];
  for (NodeId out : graph.Outputs()) {
    const TensorId t = graph.node(out).inputs.at(0);
    const NodeId producer = graph.tensor(t).producer;
    if (graph.node(producer).is_op() && tasks_.op_device[producer.value()].valid())
      ++initial_refs_[tasks_.op_device[producer.value()].value() * T + t.value()];
  }
  for (size_t d = 0; d < D; ++d)
    for (uint32_t t : inputs_on[d]) input_slots_[d].push_back(TensorId(t));
}

void Executor::IndexWaitersAndMarks() {
  // Who waits for each task: the streams of the tasks that depend on it, and its own stream (the
  // round-robin copy loop waits for its own earlier transfers too).
  waiters_.assign(tasks_.tasks.size(), {});
  for (const plan::Task& t : tasks_.tasks)
    for (uint32_t dep : t.deps) waiters_[dep].push_back(t.stream);
  for (size_t k = 0; k < tasks_.tasks.size(); ++k) {
    auto& w = waiters_[k];
    w.push_back(tasks_.tasks[k].stream);
    std::sort(w.begin(), w.end());
    w.erase(std::unique(w.begin(), w.end()), w.end());
  }
  // Each stream's "done" marks in cache lines of their own (RunState::done).
  done_index_.assign(tasks_.tasks.size(), 0);
  size_t next_slot = 0;
  for (const plan::Stream& st : tasks_.streams) {
    for (uint32_t task : st.tasks) done_index_[task] = static_cast<uint32_t>(next_slot++);
    next_slot = (next_slot + 63) / 64 * 64;
  }
  done_slots_ = std::max<size_t>(next_slot, 1);
}

void Executor::ChooseInlineCopyStreams() {
  const plan::Plan& plan = *plan_;
  // Copy streams within the process (activations between devices, weight loads from the host),
  // on a backend whose copies are the calling thread's work, get no thread: each transfer runs on
  // the thread that finishes what it waits for last (the producer's device thread, or the one
  // that ran the stream's previous transfer); a load, which waits for nothing, on the thread
  // that starts the run or on a device thread that needs it (RunComputeStream). Waking a copy
  // thread cost more than the copies (tens of microseconds per wake-up of a sleeping core; LSTM
  // plans cross devices thousands of times), and a copy thread pinned to its destination's cores
  // could not overlap that device's compute anyway: at each run's start the loads waited 60-100
  // us for their thread to get a core from the device threads polling for those very loads.
  inline_stream_.assign(tasks_.streams.size(), 0);
  if (options_.inline_copies && options_.copy_order == CopyOrder::kPlan &&
      backend_->CopiesOnCallingThread()) {
    for (size_t k = 0; k < tasks_.streams.size(); ++k) {
      const plan::Stream& st = tasks_.streams[k];
      if (st.compute || k == receive_stream_) continue;
      bool in_process = true;
      for (uint32_t task : st.tasks) {
        const uint32_t i = tasks_.tasks[task].transfer;
        const bool from_host = plan.transfers[i].kind == plan::TransferKind::kWeightLoad;
        in_process = in_process && transfer_dst_[i] >= 0 && (transfer_src_[i] >= 0 || from_host);
      }
      inline_stream_[k] = in_process ? 1 : 0;
      has_inline_streams_ = has_inline_streams_ || in_process;
    }
  }
  // Across ranks, the streams of other ranks' devices (left empty) get no thread.
  if (options_.communicator != nullptr)
    for (size_t k = 0; k < tasks_.streams.size(); ++k)
      if (tasks_.streams[k].tasks.empty() && k != receive_stream_) {
        inline_stream_[k] = 1;
        has_inline_streams_ = true;
      }
  // The devices each copy stream copies to (its thread is bound near them, BindCopyThread).
  stream_destinations_.assign(tasks_.streams.size(), {});
  for (size_t k = 0; k < tasks_.streams.size(); ++k) {
    std::set<int> destinations;
    for (uint32_t task : tasks_.streams[k].tasks)
      if (tasks_.tasks[task].kind == plan::Task::Kind::kTransfer)
        destinations.insert(transfer_dst_[tasks_.tasks[task].transfer]);
    stream_destinations_[k].assign(destinations.begin(), destinations.end());
  }
}

int Executor::InPlace(RunState& s, int device, NodeId op, const std::vector<uint8_t>& from_host) {
  const graph::Node& node = graph_->node(op);
  if (node.outputs.size() != 1 || node.inputs.empty() || !node.outputs[0].valid() ||
      in_place_input_[op.value()] < 0)
    return -1;
  const size_t in = static_cast<size_t>(in_place_input_[op.value()]);
  if (in >= node.inputs.size() || from_host[in] != 0 || !node.inputs[in].valid()) return -1;
  const graph::Tensor& x = graph_->tensor(node.inputs[in]);
  if (!graph_->node(x.producer).is_op() || x.Bytes() != graph_->tensor(node.outputs[0]).Bytes())
    return -1;
  for (size_t i = 0; i < node.inputs.size(); ++i)
    if (i != in && node.inputs[i] == node.inputs[in]) return -1;
  // Its last reader here: no other op, transfer or graph output reads the buffer after this op.
  const size_t k = s.Slot(node.inputs[in], device);
  return s.refs[k].load() == 1 && s.slots[k].ptr != nullptr && s.borrowed[k] == 0
             ? static_cast<int>(in)
             : -1;
}

uint32_t Executor::StreamOfOp(NodeId op) const {
  const uint32_t task = tasks_.op_task[op.value()];
  return task == plan::kNoTask ? 0 : tasks_.tasks[task].stream;
}

sim::SimEvent Executor::OpStarts(RunState& s, uint32_t stream, int device, NodeId op,
                                 bool dha) const {
  sim::SimEvent ev;
  if (!options_.record_events) return ev;
  ev.kind = sim::SimEvent::Kind::kOpStart;
  ev.time = s.Now();
  ev.op = op;
  ev.device = DeviceId(device);
  ev.dha = dha;
  ev.track = (*track_names_)[stream];
  s.progress[stream].events.push_back(ev);
  return ev;
}

void Executor::OpFinishes(RunState& s, uint32_t stream, sim::SimEvent ev) const {
  if (!options_.record_events) return;
  ev.kind = sim::SimEvent::Kind::kOpFinish;
  ev.time = s.Now();
  s.progress[stream].events.push_back(std::move(ev));
}

Status Executor::RunKeptConstant(RunState& s, int device, NodeId op) {
  const graph::Node& node = graph_->node(op);
  const TensorId t = node.outputs[0];
  const graph::Tensor& tensor = graph_->tensor(t);
  const uint32_t stream = StreamOfOp(op);
  sim::SimEvent ev = OpStarts(s, stream, device, op, false);
  KeptConstant& c = kept_constants_[op.value()];
  if (!c.made || c.device != device) {
    if (c.made) backend_->Free(c.device, c.value);
    c.made = false;
    auto buffer = backend_->Allocate(device, tensor.Bytes());
    if (!buffer.ok())
      return buffer.status().WithContext("op '" + node.name + "' output '" + tensor.name + "'");
    thread_local std::vector<TensorRef> out;
    out.assign(1, TensorRef{tensor.dtype, &tensor.shape, buffer->ptr});
    Status st = backend_->Launch(device, node, {}, out);
    if (st.ok()) st = backend_->WaitEvent(backend_->RecordEvent(device));
    if (!st.ok()) {
      backend_->Free(device, *buffer);
      return st.WithContext("op '" + node.name + "' on '" +
                            cluster_->device(DeviceId(device)).name + "'");
    }
    c = KeptConstant{true, true, device, *buffer};
  }
  // The slot borrows the kept buffer: freeing the slot leaves it, and no op writes over it
  // (InPlace, FusedInput take only buffers a slot owns).
  const size_t k = s.Slot(t, device);
  s.slots[k] = c.value;
  s.borrowed[k] = 1;
  OpFinishes(s, stream, ev);
  ++s.progress[stream].ops;
  if (s.refs[k].load() == 0) FreeSlot(s, device, k);
  return Status::Ok();
}

Status Executor::RunOp(RunState& s, int device, NodeId op) {
  if (kept_constants_[op.value()].kept) return RunKeptConstant(s, device, op);
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
  // The output takes the fused input's buffer when only the output's readers still read it
  // (DeviceBackend::FusedInput): the fused input's slot then borrows the buffer, which the output
  // owns, and the input appended to the op's tells the kernel to add into it.
  const TensorId fused = fused_input_[op.value()];
  const size_t fused_slot = fused.valid() ? s.Slot(fused, device) : 0;
  const bool take_fused = fused.valid() && s.slots[fused_slot].ptr != nullptr &&
                          s.borrowed[fused_slot] == 0 && s.refs[fused_slot].load() == 1;
  if (take_fused) {
    const graph::Tensor& tensor = graph_->tensor(fused);
    in.push_back(TensorRef{tensor.dtype, &tensor.shape, s.slots[fused_slot].ptr});
  }
  const int in_place = InPlace(s, device, op, from_host);
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const TensorId t = node.outputs[i];
    if (!t.valid()) continue;
    const graph::Tensor& tensor = graph_->tensor(t);
    if (take_fused) {
      s.slots[s.Slot(t, device)] = s.slots[fused_slot];
      s.borrowed[fused_slot] = 1;
      out[i] = TensorRef{tensor.dtype, &tensor.shape, in.back().data};
      continue;
    }
    if (in_place >= 0) {  // the output takes that input's buffer; releasing it then frees nothing
      const size_t k = s.Slot(node.inputs[static_cast<size_t>(in_place)], device);
      s.slots[s.Slot(t, device)] = s.slots[k];
      s.slots[k] = DeviceBuffer{};
      out[i] = TensorRef{tensor.dtype, &tensor.shape, in[static_cast<size_t>(in_place)].data};
      continue;
    }
    auto buffer = backend_->Allocate(device, tensor.Bytes());
    if (!buffer.ok())
      return buffer.status().WithContext("op '" + node.name + "' output '" + tensor.name + "'");
    s.slots[s.Slot(t, device)] = *buffer;
    out[i] = TensorRef{tensor.dtype, &tensor.shape, buffer->ptr};
  }
  const uint32_t stream = StreamOfOp(op);
  sim::SimEvent ev = OpStarts(s, stream, device, op, dha);
  Status st = backend_->Launch(device, node, in, out);
  if (!st.ok()) {
    const std::string& m = st.message();
    return m.find("'" + node.name + "'") != std::string::npos
               ? st
               : st.WithContext("op '" + node.name + "' on '" +
                                cluster_->device(DeviceId(device)).name + "'");
  }
  HX_RETURN_IF_ERROR(backend_->WaitEvent(backend_->RecordEvent(device)));
  OpFinishes(s, stream, ev);
  ++s.progress[stream].ops;
  // Release what this op read, and outputs nobody reads here.
  auto release = [&](TensorId t) {
    const size_t k = s.Slot(t, device);
    if (s.refs[k].fetch_sub(1) == 1) FreeSlot(s, device, k);
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
    if (s.refs[k].load() == 0) FreeSlot(s, device, k);
  }
  return Status::Ok();
}

size_t Executor::num_threads() const {
  return static_cast<size_t>(std::count(inline_stream_.begin(), inline_stream_.end(), 0));
}

bool Executor::SpinsFor(int device) const {
  if (receive_stream_ == plan::kNoTask || cluster_->device(DeviceId(device)).spec.cores > 1)
    return true;
  const std::vector<int>& near = stream_destinations_[receive_stream_];
  return std::find(near.begin(), near.end(), device) == near.end();
}

Status Executor::RunComputeStream(RunState& s, uint32_t stream) {
  const plan::Stream& st = tasks_.streams[stream];
  const int device = static_cast<int>(st.device.value());
  HX_RETURN_IF_ERROR(backend_->BindThread(device));
  const auto spin = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::micro>(SpinsFor(device) ? options_.spin_us : 0.0));
  if (!s.WaitGo(stream)) return Status::Ok();
  for (uint32_t task : st.tasks) {
    const plan::Task& t = tasks_.tasks[task];
    HX_RETURN_IF_ERROR(RunReadyInlineDeps(s, t, stream));
    if (!s.WaitDeps(t, spin)) return Status::Ok();
    const plan::Subgraph& sg = plan_->devices[t.schedule].subgraphs[t.subgraph];
    for (NodeId op : sg.ops) {
      if (s.failed.load(std::memory_order_acquire)) return Status::Ok();
      HX_RETURN_IF_ERROR(RunOp(s, device, op));
    }
    HX_RETURN_IF_ERROR(Complete(s, task));
  }
  return Status::Ok();
}

Status Executor::RunReadyInlineDeps(RunState& s, const plan::Task& task, uint32_t runner) {
  if (!has_inline_streams_) return Status::Ok();
  thread_local std::vector<uint32_t> claimed;
  for (bool ran = true; ran;) {  // a stream's next transfer may be the next one waited for
    claimed.clear();
    for (uint32_t d : task.deps)
      if (inline_stream_[tasks_.tasks[d].stream] && !s.Done(d))
        ClaimReadyInline(s, tasks_.tasks[d].stream, &claimed);
    ran = !claimed.empty();
    HX_RETURN_IF_ERROR(RunClaimed(s, &claimed, runner));
  }
  return Status::Ok();
}

void Executor::ClaimReadyInline(RunState& s, uint32_t stream,
                                std::vector<uint32_t>* claimed) const {
  // A transfer of the stream can run once the one before it there and its dependencies are done.
  // Two threads finishing those at once may both see it ready; the compare-and-swap on the
  // stream's next unclaimed position lets one of them run it.
  const std::vector<uint32_t>& queue = tasks_.streams[stream].tasks;
  uint32_t next = s.next_unclaimed[stream].load(std::memory_order_seq_cst);
  if (next >= queue.size()) return;
  if (next > 0 && !s.Done(queue[next - 1])) return;
  if (!s.Ready(tasks_.tasks[queue[next]])) return;
  if (s.next_unclaimed[stream].compare_exchange_strong(next, next + 1))
    claimed->push_back(queue[next]);
}

Status Executor::RunClaimed(RunState& s, std::vector<uint32_t>* claimed, uint32_t runner,
                            ClaimOrder order) {
  for (size_t first = 0; first < claimed->size();) {  // MarkDone appends what it makes ready
    uint32_t task;
    if (order == ClaimOrder::kFirstFirst) {
      task = (*claimed)[first++];
    } else {
      task = claimed->back();
      claimed->pop_back();
    }
    if (s.failed.load(std::memory_order_acquire)) return Status::Ok();
    const Clock::time_point start = Clock::now();
    const plan::Transfer& tr = plan_->transfers[tasks_.tasks[task].transfer];
    HX_RETURN_IF_ERROR(RunTransferChunk(s, task, 0, graph_->tensor(tr.tensor).Bytes()));
    s.MarkDone(*this, task, claimed);
    if (runner != plan::kNoTask) {
      RunState::StreamProgress& p = s.progress[runner];
      ++p.inline_copies;
      p.inline_copy_s += std::chrono::duration<double>(Clock::now() - start).count();
    }
  }
  claimed->clear();
  return Status::Ok();
}

Status Executor::Complete(RunState& s, uint32_t task) {
  thread_local std::vector<uint32_t> claimed;
  claimed.clear();
  s.MarkDone(*this, task, &claimed);
  const uint32_t stream = tasks_.tasks[task].stream;
  return RunClaimed(s, &claimed, tasks_.streams[stream].compute ? stream : plan::kNoTask);
}

Status Executor::RunTransferChunk(RunState& s, uint32_t task, int64_t offset, int64_t bytes) {
  if (task_role_[task] == TaskRole::kSend) return PostSendTransfer(s, task);
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
      s.progress[stream].events.push_back(ev);
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
      s.progress[stream].events.push_back(ev);
    }
    if (src >= 0) {
      const size_t k = s.Slot(tr.tensor, src);
      if (s.refs[k].fetch_sub(1) == 1) FreeSlot(s, src, k);
    }
    ++s.progress[stream].transfers;
  }
  return Status::Ok();
}

Status Executor::PostSendTransfer(RunState& s, uint32_t task) {
  const uint32_t index = tasks_.tasks[task].transfer;
  const plan::Transfer& tr = plan_->transfers[index];
  const graph::Tensor& tensor = graph_->tensor(tr.tensor);
  const int src = transfer_src_[index], dst = transfer_dst_[index];
  const uint32_t stream = tasks_.tasks[task].stream;
  const size_t slot = s.Slot(tr.tensor, src);
  sim::SimEvent ev;
  ev.transfer = index;
  ev.value = static_cast<double>(tensor.Bytes());
  ev.track = (*track_names_)[stream];
  if (options_.record_events) {
    ev.kind = sim::SimEvent::Kind::kTransferStart;
    ev.time = s.Now();
    s.progress[stream].events.push_back(ev);
  }
  auto posted =
      options_.communicator->PostSend(options_.device_rank[static_cast<size_t>(dst)],
                                      static_cast<int>(index), s.slots[slot].ptr, tensor.Bytes());
  if (!posted.ok())
    return posted.status().WithContext("transfer " + std::to_string(index) + " of '" + tensor.name +
                                       "' to " + cluster_->place(tr.dst).name);
  {
    std::lock_guard<std::mutex> lock(s.sends_mu);
    s.sends.push_back({std::move(posted).value(), slot, src});
  }
  // Posted is done for this rank: nothing here waits for the tensor on the other rank's device.
  if (options_.record_events) {
    ev.kind = sim::SimEvent::Kind::kTransferFinish;
    ev.time = s.Now();
    s.progress[stream].events.push_back(ev);
  }
  ++s.progress[stream].transfers;
  return Status::Ok();
}

Status Executor::RunReceiveStream(RunState& s, uint32_t stream) {
  const std::vector<uint32_t>& queue = tasks_.streams[stream].tasks;
  HX_RETURN_IF_ERROR(backend_->BindCopyThread(stream_destinations_[stream]));
  if (!s.WaitGo(stream)) return Status::Ok();
  std::vector<uint8_t> arrived(queue.size(), 0);
  size_t first = 0, sends_done = 0;  // first: the first receive not yet arrived
  for (uint32_t idle = 0; first < queue.size() || sends_done < num_sends_;) {
    if (s.failed.load(std::memory_order_acquire)) return Status::Ok();
    bool progress = false;
    // Messages arrive about in plan order: look at the next few outstanding receives.
    for (size_t k = first, looked = 0; k < queue.size() && looked < 8; ++k) {
      if (arrived[k]) continue;
      ++looked;
      if (!s.receives[k]->Done()) continue;
      const plan::Transfer& tr = plan_->transfers[tasks_.tasks[queue[k]].transfer];
      HX_RETURN_IF_ERROR(s.receives[k]->Wait().WithContext(
          "transfer " + std::to_string(tasks_.tasks[queue[k]].transfer) + " of '" +
          graph_->tensor(tr.tensor).name + "' from " + cluster_->place(tr.src).name));
      arrived[k] = 1;
      progress = true;
      if (options_.record_events) {
        sim::SimEvent ev;
        ev.kind = sim::SimEvent::Kind::kTransferStart;
        ev.time = s.Now();
        ev.transfer = tasks_.tasks[queue[k]].transfer;
        ev.value = static_cast<double>(graph_->tensor(tr.tensor).Bytes());
        ev.track = (*track_names_)[stream];
        s.progress[stream].events.push_back(ev);
        ev.kind = sim::SimEvent::Kind::kTransferFinish;
        s.progress[stream].events.push_back(ev);
      }
      ++s.progress[stream].transfers;
      HX_RETURN_IF_ERROR(Complete(s, queue[k]));
    }
    while (first < queue.size() && arrived[first]) ++first;
    HX_ASSIGN_OR_RETURN(const size_t reaped, ReapSends(s));
    sends_done += reaped;
    progress = progress || reaped > 0;
    idle = progress ? 0 : idle + 1;
    if (idle > 64)
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    else if (idle > 0)
      std::this_thread::yield();
  }
  return Status::Ok();
}

StatusOr<size_t> Executor::ReapSends(RunState& s) {
  std::vector<RunState::SendInFlight> done;
  {
    std::lock_guard<std::mutex> lock(s.sends_mu);
    for (size_t k = 0; k < s.sends.size();) {
      if (s.sends[k].transfer->Done()) {
        done.push_back(std::move(s.sends[k]));
        s.sends[k] = std::move(s.sends.back());
        s.sends.pop_back();
      } else {
        ++k;
      }
    }
  }
  for (RunState::SendInFlight& f : done) {
    HX_RETURN_IF_ERROR(f.transfer->Wait());
    if (s.refs[f.slot].fetch_sub(1) == 1) FreeSlot(s, f.device, f.slot);
  }
  return done.size();
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
      HX_RETURN_IF_ERROR(Complete(s, task));
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
      if (!pick() && !s.Sleep(stream, pick)) return Status::Ok();
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
      HX_RETURN_IF_ERROR(Complete(s, task));
    }
    cursor = (cursor + 1) % dests.size();
  }
  return Status::Ok();
}

void Executor::FreeSlot(RunState& s, int device, size_t k) {
  if (s.borrowed[k] == 0) backend_->Free(device, s.slots[k]);
  s.borrowed[k] = 0;
  s.slots[k] = DeviceBuffer{};
}

void Executor::FreeAll(RunState& s) {
  for (size_t k = 0; k < s.slots.size(); ++k)
    if (s.slots[k].ptr != nullptr || s.slots[k].bytes > 0)
      FreeSlot(s, static_cast<int>(k / s.num_tensors), k);
}

Status Executor::PlaceInputsAndResidentWeights(RunState& s,
                                               const std::map<std::string, HostTensor>& inputs) {
  Status setup;
  for (size_t d = 0; d < cluster_->num_devices() && setup.ok(); ++d) {
    if (!local_device_[d]) continue;  // another rank's device
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
    if (!wp.resident || wp.mode == plan::WeightMode::kDha || !local_device_[wp.device.index()])
      continue;
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
  return setup;
}

Status Executor::PostReceives(RunState& s) {
  if (receive_stream_ == plan::kNoTask) return Status::Ok();
  for (uint32_t task : tasks_.streams[receive_stream_].tasks) {
    const uint32_t index = tasks_.tasks[task].transfer;
    const plan::Transfer& tr = plan_->transfers[index];
    const graph::Tensor& tensor = graph_->tensor(tr.tensor);
    const int src = transfer_src_[index], dst = transfer_dst_[index];
    const std::string what = "transfer " + std::to_string(index) + " of '" + tensor.name +
                             "' from " + cluster_->place(tr.src).name;
    auto buffer = backend_->Allocate(dst, tensor.Bytes());
    if (!buffer.ok()) return buffer.status().WithContext(what);
    s.slots[s.Slot(tr.tensor, dst)] = *buffer;
    auto posted =
        options_.communicator->PostReceive(options_.device_rank[static_cast<size_t>(src)],
                                           static_cast<int>(index), buffer->ptr, tensor.Bytes());
    if (!posted.ok()) return posted.status().WithContext(what);
    s.receives.push_back(std::move(posted).value());
  }
  return Status::Ok();
}

void Executor::Watch(RunState& s) const {
  std::unique_lock<std::mutex> lock(s.mu);
  size_t seen = s.Finished();
  Clock::time_point progress = Clock::now();
  while (!s.failed && s.streams_done.load() < tasks_.streams.size()) {
    s.watchdog_cv.wait_for(lock, std::chrono::milliseconds(50));
    if (s.Finished() != seen) {
      seen = s.Finished();
      progress = Clock::now();
    } else if (options_.watchdog_s > 0.0 &&
               std::chrono::duration<double>(Clock::now() - progress).count() >
                   options_.watchdog_s) {
      std::string msg = "executor: watchdog: no task finished for " +
                        std::to_string(options_.watchdog_s) + " s; waiting:";
      for (const plan::Stream& st : tasks_.streams)
        for (uint32_t t : st.tasks)
          if (!s.Done(t)) {
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

StatusOr<ExecResult> Executor::Run(const std::map<std::string, HostTensor>& inputs) {
  HX_RETURN_IF_ERROR(CheckGraphInputsGiven(*graph_, inputs));
  // The run's state lives as long as the executor: its arrays (a slot per tensor and device) are
  // allocated once, so a run does not map and fault in fresh pages for them.
  if (state_ == nullptr) state_ = std::make_unique<RunState>();
  RunState& s = *state_;
  s.Reset(*this, inputs);
  backend_->ResetPeakMemory();

  // Before the clock: graph inputs on the devices that read them, resident weights.
  Status setup = PlaceInputsAndResidentWeights(s, inputs);
  // Across ranks: every receive posted, then all ranks start together.
  if (setup.ok() && options_.communicator != nullptr) {
    setup = PostReceives(s);
    if (setup.ok()) setup = options_.communicator->Barrier();
  }
  if (!setup.ok()) {
    s.DropTransfers();
    FreeAll(s);
    return setup;
  }

  // The streams with a thread run on the executor's persistent threads (started by the first run).
  std::vector<uint32_t> threaded;
  for (uint32_t k = 0; k < tasks_.streams.size(); ++k)
    if (!inline_stream_[k]) threaded.push_back(k);
  if (workers_ == nullptr) workers_ = std::make_unique<WorkerPool>(threaded.size());
  const std::function<void(size_t)> job = [this, &s, &threaded](size_t i) {
    const uint32_t k = threaded[i];
    Status st = tasks_.streams[k].compute ? RunComputeStream(s, k)
                : k == receive_stream_    ? RunReceiveStream(s, k)
                                          : RunCopyStream(s, k);
    if (!st.ok()) s.Fail(st);
  };
  workers_->Start(job);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.go = true;
    s.t0 = Clock::now();
  }
  s.WakeAll();
  // Transfers of streams without a thread that wait for nothing (weight loads) run here, first
  // come first served: each queue's first, then what those made ready (each queue's second, ...),
  // so that every device soon has its first weights. A device thread waiting for a load nobody has
  // claimed yet runs it itself (RunReadyInlineDeps).
  if (has_inline_streams_) {
    std::vector<uint32_t> claimed;
    for (uint32_t k = 0; k < tasks_.streams.size(); ++k)
      if (inline_stream_[k]) ClaimReadyInline(s, k, &claimed);
    Status st = RunClaimed(s, &claimed, plan::kNoTask, ClaimOrder::kFirstFirst);
    if (!st.ok()) s.Fail(st);
  }
  // Watchdog: the run fails when no task finishes for options_.watchdog_s.
  Watch(s);
  workers_->Wait();
  if (s.failed) {
    s.DropTransfers();
    FreeAll(s);
    return s.error;
  }
  return CollectResult(s, inputs);
}

StatusOr<ExecResult> Executor::CollectResult(RunState& s,
                                             const std::map<std::string, HostTensor>& inputs) {
  const size_t D = cluster_->num_devices();
  ExecResult result;
  Clock::time_point last_done = s.t0;
  for (const RunState::StreamProgress& p : s.progress) {
    last_done = std::max(last_done, p.last_done);
    result.ops_run += p.ops;
    result.transfers_run += p.transfers;
    result.inline_copies += p.inline_copies;
    result.inline_copy_s += p.inline_copy_s;
  }
  result.latency_s = std::chrono::duration<double>(last_done - s.t0).count();
  result.device_finish_s.assign(D, 0.0);
  for (size_t k = 0; k < tasks_.streams.size(); ++k) {
    const plan::Stream& stream = tasks_.streams[k];
    if (!stream.compute || !stream.device.valid() || stream.tasks.empty()) continue;
    result.device_finish_s[stream.device.index()] =
        std::chrono::duration<double>(s.progress[k].last_done - s.t0).count();
  }
  for (size_t d = 0; d < D; ++d)
    result.peak_memory_bytes.push_back(backend_->PeakMemory(static_cast<int>(d)));
  std::vector<uint8_t> local;  // per output: produced here (or by no op)
  for (NodeId out : graph_->Outputs()) {
    const TensorId t = graph_->node(out).inputs.at(0);
    const graph::Tensor& tensor = graph_->tensor(t);
    const graph::Node& producer = graph_->node(tensor.producer);
    HostTensor value(tensor.dtype, tensor.shape);
    const DeviceId where = tasks_.op_device[tensor.producer.value()];
    local.push_back(!producer.is_op() || !where.valid() || local_device_[where.index()]);
    if (!local.back()) {
      // Another rank's: GatherOutputs brings it to rank 0.
    } else if (producer.kind == NodeKind::kInput) {
      value = inputs.at(producer.name);
    } else if (producer.kind == NodeKind::kWeight) {
      value = (*weights_)[tensor.producer.value()];
    } else {
      const int d = static_cast<int>(tasks_.op_device[tensor.producer.value()].value());
      const size_t k = s.Slot(t, d);
      Status st = backend_->CopyDeviceToHost(d, s.slots[k], 0, value.bytes.data(), tensor.Bytes());
      if (!st.ok()) {
        FreeAll(s);
        return st.WithContext("graph output '" + tensor.name + "'");
      }
      if (s.refs[k].fetch_sub(1) == 1) FreeSlot(s, d, k);
    }
    result.output_names.push_back(graph_->node(out).name);
    result.outputs.push_back(std::move(value));
  }
  FreeAll(s);
  if (options_.communicator != nullptr) {
    HX_RETURN_IF_ERROR(GatherOutputs(&result.outputs, local));
    // Rank 0's latency runs until every output is here: the end of the whole run.
    if (options_.communicator->rank() == 0)
      result.latency_s = std::chrono::duration<double>(Clock::now() - s.t0).count();
  }
  if (options_.record_events) {
    result.track_names = track_names_;
    for (const RunState::StreamProgress& p : s.progress)
      result.events.insert(result.events.end(), p.events.begin(), p.events.end());
    std::stable_sort(
        result.events.begin(), result.events.end(),
        [](const sim::SimEvent& a, const sim::SimEvent& b) { return a.time < b.time; });
  }
  return result;
}

Status Executor::GatherOutputs(std::vector<HostTensor>* values,
                               const std::vector<uint8_t>& local) const {
  Communicator* comm = options_.communicator;
  if (comm == nullptr) return Status::Ok();
  // Tags after the transfers' (a transfer's tag is its index).
  const int first_tag = static_cast<int>(plan_->transfers.size());
  const std::vector<NodeId> outputs = graph_->Outputs();
  std::vector<std::unique_ptr<PendingTransfer>> pending;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const NodeId producer = graph_->tensor(graph_->node(outputs[i]).inputs.at(0)).producer;
    const DeviceId where = tasks_.op_device[producer.value()];
    if (!graph_->node(producer).is_op() || !where.valid()) continue;
    const int owner = options_.device_rank[where.index()];
    HostTensor& value = (*values)[i];
    const int64_t bytes = static_cast<int64_t>(value.bytes.size());
    const int tag = first_tag + static_cast<int>(i);
    StatusOr<std::unique_ptr<PendingTransfer>> posted{std::unique_ptr<PendingTransfer>()};
    if (comm->rank() == 0 && owner != 0)
      posted = comm->PostReceive(owner, tag, value.bytes.data(), bytes);
    else if (comm->rank() != 0 && owner == comm->rank())
      posted = comm->PostSend(0, tag, value.bytes.data(), bytes);
    if (!posted.ok())
      return posted.status().WithContext("graph output '" + graph_->node(outputs[i]).name + "'");
    if (*posted != nullptr) pending.push_back(std::move(posted).value());
  }
  for (auto& p : pending) HX_RETURN_IF_ERROR(p->Wait().WithContext("gathering the outputs"));
  // Off rank 0, the other ranks' outputs stay empty.
  if (comm->rank() != 0)
    for (size_t i = 0; i < values->size(); ++i)
      if (!local[i]) (*values)[i] = HostTensor();
  return Status::Ok();
}

}  // namespace hx::exec
