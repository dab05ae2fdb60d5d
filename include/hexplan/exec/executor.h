#pragma once
// The ready-queue executor (SortingHat, Algorithm 1), on any DeviceBackend:
//  - one thread per device runs its subgraphs in plan order; a subgraph starts once the one before
//    it has finished and everything it waits for is "copied" (transfers) or "executed" (subgraphs
//    on other devices); its ops then run back to back;
//  - one thread per copy queue runs its transfers: weight loads host -> device (its own memory or a
//    relay's), weight forwards relay -> reader (parallel transmission), activations between
//    devices. In plan order one at a time, or (CopyOrder::kRoundRobin) chunk by chunk round-robin
//    between the destination devices whose next transfer is ready (SortingHat's preemptive
//    parameter queue);
//  - an op whose weight is placed kDha reads it from host memory during the kernel;
//  - device memory comes from the backend, which enforces each device's capacity; a tensor's
//    buffer is freed on a device once its last reader there (op or outgoing transfer) is done;
//  - a kernel error, an allocation beyond capacity or a stall longer than the watchdog stops every
//    thread, and Run returns the error naming the op or transfer.
// Graph inputs are placed on every device that reads them and weights marked `resident` are loaded
// before the clock starts; the measured latency runs from the first task to the last.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/exec/backend.h"
#include "hexplan/exec/communicator.h"
#include "hexplan/exec/tensor.h"
#include "hexplan/exec/worker_pool.h"
#include "hexplan/graph/graph.h"
#include "hexplan/hw/cluster.h"
#include "hexplan/plan/plan.h"
#include "hexplan/plan/task_graph.h"
#include "hexplan/sim/simulator.h"

namespace hx::exec {

enum class CopyOrder : uint8_t { kPlan, kRoundRobin };
const char* CopyOrderName(CopyOrder order);  // "plan", "round-robin"

struct ExecOptions {
  CopyOrder copy_order = CopyOrder::kPlan;
  int64_t chunk_bytes = int64_t{1} << 20;  // kRoundRobin: bytes copied per turn
  double watchdog_s = 60.0;                // abort when no task finishes for this long; 0: never
  bool record_events = true;               // keep op/transfer events for a trace
  // On a backend whose copies are the calling thread's work (the CPU backend's memcpy), copy
  // queues within the process (activations between devices, weight loads from the host) get no
  // thread: each transfer runs on the thread that finishes the last thing it waits for, usually
  // the producer's device thread right after the producing subgraph; a weight load on the thread
  // that starts the run or on the device thread waiting for it.
  bool inline_copies = true;
  // A device thread polls this long for what its next subgraph waits for before it sleeps on its
  // condition variable (waking a sleeping core costs tens of microseconds); 0 sleeps at once.
  double spin_us = 50.0;
  // A run that spans processes (docs/runtime.md, "Across machines"): this process is rank
  // communicator->rank() and runs only the devices whose entry in `device_rank` (one per cluster
  // device) is that rank. Activations from and to the other ranks' devices travel through the
  // communicator (receives posted before the clock, sends as soon as the producer is done), and
  // rank 0 gathers the graph outputs. Null: every device runs in this process.
  Communicator* communicator = nullptr;
  std::vector<int> device_rank;
  Status Validate() const;
};

struct ExecResult {
  double latency_s = 0.0;
  std::vector<std::string> output_names;  // graph outputs, in graph.Outputs() order
  // Across ranks (ExecOptions::communicator): rank 0 holds every output; another rank holds
  // those its devices produced and empty tensors for the rest.
  std::vector<HostTensor> outputs;
  std::vector<int64_t> peak_memory_bytes;  // per device
  // Op and transfer events in time order (the simulator's event type; times in seconds since the
  // first task could start). Their `track` views point into `track_names`, which the result
  // shares with the executor, so they stay valid as long as either lives.
  std::vector<sim::SimEvent> events;
  std::shared_ptr<const std::vector<std::string>> track_names;
  uint64_t ops_run = 0;
  uint64_t transfers_run = 0;  // across ranks: this rank's, sends and receives included
  // Copies that device threads ran themselves (ExecOptions::inline_copies)
  // and the time they spent on them, copy and bookkeeping, summed over the threads.
  uint64_t inline_copies = 0;
  double inline_copy_s = 0.0;
  // Per device: when its compute stream finished its last task, in seconds since the start (0
  // for a device with no work).
  std::vector<double> device_finish_s;
};

// Across ranks: the weights (by NodeId, as exec/values.h's MaterializeWeights numbers them) that
// the ops on `rank`'s devices read, i.e. the only ones that rank needs values for.
std::vector<uint8_t> WeightsReadOnRank(const plan::Plan& plan, const graph::Graph& graph,
                                       const std::vector<int>& device_rank, int rank);

class Executor {
 public:
  // Checks the plan's structure (the task graph), that the backend has one device per cluster
  // device and a kernel for every op, and that `weights` (by NodeId, exec/values.h) holds every
  // weight the graph reads (across ranks: the ops of this rank's devices). The plan, graph,
  // cluster, backend and weights must outlive the executor (weights are read in place: DHA ops read
  // them, loads copy from them).
  static StatusOr<std::unique_ptr<Executor>> Create(const plan::Plan& plan,
                                                    const graph::Graph& graph,
                                                    const hw::Cluster& cluster,
                                                    DeviceBackend* backend,
                                                    const std::vector<HostTensor>* weights,
                                                    const ExecOptions& options = {});
  ~Executor();

