#include "hexplan/sim/flow_network.h"

#include <algorithm>
#include <limits>

#include "hexplan/core/status.h"

namespace hx::sim {

FlowNetwork::FlowNetwork(std::vector<double> capacities) : FlowNetwork(std::move(capacities), {}) {}

FlowNetwork::FlowNetwork(std::vector<double> capacities, std::vector<double> shared_efficiency)
    : capacity_(std::move(capacities)),
      shared_efficiency_(std::move(shared_efficiency)),
      used_(capacity_.size(), 0.0),
      res_flows_(capacity_.size()),
      res_mark_(capacity_.size(), 0),
      residual_(capacity_.size(), 0.0),
      unfixed_count_(capacity_.size(), 0) {
  HX_CHECK(shared_efficiency_.empty() || shared_efficiency_.size() == capacity_.size());
}

uint32_t FlowNetwork::Add(double now, double bytes, const std::vector<uint32_t>& resources) {
  HX_CHECK(bytes > 0.0);
  HX_CHECK(!resources.empty());
  uint32_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<uint32_t>(flows_.size());
    flows_.emplace_back();
    flow_mark_.push_back(0);
    old_rate_.push_back(0.0);
    fixed_.push_back(0);
  }
  Flow& f = flows_[id];
  f.resources = resources;
  std::sort(f.resources.begin(), f.resources.end());
  f.resources.erase(std::unique(f.resources.begin(), f.resources.end()), f.resources.end());
  f.remaining = bytes;
  f.rate = -1.0;  // forces "changed"
  f.updated = now;
  f.active = true;
  ++num_active_;
  for (uint32_t r : f.resources) {
    HX_CHECK(r < capacity_.size());
    res_flows_[r].push_back(id);
  }
  Recompute(now, f.resources);
  return id;
}

void FlowNetwork::Remove(double now, uint32_t flow) {
  Flow& f = flows_[flow];
  HX_CHECK(f.active);
  f.active = false;
  --num_active_;
  for (uint32_t r : f.resources) {
    auto& v = res_flows_[r];
    v.erase(std::find(v.begin(), v.end(), flow));
  }
  free_ids_.push_back(flow);
  std::vector<uint32_t> seeds = f.resources;
  Recompute(now, seeds);
  // The removed flow itself is not reported as changed.
}

double FlowNetwork::FinishTime(uint32_t flow) const {
  const Flow& f = flows_[flow];
  if (f.rate <= 0.0) return std::numeric_limits<double>::infinity();
  return f.updated + f.remaining / f.rate;
}

void FlowNetwork::Recompute(double now, const std::vector<uint32_t>& seeds) {
  changed_flows_.clear();
  changed_resources_.clear();
  comp_res_.clear();
  comp_flows_.clear();
  if (++stamp_ == 0) {  // wrapped: reset marks
    std::fill(res_mark_.begin(), res_mark_.end(), 0);
    std::fill(flow_mark_.begin(), flow_mark_.end(), 0);
    stamp_ = 1;
  }
  // The connected component of the seed resources.
  for (uint32_t r : seeds)
    if (res_mark_[r] != stamp_) {
      res_mark_[r] = stamp_;
      comp_res_.push_back(r);
    }
  for (size_t i = 0; i < comp_res_.size(); ++i) {
    for (uint32_t fl : res_flows_[comp_res_[i]]) {
      if (flow_mark_[fl] == stamp_) continue;
      flow_mark_[fl] = stamp_;
      comp_flows_.push_back(fl);
      for (uint32_t r2 : flows_[fl].resources)
        if (res_mark_[r2] != stamp_) {
          res_mark_[r2] = stamp_;
          comp_res_.push_back(r2);
        }
    }
  }
  std::sort(comp_res_.begin(), comp_res_.end());
  std::sort(comp_flows_.begin(), comp_flows_.end());
  // Bring the component's flows up to date at their old rates.
  for (uint32_t fl : comp_flows_) {
    Flow& f = flows_[fl];
    if (f.rate > 0.0) f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.updated));
    f.updated = now;
    old_rate_[fl] = f.rate;
    fixed_[fl] = 0;
  }
  // Progressive filling.
  for (uint32_t r : comp_res_) {
    residual_[r] = capacity_[r];
    unfixed_count_[r] = static_cast<uint32_t>(res_flows_[r].size());
    if (unfixed_count_[r] >= 2 && !shared_efficiency_.empty())
      residual_[r] *= shared_efficiency_[r];
  }
  size_t unfixed = comp_flows_.size();
  while (unfixed > 0) {
    uint32_t best = ~0u;
    double best_share = std::numeric_limits<double>::infinity();
    for (uint32_t r : comp_res_) {
      if (unfixed_count_[r] == 0) continue;
      const double share = std::max(0.0, residual_[r]) / unfixed_count_[r];
      if (share < best_share) {
        best_share = share;
        best = r;
      }
    }
    HX_CHECK(best != ~0u);
    for (uint32_t fl : res_flows_[best]) {
      if (fixed_[fl]) continue;
      fixed_[fl] = 1;
      --unfixed;
      flows_[fl].rate = best_share;
      for (uint32_t r2 : flows_[fl].resources) {
        residual_[r2] -= best_share;
        --unfixed_count_[r2];
      }
    }
  }
  for (uint32_t fl : comp_flows_)
    if (flows_[fl].rate != old_rate_[fl]) changed_flows_.push_back(fl);
  for (uint32_t r : comp_res_) {
    double total = 0.0;
    for (uint32_t fl : res_flows_[r]) total += flows_[fl].rate;
    if (total != used_[r]) {
      used_[r] = total;
      changed_resources_.push_back(r);
    }
  }
}

}  // namespace hx::sim
