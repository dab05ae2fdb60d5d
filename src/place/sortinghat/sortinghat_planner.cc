// `sortinghat`: SortingHat end to end (docs/placement.md "SortingHat"): dominator partition (§3.1),
// one MILP per submodel in order with the constants of Table 1 carried over (§3.3) and adjusted as
// §3.4 says, and the merge into one plan: per-GPU subgraph queues and per-bus parameter copy queues
// in MILP order, DHA and parallel transmission marked per weight.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>

#include "hexplan/core/interrupt.h"
#include "hexplan/core/stopwatch.h"
#include "hexplan/graph/analysis.h"
#include "hexplan/place/exact/exact_planner.h"
#include "hexplan/place/sortinghat/sortinghat.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/plan/task_graph.h"
#include "hexplan/plan/validator.h"
#include "place/builtin_planners.h"
#include "place/sortinghat/sortinghat_milp.h"

namespace hx::place {
namespace {

namespace sh = sortinghat;
constexpr double kPlannerInf = std::numeric_limits<double>::infinity();
// A submodel MILP is only started with at least this long left (less keeps the warm start).
constexpr double kMinSubmodelSeconds = 0.02;

// Union-find over node indices.
struct Dsu {
  std::vector<int> parent;
  explicit Dsu(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int Find(int v) { return parent[v] == v ? v : parent[v] = Find(parent[v]); }
  void Join(int a, int b) { parent[Find(a)] = Find(b); }
};

// One submodel's units: ops folded into MILP nodes.
struct SubmodelUnits {
  std::vector<std::vector<NodeId>> units;  // each in topological order; units in topological order
  std::vector<int> unit_of;                // per node, -1 outside
};

std::vector<double> Average(const std::vector<double>& v) {
  double sum = 0;
  int n = 0;
  for (double x : v)
    if (std::isfinite(x)) sum += x, ++n;
  std::vector<double> out(v.size(), n > 0 ? sum / n : 0.0);
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) out[i] = kPlannerInf;
  return out;
}
std::vector<std::vector<double>> AveragePairs(const std::vector<std::vector<double>>& c) {
  double sum = 0;
  int n = 0;
  for (size_t a = 0; a < c.size(); ++a)
    for (size_t b = 0; b < c.size(); ++b)
      if (a != b) sum += c[a][b], ++n;
  std::vector<std::vector<double>> out(c.size(), std::vector<double>(c.size(), 0.0));
  for (size_t a = 0; a < c.size(); ++a)
    for (size_t b = 0; b < c.size(); ++b)
      if (a != b) out[a][b] = n > 0 ? sum / n : 0.0;
  return out;
}

class SortingHatContext {
 public:
  SortingHatContext(const PlanRequest& request, const SortingHatSettings& settings,
                    const MilpSettings& milp, SortingHatReport* report)
      : request_(request),
        settings_(settings),
        milp_(milp),
        g_(request.graph()),
        cluster_(request.cluster()),
        report_(report) {}

  StatusOr<ExactAnswer> Run();

 private:
  Status Setup();
  void WarmPlans();
  void AddWarmPlan(const std::string& name, const plan::Plan& plan);
  // Submodel i's MILP from its best warm start, committed to the merged plan.
  Status SolveSubmodel(size_t i, double deadline);
  ExactAnswer Answer(double per_submodel);
  SubmodelUnits BuildUnits(const std::vector<NodeId>& ops) const;
  sh::Problem BuildProblem(int index, const SubmodelUnits& su, std::vector<NodeId>& weights,
                           std::vector<std::pair<TensorId, NodeId>>& externals) const;
  std::vector<std::pair<std::string, sh::Assignment>> WarmStarts(
      const sh::Problem& p, const SubmodelUnits& su, const std::vector<NodeId>& weights) const;
  void Commit(const sh::Problem& p, const SubmodelUnits& su, const std::vector<NodeId>& weights,
              const std::vector<std::pair<TensorId, NodeId>>& externals,
              const sh::Solution& solution, int index);
  int GpuIndex(DeviceId d) const {
    for (size_t i = 0; i < gpus_.size(); ++i)
      if (gpus_[i] == d) return static_cast<int>(i);
    return -1;
  }