  // One inference (a cold start: every non-resident weight is transferred again). One Run at a
  // time: the executor keeps the run's state (buffers' slots, marks) between runs.
  StatusOr<ExecResult> Run(const std::map<std::string, HostTensor>& inputs);

  const plan::TaskGraph& task_graph() const { return tasks_; }
  // The threads one Run starts: one per device, one per copy queue that has a thread of its own
  // (ExecOptions::inline_copies).
  size_t num_threads() const;

 private:
  struct RunState;
  Executor() = default;
  Status RunComputeStream(RunState& state, uint32_t stream);
  // Whether `device`'s thread polls (ExecOptions::spin_us) before it sleeps: not when the device
  // is one core that this rank's receive thread shares (BindCopyThread pins it to the cores it
  // receives for): polling there holds the core the arriving message needs (a two-node pipeline
  // on shaped links: 0.57-0.69 ms a run polling 50 us, 0.31-0.35 ms without).
  bool SpinsFor(int device) const;
  Status RunCopyStream(RunState& state, uint32_t stream);
  // Across ranks: the thread of the stream that holds the receives (receive_stream_) marks each
  // receive done as it arrives and releases the buffers of completed sends.
  Status RunReceiveStream(RunState& state, uint32_t stream);
  // A transfer to another rank's device: posts the send (the source buffer is released once it
  // completes).
  Status PostSendTransfer(RunState& state, uint32_t task);
  // Releases the source buffers of the sends that completed; returns how many did.
  StatusOr<size_t> ReapSends(RunState& state);
  Status RunTransferChunk(RunState& state, uint32_t task, int64_t offset, int64_t bytes);
  // Marks `task` done, then runs the transfers of thread-less streams that became ready.
  Status Complete(RunState& state, uint32_t task);
  // Runs `claimed` and what each makes ready (appended by MarkDone). `runner`: the compute stream
  // whose thread runs them (their time is counted there), or plan::kNoTask. kLastFirst follows a
  // producer's chain of copies; kFirstFirst takes the queues in turn (the run's start: each
  // queue's first load, then each queue's second, ...).
  enum class ClaimOrder : uint8_t { kLastFirst, kFirstFirst };
  Status RunClaimed(RunState& state, std::vector<uint32_t>* claimed, uint32_t runner,
                    ClaimOrder order = ClaimOrder::kLastFirst);
  // Claims the next transfer of a thread-less copy stream when it is ready (appended to
  // `claimed`); called after a task it may wait for has finished.
  void ClaimReadyInline(RunState& state, uint32_t stream, std::vector<uint32_t>* claimed) const;
  // Before a compute task waits: runs, on this thread (`runner`), the ready transfers of
  // thread-less streams it waits for (weight loads, which wait for nothing), rather than wait
  // for another thread to run them.
  Status RunReadyInlineDeps(RunState& state, const plan::Task& task, uint32_t runner);
  Status RunOp(RunState& state, int device, NodeId op);
  // A Constant op (kept_constants_): its value is computed by its first run and kept on its
  // device; later runs point its output's slot at that buffer, as ONNX Runtime folds Constants
  // at load (152 of the 1,449 ops of an unrolled LSTM).
  Status RunKeptConstant(RunState& state, int device, NodeId op);
  // The stream whose thread runs `op` (0 for an op outside the plan's tasks), and the op's start
  // and finish events on it (recorded when ExecOptions::record_events).
  uint32_t StreamOfOp(NodeId op) const;
  sim::SimEvent OpStarts(RunState& state, uint32_t stream, int device, NodeId op, bool dha) const;
  void OpFinishes(RunState& state, uint32_t stream, sim::SimEvent event) const;
  // The input whose buffer `node` writes over (DeviceBackend::RunsInPlace and InPlaceInput, and
  // it is that buffer's last reader on `device`), or -1.
  int InPlace(RunState& state, int device, NodeId op, const std::vector<uint8_t>& from_host);
  // Create's steps after the checks, once transfer_src_ and transfer_dst_ are known: the readers
  // of each buffer and the graph inputs each device reads; who waits for each task and where its
  // mark lives; which copy streams run on no thread of their own, and where each copies to.
  // Across ranks: keeps this rank's tasks (subgraphs on its devices, transfers to or from them),
  // moves the transfers from other ranks to one receive stream and drops waits on other ranks'
  // tasks. Create's step after the task graph is checked.
  Status SplitAcrossRanks();
  void CountBufferReferences();
  // fused_input_: DeviceBackend::FusedInput where the plan keeps it, its producer and readers on
  // the op's device; in_place_input_.
  void FindFusedInputs();
  // Frees slot k's buffer unless the slot borrows it (a fused input whose buffer an op's output
  // took), and empties the slot.
  void FreeSlot(RunState& state, int device, size_t k);
  void IndexWaitersAndMarks();
  void ChooseInlineCopyStreams();
  // Run's steps: before the clock, the graph inputs on the devices that read them and the
  // resident weights; the watchdog (fails the run when no task finishes for
  // ExecOptions::watchdog_s); the result (latency, outputs, events); and freeing every buffer.
  Status PlaceInputsAndResidentWeights(RunState& state,
                                       const std::map<std::string, HostTensor>& inputs);
  Status PostReceives(RunState& state);
  void Watch(RunState& state) const;
  // Across ranks: the outputs other ranks produced, sent to rank 0 (`value` per output).
  Status GatherOutputs(std::vector<HostTensor>* values, const std::vector<uint8_t>& local) const;
  StatusOr<ExecResult> CollectResult(RunState& state,
                                     const std::map<std::string, HostTensor>& inputs);
  void FreeAll(RunState& state);
  int DeviceOfPlace(PlaceId place) const;  // -1 for host memory and switches
  const plan::WeightPlacement* PlacementFor(NodeId weight, DeviceId device) const;

