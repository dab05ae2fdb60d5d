#pragma once
// Measured operator times (and optional per-edge transfer times) that override the roofline.
// Keys: a node name, or an op signature (type, input shapes, dtype) that matches every node alike;
// per device, by device name, device model, device kind ("gpu", "cpu", "mig") or "*" (any device).
// A time of +infinity marks the op unsupported on that device.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "hexplan/core/status.h"
#include "hexplan/graph/graph.h"

namespace hx::cost {

// The dtype an op computes in (selects the peak FLOP/s): its first floating-point output, else its
// first floating-point input, else fp32.
graph::DType OpComputeDType(const graph::Graph& graph, NodeId op);

// "MatMul|fp32|[1,1024,1600]x[1600,4800]": the op type, dtype and input shapes.
std::string OpSignature(const graph::Graph& graph, NodeId op);

// Which key a profiled op time was found under (the cost model scales model/kind/any entries by
// the device's clock_scale, and takes per-name entries as measured on that very device).
enum class ProfileMatch : uint8_t { kDeviceName, kDeviceModel, kDeviceKind, kAnyDevice };

struct ProfiledTime {
  double seconds = 0.0;  // +infinity: unsupported
  ProfileMatch matched_by = ProfileMatch::kDeviceName;
  bool by_node_name = true;  // false: matched by op signature
};

class Profile {
 public:
  // Times in seconds. `device` is a device name ("gpu0") or model ("V100-SXM2-32GB").
  void SetNodeTime(const std::string& node_name, const std::string& device, double seconds);
  void SetSignatureTime(const std::string& signature, const std::string& device, double seconds);
  // Marks an op (by node name or signature) as unsupported on a device (time +infinity).
  void SetNodeUnsupported(const std::string& node_name, const std::string& device);
  void SetSignatureUnsupported(const std::string& signature, const std::string& device);
  // Time to move the output of `node_name` (a node name, or a tensor name for a per-edge time) from
  // device `src` to `dst` (MOIRAI's per-edge pc_kk').
  void SetTransferTime(const std::string& node_name, const std::string& src, const std::string& dst,
                       double seconds);
  // Memory footprint of a node when the workload states it (MOIRAI mi, EfficientMIP size).
  void SetNodeMemory(const std::string& node_name, int64_t bytes);
  // CPU core-group contention measured by `hexplan profile` (docs/runtime.md): an op on a CPU
  // device of this name or model runs 1 + gamma * (busy - 1) times slower while `busy` core groups
  // of its node run ops (shared DRAM bandwidth and last-level cache). JSON only.
  void SetCpuContention(const std::string& device, double gamma);
  std::optional<double> CpuContention(const std::string& device_name,
                                      const std::string& device_model) const;
  // What starting a subgraph costs a device's thread beyond its ops (the executor's bookkeeping:
  // its dependencies checked, its mark set), per device name or model: measured by `hexplan
  // profile` as the model's one-device run with one subgraph per op against one subgraph for all.
  // The simulator adds it to each subgraph's first op. JSON only.
  void SetSubgraphCost(const std::string& device, double seconds);
  std::optional<double> SubgraphCost(const std::string& device_name,
                                     const std::string& device_model) const;
  // What sending an activation costs the sending device's own thread, per transfer from a device
  // of name or model `src` to one of `dst`: measured by `hexplan profile` on backends whose
  // copies are the sender's work (a CPU core group copies what it produced). The simulator
  // charges it to the producing op and keeps the rest of the transfer's time as latency. JSON
  // only.
  void SetSendCost(const std::string& src, const std::string& dst, double seconds);
  // Looks up by device names first, then by models.
  std::optional<double> SendCost(const std::string& src_name, const std::string& src_model,
                                 const std::string& dst_name, const std::string& dst_model) const;
  // What receiving an activation costs the receiving device's own thread, per transfer from a
  // device of name or model `src` to one of `dst`: the first op there that reads the tensor runs
  // this much longer (its lines come from the sender's cache; the bookkeeping of a buffer the
  // sender allocated). Measured with the send cost in a steady exchange between two core groups;
  // the simulator adds it to that op. JSON only.
  void SetRecvCost(const std::string& src, const std::string& dst, double seconds);
  std::optional<double> RecvCost(const std::string& src_name, const std::string& src_model,
                                 const std::string& dst_name, const std::string& dst_model) const;

  // Lookups try the device name first, then its model, then its kind, then "*"; node name first,
  // then the signature.
  std::optional<double> OpTime(const graph::Graph& graph, NodeId op, const std::string& device_name,
                               const std::string& device_model) const;
  std::optional<ProfiledTime> FindOpTime(const graph::Graph& graph, NodeId op,
                                         const std::string& device_name,
                                         const std::string& device_model,
                                         const std::string& device_kind = "") const;
  std::optional<double> TransferTime(const std::string& node_name, const std::string& src,
                                     const std::string& dst) const;
  std::optional<int64_t> NodeMemory(const std::string& node_name) const;

  bool empty() const;
  size_t num_entries() const;

  // hexplan's profile JSON (docs/formats.md): {"format":"hexplan-profile","version":1,
  // "ops":[{"node"|"signature", "device", "seconds"}], "transfers":[...], "memory":[...]}.
  std::string ToJson() const;
  static StatusOr<Profile> FromJson(const std::string& text, const std::string& source_name);
  static StatusOr<Profile> ReadFile(const std::string& path);  // .json or .csv
  // CSV (docs/formats.md): header naming some of node,signature,device,dst_device,seconds,
  // memory_bytes,supported; one entry per row.
  std::string ToCsv() const;
  static StatusOr<Profile> FromCsv(const std::string& text, const std::string& source_name);
  // Writes JSON, or CSV when the path ends in .csv (atomically).
  Status WriteFile(const std::string& path) const;

  // Read-only views (key -> device key -> seconds).
  const std::map<std::string, std::map<std::string, double>>& node_times() const {
    return node_times_;
  }
  const std::map<std::string, std::map<std::string, double>>& signature_times() const {
    return signature_times_;
  }
  const std::map<std::string, std::map<std::pair<std::string, std::string>, double>>&
  transfer_times() const {
    return transfer_times_;
  }
  const std::map<std::string, int64_t>& node_memory() const { return node_memory_; }
  const std::map<std::string, double>& cpu_contention() const { return cpu_contention_; }
  const std::map<std::string, double>& subgraph_costs() const { return subgraph_costs_; }
  const std::map<std::pair<std::string, std::string>, double>& send_costs() const {
    return send_costs_;
  }
  const std::map<std::pair<std::string, std::string>, double>& recv_costs() const {
    return recv_costs_;
  }
  // Merges `other` into this profile (other wins on conflicts).
  void Merge(const Profile& other);

 private:
  std::map<std::string, std::map<std::string, double>> node_times_;       // node -> device -> s
  std::map<std::string, std::map<std::string, double>> signature_times_;  // sig -> device -> s
  std::map<std::string, std::map<std::pair<std::string, std::string>, double>> transfer_times_;
  std::map<std::string, int64_t> node_memory_;
  std::map<std::string, double> cpu_contention_;  // device name or model -> gamma
  std::map<std::string, double> subgraph_costs_;  // device name or model -> seconds
  std::map<std::pair<std::string, std::string>, double> send_costs_;  // (src, dst) -> seconds
  std::map<std::pair<std::string, std::string>, double> recv_costs_;  // (src, dst) -> seconds
};

}  // namespace hx::cost