  Stopwatch clock_;  // since the planner started: the time limit covers everything
  const PlanRequest& request_;
  const SortingHatSettings settings_;
  const MilpSettings milp_;
  const graph::Graph& g_;
  const hw::Cluster& cluster_;
  SortingHatReport* report_;
  std::unique_ptr<cost::CostModel> adjusted_;  // §3.4 constants
  std::vector<DeviceId> gpus_;
  std::vector<std::string> bus_names_;
  SortingHatAblation ablation_ = SortingHatAblation::kNone;
  sh::Topology topo_;
  SortingHatPartition partition_;
  std::vector<int64_t> pos_;      // topological position per node
  std::vector<char> reached_;     // per node: reached from a graph input
  std::vector<int> last_reader_;  // per weight: the last submodel reading it
  // Decisions so far.
  std::vector<int> op_gpu_;           // per node
  std::vector<double> op_fin_;        // per node: the MILP's finish time
  std::vector<int> weight_home_;      // per node: GPU it is loaded into, -1 DRAM, -2 undecided
  std::vector<double> weight_ready_;  // per node
  std::set<std::pair<uint32_t, int>> on_gpu_;  // (tensor, gpu): present there
  sh::Carried carried_;
  std::vector<std::vector<std::vector<NodeId>>> slots_ops_;  // per gpu: subgraphs in order
  plan::Plan plan_;
  std::map<std::pair<uint32_t, uint32_t>, size_t> placement_;  // (weight, device) -> index
  std::vector<std::string> chain_queue_;
  double estimate_ = 0.0;
  std::vector<SortingHatSubmodelStats> stats_;
  bool all_optimal_ = true;
  int out_of_time_ = 0;  // submodels that kept their warm start because the limit was spent
  double last_bound_ = 0.0;
  std::vector<std::pair<std::string, plan::Plan>> warm_plans_;
  std::vector<std::vector<int>> warm_gpu_of_;  // per warm plan: node -> gpu index (-1)
};

Status SortingHatContext::Setup() {
  ablation_ = settings_.ablation;
  for (DeviceId d : cluster_.DeviceIds())
    if (cluster_.device(d).kind != hw::DeviceKind::kCpu) gpus_.push_back(d);
  if (gpus_.empty())
    return InvalidArgument("sortinghat: cluster '" + cluster_.name() + "' has no GPU");
  cost::CostModelOptions co = request_.cost->options();
  co.sortinghat_static_adjustments = true;
  adjusted_ = std::make_unique<cost::CostModel>(g_, cluster_, co, request_.cost->profile());

  // PCIe buses: the first PCIe link of each GPU's host route.
  topo_.k = static_cast<int>(gpus_.size());
  topo_.q = settings_.subgraphs_per_gpu;
  std::map<uint32_t, int> bus_index;
  for (int i = 0; i < topo_.k; ++i) {
    const hw::Route& r = cluster_.HostToDevice(gpus_[i]);
    LinkId bus;
    for (const hw::RouteHop& hop : r.hops)
      if (cluster_.link(hop.link).kind == hw::LinkKind::kPcie) {
        bus = hop.link;
        break;
      }
    int b;
    if (bus.valid() && bus_index.count(bus.value())) {
      b = bus_index[bus.value()];
    } else {
      b = static_cast<int>(topo_.buses.size());
      if (bus.valid()) bus_index[bus.value()] = b;
      topo_.buses.push_back({});
      bus_names_.push_back(bus.valid() ? cluster_.link(bus).name
                                       : cluster_.device(gpus_[i]).name + ".host");
    }
    topo_.bus_of.push_back(b);
    topo_.buses[b].push_back(i);
    topo_.memory.push_back(static_cast<double>(cluster_.device(gpus_[i]).memory_bytes()));
  }
  const bool per_gpu = ablation_ == SortingHatAblation::kNoContention;
  const size_t chains = per_gpu ? gpus_.size() : topo_.buses.size();
  for (size_t c = 0; c < chains; ++c)
    chain_queue_.push_back(per_gpu ? plan::InQueueName(cluster_, gpus_[c])
                                   : "bus:" + bus_names_[c]);
  carried_.prev_sg_fin.assign(topo_.k, 0.0);
  carried_.prev_dt_fin.assign(chains, 0.0);
  carried_.prev_memory.assign(topo_.k, 0.0);

  HX_ASSIGN_OR_RETURN(partition_, PartitionByDominators(g_, settings_.dominators_per_submodel));
  HX_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph::TopologicalOrder(g_));
  const size_t n = g_.num_nodes();
  pos_.assign(n, 0);
  for (size_t i = 0; i < order.size(); ++i) pos_[order[i].index()] = static_cast<int64_t>(i);
  reached_.assign(n, 0);
  const bool any_input = !g_.Inputs().empty();
  for (NodeId v : order) {
    if (!any_input || g_.node(v).kind == graph::NodeKind::kInput) reached_[v.index()] = 1;
    if (!reached_[v.index()]) continue;
    for (NodeId s : g_.successors(v))
      if (g_.node(s).kind != graph::NodeKind::kWeight) reached_[s.index()] = 1;
  }
  last_reader_.assign(n, -1);
  for (NodeId w : g_.Weights())
    for (NodeId s : g_.successors(w))
      if (g_.node(s).is_op())
        last_reader_[w.index()] =
            std::max(last_reader_[w.index()], partition_.submodel_of[s.index()]);
  op_gpu_.assign(n, -1);
  op_fin_.assign(n, 0.0);
  weight_home_.assign(n, -2);
  weight_ready_.assign(n, 0.0);
  slots_ops_.assign(topo_.k, {});
  if (request_.options.warm_start) WarmPlans();
  return Status::Ok();
}

// Whole-model warm starts from the fast planners that are registered: together at most a quarter
// of the time limit (once one has succeeded), each with what is left of that quarter. A
// portfolio's plans of those planners (PlanRequest::known_plans) are taken as they are, and its
// fastest plan joins them.
void SortingHatContext::WarmPlans() {
  const std::vector<std::string> names = PlannerNames();
  const std::vector<KnownPlan> none;
  const std::vector<KnownPlan>& known = request_.known_plans ? *request_.known_plans : none;
  for (const std::string name : {"single", "heft", "m-etf", "deepplan"}) {
    if (std::find(names.begin(), names.end(), name) == names.end()) continue;
    auto given = std::find_if(known.begin(), known.end(),
                              [&](const KnownPlan& k) { return k.planner == name; });
    if (given != known.end()) {
      AddWarmPlan(name, given->plan);
      continue;
    }
    const double left = request_.options.time_limit_s * 0.25 - clock_.ElapsedSeconds();
    if (!warm_plans_.empty() && left <= 0) {
      LogTo(request_.logger, LogLevel::kInfo,
            "sortinghat: no time left for the warm start '" + name + "'");
      continue;
    }
    auto planner = MakePlanner(name);
    if (!planner.ok()) continue;
    PlanRequest sub = request_;
    sub.options.time_limit_s = std::max(0.05, left);
    sub.planner_options = request_.planner_options.Restrict((*planner)->Options());
    auto r = (*planner)->Plan(sub);
    if (!r.ok()) {
      LogTo(request_.logger, LogLevel::kInfo,
            "sortinghat: warm start '" + name + "' failed: " + r.status().message());
      continue;
    }
    AddWarmPlan(name, r->plan);
  }
  if (!known.empty() && std::none_of(warm_plans_.begin(), warm_plans_.end(), [&](const auto& w) {
        return w.first == known.front().planner;
      }))
    AddWarmPlan(known.front().planner, known.front().plan);
}

// A whole-model warm start, when the validator accepts it.
void SortingHatContext::AddWarmPlan(const std::string& name, const plan::Plan& plan) {
  if (!plan::CheckPlan(plan, *request_.cost, name).ok()) return;
  const size_t n = g_.num_nodes();
  std::vector<int> gpu_of(n, -1);
  const std::vector<DeviceId> devs = plan.OpDevices(n);
  for (size_t v = 0; v < n; ++v)
    if (devs[v].valid()) gpu_of[v] = GpuIndex(devs[v]);
  warm_gpu_of_.push_back(std::move(gpu_of));
  warm_plans_.push_back({name, plan});
}

SubmodelUnits SortingHatContext::BuildUnits(const std::vector<NodeId>& ops) const {
  const size_t n = g_.num_nodes();
  SubmodelUnits su;
  su.unit_of.assign(n, -1);
  std::vector<char> in(n, 0);
  for (NodeId op : ops) in[op.index()] = 1;
  Dsu dsu(n);
  auto op_succ = [&](NodeId v) {
    std::vector<NodeId> out;
    for (NodeId s : g_.successors(v))
      if (g_.node(s).is_op()) out.push_back(s);
    return out;
  };
  // Ops no input reaches join their first consumer in the submodel (reverse topological order).
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    if (reached_[it->index()]) continue;
    NodeId first;
    for (NodeId s : op_succ(*it))
      if (in[s.index()] && (!first.valid() || pos_[s.index()] < pos_[first.index()])) first = s;
    if (first.valid()) dsu.Join(static_cast<int>(it->index()), static_cast<int>(first.index()));
  }
  // Chains: v's only data producer u has v as its only consumer.
  for (NodeId v : ops) {
    if (!reached_[v.index()]) continue;
    std::set<uint32_t> preds;
    for (NodeId u : g_.predecessors(v))
      if (g_.node(u).is_op() && reached_[u.index()]) preds.insert(u.value());
    if (preds.size() != 1) continue;
    const NodeId u(*preds.begin());
    if (!in[u.index()]) continue;
    std::set<uint32_t> succ;
    for (NodeId s : op_succ(u))
      if (reached_[s.index()]) succ.insert(s.value());
    if (succ.size() == 1) dsu.Join(static_cast<int>(u.index()), static_cast<int>(v.index()));
  }
  std::map<int, std::vector<NodeId>> groups;
  for (NodeId op : ops) groups[dsu.Find(static_cast<int>(op.index()))].push_back(op);
  std::vector<std::vector<NodeId>> units;
  for (auto& [root, members] : groups) units.push_back(std::move(members));
  // Topological order of the units (Kahn, smallest last op first); plain ops on a cycle.
  std::vector<int> unit_of(n, -1);
  for (size_t u = 0; u < units.size(); ++u)
    for (NodeId op : units[u]) unit_of[op.index()] = static_cast<int>(u);
  const size_t U = units.size();
  std::vector<std::set<int>> succ(U);
  std::vector<int> indeg(U, 0);
  for (size_t b = 0; b < U; ++b)
    for (NodeId op : units[b])
      for (NodeId p : g_.predecessors(op)) {
        const int a = unit_of[p.index()];
        if (a >= 0 && a != static_cast<int>(b) && succ[a].insert(static_cast<int>(b)).second)
          ++indeg[b];
      }
  auto key = [&](int u) { return pos_[units[u].back().index()]; };
  std::set<std::pair<int64_t, int>> ready;
  for (size_t u = 0; u < U; ++u)
    if (indeg[u] == 0) ready.insert({key(static_cast<int>(u)), static_cast<int>(u)});
  std::vector<int> order;
  while (!ready.empty()) {
    const int u = ready.begin()->second;
    ready.erase(ready.begin());
    order.push_back(u);
    for (int b : succ[u])
      if (--indeg[b] == 0) ready.insert({key(b), b});
  }
  if (order.size() != U) {
    for (NodeId op : ops) su.units.push_back({op});
  } else {
    for (int u : order) su.units.push_back(std::move(units[u]));
  }
  for (size_t u = 0; u < su.units.size(); ++u)
    for (NodeId op : su.units[u]) su.unit_of[op.index()] = static_cast<int>(u);
  return su;
}

