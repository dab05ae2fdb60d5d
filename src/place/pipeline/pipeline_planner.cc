// `pipeline`: the model cut into contiguous stages of a topological order, one stage per device,
// the cut points chosen by the simulator. For one inference this is pipeline parallelism inside
// the model: a stacked RNN cut between its layers runs layer l of step t on one device while the
// next device runs layer l + 1 of step t - 1 (Chrion's inter-operator parallelism for RNNs), with
// one hand-off per step instead of the thousands a list scheduler's op-by-op choices make on
// devices whose hand-offs cost microseconds (CPU core groups).
//
// Candidates, each simulated with the request's cost model:
//  - orders: Kahn's smallest-id-first (breadth: a stacked RNN step by step) and a layer-major
//    order (ready ops whose newest weight is oldest first: a stacked RNN layer by layer);
//  - stage counts 1 (the fastest device that fits alone) up to the number of devices that run
//    every op (at most kMaxStages), stage j on the j-th fastest;
//  - cut points: first balanced (each stage's op time on its device about equal), then moved one
//    at a time by a halving step while the simulated latency improves.
// Each stage is one subgraph per run of ops that read nothing from another device, so a stage
// starts as soon as its first inputs arrive. The evaluations are counted, not timed, so the same
// request gives the same plan; the time limit stops the search early with the best plan found
// (`detail` says so).

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <queue>

#include "hexplan/core/interrupt.h"
#include "hexplan/core/stopwatch.h"
#include "hexplan/graph/analysis.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/plan/validator.h"
#include "place/builtin_planners.h"

namespace hx::place {
namespace {

constexpr size_t kMaxStages = 8;
// Simulations per (order, stage count) while refining the cuts.
constexpr int kMaxRefineEvaluations = 48;
// Cut searches per (order, stage count) that feed the validator's memory count back.
constexpr int kMemoryRounds = 4;
// Ops simulated in all by the refinement (each simulation costs about its op count): a graph of
// n ops gets at most kSimulatedOpBudget / n refining simulations, shared by the (order, stage
// count) pairs still to search, so planning time stays about linear in n on large graphs (50,000
// ops: 12 simulations) while graphs up to about 1,800 ops on four devices keep the full search.
constexpr double kSimulatedOpBudget = 6e5;

struct NamedOrder {
  std::string name;
  std::vector<NodeId> ops;
};

// Kahn's algorithm that runs, among the ready ops, the one whose newest weight is oldest first:
// each op's key is the latest-used weight among its ancestors (weights ranked by their first
// reader in `breadth`), ties by position in `breadth`. A stacked RNN then runs layer by layer
// (every step of layer l depends on l's weights and no later layer's), a transformer or CNN
// keeps its layer order, and cutting the order cuts between layers.
std::vector<NodeId> LayerMajorOrder(const graph::Graph& g, const std::vector<NodeId>& breadth) {
  const size_t n = g.num_nodes();
  std::vector<size_t> position(n, 0);
  for (size_t i = 0; i < breadth.size(); ++i) position[breadth[i].index()] = i;
  // Weight ranks by first reader; keys by propagation in breadth-first order.
  std::vector<int64_t> key(n, -1);
  int64_t next_rank = 0;
  for (NodeId op : breadth) {
    int64_t k = -1;
    for (TensorId t : g.node(op).inputs) {
      if (!t.valid()) continue;
      const NodeId producer = g.tensor(t).producer;
      if (!producer.valid()) continue;
      if (g.node(producer).kind == graph::NodeKind::kWeight && key[producer.index()] < 0)
        key[producer.index()] = next_rank++;
      k = std::max(k, key[producer.index()]);
    }
    key[op.index()] = k;
  }
  // Ops that no weight feeds (constants, slices of the input) go with their earliest reader.
  for (size_t i = breadth.size(); i-- > 0;) {
    const NodeId op = breadth[i];
    if (key[op.index()] >= 0) continue;
    int64_t k = -1;
    for (TensorId t : g.node(op).outputs) {
      if (!t.valid()) continue;
      for (NodeId c : g.tensor(t).consumers)
        if (g.node(c).is_op() && key[c.index()] >= 0)
          k = k < 0 ? key[c.index()] : std::min(k, key[c.index()]);
    }
    key[op.index()] = k;
  }
  std::vector<int> indegree(n, 0);
  for (NodeId op : breadth)
    for (TensorId t : g.node(op).inputs) {
      if (!t.valid()) continue;
      const NodeId producer = g.tensor(t).producer;
      if (producer.valid() && g.node(producer).is_op()) ++indegree[op.index()];
    }
  using Entry = std::pair<int64_t, size_t>;  // (key, position)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
  for (NodeId op : breadth)
    if (indegree[op.index()] == 0) ready.push({key[op.index()], position[op.index()]});
  std::vector<NodeId> order;
  while (!ready.empty()) {
    const NodeId v = breadth[ready.top().second];
    ready.pop();
    order.push_back(v);
    for (TensorId t : g.node(v).outputs) {
      if (!t.valid()) continue;
      for (NodeId c : g.tensor(t).consumers)
        if (g.node(c).is_op() && --indegree[c.index()] == 0)
          ready.push({key[c.index()], position[c.index()]});
    }
  }
  return order;
}

StatusOr<std::vector<NamedOrder>> CandidateOrders(const graph::Graph& g) {
  HX_ASSIGN_OR_RETURN(std::vector<NodeId> topo, graph::TopologicalOrder(g));
  std::vector<NamedOrder> orders;
  NamedOrder breadth{"breadth-first", {}};
  for (NodeId id : topo)
    if (g.node(id).is_op()) breadth.ops.push_back(id);
  NamedOrder layers{"layer-major", LayerMajorOrder(g, breadth.ops)};
  const bool same = layers.ops == breadth.ops;
  orders.push_back(std::move(breadth));
  if (!same) orders.push_back(std::move(layers));
  return orders;
}

struct Evaluated {
  plan::Plan plan;
  double makespan = std::numeric_limits<double>::infinity();
};

class PipelinePlanner final : public Planner {
 public:
  std::string Name() const override { return "pipeline"; }
  std::string Description() const override {
    return "contiguous stages of a topological order, one per device, cut where the simulator "
           "finds the lowest latency (layer pipelining of RNNs and deep chains)";
  }

