#pragma once
// Bandwidth shared max-min fairly among the flows that cross the same resources (a resource is one
// direction of a link, or both directions of a half-duplex link). Rates are recomputed by
// progressive filling, only when the set of active flows changes, and only over the connected
// component of resources and flows the change touches.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hx::sim {

class FlowNetwork {
 public:
  explicit FlowNetwork(std::vector<double> capacities);
  // `shared_efficiency[r]` (one per resource, in (0, 1]): while two or more flows cross resource
  // r, together they get this fraction of its capacity (bus arbitration losses; a calibration's
  // shared_bus_efficiency). Empty: 1 everywhere.
  FlowNetwork(std::vector<double> capacities, std::vector<double> shared_efficiency);

  // Starts a flow of `bytes` (> 0) over `resources` at time `now`; returns its id.
  uint32_t Add(double now, double bytes, const std::vector<uint32_t>& resources);
  // Ends a flow at `now` (it completed or was cancelled).
  void Remove(double now, uint32_t flow);

  // Flows whose rate the last Add/Remove changed (the added flow included), in ascending id.
  const std::vector<uint32_t>& changed_flows() const { return changed_flows_; }
  // Resources whose total rate the last Add/Remove changed.
  const std::vector<uint32_t>& changed_resources() const { return changed_resources_; }

  double rate(uint32_t flow) const { return flows_[flow].rate; }
  // When the flow will have moved its last byte at its current rate.
  double FinishTime(uint32_t flow) const;
  double used(uint32_t resource) const { return used_[resource]; }
  double capacity(uint32_t resource) const { return capacity_[resource]; }
  size_t num_resources() const { return capacity_.size(); }
  size_t num_active() const { return num_active_; }

 private:
  struct Flow {
    std::vector<uint32_t> resources;
    double remaining = 0.0;
    double rate = 0.0;
    double updated = 0.0;  // time `remaining` was last brought up to date
    bool active = false;
  };
  void Recompute(double now, const std::vector<uint32_t>& seeds);

  std::vector<double> capacity_;
  std::vector<double> shared_efficiency_;  // per resource; empty: 1
  std::vector<double> used_;
  std::vector<std::vector<uint32_t>> res_flows_;  // active flows per resource
  std::vector<Flow> flows_;
  std::vector<uint32_t> free_ids_;
  size_t num_active_ = 0;
  // Scratch, reused across calls.
  std::vector<uint32_t> res_mark_, flow_mark_;
  uint32_t stamp_ = 0;
  std::vector<uint32_t> comp_res_, comp_flows_, changed_flows_, changed_resources_;
  std::vector<double> residual_;
  std::vector<uint32_t> unfixed_count_;
  std::vector<double> old_rate_;
  std::vector<uint8_t> fixed_;
};

}  // namespace hx::sim
