// `deepplan`: DeepPlan (Jeong et al., "Fast and Efficient Model Serving Using Multi-GPUs with
// Direct-Host-Access", EuroSys '23) on one GPU.
//
// The model runs on the fastest GPU that holds it, op by op in topological order, cold: every
// weight starts in host memory. Walking the ops in execution order against an estimate of the load
// pipeline (per copy queue: when it is next free), each op whose weights only it reads either
//  - reads them by direct host access (WeightMode kDha) when OpTimeDha finishes before loading them
//    behind everything already queued and then running it in device memory, or
//  - has them loaded.
// Loaded weights are spread by parallel transmission: each goes, whichever arrives first, over the
// exec GPU's own PCIe route or to a relay GPU (the fastest peer-to-peer neighbour on each other
// PCIe bus) that forwards it over NVLink (WeightMode kRelay). When the exec GPU cannot hold the
// weights, the largest DHA-eligible ops are switched to DHA until it can.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

#include "hexplan/graph/analysis.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/plan/task_graph.h"
#include "hexplan/plan/validator.h"
#include "place/builtin_planners.h"
#include "place/format_units.h"

namespace hx::place {
namespace {

constexpr double kRelayMemoryShare = 0.95;  // of a relay's capacity its forwarded weights may use

bool IsGpuOrMig(hw::DeviceKind k) { return k == hw::DeviceKind::kGpu || k == hw::DeviceKind::kMig; }

std::set<uint32_t> PcieLinks(const hw::Cluster& cluster, DeviceId d) {
  std::set<uint32_t> out;
  for (const hw::RouteHop& h : cluster.HostToDevice(d).hops)
    if (cluster.link(h.link).kind == hw::LinkKind::kPcie) out.insert(h.link.value());
  return out;
}

// Relays for `exec`: per PCIe bus the exec GPU does not use (the first PCIe link of a GPU's host
// route), the GPU with the fastest direct peer-to-peer route to `exec` that crosses no PCIe link.
std::vector<DeviceId> SelectRelays(const hw::Cluster& cluster, DeviceId exec) {
  const std::set<uint32_t> own = PcieLinks(cluster, exec);
  std::map<uint32_t, std::pair<double, DeviceId>> best;  // bus link -> (bandwidth, relay)
  for (DeviceId q : cluster.DeviceIds()) {
    if (q == exec || !IsGpuOrMig(cluster.device(q).kind)) continue;
    if (!cluster.PeerToPeerAllowed(q, exec)) continue;
    const hw::Route& r = cluster.DeviceRoute(q, exec);
    if (!r.reachable || r.via_host || r.hops.empty()) continue;
    bool peer_only = true;
    for (const hw::RouteHop& h : r.hops) {
      const hw::LinkKind k = cluster.link(h.link).kind;
      if (k != hw::LinkKind::kNvlink && k != hw::LinkKind::kNvswitch) peer_only = false;
    }
    if (!peer_only) continue;
    const hw::Route& host = cluster.HostToDevice(q);
    if (!host.reachable) continue;
    bool shares = false;
    uint32_t bus = std::numeric_limits<uint32_t>::max();
    for (const hw::RouteHop& h : host.hops) {
      if (cluster.link(h.link).kind != hw::LinkKind::kPcie) continue;
      if (bus == std::numeric_limits<uint32_t>::max()) bus = h.link.value();
      if (own.count(h.link.value())) shares = true;
    }
    if (shares || bus == std::numeric_limits<uint32_t>::max()) continue;
    auto it = best.find(bus);
    if (it == best.end() || r.bottleneck_bytes_per_s > it->second.first)
      best[bus] = {r.bottleneck_bytes_per_s, q};
  }
  std::vector<DeviceId> out;
  for (const auto& [bus, entry] : best) out.push_back(entry.second);
  std::sort(out.begin(), out.end());
  return out;
}

struct DevicePlan {
  plan::Plan plan;
  double estimate_s = 0.0;
  int dha_ops = 0;
  int loaded_weights = 0;
  int relayed_weights = 0;
};

class DeepPlanBuilder {
 public:
  DeepPlanBuilder(const cost::CostModel& cost, const std::vector<NodeId>& ops, DeviceId exec,
                  std::vector<DeviceId> relays)
      : cost_(cost),
        g_(cost.graph()),
        cluster_(cost.cluster()),
        ops_(ops),
        exec_(exec),
        relays_(std::move(relays)) {
    readers_.assign(g_.num_nodes(), 0);
    for (NodeId op : ops_)
      for (NodeId w : plan::WeightInputs(g_, op)) ++readers_[w.index()];
  }

  // Whether the op may read its weights by DHA: it has some, and it alone reads them.
  bool DhaEligible(NodeId op) const {
    const std::vector<NodeId> ws = plan::WeightInputs(g_, op);
    if (ws.empty()) return false;
    for (NodeId w : ws)
      if (readers_[w.index()] != 1) return false;
    return true;
  }