  StatusOr<PlanResult> Plan(const PlanRequest& request) override {
    const graph::Graph& g = request.graph();
    const hw::Cluster& cluster = request.cluster();
    const cost::CostModel& cost = *request.cost;
    Stopwatch clock;
    HX_ASSIGN_OR_RETURN(std::vector<NamedOrder> orders, CandidateOrders(g));
    const std::vector<NodeId>& any_order = orders.front().ops;  // breadth first
    if (any_order.empty()) return InvalidArgument("pipeline: graph '" + g.name() + "' has no op");

    // Devices that run every op, fastest (by the sum of op times) first.
    std::vector<std::pair<double, DeviceId>> ranked;
    for (DeviceId d : cluster.DeviceIds()) {
      double total = 0.0;
      bool supported = true;
      for (NodeId op : any_order) {
        if (!cost.Supports(op, d)) {
          supported = false;
          break;
        }
        total += cost.OpTime(op, d);
      }
      if (supported) ranked.push_back({total, d});
    }
    if (ranked.empty())
      return InvalidArgument("pipeline: no device of cluster '" + cluster.name() +
                             "' runs every op of '" + g.name() + "'");
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<DeviceId> devices;
    for (const auto& [total, d] : ranked) devices.push_back(d);

    std::optional<Evaluated> best;
    std::string best_detail, memory_note;
    std::map<uint32_t, double> overflow;  // device -> bytes over, from the last evaluation
    bool stopped = false;
    int evaluations = 0;
    auto out_of_time = [&] {
      if (clock.ElapsedSeconds() > request.options.time_limit_s || StopRequested()) stopped = true;
      return stopped;
    };
    // Simulates the stages order[0, cuts[0]), [cuts[0], cuts[1]), ... on devices[0], [1], ...;
    // nullopt when a device runs out of memory.
    auto evaluate =
        [&](const std::vector<NodeId>& order, const std::vector<size_t>& cuts,
            const std::vector<DeviceId>& stage_devices) -> StatusOr<std::optional<Evaluated>> {
      ++evaluations;
      HX_ASSIGN_OR_RETURN(plan::Plan p,
                          BuildPlan(g, cluster, order, any_order, cuts, stage_devices));
      if (request.options.cpu_weights_in_place) plan::ReadCpuWeightsInPlace(p, g, cluster);
      overflow.clear();
      for (const plan::DeviceMemoryBound& m : plan::PlanMemoryBound(p, cost)) {
        if (m.capacity_bytes > 0 && m.total() > m.capacity_bytes) {
          memory_note = cluster.device(m.device).name + " short of memory";
          overflow[m.device.value()] = static_cast<double>(m.total() - m.capacity_bytes);
        }
      }
      if (!overflow.empty()) return std::optional<Evaluated>();
      HX_ASSIGN_OR_RETURN(sim::SimResult sim, sim::Simulate(p, cost));
      return std::optional<Evaluated>(Evaluated{std::move(p), sim.makespan_s});
    };

    const size_t max_stages = std::min({kMaxStages, devices.size(), any_order.size()});
    // Stage devices: the fastest first; when their memories admit no cut, the roomiest first.
    std::vector<DeviceId> roomiest = devices;
    std::stable_sort(roomiest.begin(), roomiest.end(), [&](DeviceId a, DeviceId b) {
      return Capacity(cluster, a) > Capacity(cluster, b);
    });
    const int max_evaluations =
        static_cast<int>(std::min(1e9, kSimulatedOpBudget / static_cast<double>(any_order.size())));
    int searches_left = static_cast<int>(1 + (max_stages - 1) * orders.size());
    // One stage is always tried, whatever the time limit: there is always a plan to return.
    for (size_t k = 1; k <= max_stages && (k == 1 || !out_of_time()); ++k) {
      for (const NamedOrder& order : orders) {
        --searches_left;
        if (k > 1 && out_of_time()) break;
        // Feasibility first: cuts balanced in time within each device's memory, the memory the
        // validator counts fed back (a device over by x gets x less) a few times.
        std::vector<DeviceId> stage_devices;
        std::vector<size_t> cuts;
        std::optional<Evaluated> current;
        for (const std::vector<DeviceId>* ranking : {&devices, &roomiest}) {
          if (current || (ranking == &roomiest && roomiest == devices)) break;
          stage_devices.assign(ranking->begin(), ranking->begin() + static_cast<ptrdiff_t>(k));
          std::vector<double> room = StageRoom(cost, stage_devices);
          for (int round = 0; round < kMemoryRounds && !current; ++round) {
            std::optional<std::vector<size_t>> fit =
                BalancedCuts(cost, order.ops, stage_devices, room);
            if (!fit) {
              memory_note = "no cut of the " + order.name + " order into contiguous stages on " +
                            std::to_string(k) + " device" + (k == 1 ? "" : "s") +
                            " fits their memory";
              break;
            }
            cuts = std::move(*fit);
            HX_ASSIGN_OR_RETURN(current, evaluate(order.ops, cuts, stage_devices));
            for (size_t j = 0; j < k; ++j) {
              auto it = overflow.find(stage_devices[j].value());
              if (it != overflow.end()) room[j] = std::max(0.0, room[j] - 1.05 * it->second - 1.0);
            }
          }
        }
        // Refine: move one cut at a time by a halving step while the latency improves.
        size_t step = std::max<size_t>(1, order.ops.size() / 16);
        int budget = k > 1 ? RefineBudget(max_evaluations - evaluations, searches_left) : 0;
        while (budget > 0 && current && !out_of_time()) {
          bool improved = false;
          for (size_t j = 0; j < cuts.size() && budget > 0 && !out_of_time(); ++j) {
            for (int dir : {-1, +1}) {
              if (budget <= 0) break;
              std::vector<size_t> moved = cuts;
              const size_t lo = j == 0 ? 1 : cuts[j - 1] + 1;
              const size_t hi = j + 1 < cuts.size() ? cuts[j + 1] - 1 : order.ops.size() - 1;
              if (dir < 0 ? cuts[j] < lo + step : cuts[j] + step > hi) continue;
              moved[j] = dir < 0 ? cuts[j] - step : cuts[j] + step;
              --budget;
              HX_ASSIGN_OR_RETURN(std::optional<Evaluated> candidate,
                                  evaluate(order.ops, moved, stage_devices));
              if (candidate && candidate->makespan < current->makespan * (1.0 - 1e-9)) {
                current = std::move(candidate);
                cuts = std::move(moved);
                improved = true;
                break;
              }
            }
          }
          if (!improved) {
            if (step == 1) break;
            step /= 2;
          }
        }
        if (current && (!best || current->makespan < best->makespan * (1.0 - 1e-9))) {
          best = std::move(current);
          best_detail = Describe(cluster, order, cuts, stage_devices);
        }
        if (k == 1) break;  // one stage: the order does not matter
      }
    }
    if (!best)
      return ResourceExhausted("pipeline: no stage assignment of '" + g.name() +
                               "' fits the devices' memory (" + memory_note + ")");
    PlanResult r;
    r.plan = std::move(best->plan);
    r.status = stopped ? PlanStatus::kTimeLimit : PlanStatus::kHeuristic;
    char buf[64];
    std::snprintf(buf, sizeof buf, "; %d plans simulated", evaluations);
    r.detail = best_detail + buf + (stopped ? "; stopped by the time limit" : "");
    return r;
  }