sh::Problem SortingHatContext::BuildProblem(
    int index, const SubmodelUnits& su, std::vector<NodeId>& weights,
    std::vector<std::pair<TensorId, NodeId>>& externals) const {
  const int K = topo_.k;
  const bool no_topology = ablation_ == SortingHatAblation::kNoTopology;
  const bool independent = ablation_ == SortingHatAblation::kIndependent;
  const cost::CostModel& cost = *request_.cost;
  sh::Problem p;
  p.topo = topo_;
  p.per_gpu_chains = ablation_ == SortingHatAblation::kNoContention;
  p.carried = carried_;
  if (independent) {
    std::fill(p.carried.prev_sg_fin.begin(), p.carried.prev_sg_fin.end(), 0.0);
    std::fill(p.carried.prev_dt_fin.begin(), p.carried.prev_dt_fin.end(), 0.0);
  }
  auto copy_table = [&](TensorId t) {
    std::vector<std::vector<double>> c(K, std::vector<double>(K, 0.0));
    for (int a = 0; a < K; ++a)
      for (int b = 0; b < K; ++b)
        if (a != b) c[a][b] = adjusted_->TensorTransferTime(t, gpus_[a], gpus_[b]);
    return c;
  };
  const int U = static_cast<int>(su.units.size());
  std::set<std::pair<int, int>> edges;
  std::map<uint32_t, int> weight_index;
  std::map<uint32_t, int> external_index;  // by tensor
  for (int u = 0; u < U; ++u) {
    sh::Unit unit;
    unit.time.assign(K, 0.0);
    unit.time_dha.assign(K, 0.0);
    unit.copy.assign(K, std::vector<double>(K, 0.0));
    std::set<uint32_t> sent;
    for (NodeId op : su.units[u]) {
      const bool has_weights = !plan::WeightInputs(g_, op).empty();
      for (int i = 0; i < K; ++i) {
        const double t = cost.Supports(op, gpus_[i]) ? cost.OpTime(op, gpus_[i]) : kPlannerInf;
        unit.time[i] += t;
        unit.time_dha[i] += has_weights ? adjusted_->OpTimeDha(op, gpus_[i]) : t;
      }
      unit.memory += static_cast<double>(cost.OpOutputBytes(op) + cost.OpWorkspaceBytes(op));
      for (TensorId t : g_.node(op).outputs)
        for (NodeId c : g_.tensor(t).consumers) {
          const int b = c.index() < su.unit_of.size() ? su.unit_of[c.index()] : -1;
          if (b < 0 || b == u || !sent.insert(t.value()).second) continue;
          auto table = copy_table(t);
          for (int a = 0; a < K; ++a)
            for (int bb = 0; bb < K; ++bb) unit.copy[a][bb] += table[a][bb];
        }
      for (TensorId t : g_.node(op).inputs) {
        if (!t.valid()) continue;
        const NodeId prod = g_.tensor(t).producer;
        if (!prod.valid()) continue;
        const graph::Node& pn = g_.node(prod);
        if (pn.is_op() && su.unit_of[prod.index()] >= 0) {
          if (su.unit_of[prod.index()] != u) edges.insert({su.unit_of[prod.index()], u});
          continue;
        }
        if (pn.kind == graph::NodeKind::kWeight && partition_.submodel_of[prod.index()] == index) {
          auto [it, fresh] =
              weight_index.insert({prod.value(), static_cast<int>(p.weights.size())});
          if (fresh) {
            sh::Weight w;
            w.bytes = static_cast<double>(g_.tensor(t).Bytes());
            w.load.assign(K, 0.0);
            for (int i = 0; i < K; ++i) w.load[i] = cost.WeightLoadTime(prod, gpus_[i]);
            w.copy = copy_table(t);
            w.no_dha = last_reader_[prod.index()] > index;
            p.weights.push_back(std::move(w));
            weights.push_back(prod);
          }
          auto& readers = p.weights[it->second].readers;
          if (std::find(readers.begin(), readers.end(), u) == readers.end()) readers.push_back(u);
          continue;
        }
        if (pn.kind != graph::NodeKind::kWeight && !pn.is_op()) continue;  // graph inputs
        // A FixedNode: produced or placed by an earlier submodel.
        auto [it, fresh] = external_index.insert({t.value(), static_cast<int>(p.externals.size())});
        if (fresh) {
          sh::External f;
          f.bytes = static_cast<double>(g_.tensor(t).Bytes());
          f.copy_to.assign(K, 0.0);
          const int home = pn.is_op() ? op_gpu_[prod.index()] : weight_home_[prod.index()];
          f.ready = pn.is_op() ? op_fin_[prod.index()] : weight_ready_[prod.index()];
          if (home >= 0) {
            for (int i = 0; i < K; ++i)
              if (!on_gpu_.count({t.value(), i}))
                f.copy_to[i] = adjusted_->TensorTransferTime(t, gpus_[home], gpus_[i]);
          }
          if (independent) {
            f.ready = 0.0;
            std::fill(f.copy_to.begin(), f.copy_to.end(), 0.0);
          }
          p.externals.push_back(std::move(f));
          externals.push_back({t, prod});
        }
        auto& readers = p.externals[it->second].readers;
        if (std::find(readers.begin(), readers.end(), u) == readers.end()) readers.push_back(u);
      }
    }
    p.units.push_back(std::move(unit));
  }
  p.edges.assign(edges.begin(), edges.end());
  if (no_topology) {
    for (sh::Unit& u : p.units) {
      u.time = Average(u.time);
      u.time_dha = Average(u.time_dha);
      u.copy = AveragePairs(u.copy);
    }
    for (sh::Weight& w : p.weights) {
      w.load = Average(w.load);
      w.copy = AveragePairs(w.copy);
    }
    for (sh::External& f : p.externals) {
      double avg = 0;
      int cnt = 0;
      for (double c : f.copy_to)
        if (c > 0) avg += c, ++cnt;
      for (double& c : f.copy_to)
        if (c > 0) c = avg / cnt;
    }
  }
  return p;
}

