// `chrion`: Chrion's Algorithm 1 (BFS ready queue with DFS merges) and Algorithm 2 (greedy earliest
// finish with a GPU-memory term, sweeping the CPU core count) for CPU+GPU clusters
// (include/hexplan/place/chrion/chrion.h). The plan runs each op where the chosen schedule put it,
// in start order per device; the CPU cores of one CPU device share that device's order.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "hexplan/place/chrion/chrion.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/plan/task_graph.h"
#include "hexplan/plan/validator.h"
#include "hexplan/sim/simulator.h"
#include "place/builtin_planners.h"
#include "place/format_units.h"

namespace hx::place {
namespace {

constexpr double kChrionInf = std::numeric_limits<double>::infinity();

bool IsGpuLike(hw::DeviceKind k) { return k == hw::DeviceKind::kGpu || k == hw::DeviceKind::kMig; }

// Per op: its producer ops with the tensors it reads from them (each tensor once).
struct OpEdges {
  std::vector<std::vector<std::pair<NodeId, TensorId>>> in;  // per node
  std::vector<std::vector<NodeId>> preds, succs;             // per node, ops only, distinct
};

OpEdges BuildOpEdges(const graph::Graph& g) {
  OpEdges e;
  e.in.resize(g.num_nodes());
  e.preds.resize(g.num_nodes());
  e.succs.resize(g.num_nodes());
  for (NodeId v : g.Ops()) {
    std::set<uint32_t> seen_t, seen_p;
    for (TensorId t : g.node(v).inputs) {
      if (!t.valid() || !seen_t.insert(t.value()).second) continue;
      const NodeId u = g.tensor(t).producer;
      if (!u.valid() || !g.node(u).is_op()) continue;
      e.in[v.index()].push_back({u, t});
      if (seen_p.insert(u.value()).second) {
        e.preds[v.index()].push_back(u);
        e.succs[u.index()].push_back(v);
      }
    }
  }
  return e;
}

// Data moved from u to v across the GPU-CPU boundary, the slower direction.
double CrossTime(const cost::CostModel& cost, const OpEdges& e, NodeId u, NodeId v, DeviceId gpu,
                 DeviceId cpu) {
  double a = 0.0, b = 0.0;
  for (const auto& [p, t] : e.in[v.index()]) {
    if (p != u) continue;
    a += cost.TensorTransferTime(t, gpu, cpu);
    b += cost.TensorTransferTime(t, cpu, gpu);
  }
  return std::max(a, b);
}

StatusOr<ChrionOrder> OrderWithEdges(const cost::CostModel& cost, const OpEdges& e, DeviceId gpu,
                                     DeviceId cpu, const cost::CpuContentionOptions& contention) {
  const graph::Graph& g = cost.graph();
  ChrionOrder out;
  out.merged_into.assign(g.num_nodes(), NodeId());
  std::vector<int> indeg(g.num_nodes(), 0);
  std::vector<char> marked(g.num_nodes(), 0);
  std::deque<NodeId> queue;
  const std::vector<NodeId> ops = g.Ops();
  for (NodeId v : ops) {
    indeg[v.index()] = static_cast<int>(e.preds[v.index()].size());
    if (indeg[v.index()] == 0) queue.push_back(v);
  }
  auto mean_time = [&](NodeId v) {
    const double a = cost.OpTime(v, gpu);
    const double b = cpu.valid() ? cost::CpuCoreOpTime(cost, v, cpu, 1, contention) : a;
    return 0.5 * (a + b);
  };
  while (!queue.empty()) {
    NodeId cur = queue.front();
    queue.pop_front();
    if (marked[cur.index()]) continue;
    NodeId parent;
    while (true) {
      marked[cur.index()] = 1;
      out.order.push_back(cur);
      out.merged_into[cur.index()] = parent;
      NodeId merge;
      if (cpu.valid()) {
        for (NodeId c : e.succs[cur.index()]) {
          if (marked[c.index()] || e.preds[c.index()].size() != 1) continue;
          if (CrossTime(cost, e, cur, c, gpu, cpu) > mean_time(c)) {
            merge = c;
            break;
          }
        }
      }
      for (NodeId c : e.succs[cur.index()])
        if (--indeg[c.index()] == 0 && c != merge) queue.push_back(c);
      if (!merge.valid()) break;
      parent = cur;
      cur = merge;
    }
  }
  if (out.order.size() != ops.size())
    return InvalidArgument("chrion: graph '" + g.name() + "' has a cycle");
  return out;
}

struct Context {
  const cost::CostModel& cost;
  const graph::Graph& g;
  const OpEdges& edges;
  const ChrionOrder& order;
  DeviceId gpu;
  std::vector<DeviceId> slot_device;  // slot_device[j - 1]: the CPU device of core j
  cost::CpuContentionOptions contention;
  // Per node, computed once: GPU time (+inf: unsupported), time on each CPU device (indexed like
  // `cpus`), weights read, Eq. 4's outputs + ephemeral bytes, and (weights) their bytes.
  std::vector<DeviceId> cpus;
  std::vector<int> slot_cpu = {};  // slot_cpu[j - 1]: index into cpus
  std::vector<double> gpu_time = {};
  std::vector<std::vector<double>> cpu_time = {};
  std::vector<std::vector<NodeId>> weights = {};
  std::vector<int64_t> base_mem = {}, bytes = {};