 private:
  // Refining simulations for this (order, stage count): its share of what the op budget leaves,
  // the pairs still to search keeping theirs (`later` of them; each also needs at least one
  // simulation for its balanced cut).
  static int RefineBudget(int evaluations_left, int later) {
    const int share = (evaluations_left - later) / (later + 1);
    return std::clamp(share, 0, kMaxRefineEvaluations);
  }

  // A device's memory for the cut search (0 in the cluster: unlimited).
  static double Capacity(const hw::Cluster& cluster, DeviceId d) {
    const int64_t bytes = cluster.device(d).memory_bytes();
    return bytes > 0 ? static_cast<double>(bytes) : std::numeric_limits<double>::infinity();
  }

  // Each stage device's room for what stays resident (weights, stated footprints): its capacity,
  // less a tenth for activations unless the workload states every op's footprint.
  static std::vector<double> StageRoom(const cost::CostModel& cost,
                                       const std::vector<DeviceId>& devices) {
    bool all_stated = true;
    for (NodeId op : cost.graph().Ops())
      all_stated = all_stated && cost.StatedMemory(op).has_value();
    std::vector<double> room;
    for (DeviceId d : devices) room.push_back(Capacity(cost.cluster(), d) * (all_stated ? 1 : 0.9));
    return room;
  }