std::vector<std::pair<std::string, sh::Assignment>> SortingHatContext::WarmStarts(
    const sh::Problem& p, const SubmodelUnits& su, const std::vector<NodeId>& weights) const {
  const int K = topo_.k, Q = topo_.q;
  const int U = static_cast<int>(p.units.size());
  const int W = static_cast<int>(p.weights.size());
  std::vector<std::pair<std::string, sh::Assignment>> out;
  for (int g = 0; g < K; ++g) {
    const std::string gname = cluster_.device(gpus_[g]).name;
    sh::Assignment a;
    a.unit_slot.assign(U, g * Q + 1);
    a.weight_slot.assign(W, g * Q + 1);
    out.push_back({"one GPU (" + gname + ")", a});
    // Parallel transmission: each weight through whichever GPU makes it available on g first.
    std::vector<double> bus_free(topo_.buses.size(), 0.0);
    for (size_t b = 0; b < bus_free.size(); ++b)
      bus_free[b] = p.per_gpu_chains ? 0.0 : p.carried.prev_dt_fin[b];
    for (int w = 0; w < W; ++w) {
      int best = g;
      double best_at = kPlannerInf;
      for (int h = 0; h < K; ++h) {
        const double at = bus_free[topo_.bus_of[h]] + p.weights[w].load[h] +
                          (h == g ? 0.0 : p.weights[w].copy[h][g]);
        if (at < best_at) best_at = at, best = h;
      }
      bus_free[topo_.bus_of[best]] += p.weights[w].load[best];
      a.weight_slot[w] = best * Q + 1;
    }
    out.push_back({"one GPU with parallel transmission (" + gname + ")", a});
  }
  // The registered planners' plans restricted to the submodel: runs of units on one GPU become
  // subgraphs in the slots without DHA.
  for (size_t k = 0; k < warm_plans_.size(); ++k) {
    const auto& gpu_of = warm_gpu_of_[k];
    sh::Assignment a;
    a.unit_slot.assign(U, -1);
    std::vector<int> runs(K, 0);
    int last = -1;
    bool ok = true;
    for (int u = 0; u < U && ok; ++u) {
      const int gpu = gpu_of[su.units[u].front().index()];
      if (gpu < 0) {
        ok = false;
        break;
      }
      if (gpu != last) ++runs[gpu];
      last = gpu;
      const int pos = 2 * runs[gpu] - 1;
      if (pos >= Q) ok = false;
      a.unit_slot[u] = gpu * Q + pos;
    }
    if (!ok) continue;
    a.weight_slot.assign(W, -1);
    for (int w = 0; w < W; ++w) {
      const int reader_slot = a.unit_slot[p.weights[w].readers.front()];
      int slot = reader_slot;
      const DeviceId dev = gpus_[topo_.gpu_of(reader_slot)];
      for (const plan::WeightPlacement& wp : warm_plans_[k].second.weights)
        if (wp.weight == weights[w] && wp.device == dev && wp.mode == plan::WeightMode::kRelay &&
            GpuIndex(wp.relay) >= 0)
          slot = GpuIndex(wp.relay) * Q + 1;
      a.weight_slot[w] = slot;
    }
    out.push_back({warm_plans_[k].first, a});
  }
  return out;
}

