#pragma once
// A plan: one inference of a graph on a cluster, fully decided.
//
//  - devices: each device's execution order, grouped into subgraphs (SortingHat executes subgraph
//  by
//    subgraph: a subgraph starts when the previous one on its device has finished and every input
//    it takes from outside itself is on the device; its ops then run back to back);
//  - weights: for every (weight, device that reads it), where the weight lives: loaded into device
//    memory from host memory, read from host memory during the op (direct host access, DHA), or
//    loaded into a relay GPU and forwarded over peer-to-peer (parallel transmission, PT);
//    optionally already resident (warm start);
//  - transfers: every weight load, weight forward and activation copy (tensor, source, destination,
//    route), each on exactly one copy queue, which runs its transfers one at a time in order;
//  - optional submodel boundaries, and the model and cluster it was made for (with hashes).
//
// Graph inputs are available on every device at time zero (they are tiny next to weights).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hexplan/core/id.h"
#include "hexplan/graph/zoo.h"
#include "hexplan/hw/cluster.h"

namespace hx::plan {

enum class WeightMode : uint8_t {
  kLoad,   // loaded host -> device memory over the host-to-device route
  kDha,    // direct host access: the op reads it from host memory while it runs
  kRelay,  // parallel transmission: loaded into `relay`, then forwarded relay -> device
};
const char* WeightModeName(WeightMode mode);  // "load", "dha", "relay"
std::optional<WeightMode> ParseWeightMode(const std::string& name);

// One weight made available to the ops of one device.
struct WeightPlacement {
  NodeId weight;
  DeviceId device;  // the device whose ops read it
  WeightMode mode = WeightMode::kLoad;
  DeviceId relay;         // kRelay only: the GPU it is loaded into first
  bool resident = false;  // kLoad/kRelay: already in `device` memory at start (no transfer)
};

enum class TransferKind : uint8_t {
  kWeightLoad,     // a weight from host memory into a device (its own or a relay)
  kWeightForward,  // a weight from a relay device to the device that reads it (PT)
  kActivation,     // an op's output from its device to a consumer's device
};
const char* TransferKindName(TransferKind kind);  // "weight_load", "weight_forward", "activation"
std::optional<TransferKind> ParseTransferKind(const std::string& name);

struct Transfer {
  TransferKind kind = TransferKind::kActivation;
  TensorId tensor;
  PlaceId src;
  PlaceId dst;
  std::vector<hw::RouteHop> route;  // links crossed, src to dst
};

// A copy queue (a copy engine's stream, or SortingHat's per-bus parameter queue): its transfers run
// one at a time in this order.
struct CopyQueue {
  std::string name;
  std::vector<size_t> transfers;  // indices into Plan::transfers
};

struct Subgraph {
  std::vector<NodeId> ops;  // run back to back in this order
};

struct DeviceSchedule {
  DeviceId device;
  std::vector<Subgraph> subgraphs;  // run in this order
};

struct Submodel {
  std::string name;
  std::vector<NodeId> ops;
};

// The inputs a plan is made for (plan_match.h compares them, plan_json.h stores their specs).
enum class PlanInput : uint8_t { kModel, kCluster };

// What the plan was made for: enough to rebuild the graph and cluster (`simulate PLAN`).
struct ModelRef {
  std::string spec;  // a zoo name or a model file path
  graph::ZooOptions options;
  std::string name;   // the graph's name
  uint64_t hash = 0;  // GraphFingerprint
};
struct ClusterRef {
  std::string spec;  // a preset name or a cluster file path
  std::string name;
  uint64_t hash = 0;  // ClusterFingerprint
};

struct Plan {
  ModelRef model;
  ClusterRef cluster;
  std::string algo;  // the planner that made it
  std::vector<DeviceSchedule> devices;
  std::vector<WeightPlacement> weights;
  std::vector<Transfer> transfers;
  std::vector<CopyQueue> queues;
  std::vector<Submodel> submodels;    // optional
  std::optional<double> estimate_ms;  // the planner's own latency estimate, when it has one
  // Planned for warm runs (`place --warm F`): the fraction F of the loaded weight bytes that stays
  // resident between requests; `weights[].resident` already marks them (plan::ApplyWarmStart).
  std::optional<double> warm;

  size_t NumOps() const;
  // The device of every node (invalid for nodes the plan does not place); `num_nodes` from the
  // graph.
  std::vector<DeviceId> OpDevices(size_t num_nodes) const;
  // The schedule of a device, or null.
  const DeviceSchedule* ScheduleOf(DeviceId device) const;
  // The queue with this name; created (empty) when missing. Returns its index.
  size_t QueueIndex(const std::string& name);
  // Appends a transfer to the named queue; returns the transfer's index.
  size_t AddTransfer(Transfer transfer, const std::string& queue);
};

// Stable 64-bit fingerprints (FNV-1a) of what a plan depends on: the graph's node names, kinds, op
// types, tensor shapes, dtypes and edges; the cluster's devices, capacities, places and links.
uint64_t GraphFingerprint(const graph::Graph& graph);
uint64_t ClusterFingerprint(const hw::Cluster& cluster);

}  // namespace hx::plan