  // What each op of `order` keeps resident on its stage: its stated footprint, else the weights
  // it is the first in `order` to read.
  static std::vector<double> ResidentBytes(const cost::CostModel& cost,
                                           const std::vector<NodeId>& order) {
    const graph::Graph& g = cost.graph();
    std::vector<char> seen(g.num_nodes(), 0);
    std::vector<double> bytes(order.size(), 0.0);
    for (size_t i = 0; i < order.size(); ++i) {
      if (std::optional<int64_t> stated = cost.StatedMemory(order[i])) {
        bytes[i] = static_cast<double>(*stated);
        continue;
      }
      for (TensorId t : g.node(order[i]).inputs) {
        if (!t.valid()) continue;
        const NodeId w = g.tensor(t).producer;
        if (!w.valid() || g.node(w).kind != graph::NodeKind::kWeight || seen[w.index()]) continue;
        seen[w.index()] = 1;
        bytes[i] += static_cast<double>(t.valid() ? g.tensor(t).Bytes() : 0);
      }
    }
    return bytes;
  }

  // Cut points that give each stage about the same op time on its device, each stage's resident
  // bytes within `room`: the smallest bound T (bisection) for which filling the stages in order,
  // each up to T and its room, places every op. Filling each stage as far as its room allows is
  // the most a fixed device order can hold, so nullopt means no cut of `order` fits.
  static std::optional<std::vector<size_t>> BalancedCuts(const cost::CostModel& cost,
                                                         const std::vector<NodeId>& order,
                                                         const std::vector<DeviceId>& devices,
                                                         const std::vector<double>& room) {
    const size_t k = devices.size();
    const std::vector<double> resident = ResidentBytes(cost, order);
    // Op times per stage device, looked up once (the bisection fills the stages 60 times).
    std::vector<std::vector<double>> time(k, std::vector<double>(order.size()));
    for (size_t j = 0; j < k; ++j)
      for (size_t i = 0; i < order.size(); ++i) time[j][i] = cost.OpTime(order[i], devices[j]);
    auto fill = [&](double bound, std::vector<size_t>* cuts) {
      cuts->clear();
      size_t stage = 0;
      double used = 0.0, held = 0.0;
      for (size_t i = 0; i < order.size(); ++i) {
        const bool full = held + resident[i] > room[stage] * (1 + 1e-12);
        if ((full || (used + time[stage][i] > bound && used > 0.0)) && stage + 1 < k &&
            (used > 0.0 || held > 0.0)) {
          cuts->push_back(i);
          ++stage;
          used = held = 0.0;
        }
        if (held + resident[i] > room[stage] * (1 + 1e-12)) return false;
        used += time[stage][i];
        held += resident[i];
      }
      return used <= bound;
    };
    std::vector<size_t> cuts;
    if (!fill(std::numeric_limits<double>::infinity(), &cuts)) return std::nullopt;
    if (k <= 1) return std::vector<size_t>{};
    double hi = 0.0;  // every op at its slowest stage device's time: enough for any cut
    for (size_t i = 0; i < order.size(); ++i) {
      double slowest = 0.0;
      for (size_t j = 0; j < k; ++j) slowest = std::max(slowest, time[j][i]);
      hi += slowest;
    }
    double lo = 0.0;
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi);
      if (fill(mid, &cuts))
        hi = mid;
      else
        lo = mid;
    }
    if (!fill(hi, &cuts)) fill(std::numeric_limits<double>::infinity(), &cuts);
    // Fewer stages than devices filled (a few ops dominate): equal op counts instead, so every
    // stage has at least one op (k <= ops), when that fits.
    if (cuts.size() + 1 != k) {
      std::vector<size_t> even;
      for (size_t j = 1; j < k; ++j) even.push_back(j * order.size() / k);
      if (FitsRoom(resident, even, room)) cuts = std::move(even);
    }
    return cuts;
  }