void SortingHatContext::Commit(const sh::Problem& p, const SubmodelUnits& su,
                               const std::vector<NodeId>& weights,
                               const std::vector<std::pair<TensorId, NodeId>>& externals,
                               const sh::Solution& solution, int index) {
  const int K = topo_.k, Q = topo_.q, S = topo_.num_slots();
  const sh::Assignment& a = solution.assignment;
  const sh::Timing& t = solution.timing;
  const int U = static_cast<int>(su.units.size());
  // Subgraphs: each non-empty slot, its ops in topological order.
  std::vector<std::vector<NodeId>> slot_ops(S);
  for (int u = 0; u < U; ++u)
    for (NodeId op : su.units[u]) slot_ops[a.unit_slot[u]].push_back(op);
  plan::Submodel sm;
  sm.name = "submodel" + std::to_string(index);
  for (int s = 0; s < S; ++s) {
    auto& ops = slot_ops[s];
    if (ops.empty()) continue;
    std::sort(ops.begin(), ops.end(),
              [&](NodeId x, NodeId y) { return pos_[x.index()] < pos_[y.index()]; });
    slots_ops_[topo_.gpu_of(s)].push_back(ops);
    for (NodeId op : ops) {
      op_gpu_[op.index()] = topo_.gpu_of(s);
      op_fin_[op.index()] = t.sg_fin[s];
      sm.ops.push_back(op);
    }
  }
  std::sort(sm.ops.begin(), sm.ops.end(),
            [&](NodeId x, NodeId y) { return pos_[x.index()] < pos_[y.index()]; });
  plan_.submodels.push_back(std::move(sm));

  auto place = [&](NodeId w, int gpu, plan::WeightMode mode, int relay) {
    const DeviceId d = gpus_[gpu];
    if (placement_.count({w.value(), d.value()})) return;
    plan::WeightPlacement wp;
    wp.weight = w;
    wp.device = d;
    wp.mode = mode;
    if (mode == plan::WeightMode::kRelay) wp.relay = gpus_[relay];
    placement_[{w.value(), d.value()}] = plan_.weights.size();
    plan_.weights.push_back(wp);
    if (mode != plan::WeightMode::kDha) {
      on_gpu_.insert({g_.node(w).outputs[0].value(), gpu});
      carried_.prev_memory[gpu] += static_cast<double>(g_.tensor(g_.node(w).outputs[0]).Bytes());
    }
  };
  auto reader_gpus = [&](NodeId w) {
    std::set<int> out;
    for (NodeId c : g_.successors(w))
      if (g_.node(c).is_op() && partition_.submodel_of[c.index()] == index)
        out.insert(op_gpu_[c.index()]);
    return out;
  };
  // Weights decided here: DHA, loaded on their slot's GPU, relayed to the other readers; loads on
  // the chain queues in chain order, within a slot by first reader.
  const size_t W = weights.size();
  std::vector<std::vector<int>> in_slot(S);
  for (size_t w = 0; w < W; ++w) {
    const NodeId node = weights[w];
    const int s = a.weight_slot[w];
    if (s < 0) {
      weight_home_[node.index()] = -1;
      for (int gpu : reader_gpus(node)) place(node, gpu, plan::WeightMode::kDha, -1);
      continue;
    }
    const int home = topo_.gpu_of(s);
    weight_home_[node.index()] = home;
    weight_ready_[node.index()] = t.dt_fin[s];
    in_slot[s].push_back(static_cast<int>(w));
    const std::set<int> readers = reader_gpus(node);
    if (readers.count(home)) place(node, home, plan::WeightMode::kLoad, -1);
    for (int gpu : readers)
      if (gpu != home) place(node, gpu, plan::WeightMode::kRelay, home);
    if (!readers.count(home)) {  // loaded only to be forwarded: the relay copy takes memory
      carried_.prev_memory[home] +=
          static_cast<double>(g_.tensor(g_.node(node).outputs[0]).Bytes());
      on_gpu_.insert({g_.node(node).outputs[0].value(), home});
    }
  }
  auto first_reader = [&](NodeId w) {
    int64_t best = std::numeric_limits<int64_t>::max();
    for (NodeId c : g_.successors(w))
      if (g_.node(c).is_op() && partition_.submodel_of[c.index()] == index)
        best = std::min(best, pos_[c.index()]);
    return best;
  };
  const bool per_gpu = p.per_gpu_chains;
  const size_t chains = per_gpu ? static_cast<size_t>(K) : topo_.buses.size();
  for (size_t c = 0; c < chains; ++c) {
    std::vector<int> chain;
    if (per_gpu) {
      for (int pos = 0; pos < Q; ++pos) chain.push_back(static_cast<int>(c) * Q + pos);
    } else {
      chain = topo_.BusChain(static_cast<int>(c));
    }
    for (int s : chain) {
      std::vector<int> ws = in_slot[s];
      std::sort(ws.begin(), ws.end(),
                [&](int x, int y) { return first_reader(weights[x]) < first_reader(weights[y]); });
      for (int w : ws) {
        const DeviceId d = gpus_[topo_.gpu_of(s)];
        plan::Transfer tr;
        tr.kind = plan::TransferKind::kWeightLoad;
        tr.tensor = g_.node(weights[w]).outputs[0];
        tr.src = cluster_.HostOf(d);
        tr.dst = cluster_.PlaceOf(d);
        tr.route = cluster_.GetRoute(tr.src, tr.dst).hops;
        plan_.AddTransfer(std::move(tr), chain_queue_[c]);
      }
    }
    carried_.prev_dt_fin[c] = t.dt_fin[chain.back()];
  }
  // Weights of earlier submodels read here: where they are, or forwarded from their GPU.
  for (const auto& [tensor, prod] : externals) {
    const bool is_weight = g_.node(prod).kind == graph::NodeKind::kWeight;
    for (NodeId c : g_.tensor(tensor).consumers) {
      if (!g_.node(c).is_op() || partition_.submodel_of[c.index()] != index) continue;
      const int gpu = op_gpu_[c.index()];
      on_gpu_.insert({tensor.value(), gpu});
      if (!is_weight) continue;
      const int home = weight_home_[prod.index()];
      if (home == -1)
        place(prod, gpu, plan::WeightMode::kDha, -1);
      else if (home == gpu)
        place(prod, gpu, plan::WeightMode::kLoad, -1);
      else
        place(prod, gpu, plan::WeightMode::kRelay, home);
    }
  }
  for (int g = 0; g < K; ++g) carried_.prev_sg_fin[g] = t.sg_fin[g * Q + Q - 1];
  if (ablation_ == SortingHatAblation::kIndependent)
    estimate_ += t.total;
  else
    estimate_ = t.total;
}