  const plan::Plan* plan_ = nullptr;
  const graph::Graph* graph_ = nullptr;
  const hw::Cluster* cluster_ = nullptr;
  DeviceBackend* backend_ = nullptr;
  ExecOptions options_;
  const std::vector<HostTensor>* weights_ = nullptr;
  plan::TaskGraph tasks_;
  std::shared_ptr<std::vector<std::string>> track_names_;  // per stream
  std::vector<int> transfer_dst_;                          // per transfer: destination device
  std::vector<int> transfer_src_;      // per transfer: source device or -1 (host)
  std::vector<int32_t> initial_refs_;  // per (tensor, device) slot
  std::vector<TensorId> fused_input_;  // per node: FindFusedInputs
  // Per node: the input whose buffer the backend lets its output take (DeviceBackend::RunsInPlace
  // and InPlaceInput, asked once here rather than at every run of the op), or -1.
  std::vector<int32_t> in_place_input_;
  // Per node: a Constant op whose value runs keep (RunKeptConstant), and that value once made
  // (freed with the executor).
  struct KeptConstant {
    bool kept = false, made = false;
    int device = -1;
    DeviceBuffer value;
  };
  std::vector<KeptConstant> kept_constants_;
  std::vector<std::vector<TensorId>> input_slots_;     // per device: graph inputs it reads
  std::vector<std::vector<uint32_t>> waiters_;         // per task: streams to wake when it finishes
  std::vector<std::vector<int>> stream_destinations_;  // per copy stream: devices it copies to
  std::vector<uint8_t> inline_stream_;  // per stream: a copy stream run by no thread of its own
  bool has_inline_streams_ = false;
  // Across ranks (options_.communicator): per device whether this rank runs it (all 1 in one
  // process); per task its role; the stream of the receives (kNoTask when none); how many sends.
  enum class TaskRole : uint8_t { kLocal, kSend, kReceive, kRemote };
  std::vector<uint8_t> local_device_;
  std::vector<TaskRole> task_role_;
  uint32_t receive_stream_ = plan::kNoTask;
  size_t num_sends_ = 0;
  std::vector<uint32_t> done_index_;  // per task: its "done" mark in RunState (grouped by stream)
  size_t done_slots_ = 0;
  std::unique_ptr<RunState> state_;      // reused by every Run
  std::unique_ptr<WorkerPool> workers_;  // the streams' threads, started by the first Run
};

}  // namespace hx::exec