  StatusOr<DevicePlan> Build(const std::set<uint32_t>& forced_dha) const {
    const size_t R = relays_.size();
    double direct = 0.0;  // when exec's own load queue is next free
    std::vector<double> relay_in(R, 0.0), relay_pt(R, 0.0);
    std::vector<int64_t> relay_bytes(R, 0);
    std::vector<double> arrival(g_.num_nodes(), -1.0);  // per weight; -1: undecided
    std::vector<int> relay_of(g_.num_nodes(), -1);
    std::vector<bool> dha(g_.num_nodes(), false);
    DevicePlan out;
    double t = 0.0;
    for (NodeId op : ops_) {
      const std::vector<NodeId> ws = plan::WeightInputs(g_, op);
      const double run = cost_.OpTime(op, exec_);
      // Loading: the op's new weights join the queues, each where it arrives first.
      double tentative_direct = direct;
      std::vector<double> t_in = relay_in, t_pt = relay_pt;
      std::vector<int64_t> t_bytes = relay_bytes;
      std::vector<std::pair<NodeId, int>> chosen;  // (weight, relay index or -1)
      double ready = t;
      for (NodeId w : ws) {
        if (arrival[w.index()] >= 0.0) {
          ready = std::max(ready, arrival[w.index()]);
          continue;
        }
        const int64_t bytes = g_.tensor(g_.node(w).outputs[0]).Bytes();
        double best = tentative_direct + cost_.WeightLoadTime(w, exec_);
        int via = -1;
        for (size_t r = 0; r < R; ++r) {
          const double cap =
              kRelayMemoryShare * static_cast<double>(cluster_.device(relays_[r]).memory_bytes());
          if (static_cast<double>(t_bytes[r] + bytes) > cap) continue;
          const double in = t_in[r] + cost_.WeightLoadTime(w, relays_[r]);
          const double fwd =
              std::max(t_pt[r], in) +
              cost_.TransferTime(bytes, cluster_.PlaceOf(relays_[r]), cluster_.PlaceOf(exec_));
          if (fwd < best) {
            best = fwd;
            via = static_cast<int>(r);
          }
        }
        if (via < 0) {
          tentative_direct = best;
        } else {
          t_in[via] += cost_.WeightLoadTime(w, relays_[via]);
          t_pt[via] = best;
          t_bytes[via] += bytes;
        }
        chosen.push_back({w, via});
        ready = std::max(ready, best);
      }
      const double load_finish = ready + run;
      const bool eligible = DhaEligible(op);
      const double dha_finish = t + cost_.OpTimeDha(op, exec_);
      if (eligible && (forced_dha.count(op.value()) || dha_finish < load_finish)) {
        for (NodeId w : ws) {
          dha[w.index()] = true;
          arrival[w.index()] = 0.0;
        }
        ++out.dha_ops;
        t = dha_finish;
        continue;
      }
      direct = tentative_direct;
      relay_in = std::move(t_in);
      relay_pt = std::move(t_pt);
      relay_bytes = std::move(t_bytes);
      for (const auto& [w, via] : chosen) {
        relay_of[w.index()] = via;
        arrival[w.index()] = ready;  // an upper bound on its own arrival: enough for later readers
      }
      t = load_finish;
    }

    plan::Plan& p = out.plan;
    plan::DeviceSchedule ds;
    ds.device = exec_;
    for (NodeId op : ops_) ds.subgraphs.push_back(plan::Subgraph{{op}});
    p.devices.push_back(std::move(ds));
    std::set<uint32_t> placed;
    for (NodeId op : ops_)
      for (NodeId w : plan::WeightInputs(g_, op)) {
        if (!placed.insert(w.value()).second) continue;
        plan::WeightPlacement wp;
        wp.weight = w;
        wp.device = exec_;
        if (dha[w.index()]) {
          wp.mode = plan::WeightMode::kDha;
        } else if (relay_of[w.index()] >= 0) {
          wp.mode = plan::WeightMode::kRelay;
          wp.relay = relays_[relay_of[w.index()]];
          ++out.relayed_weights;
          ++out.loaded_weights;
        } else {
          wp.mode = plan::WeightMode::kLoad;
          ++out.loaded_weights;
        }
        p.weights.push_back(wp);
      }
    HX_RETURN_IF_ERROR(plan::CompleteTransfers(p, g_, cluster_));
    out.estimate_s = t;
    p.estimate_ms = t * 1e3;
    return out;
  }

 private:
  const cost::CostModel& cost_;
  const graph::Graph& g_;
  const hw::Cluster& cluster_;
  const std::vector<NodeId>& ops_;
  DeviceId exec_;
  std::vector<DeviceId> relays_;
  std::vector<int> readers_;
};

class DeepPlanPlanner final : public Planner {
 public:
  std::string Name() const override { return "deepplan"; }
  std::string Description() const override {
    return "DeepPlan (EuroSys '23): one GPU; direct host access where it beats loading, loads "
           "split over the GPU's PCIe route and NVLink relays (parallel transmission)";
  }