Status SortingHatContext::SolveSubmodel(size_t i, double deadline) {
  const size_t num_sub = partition_.submodels.size();
  const int index = static_cast<int>(i);
  SubmodelUnits su = BuildUnits(partition_.submodels[i]);
  std::vector<NodeId> weights;
  std::vector<std::pair<TensorId, NodeId>> externals;
  sh::Problem p = BuildProblem(index, su, weights, externals);
  SortingHatSubmodelStats st;
  st.units = static_cast<int>(p.units.size());
  st.weights = static_cast<int>(p.weights.size());
  // The best warm start by the MILP's own estimate.
  std::string warm_name;
  sh::Assignment warm;
  double warm_total = kPlannerInf;
  std::string why;
  for (auto& [name, a] : WarmStarts(p, su, weights)) {
    sh::Timing tm = sh::Evaluate(p, a);
    if (!tm.valid) {
      if (why.empty()) why = name + ": " + tm.why;
      continue;
    }
    if (tm.total < warm_total) warm_total = tm.total, warm = a, warm_name = name;
  }
  if (!std::isfinite(warm_total))
    return ResourceExhausted("sortinghat: submodel " + std::to_string(i) + " of '" + g_.name() +
                             "' has no feasible schedule on '" + cluster_.name() +
                             "' (first problem: " + why + ")");
  st.warm_start = warm_name;
  st.warm_objective_s = warm_total;
  sh::SolveOptions so;
  so.relative_gap = milp_.relative_gap;
  so.threads = milp_.threads;
  so.seed = milp_.seed;
  HX_ASSIGN_OR_RETURN(so.files, milp_.ForPart(index, static_cast<int>(num_sub), "sortinghat"));
  const bool files = so.files.WantsFiles();
  // A MILP too large to build quickly keeps its warm start.
  const double size = static_cast<double>(p.units.size() + p.weights.size()) * topo_.num_slots() *
                      (topo_.k + 4.0) *
                      (1.0 + static_cast<double>(p.units.size() + p.weights.size()));
  const double left = deadline - clock_.ElapsedSeconds();
  const double limit = settings_.submodel_time_limit_s;
  so.time_limit_s = limit > 0 ? std::min(limit, left) : left / static_cast<double>(num_sub - i);
  sh::Solution sol;
  if (!files && (so.time_limit_s < kMinSubmodelSeconds || StopRequested())) {
    sol.assignment = warm;
    sol.timing = sh::Evaluate(p, warm);
    sol.status = PlanStatus::kWarmStart;
    sol.bound = 0.0;
    ++out_of_time_;
  } else if (!files && size > 2e6) {
    sol.assignment = warm;
    sol.timing = sh::Evaluate(p, warm);
    sol.status = PlanStatus::kWarmStart;
    LogTo(request_.logger, LogLevel::kInfo,
          "sortinghat: submodel " + std::to_string(i) + " has " + std::to_string(st.units) +
              " units; too large for the MILP, kept its warm start");
  } else {
    so.time_limit_s = std::max(so.time_limit_s, kMinSubmodelSeconds);
    HX_ASSIGN_OR_RETURN(sol, sh::Solve(p, warm, so, request_.logger));
  }
  if (sol.status != PlanStatus::kOptimal) all_optimal_ = false;
  last_bound_ = sol.bound;
  st.variables = sol.variables;
  st.constraints = sol.constraints;
  st.status = sol.status;
  st.objective_s = sol.timing.total;
  st.bound_s = sol.bound;
  st.solve_time_s = sol.solve_time_s;
  stats_.push_back(st);
  Commit(p, su, weights, externals, sol, index);
  return Status::Ok();
}