  void Precompute() {
    const size_t n = g.num_nodes();
    gpu_time.assign(n, 0.0);
    cpu_time.assign(cpus.size(), std::vector<double>(n, 0.0));
    weights.assign(n, {});
    base_mem.assign(n, 0);
    bytes.assign(n, 0);
    for (NodeId w : g.NodesOfKind(graph::NodeKind::kWeight))
      if (!g.node(w).outputs.empty()) bytes[w.index()] = g.tensor(g.node(w).outputs[0]).Bytes();
    for (NodeId v : g.Ops()) {
      gpu_time[v.index()] = cost.Supports(v, gpu) ? cost.OpTime(v, gpu) : kChrionInf;
      for (size_t i = 0; i < cpus.size(); ++i)
        cpu_time[i][v.index()] = cost.Supports(v, cpus[i]) ? cost.OpTime(v, cpus[i]) : kChrionInf;
      weights[v.index()] = plan::WeightInputs(g, v);
      base_mem[v.index()] = std::max<int64_t>(0, cost.OpMemoryBytes(v) - cost.OpWeightBytes(v) -
                                                     cost.OpOutputBytes(v)) +
                            cost.OpOutputBytes(v);
    }
    slot_cpu.clear();
    for (DeviceId d : slot_device)
      slot_cpu.push_back(static_cast<int>(std::find(cpus.begin(), cpus.end(), d) - cpus.begin()));
  }
};

StatusOr<ChrionSchedule> SelectDevices(const Context& c, int cores, double alpha, double price) {
  const graph::Graph& g = c.g;
  const size_t n = g.num_nodes();
  ChrionSchedule s;
  s.cores = cores;
  s.device.assign(n, DeviceId());
  s.processor.assign(n, -1);
  s.start.assign(n, 0.0);
  s.finish.assign(n, 0.0);
  std::vector<double> avail(static_cast<size_t>(cores) + 2, 0.0);
  const int64_t gpu_capacity = c.cost.cluster().device(c.gpu).memory_bytes();
  const size_t num_devices = c.cost.cluster().num_devices();
  // weight_ready[d][w]: when weight w is on device d (-1: not loaded there); load_cursor[d]: when
  // the device's load queue is next free.
  std::vector<std::vector<double>> weight_ready(num_devices);
  std::vector<double> load_cursor(num_devices, 0.0);
  std::vector<char> on_gpu(n + g.num_tensors(), 0);   // weights and copied tensors counted on GPU
  std::vector<std::pair<uint32_t, double>> ready_on;  // per op: (device, inputs-ready time)
  for (NodeId v : c.order.order) {
    const std::vector<NodeId>& ws = c.weights[v.index()];
    int64_t gpu_mem = -1;
    auto gpu_increment = [&]() {
      if (gpu_mem >= 0) return gpu_mem;
      int64_t m = c.base_mem[v.index()];
      for (NodeId w : ws)
        if (!on_gpu[w.index()]) m += c.bytes[w.index()];
      std::set<uint32_t> copied;
      for (const auto& [u, t] : c.edges.in[v.index()])
        if (s.processor[u.index()] > 0 && !on_gpu[n + t.index()] && copied.insert(t.value()).second)
          m += g.tensor(t).Bytes();
      return gpu_mem = m;
    };
    // When the op's inputs and weights can be on device d (computed once per device).
    ready_on.clear();
    auto inputs_ready = [&](DeviceId d) {
      for (const auto& [dev, t] : ready_on)
        if (dev == d.value()) return t;
      double est = 0.0;
      for (const auto& [u, t] : c.edges.in[v.index()]) {
        const DeviceId du = s.device[u.index()];
        est = std::max(est,
                       s.finish[u.index()] + (du == d ? 0.0 : c.cost.TensorTransferTime(t, du, d)));
      }
      std::vector<double>& ready = weight_ready[d.index()];
      if (ready.empty()) ready.assign(n, -1.0);
      double cursor = load_cursor[d.index()];
      for (NodeId w : ws) {
        if (ready[w.index()] >= 0.0) {
          est = std::max(est, ready[w.index()]);
        } else {
          cursor += c.cost.WeightLoadTime(w, d);
          est = std::max(est, cursor);
        }
      }
      ready_on.push_back({d.value(), est});
      return est;
    };
    const NodeId parent = c.order.merged_into[v.index()];
    int best = -1;
    double best_cost = kChrionInf, best_est = 0.0, best_eft = 0.0;
    int64_t best_mem = 0;
    auto evaluate = [&](int lo, int hi) {
      for (int j = lo; j <= hi; ++j) {
        const DeviceId d = j == 0 ? c.gpu : c.slot_device[j - 1];
        const double run = j == 0 ? c.gpu_time[v.index()]
                                  : cost::CpuCoreTimeFrom(c.cpu_time[c.slot_cpu[j - 1]][v.index()],
                                                          c.cost.cluster().device(d),
                                                          std::max(cores, 1), c.contention);
        if (!std::isfinite(run)) continue;
        const double est = std::max(avail[j], inputs_ready(d));
        const double eft = est + run;
        const int64_t mem = j == 0 ? gpu_increment() : 0;
        // The GPU holds at most its capacity of Eq. 4 memory; beyond it ops go to the CPU.
        if (j == 0 && gpu_capacity > 0 && s.gpu_memory_bytes + mem > gpu_capacity) continue;
        const double total = eft + alpha * price * static_cast<double>(mem);
        if (total < best_cost) {
          best = j;
          best_cost = total;
          best_est = est;
          best_eft = eft;
          best_mem = mem;
        }
      }
    };
    if (parent.valid()) evaluate(s.processor[parent.index()], s.processor[parent.index()]);
    // A merged child that cannot run on its parent's processor is placed freely.
    if (best < 0) evaluate(0, cores);
    // An op the GPU cannot run (or hold) goes to a CPU core even in the GPU-only schedule.
    if (best < 0 && cores == 0 && !c.slot_device.empty()) evaluate(1, 1);
    if (best < 0)
      return ResourceExhausted("chrion: op '" + g.node(v).name +
                               "' can run neither on the GPU (unsupported, or its memory is full) "
                               "nor on a CPU core");
    const DeviceId d = best == 0 ? c.gpu : c.slot_device[best - 1];
    std::vector<double>& ready = weight_ready[d.index()];
    if (ready.empty()) ready.assign(n, -1.0);
    for (NodeId w : ws) {
      if (ready[w.index()] >= 0.0) continue;
      load_cursor[d.index()] += c.cost.WeightLoadTime(w, d);
      ready[w.index()] = load_cursor[d.index()];
    }
    if (best == 0) {
      s.gpu_memory_bytes += best_mem;
      for (NodeId w : ws) on_gpu[w.index()] = 1;
      for (const auto& [u, t] : c.edges.in[v.index()])
        if (s.processor[u.index()] > 0) on_gpu[n + t.index()] = 1;
    }
    avail[best] = best_eft;
    s.processor[v.index()] = best;
    s.device[v.index()] = d;
    s.start[v.index()] = best_est;
    s.finish[v.index()] = best_eft;
    s.latency_s = std::max(s.latency_s, best_eft);
  }
  return s;
}

StatusOr<plan::Plan> PlanFromChrion(const cost::CostModel& cost, const ChrionOrder& order,
                                    const ChrionSchedule& s) {
  std::vector<int64_t> pos(cost.graph().num_nodes(), 0);
  for (size_t i = 0; i < order.order.size(); ++i) pos[order.order[i].index()] = i;
  std::map<uint32_t, std::vector<NodeId>> per_device;
  for (NodeId v : order.order) per_device[s.device[v.index()].value()].push_back(v);
  plan::Plan p;
  for (auto& [d, ops] : per_device) {
    std::stable_sort(ops.begin(), ops.end(), [&](NodeId a, NodeId b) {
      if (s.start[a.index()] != s.start[b.index()]) return s.start[a.index()] < s.start[b.index()];
      return pos[a.index()] < pos[b.index()];
    });
    plan::DeviceSchedule ds;
    ds.device = DeviceId(d);
    for (NodeId v : ops) ds.subgraphs.push_back(plan::Subgraph{{v}});
    p.devices.push_back(std::move(ds));
  }
  p.estimate_ms = s.latency_s * 1e3;
  HX_RETURN_IF_ERROR(plan::CompleteTransfers(p, cost.graph(), cost.cluster()));
  return p;
}

std::string Mb(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}
class ChrionPlanner final : public Planner {
 public:
  std::string Name() const override { return "chrion"; }
  std::string Description() const override {
    return "Chrion: BFS/DFS topological order, greedy EFT + alpha * GPU memory over the GPU and "
           "k' CPU cores, best k*";
  }

