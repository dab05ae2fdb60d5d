#pragma once
// A discrete-event simulator that runs a plan on its cluster under a cost model
// (docs/simulator.md).
//
//  - one compute stream per device runs its subgraphs in plan order; a subgraph starts when the one
//    before it has finished and every input it takes from outside is on the device; its ops run
//    back to back (op time from the cost model);
//  - one stream per copy queue runs its transfers one at a time; a transfer takes the route's
//  latency,
//    then moves its bytes as a flow over the route's links;
//  - flows share each link direction max-min fairly (two transfers on one PCIe bus get half each);
//  - a DHA op reads its weights from host memory as a flow over the host-to-device route: it lasts
//    its DHA time, stretched by however much bus sharing slows that read;
//  - copy_mode kExclusiveBus reproduces SortingHat's executor: every host-to-device load goes on
//  one
//    queue per PCIe bus (the route's first link), destinations served round-robin subgraph by
//    subgraph, so a load has its bus to itself (but for DHA reads and activations crossing it).
// The run is deterministic: ties are broken by insertion order.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/plan/plan.h"

namespace hx::sim {

enum class CopyMode : uint8_t { kPlanQueues, kExclusiveBus };
const char* CopyModeName(CopyMode mode);  // "plan", "exclusive-bus"

struct SimOptions {
  CopyMode copy_mode = CopyMode::kPlanQueues;
  Status Validate() const;
};

// What an observer sees, in time order. The executor emits the same events, so one trace writer
// serves both.
struct SimEvent {
  enum class Kind : uint8_t {
    kOpStart,
    kOpFinish,
    kTransferStart,   // the queue starts it (latency first, then bytes)
    kTransferFinish,  // its last byte arrived
    kLinkRate,        // a link direction's total rate changed: value = bytes/s
    kMemory,          // a device's memory in use changed: value = bytes
  };
  Kind kind = Kind::kOpStart;
  double time = 0.0;       // seconds since the inference started
  NodeId op;               // kOp*
  DeviceId device;         // kOp*, kMemory
  uint32_t transfer = 0;   // kTransfer*: index into Plan::transfers
  LinkId link;             // kLinkRate
  bool forward = true;     // kLinkRate: direction a->b
  bool dha = false;        // kOp*: the op reads weights from host memory
  double value = 0.0;      // kLinkRate, kMemory; kTransfer*: bytes
  std::string_view track;  // the stream's name ("compute gpu0", "gpu0/in", link name)
};

class SimObserver {
 public:
  virtual ~SimObserver() = default;
  virtual void OnEvent(const SimEvent& event) = 0;
};

struct OpRecord {
  NodeId op;
  DeviceId device;
  double start = 0.0;
  double finish = 0.0;
  bool dha = false;
};

struct TransferRecord {
  double start = 0.0;   // the queue started it
  double finish = 0.0;  // the last byte arrived
  int64_t bytes = 0;
  std::string queue;
};

struct StreamStats {
  std::string name;
  bool compute = false;
  DeviceId device;  // compute streams
  double busy_s = 0.0;
  double utilisation = 0.0;  // busy / makespan
};

struct LinkStats {
  LinkId link;
  bool forward = true;  // a->b (for half-duplex links: both directions together)
  std::string name;     // "pcie-bus0" or "pcie-bus0 (reverse)"
  double busy_s = 0.0;  // time with any traffic
  double bytes = 0.0;
  double utilisation = 0.0;  // bytes / (bandwidth * makespan)
};

struct MemoryPoint {
  double time = 0.0;
  int64_t bytes = 0;
};

struct DeviceStats {
  DeviceId device;
  std::string name;
  double compute_s = 0.0;
  double utilisation = 0.0;
  int64_t peak_memory_bytes = 0;
  int64_t capacity_bytes = 0;
  std::vector<MemoryPoint> memory;  // memory in use, a step function
};

struct CriticalStep {
  bool is_op = true;
  NodeId op;              // is_op
  uint32_t transfer = 0;  // !is_op
  double start = 0.0;
  double finish = 0.0;
};

struct SimResult {
  double makespan_s = 0.0;
  std::vector<OpRecord> ops;              // indexed by NodeId (non-ops: zeros, invalid device)
  std::vector<TransferRecord> transfers;  // indexed like Plan::transfers
  std::vector<StreamStats> streams;
  std::vector<LinkStats> links;             // link directions that carried traffic
  std::vector<DeviceStats> devices;         // one per cluster device
  std::vector<CriticalStep> critical_path;  // in time order
  int64_t transfer_bytes = 0;               // all transfers
  int64_t weight_load_bytes = 0;
  int64_t activation_bytes = 0;
  int64_t dha_bytes = 0;  // read by DHA ops
  uint64_t num_events = 0;
  // Devices whose memory in use exceeded their capacity at some moment.
  std::vector<std::string> memory_overflows;
};

// Runs the plan. Fails (InvalidArgument, listing the violations) when the plan is structurally
// invalid (missing transfers, a deadlock); memory over capacity is reported in the result, not an
// error.
StatusOr<SimResult> Simulate(const plan::Plan& plan, const cost::CostModel& cost,
                             const SimOptions& options = {}, SimObserver* observer = nullptr);

// The plan's host-to-device loads regrouped onto one queue per PCIe bus, round-robin between the
// destination devices subgraph by subgraph (what copy_mode kExclusiveBus simulates).
plan::Plan RegroupLoadsByBus(const plan::Plan& plan, const graph::Graph& graph,
                             const hw::Cluster& cluster);

}  // namespace hx::sim