ExactAnswer SortingHatContext::Answer(double per_submodel) {
  const size_t num_sub = partition_.submodels.size();
  ExactAnswer answer;
  // Each submodel's optimum given the earlier ones is not the model's optimum: never "optimal".
  answer.status = all_optimal_ ? PlanStatus::kFeasible : PlanStatus::kTimeLimit;
  answer.model_objective_s = estimate_;
  if (num_sub == 1) {
    answer.bound_s = last_bound_;
    answer.gap = estimate_ > 0 ? (estimate_ - last_bound_) / estimate_ : 0.0;
  }
  double units = 0, params = 0, solved = 0;
  for (const SortingHatSubmodelStats& st : stats_) {
    units += st.units;
    params += st.weights;
    solved += st.status == PlanStatus::kOptimal;
  }
  char text[256];
  std::snprintf(text, sizeof text,
                "%zu submodels (ndom %d, q %d, %.3g s MILP limit each; %.1f units and %.1f "
                "parameters on average, %d solved to optimality); MILP estimate %.3f ms",
                num_sub, settings_.dominators_per_submodel, topo_.q, per_submodel,
                units / static_cast<double>(std::max<size_t>(num_sub, 1)),
                params / static_cast<double>(std::max<size_t>(num_sub, 1)),
                static_cast<int>(solved), estimate_ * 1e3);
  answer.detail = text;
  if (out_of_time_ > 0) {
    answer.status = PlanStatus::kTimeLimit;
    answer.detail += "; the time limit was spent before " + std::to_string(out_of_time_) + " of " +
                     std::to_string(num_sub) + " submodels, which kept their warm start";
  }
  return answer;
}