  std::vector<OptionSpec> Options() const override {
    return {DoubleOption("alpha", "weight of GPU memory in Chrion's greedy cost EFT + alpha*memory",
                         0.0, 0.0),
            BoolOption("guard",
                       "keep the GPU-only plan when it simulates better than Chrion's k* (false: "
                       "the paper's behaviour, k* as Algorithm 2 chose it)",
                       true)};
  }

  StatusOr<PlanResult> Plan(const PlanRequest& request) override {
    const cost::CostModel& cost = *request.cost;
    HX_ASSIGN_OR_RETURN(const OptionSet own, ResolveOptions(request, *this));
    ChrionOptions options;
    options.alpha = own.Double("alpha");
    HX_ASSIGN_OR_RETURN(ChrionResult run, RunChrion(cost, options));
    // Candidates by Algorithm 2's total cost; the first whose plan fits in memory wins.
    std::vector<int> ranked(run.sweep.size());
    for (size_t i = 0; i < ranked.size(); ++i) ranked[i] = static_cast<int>(i);
    std::stable_sort(ranked.begin(), ranked.end(),
                     [&](int a, int b) { return run.sweep[a].cost < run.sweep[b].cost; });
    std::optional<plan::Plan> chosen, gpu_only;
    int chosen_k = -1;
    std::string shortfalls;
    auto fits = [&](const plan::Plan& p, int k) {
      for (const plan::DeviceMemoryBound& m : plan::PlanMemoryBound(p, cost))
        if (m.capacity_bytes > 0 && m.total() > m.capacity_bytes) {
          shortfalls += "\n  k'=" + std::to_string(k) + ": " +
                        cost.cluster().device(m.device).name + " needs " + Mb(m.total()) +
                        " but has " + Mb(m.capacity_bytes);
          return false;
        }
      return true;
    };
    for (int i : ranked) {
      HX_ASSIGN_OR_RETURN(plan::Plan p, PlanFromChrion(cost, run.order, run.sweep[i]));
      if (!fits(p, run.sweep[i].cores)) continue;
      chosen = std::move(p);
      chosen_k = i;
      break;
    }
    if (!chosen)
      return ResourceExhausted("chrion: no core count gives a plan that fits in memory:" +
                               shortfalls);
    // Guard: the planner's CPU model is not the simulator's; keep the GPU-only plan when it
    // simulates better under the same objective.
    std::string note;
    if (chosen_k != 0 && own.Bool("guard")) {
      HX_ASSIGN_OR_RETURN(plan::Plan g0, PlanFromChrion(cost, run.order, run.sweep[0]));
      if (fits(g0, 0)) {
        HX_ASSIGN_OR_RETURN(sim::SimResult a, sim::Simulate(*chosen, cost));
        HX_ASSIGN_OR_RETURN(sim::SimResult b, sim::Simulate(g0, cost));
        const double m0 = static_cast<double>(run.sweep[0].gpu_memory_bytes);
        auto objective = [&](const sim::SimResult& r, const ChrionSchedule& s) {
          double v = b.makespan_s > 0 ? r.makespan_s / b.makespan_s : 0.0;
          if (m0 > 0) v += options.alpha * static_cast<double>(s.gpu_memory_bytes) / m0;
          return v;
        };
        if (objective(b, run.sweep[0]) < objective(a, run.sweep[chosen_k])) {
          note = "; k'=" + std::to_string(run.sweep[chosen_k].cores) +
                 " simulated slower than GPU-only, kept GPU-only";
          chosen = std::move(g0);
          chosen_k = 0;
        }
      }
    }
    const ChrionSchedule& s = run.sweep[chosen_k];
    PlanResult result;
    result.plan = std::move(*chosen);
    result.status = PlanStatus::kHeuristic;
    result.detail = "k*=" + std::to_string(s.cores) + " of " + std::to_string(run.total_cores) +
                    " CPU cores, GPU memory (Eq. 4) " + Mb(s.gpu_memory_bytes) + " vs " +
                    Mb(run.sweep[0].gpu_memory_bytes) + " GPU-only, estimate " +
                    FormatMs(s.latency_s) + " vs " + FormatMs(run.sweep[0].latency_s) + note;
    LogTo(request.logger, LogLevel::kInfo, "chrion: " + result.detail);
    return result;
  }
};

}  // namespace

Status ChrionOptions::Validate() const {
  if (!(alpha >= 0.0) || !std::isfinite(alpha))
    return InvalidArgument("chrion: --alpha must be a finite number >= 0, got " +
                           std::to_string(alpha));
  return contention.Validate();
}

StatusOr<ChrionOrder> ChrionTopologicalOrder(const cost::CostModel& cost, DeviceId gpu,
                                             DeviceId cpu,
                                             const cost::CpuContentionOptions& contention) {
  const OpEdges edges = BuildOpEdges(cost.graph());
  return OrderWithEdges(cost, edges, gpu, cpu, contention);
}

StatusOr<ChrionResult> RunChrion(const cost::CostModel& cost, const ChrionOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  const graph::Graph& g = cost.graph();
  const hw::Cluster& cluster = cost.cluster();
  ChrionResult out;
  // The GPU: the fastest by total op time over the ops it supports.
  double best_total = kChrionInf;
  std::vector<DeviceId> cpus;
  for (DeviceId d : cluster.DeviceIds()) {
    if (cluster.device(d).kind == hw::DeviceKind::kCpu) {
      cpus.push_back(d);
      continue;
    }
    if (!IsGpuLike(cluster.device(d).kind)) continue;
    double total = 0.0;
    for (NodeId op : g.Ops()) total += cost.Supports(op, d) ? cost.OpTime(op, d) : 0.0;
    if (total < best_total) {
      best_total = total;
      out.gpu = d;
    }
  }
  if (!out.gpu.valid())
    return InvalidArgument("chrion: cluster '" + cluster.name() +
                           "' has no GPU (Chrion splits a model between a GPU and CPU cores)");
  // Cores: round-robin over the CPU devices while each has cores left.
  std::vector<DeviceId> slot_device;
  std::vector<int> left;
  for (DeviceId d : cpus) left.push_back(std::max(cluster.device(d).spec.cores, 1));
  for (bool any = true; any;) {
    any = false;
    for (size_t i = 0; i < cpus.size(); ++i)
      if (left[i] > 0) {
        slot_device.push_back(cpus[i]);
        --left[i];
        any = true;
      }
  }
  out.total_cores = static_cast<int>(slot_device.size());
  const OpEdges edges = BuildOpEdges(g);
  // A calibrated CPU's op times are one core's (cpu_contention.h); the first CPU device decides.
  const cost::CpuContentionOptions contention =
      cpus.empty() ? options.contention
                   : cost::CpuContentionFor(cost, cpus.front(), options.contention);
  HX_ASSIGN_OR_RETURN(
      out.order,
      OrderWithEdges(cost, edges, out.gpu, cpus.empty() ? DeviceId() : cpus.front(), contention));
  Context c{cost, g, edges, out.order, out.gpu, slot_device, contention, cpus};
  c.Precompute();
  HX_ASSIGN_OR_RETURN(ChrionSchedule base, SelectDevices(c, 0, 0.0, 0.0));
  const double l0 = base.latency_s;
  const double m0 = static_cast<double>(base.gpu_memory_bytes);
  const double price = m0 > 0 ? l0 / m0 : 0.0;
  auto objective = [&](const ChrionSchedule& s) {
    double v = l0 > 0 ? s.latency_s / l0 : s.latency_s;
    if (m0 > 0) v += options.alpha * static_cast<double>(s.gpu_memory_bytes) / m0;
    return v;
  };
  base.cost = objective(base);
  out.sweep.push_back(std::move(base));
  out.best = 0;
  for (int k = 1; k <= out.total_cores; ++k) {
    auto s = SelectDevices(c, k, options.alpha, price);
    if (!s.ok()) return s.status();
    s->cost = objective(*s);
    if (s->cost < out.sweep[out.best].cost) out.best = k;
    out.sweep.push_back(std::move(*s));
  }
  return out;
}

std::unique_ptr<Planner> MakeChrionPlanner() { return std::make_unique<ChrionPlanner>(); }

}  // namespace hx::place