  StatusOr<PlanResult> Plan(const PlanRequest& request) override {
    const cost::CostModel& cost = *request.cost;
    const graph::Graph& g = request.graph();
    const hw::Cluster& cluster = request.cluster();
    HX_ASSIGN_OR_RETURN(std::vector<NodeId> topo, graph::TopologicalOrder(g));
    std::vector<NodeId> ops;
    for (NodeId id : topo)
      if (g.node(id).is_op()) ops.push_back(id);
    std::vector<std::pair<double, DeviceId>> candidates;
    std::string shortfalls;
    for (DeviceId d : cluster.DeviceIds()) {
      if (!IsGpuOrMig(cluster.device(d).kind)) continue;
      double total = 0.0;
      bool ok = true;
      for (NodeId op : ops) {
        if (!cost.Supports(op, d)) {
          ok = false;
          break;
        }
        total += cost.OpTime(op, d);
      }
      if (ok)
        candidates.push_back({total, d});
      else
        shortfalls += "\n  " + cluster.device(d).name + ": cannot run every op";
    }
    if (candidates.empty() && shortfalls.empty())
      return InvalidArgument("deepplan: cluster '" + cluster.name() + "' has no GPU");
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });

    for (const auto& [total, d] : candidates) {
      DeepPlanBuilder builder(cost, ops, d, SelectRelays(cluster, d));
      std::set<uint32_t> forced;
      HX_ASSIGN_OR_RETURN(DevicePlan built, builder.Build(forced));
      auto bounds = plan::PlanMemoryBound(built.plan, cost);
      const int64_t capacity = bounds[d.index()].capacity_bytes;
      int64_t excess = capacity > 0 ? bounds[d.index()].total() - capacity : 0;
      if (excess > 0) {
        // Memory pressure: the largest DHA-eligible ops still loading read from host instead.
        std::vector<std::pair<int64_t, NodeId>> eligible;
        std::set<uint32_t> dha_now;
        for (const plan::WeightPlacement& wp : built.plan.weights)
          if (wp.mode == plan::WeightMode::kDha) dha_now.insert(wp.weight.value());
        for (NodeId op : ops) {
          if (!builder.DhaEligible(op)) continue;
          const std::vector<NodeId> ws = plan::WeightInputs(g, op);
          if (dha_now.count(ws.front().value())) continue;
          eligible.push_back({cost.OpWeightBytes(op), op});
        }
        std::stable_sort(eligible.begin(), eligible.end(),
                         [](const auto& a, const auto& b) { return a.first > b.first; });
        int64_t freed = 0;
        for (const auto& [bytes, op] : eligible) {
          if (freed >= excess) break;
          forced.insert(op.value());
          freed += bytes;
        }
        if (freed >= excess) {
          HX_ASSIGN_OR_RETURN(built, builder.Build(forced));
          bounds = plan::PlanMemoryBound(built.plan, cost);
        }
      }
      std::string why;
      for (const plan::DeviceMemoryBound& m : bounds)
        if (m.capacity_bytes > 0 && m.total() > m.capacity_bytes)
          why +=
              (why.empty() ? "" : "; ") + cluster.device(m.device).name + " needs " +
              FormatBytes(m.total()) + " (weights " + FormatBytes(m.weight_bytes) +
              ", activations " + FormatBytes(m.peak_activation_bytes) +
              (m.stated_bytes > 0 ? ", stated op footprints " + FormatBytes(m.stated_bytes) : "") +
              ") but has " + FormatBytes(m.capacity_bytes) + ": short by " +
              FormatBytes(m.total() - m.capacity_bytes);
      if (!why.empty()) {
        shortfalls += "\n  on " + cluster.device(d).name + ": " + why;
        continue;
      }
      PlanResult result;
      result.plan = std::move(built.plan);
      result.status = PlanStatus::kHeuristic;
      std::string relays;
      for (const plan::WeightPlacement& wp : result.plan.weights)
        if (wp.mode == plan::WeightMode::kRelay &&
            relays.find(cluster.device(wp.relay).name) == std::string::npos)
          relays += (relays.empty() ? "" : ",") + cluster.device(wp.relay).name;
      result.detail = "on " + cluster.device(d).name + ": " + std::to_string(built.dha_ops) +
                      " ops by DHA, " + std::to_string(built.relayed_weights) + " of " +
                      std::to_string(built.loaded_weights) + " loaded weights relayed" +
                      (relays.empty() ? "" : " through " + relays);
      LogTo(request.logger, LogLevel::kInfo, "deepplan: " + result.detail);
      return result;
    }
    return ResourceExhausted("deepplan: no GPU can hold '" + g.name() + "':" + shortfalls);
  }
};

}  // namespace

std::unique_ptr<Planner> MakeDeepPlanPlanner() { return std::make_unique<DeepPlanPlanner>(); }

}  // namespace hx::place