StatusOr<ExactAnswer> SortingHatContext::Run() {
  HX_RETURN_IF_ERROR(Setup());
  const size_t num_sub = partition_.submodels.size();
  // The submodels' MILPs end by `deadline`; what is after it is for merging, checking and
  // simulating the plans. Without --submodel-time-limit each submodel gets an even share of what
  // is left when it starts (so time a submodel does not use goes to the later ones).
  const double limit = request_.options.time_limit_s;
  const double deadline = limit - std::min(0.5, 0.05 * limit);
  const double planned_share = std::max(0.0, (deadline - clock_.ElapsedSeconds()) /
                                                 static_cast<double>(std::max<size_t>(num_sub, 1)));
  const double per_submodel =
      settings_.submodel_time_limit_s > 0 ? settings_.submodel_time_limit_s : planned_share;
  for (size_t i = 0; i < num_sub; ++i) HX_RETURN_IF_ERROR(SolveSubmodel(i, deadline));
  // The merged plan.
  for (int gi = 0; gi < topo_.k; ++gi) {
    if (slots_ops_[gi].empty()) continue;
    plan::DeviceSchedule ds;
    ds.device = gpus_[gi];
    for (auto& ops : slots_ops_[gi]) ds.subgraphs.push_back(plan::Subgraph{std::move(ops)});
    plan_.devices.push_back(std::move(ds));
  }
  HX_RETURN_IF_ERROR(plan::CompleteTransfers(plan_, g_, cluster_));
  plan_.estimate_ms = estimate_ * 1e3;
  ExactAnswer answer = Answer(per_submodel);
  SortingHatReport report;
  report.out_of_time = out_of_time_;
  report.milp_estimate_s = estimate_;
  const Status valid = plan::CheckPlan(plan_, *request_.cost, "sortinghat");
  if (valid.ok()) {
    auto sim = sim::Simulate(plan_, *request_.cost);
    if (sim.ok()) report.merged_sim_s = sim->makespan_s;
  } else {
    LogTo(request_.logger, LogLevel::kWarning,
          "sortinghat: the merged plan is not valid, returning the best warm start: " +
              valid.message());
  }
  answer.plan = std::move(plan_);
  answer.from_solution_file = !milp_.solution_path.empty();
  // Never worse than the warm starts it was seeded with (the full algorithm only: the ablations
  // return their own plan so that their effect shows).
  if (ablation_ == SortingHatAblation::kNone || report.merged_sim_s == 0.0)
    for (auto& [name, wp] : warm_plans_) answer.warm_plans.push_back({name, wp, std::nullopt});
  else
    answer.keep_own_plan = true;
  report.submodels = std::move(stats_);
  if (report_ != nullptr) *report_ = std::move(report);
  return answer;
}

const char* const kAblations[] = {"no-contention", "no-topology", "independent"};

class SortingHatPlanner final : public ExactPlanner {
 public:
  explicit SortingHatPlanner(SortingHatReport* report = nullptr) : report_(report) {}
  std::string Name() const override { return "sortinghat"; }
  std::string Description() const override {
    return "SortingHat (ICS'25): dominator submodels, topology-aware MILP per submodel with DHA "
           "and parallel transmission, per-bus parameter queues";
  }

 protected:
  std::vector<OptionSpec> ModelOptions() const override {
    return {
        IntOption("q", "subgraph slots per GPU (at least 2: one with DHA, one without)", 6, 2, 64),
        IntOption("ndom", "dominators per submodel", 1, 1, 1000000),
        DoubleOption("submodel-time-limit",
                     "MILP limit per submodel in seconds (0: split --time-limit)", 0.0, 0.0),
        StringOption("ablation", "take one idea out (§5.4)", "",
                     {kAblations[0], kAblations[1], kAblations[2]}),
    };
  }

  StatusOr<ExactAnswer> SolveModel(const PlanRequest& request, const OptionSet& options,
                                   const MilpSettings& milp) override {
    SortingHatSettings settings;
    settings.subgraphs_per_gpu = static_cast<int>(options.Int("q"));
    settings.dominators_per_submodel = static_cast<int>(options.Int("ndom"));
    settings.submodel_time_limit_s = options.Double("submodel-time-limit");
    for (int a = 0; a < 3; ++a)
      if (options.String("ablation") == kAblations[a])
        settings.ablation = static_cast<SortingHatAblation>(a + 1);
    if (report_ != nullptr) *report_ = SortingHatReport();
    SortingHatContext context(request, settings, milp, report_);
    return context.Run();
  }

  void OnAnswer(const ExactAnswer& answer) override {
    if (report_ == nullptr) return;
    report_->kept_milp = answer.kept_warm_start.empty();
    report_->kept_warm_start = answer.kept_warm_start;
  }

 private:
  SortingHatReport* report_;
};

}  // namespace

const char* SortingHatAblationName(SortingHatAblation ablation) {
  return ablation == SortingHatAblation::kNone ? "" : kAblations[static_cast<int>(ablation) - 1];
}

StatusOr<PlanResult> PlanSortingHat(const PlanRequest& request, SortingHatReport* report) {
  HX_RETURN_IF_ERROR(request.options.Validate());
  SortingHatPlanner planner(report);
  return planner.Plan(request);
}

std::unique_ptr<Planner> MakeSortingHatPlanner() { return std::make_unique<SortingHatPlanner>(); }

}  // namespace hx::place