  static bool FitsRoom(const std::vector<double>& resident, const std::vector<size_t>& cuts,
                       const std::vector<double>& room) {
    size_t stage = 0;
    double held = 0.0;
    for (size_t i = 0; i < resident.size(); ++i) {
      if (stage < cuts.size() && i >= cuts[stage]) ++stage, held = 0.0;
      held += resident[i];
      if (held > room[stage] * (1 + 1e-12)) return false;
    }
    return true;
  }

  // The stages are cut from `order`; each device runs its stage in `run_order` (breadth first), so
  // a stage cut inside a layer runs that layer's later steps after the earlier steps of the
  // layers above it, as their inputs arrive, instead of waiting for the whole previous stage.
  static StatusOr<plan::Plan> BuildPlan(const graph::Graph& g, const hw::Cluster& cluster,
                                        const std::vector<NodeId>& order,
                                        const std::vector<NodeId>& run_order,
                                        const std::vector<size_t>& cuts,
                                        const std::vector<DeviceId>& stage_devices) {
    std::vector<int> stage_of(g.num_nodes(), -1);
    size_t stage = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      while (stage < cuts.size() && i >= cuts[stage]) ++stage;
      stage_of[order[i].index()] = static_cast<int>(stage);
    }
    plan::Plan p;
    p.devices.resize(stage_devices.size());
    for (size_t s = 0; s < stage_devices.size(); ++s) p.devices[s].device = stage_devices[s];
    // A subgraph starts once all it reads has arrived and sends its outputs once it is done, so
    // a new one starts at an op that reads from another stage and after one whose output another
    // stage reads.
    std::vector<char> close_after(stage_devices.size(), 0);
    for (NodeId op : run_order) {
      const int s = stage_of[op.index()];
      bool remote_input = false, remote_output = false;
      for (TensorId t : g.node(op).inputs) {
        if (!t.valid()) continue;
        const NodeId producer = g.tensor(t).producer;
        if (producer.valid() && g.node(producer).is_op() && stage_of[producer.index()] != s)
          remote_input = true;
      }
      for (TensorId t : g.node(op).outputs) {
        if (!t.valid()) continue;
        for (NodeId c : g.tensor(t).consumers)
          if (g.node(c).is_op() && stage_of[c.index()] != s) remote_output = true;
      }
      auto& subgraphs = p.devices[static_cast<size_t>(s)].subgraphs;
      if (subgraphs.empty() || remote_input || close_after[static_cast<size_t>(s)])
        subgraphs.emplace_back();
      subgraphs.back().ops.push_back(op);
      close_after[static_cast<size_t>(s)] = remote_output;
    }
    p.devices.erase(
        std::remove_if(p.devices.begin(), p.devices.end(),
                       [](const plan::DeviceSchedule& d) { return d.subgraphs.empty(); }),
        p.devices.end());
    HX_RETURN_IF_ERROR(plan::CompleteTransfers(p, g, cluster));
    return p;
  }

  static std::string Describe(const hw::Cluster& cluster, const NamedOrder& order,
                              const std::vector<size_t>& cuts,
                              const std::vector<DeviceId>& stage_devices) {
    std::string s = std::to_string(stage_devices.size()) + " stage" +
                    (stage_devices.size() == 1 ? "" : "s") + " (";
    for (size_t j = 0; j < stage_devices.size(); ++j) {
      const size_t begin = j == 0 ? 0 : cuts[j - 1];
      const size_t end = j < cuts.size() ? cuts[j] : order.ops.size();
      if (j > 0) s += ", ";
      s += cluster.device(stage_devices[j]).name + ": " + std::to_string(end - begin) + " ops";
    }
    s += ")";
    if (stage_devices.size() > 1) s += ", " + order.name + " order";
    return s;
  }
};

}  // namespace

std::unique_ptr<Planner> MakePipelinePlanner() { return std::make_unique<PipelinePlanner>(); }

}  // namespace hx::place
