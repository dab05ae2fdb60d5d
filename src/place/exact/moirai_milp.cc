#include "hexplan/place/exact/moirai_milp.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>

#include "hexplan/core/interrupt.h"
#include "hexplan/core/stopwatch.h"
#include "hexplan/place/exact/exact_planner.h"
#include "hexplan/place/exact/getf.h"
#include "hexplan/place/exact/task_coarsening.h"
#include "hexplan/place/warm_start.h"

namespace hx::place {
namespace {

using milp::LinExpr;
using milp::Var;

// reach[i][j]: j is reachable from i (bitset rows).
std::vector<std::vector<uint64_t>> Reachability(const SchedulingProblem& p) {
  const int n = p.num_tasks();
  const size_t words = (n + 63) / 64;
  std::vector<std::vector<uint64_t>> reach(n, std::vector<uint64_t>(words, 0));
  auto order = p.TopologicalOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    int i = *it;
    for (int e : p.out_edges(i)) {
      int j = p.edges()[e].dst;
      reach[i][j / 64] |= uint64_t{1} << (j % 64);
      for (size_t w = 0; w < words; ++w) reach[i][w] |= reach[j][w];
    }
  }
  return reach;
}

// A MILP is only started (and a model only built further) with at least this long left.
constexpr double kMinSolveSeconds = 0.02;

bool Reaches(const std::vector<std::vector<uint64_t>>& reach, int i, int j) {
  return (reach[i][j / 64] >> (j % 64)) & 1;
}

// The warm schedule's placement and per-device order timed under the MILP's own rules: every
// cross-device flow waits for its producer and, with congestion control (8), for the source's
// outgoing and the destination's incoming channel (each carries one flow at a time); every task
// for its device and its inputs. Loads are not part of the MILP. Feasible in the model by
// construction, so it is a MIP start CBC keeps.
struct ModelTiming {
  std::vector<double> S, C, Sq, Cq;
  double makespan = 0.0;
};

ModelTiming TimeInModel(const SchedulingProblem& p, const Schedule& warm, bool congestion) {
  const int n = p.num_tasks(), D = p.num_devices();
  const int E = static_cast<int>(p.edges().size());
  ModelTiming t;
  t.S.assign(n, 0.0);
  t.C.assign(n, 0.0);
  t.Sq.assign(E, 0.0);
  t.Cq.assign(E, 0.0);
  std::vector<int> topo = p.TopologicalOrder(), pos(n), order(n);
  for (int i = 0; i < n; ++i) pos[topo[i]] = i;
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (warm.start[a] != warm.start[b]) return warm.start[a] < warm.start[b];
    if (warm.finish[a] != warm.finish[b]) return warm.finish[a] < warm.finish[b];
    return pos[a] < pos[b];
  });
  std::vector<double> device_free(D, 0.0), out_free(D, 0.0), in_free(D, 0.0), loaded(D, 0.0);
  for (int j : order) {
    const int d = warm.device[j];
    double ready = device_free[d];
    for (int e : p.in_edges(j)) {
      const int i = p.edges()[e].src, a = warm.device[i];
      double begin = t.C[i];
      if (a != d && congestion) begin = std::max({begin, out_free[a], in_free[d]});
      t.Sq[e] = begin;
      t.Cq[e] = begin + p.CommTime(e, a, d);
      if (a != d && congestion) out_free[a] = in_free[d] = t.Cq[e];
      ready = std::max(ready, t.Cq[e]);
    }
    t.S[j] = std::max(ready, p.load_time(j, d));  // its own weights loaded (the load cuts)
    t.C[j] = t.S[j] + p.cost(j, d);
    device_free[d] = t.C[j];
    loaded[d] += p.load_time(j, d);
    t.makespan = std::max({t.makespan, t.C[j], loaded[d]});
  }
  return t;
}

}  // namespace

double ModelMakespan(const SchedulingProblem& p, const Schedule& schedule,
                     bool congestion_control) {
  return TimeInModel(p, schedule, congestion_control).makespan;
}

Status MoiraiOptions::Validate() const {
  if (!(time_limit_s > 0)) return InvalidArgument("moirai: --time-limit must be positive");
  if (!(relative_gap >= 0)) return InvalidArgument("moirai: gap must be >= 0");
  if (threads < 1) return InvalidArgument("moirai: threads must be >= 1");
  return Status::Ok();
}

Schedule TightenSchedule(const SchedulingProblem& p, const std::vector<int>& device,
                         const std::vector<double>& order_key) {
  const int n = p.num_tasks(), D = p.num_devices();
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  // Global order: by key, then topological position, so that every task comes after its inputs.
  auto topo = p.TopologicalOrder();
  std::vector<int> pos(n);
  for (int i = 0; i < n; ++i) pos[topo[i]] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (order_key[a] != order_key[b]) return order_key[a] < order_key[b];
    return pos[a] < pos[b];
  });
  // Per device queues in that order; run by repeatedly starting whichever queue head is ready.
  std::vector<std::vector<int>> queue(D);
  for (int t : order) queue[device[t]].push_back(t);
  Schedule s;
  s.device = device;
  s.start.assign(n, 0.0);
  s.finish.assign(n, 0.0);
  std::vector<size_t> head(D, 0);
  std::vector<double> free_at(D, 0.0), load_free(D, 0.0);
  std::vector<bool> done(n, false);
  int remaining = n;
  while (remaining > 0) {
    bool progressed = false;
    for (int d = 0; d < D; ++d) {
      while (head[d] < queue[d].size()) {
        int t = queue[d][head[d]];
        double ready = free_at[d];
        bool inputs_done = true;
        for (int e : p.in_edges(t)) {
          int src = p.edges()[e].src;
          if (!done[src]) {
            inputs_done = false;
            break;
          }
          ready = std::max(ready, s.finish[src] + p.CommTime(e, device[src], d));
        }
        if (!inputs_done) break;
        load_free[d] += p.load_time(t, d);
        ready = std::max(ready, load_free[d]);
        s.start[t] = ready;
        s.finish[t] = ready + p.cost(t, d);
        free_at[d] = s.finish[t];
        done[t] = true;
        --remaining;
        ++head[d];
        progressed = true;
      }
    }
    if (!progressed) break;  // the orders deadlock: cannot happen for orders consistent with a DAG
  }
  s.makespan = 0.0;
  for (int t = 0; t < n; ++t) s.makespan = std::max(s.makespan, s.finish[t]);
  return s;
}

StatusOr<Schedule> MemoryFeasibleSchedule(const SchedulingProblem& p, double time_limit_s) {
  HX_RETURN_IF_ERROR(p.Validate());
  const int n = p.num_tasks(), D = p.num_devices();
  milp::Model m("memory packing");
  std::vector<std::vector<Var>> x(n, std::vector<Var>(D));
  double total = 0.0;
  for (int i = 0; i < n; ++i) total += p.MeanCost(i);
  Var load = m.AddContinuous(0, milp::kInfinity, "max_load");
  for (int i = 0; i < n; ++i) {
    LinExpr assign;
    for (int k = 0; k < D; ++k) {
      x[i][k] = m.AddBinary("x_" + std::to_string(i) + "_" + std::to_string(k));
      if (std::isinf(p.cost(i, k))) m.SetBounds(x[i][k], 0, 0);
      assign += LinExpr(x[i][k]);
    }
    m.AddEqual(assign, 1, "assign_" + std::to_string(i), "assignment");
  }
  for (int k = 0; k < D; ++k) {
    LinExpr used, busy;
    for (int i = 0; i < n; ++i) {
      if (p.task_memory(i) > 0) used.Add(x[i][k], p.task_memory(i));
      if (!std::isinf(p.cost(i, k))) busy.Add(x[i][k], p.cost(i, k));
    }
    if (!std::isinf(p.device_memory(k)))
      m.AddLessEqual(used, p.device_memory(k), "mem_" + std::to_string(k), "memory");
    m.AddLessEqual(busy, LinExpr(load), "load_" + std::to_string(k), "load");
  }
  m.Minimize(LinExpr(load));
  milp::SolveOptions options;
  options.time_limit_s = time_limit_s;
  options.relative_gap = 0.05;
  HX_ASSIGN_OR_RETURN(milp::SolveResult r, milp::SolveWithCbc(m, options));
  if (!r.has_solution()) {
    return ResourceExhausted("no assignment of the operators fits the devices' memory " +
                             std::string(r.status == milp::SolveStatus::kInfeasible
                                             ? "(the memory constraints are infeasible)"
                                             : "(none found within the time limit)"));
  }
  std::vector<int> device(n, 0);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < D; ++k)
      if (r.values[x[i][k].index()] > 0.5) device[i] = k;
  // Order by upward rank (critical tasks first), which is topological for positive costs.
  std::vector<double> key(n, 0.0);
  std::vector<int> order = p.TopologicalOrder();
  for (size_t i = 0; i < order.size(); ++i) key[order[i]] = static_cast<double>(i);
  return TightenSchedule(p, device, key);
}

namespace {

// ScheduleMoirai's steps over one problem: the horizon from the warm start, the size check, the
// model (assignment and durations, memory, data flows, non-overlap, congestion), its MIP start,
// and the schedule read back from the solver or from an external solution.
class MoiraiMilp {
 public:
  MoiraiMilp(const SchedulingProblem& p, const MoiraiOptions& options, Logger* logger)
      : p_(p),
        options_(options),
        logger_(logger),
        n_(p.num_tasks()),
        D_(p.num_devices()),
        E_(static_cast<int>(p.edges().size())) {}

  StatusOr<MoiraiResult> Run(const Schedule* warm_start);

 private:
  double SecondsLeft() const { return options_.time_limit_s - clock_.ElapsedSeconds(); }
  bool WantsFiles() const {
    return !options_.export_lp.empty() || !options_.export_mps.empty() ||
           !options_.solution_path.empty();
  }
  void SetHorizon();
  size_t EstimateConstraints() const;
  MoiraiResult BoundOnly();
  void AddTasks();
  void AddLoadCuts();
  void AddFlows();
  // Non-overlap (6) and congestion (8); false when the time limit ended the building.
  bool AddNonOverlap();
  bool AddCongestion();
  std::vector<double> MipStart() const;
  StatusOr<MoiraiResult> FromSolution(const MilpRun& run);
  StatusOr<MoiraiResult> FromSolve(const milp::SolveResult& r);
  void GapToWarm() {
    result_.gap =
        result_.model_objective > 0
            ? std::max(0.0, (result_.model_objective - result_.bound) / result_.model_objective)
            : 0.0;
  }

  const SchedulingProblem& p_;
  const MoiraiOptions& options_;
  Logger* logger_;
  const int n_, D_, E_;
  Stopwatch clock_;  // the time limit covers the whole call: packing, building and solving
  std::optional<Schedule> packed_;
  const Schedule* warm_ = nullptr;
  std::optional<ModelTiming> timed_;
  double horizon_ = 0.0;
  std::vector<std::vector<uint64_t>> reach_;
  MoiraiResult result_;
  milp::Model m_{"moirai"};
  std::vector<std::vector<Var>> x_;
  std::vector<Var> S_, C_, Sq_, Cq_, z_;
  Var makespan_;
  std::vector<std::tuple<int, int, Var>> pairs_, flow_pairs_;
};

StatusOr<MoiraiResult> MoiraiMilp::Run(const Schedule* warm_start) {
  // Memory (5) that cannot hold: say so before building anything.
  HX_RETURN_IF_ERROR(CheckMemoryCapacity(p_, "moirai", "memory constraints (5)"));
  // Without a warm start from the caller, a memory-feasible packing gives one (and a tight
  // horizon).
  warm_ = warm_start;
  if (warm_ == nullptr) {
    auto s = MemoryFeasibleSchedule(p_, std::max(0.05, options_.time_limit_s / 10));
    if (s.ok() && s->Check(p_, 1e-6).empty()) {
      packed_ = std::move(*s);
      warm_ = &*packed_;
    }
  }
  SetHorizon();
  result_.status = PlanStatus::kWarmStart;
  // Until the solver says more (a MILP cut short before CBC's first node, or never solved): the
  // combinatorial bound, and the warm start's gap to it.
  result_.has_bound = true;
  result_.bound = MakespanLowerBound(p_);
  if (warm_ != nullptr) {
    result_.bound = std::min(result_.bound, result_.model_objective);
    GapToWarm();
  }
  reach_ = Reachability(p_);
  const size_t estimate = EstimateConstraints();
  const bool too_large = estimate > options_.max_constraints;
  result_.estimated_constraints = estimate;
  if (too_large && !WantsFiles()) {
    if (warm_ == nullptr)
      return ResourceExhausted("moirai: the MILP would have about " + std::to_string(estimate) +
                               " constraints (limit " + std::to_string(options_.max_constraints) +
                               ") and no fast planner found a warm start; coarsen the graph");
    return BoundOnly();
  }
  AddTasks();
  AddFlows();
  if (!AddNonOverlap() || !AddCongestion()) {
    LogTo(logger_, LogLevel::kWarning,
          "moirai: the time limit ended while the MILP was being built (" +
              std::to_string(m_.num_constraints()) + " of about " + std::to_string(estimate) +
              " constraints); returning the warm start");
    result_.solve_time_s = clock_.ElapsedSeconds();
    return result_;
  }
  m_.Minimize(LinExpr(makespan_));
  result_.num_binaries = m_.num_integer_vars();
  result_.num_constraints = m_.num_constraints();
  MilpSettings settings = MilpSettingsOf(options_, 0.0);  // the time is set when solving
  if (options_.solution_path.empty() &&
      (too_large || (warm_ != nullptr && SecondsLeft() < kMinSolveSeconds))) {
    // Written for an external solver (or out of time): export only, keep the warm start.
    HX_RETURN_IF_ERROR(ExportMilp(m_, settings));
    LogTo(logger_, too_large ? LogLevel::kWarning : LogLevel::kInfo,
          too_large ? "moirai: the model was written; it is above " +
                          std::to_string(options_.max_constraints) +
                          " constraints, so the warm start is returned without solving"
                    : "moirai: the time limit was spent building the MILP; returning the warm "
                      "start");
    result_.solve_time_s = clock_.ElapsedSeconds();
    return result_;
  }
  std::vector<double> start = MipStart();
  settings.time_limit_s = std::max(kMinSolveSeconds, SecondsLeft());
  settings.progress_to_stderr = options_.progress_to_stderr;
  HX_ASSIGN_OR_RETURN(MilpRun run, RunMilp(m_, std::move(start), settings, "moirai", logger_));
  if (run.kind == MilpRunKind::kFromSolution) {
    result_.has_bound = false;  // a solution file proves nothing
    result_.gap = 0.0;
    return FromSolution(run);
  }
  return FromSolve(run.result);
}

void MoiraiMilp::SetHorizon() {
  if (warm_ != nullptr) {
    timed_ = TimeInModel(p_, *warm_, options_.congestion_control);
    result_.schedule = *warm_;
    result_.model_objective = timed_->makespan;  // the MILP's makespan for the warm placement
    // Large enough for the warm start, timed in the model, to be feasible.
    horizon_ = std::max(warm_->makespan, timed_->makespan) * (1 + 1e-9) + 1e-9;
    return;
  }
  // Serial bound: some task or transfer is in progress at every moment of a semi-active schedule.
  for (int i = 0; i < n_; ++i) {
    double worst = 0.0;
    for (int k = 0; k < D_; ++k)
      if (!std::isinf(p_.cost(i, k))) worst = std::max(worst, p_.cost(i, k) + p_.load_time(i, k));
    horizon_ += worst;
  }
  for (int q = 0; q < E_; ++q) {
    double worst = 0.0;
    for (int a = 0; a < D_; ++a)
      for (int b = 0; b < D_; ++b) worst = std::max(worst, p_.CommTime(q, a, b));
    horizon_ += worst;
  }
  horizon_ = horizon_ * (1 + 1e-9) + 1e-9;
}

// Counted per constraint class (task_coarsening.h), stopping once above the limit.
size_t MoiraiMilp::EstimateConstraints() const {
  return EstimateMoiraiConstraints(p_, options_.congestion_control, options_.max_constraints);
}

// A model too large to build: the warm start, with GETF's assignment bound (a relaxation).
MoiraiResult MoiraiMilp::BoundOnly() {
  LogTo(logger_, LogLevel::kWarning,
        "moirai: the MILP would have about " + std::to_string(result_.estimated_constraints) +
            " constraints (limit " + std::to_string(options_.max_constraints) +
            "); returning the warm start, with GETF's assignment bound (a relaxation of this "
            "model). Coarsen the graph first (--coarsen fusion) if it has fusable ops.");
  if (SecondsLeft() < kMinSolveSeconds) {  // no time left for GETF's bound: the combinatorial one
    result_.has_bound = true;
    result_.bound = std::min(MakespanLowerBound(p_), result_.model_objective);
    GapToWarm();
    result_.solve_time_s = clock_.ElapsedSeconds();
    return result_;
  }
  GetfOptions relax;
  relax.time_limit_s = SecondsLeft();
  relax.relative_gap = std::max(options_.relative_gap, 1e-4);
  relax.threads = options_.threads;
  relax.seed = options_.seed;
  if (auto bound = ScheduleGetf(p_, warm_, relax); bound.ok()) {
    result_.has_bound = true;
    result_.bound = std::min(bound->bound, result_.model_objective);
    GapToWarm();
  }
  result_.solve_time_s = clock_.ElapsedSeconds();
  return result_;
}

// Assignment (4c), durations (4b), the makespan, device-load cuts and memory (5).
void MoiraiMilp::AddTasks() {
  x_.assign(n_, std::vector<Var>(D_));
  S_.resize(n_);
  C_.resize(n_);
  // No schedule beats the combinatorial bound: as the makespan's lower bound it lifts the LP
  // relaxation's bound from the first node (a plan at the bound is then proven at once).
  makespan_ = m_.AddContinuous(std::min(MakespanLowerBound(p_), horizon_), horizon_, "makespan");
  for (int i = 0; i < n_; ++i) {
    S_[i] = m_.AddContinuous(0, horizon_, "S_" + std::to_string(i));
    C_[i] = m_.AddContinuous(0, horizon_, "C_" + std::to_string(i));
    LinExpr assign, duration;
    for (int k = 0; k < D_; ++k) {
      x_[i][k] = m_.AddBinary("x_" + std::to_string(i) + "_" + std::to_string(k));
      if (std::isinf(p_.cost(i, k))) m_.SetBounds(x_[i][k], 0, 0);
      assign += LinExpr(x_[i][k]);
      if (!std::isinf(p_.cost(i, k))) duration.Add(x_[i][k], p_.cost(i, k));
    }
    m_.AddEqual(assign, 1, "assign_" + std::to_string(i), "assignment");  // (4c)
    m_.AddEqual(LinExpr(C_[i]), LinExpr(S_[i]) + duration, "dur_" + std::to_string(i),
                "duration");  // (4b)
    m_.AddGreaterEqual(LinExpr(makespan_), LinExpr(C_[i]), "end_" + std::to_string(i), "makespan");
  }
  // Valid cuts the LP relaxation of (6) does not see: a device runs its operators one at a time, so
  // its total work bounds the makespan.
  for (int k = 0; k < D_; ++k) {
    LinExpr work;
    for (int i = 0; i < n_; ++i)
      if (!std::isinf(p_.cost(i, k))) work.Add(x_[i][k], p_.cost(i, k));
    m_.AddLessEqual(work, LinExpr(makespan_), "load_" + std::to_string(k), "device load");
  }
  AddLoadCuts();
  for (int k = 0; k < D_; ++k) {
    if (std::isinf(p_.device_memory(k))) continue;
    LinExpr used;
    for (int i = 0; i < n_; ++i)
      if (p_.task_memory(i) > 0) used.Add(x_[i][k], p_.task_memory(i));
    m_.AddLessEqual(used, p_.device_memory(k), "mem_" + std::to_string(k), "memory");
  }
}

// Cold-start loads, which the paper's model leaves out, as valid cuts: an operator starts after
// its own weights are on its device, and a device's copy engine loads all its operators' weights
// before the makespan. Problems without loads get none.
void MoiraiMilp::AddLoadCuts() {
  std::vector<LinExpr> loaded(D_);
  bool any = false;
  for (int i = 0; i < n_; ++i) {
    LinExpr own;
    for (int k = 0; k < D_; ++k) {
      const double load = p_.load_time(i, k);
      if (load <= 0 || std::isinf(p_.cost(i, k))) continue;
      own.Add(x_[i][k], load);
      loaded[k].Add(x_[i][k], load);
      any = true;
    }
    if (!own.terms().empty())
      m_.AddGreaterEqual(LinExpr(S_[i]), own, "own_load_" + std::to_string(i), "loads");
  }
  if (!any) return;
  for (int k = 0; k < D_; ++k)
    m_.AddLessEqual(loaded[k], LinExpr(makespan_), "loads_" + std::to_string(k), "loads");
}

// Data flows (4a, 7): a flow between two devices takes the channel's time, none on one device.
void MoiraiMilp::AddFlows() {
  Sq_.resize(E_);
  Cq_.resize(E_);
  z_.resize(E_);
  for (int q = 0; q < E_; ++q) {
    const auto& edge = p_.edges()[q];
    const int i = edge.src, j = edge.dst;
    const std::string id = std::to_string(q);
    Sq_[q] = m_.AddContinuous(0, horizon_, "Sq_" + id);
    Cq_[q] = m_.AddContinuous(0, horizon_, "Cq_" + id);
    z_[q] = m_.AddBinary("z_" + id);
    m_.AddLessEqual(LinExpr(C_[i]), LinExpr(Sq_[q]), "flow_after_" + id, "precedence");
    m_.AddLessEqual(LinExpr(Cq_[q]), LinExpr(S_[j]), "flow_before_" + id, "precedence");
    for (int k = 0; k < D_; ++k) {
      m_.AddLessEqual(LinExpr(z_[q]), 2 - LinExpr(x_[i][k]) - LinExpr(x_[j][k]),
                      "z1_" + id + "_" + std::to_string(k), "communication");
      m_.AddGreaterEqual(LinExpr(z_[q]), LinExpr(x_[i][k]) - LinExpr(x_[j][k]),
                         "z2_" + id + "_" + std::to_string(k), "communication");
      m_.AddGreaterEqual(LinExpr(z_[q]), LinExpr(x_[j][k]) - LinExpr(x_[i][k]),
                         "z3_" + id + "_" + std::to_string(k), "communication");
    }
    LinExpr transmission;
    for (int a = 0; a < D_; ++a) {
      for (int b = 0; b < D_; ++b) {
        if (a == b) continue;
        double t = p_.CommTime(q, a, b);
        if (t <= 0) continue;
        Var u =
            m_.AddContinuous(0, 1, "u_" + id + "_" + std::to_string(a) + "_" + std::to_string(b));
        m_.AddGreaterEqual(LinExpr(u), LinExpr(x_[i][a]) + LinExpr(x_[j][b]) - 1, "u_" + id,
                           "communication");
        transmission.Add(u, t);
      }
    }
    m_.AddEqual(LinExpr(Cq_[q]), LinExpr(Sq_[q]) + transmission, "flow_dur_" + id, "communication");
  }
}

// Non-overlap (6): unrelated operators on one device. Building a large model takes a while: with a
// warm start to fall back on, building stops when the time limit is spent.
bool MoiraiMilp::AddNonOverlap() {
  for (int i = 0; i < n_; ++i) {
    if (!WantsFiles() && warm_ != nullptr && (SecondsLeft() < kMinSolveSeconds || StopRequested()))
      return false;
    for (int j = i + 1; j < n_; ++j) {
      if (Reaches(reach_, i, j) || Reaches(reach_, j, i)) continue;
      Var delta = m_.AddBinary("d_" + std::to_string(i) + "_" + std::to_string(j));
      pairs_.emplace_back(i, j, delta);
      for (int k = 0; k < D_; ++k) {
        if (std::isinf(p_.cost(i, k)) || std::isinf(p_.cost(j, k))) continue;
        const std::string id =
            std::to_string(i) + "_" + std::to_string(j) + "_" + std::to_string(k);
        // delta = 1: i before j. Relaxed by the horizon when the pair is not both on k.
        LinExpr off = 2 - LinExpr(x_[i][k]) - LinExpr(x_[j][k]);
        m_.AddGreaterEqual(LinExpr(S_[j]),
                           LinExpr(C_[i]) - horizon_ * (1 - LinExpr(delta)) - horizon_ * off,
                           "ovl_a_" + id, "non-overlap");
        m_.AddGreaterEqual(LinExpr(S_[i]),
                           LinExpr(C_[j]) - horizon_ * LinExpr(delta) - horizon_ * off,
                           "ovl_b_" + id, "non-overlap");
      }
    }
  }
  return true;
}

// Congestion control (8): two flows out of (or into) one device never overlap.
bool MoiraiMilp::AddCongestion() {
  if (!options_.congestion_control) return true;
  for (int q = 0; q < E_; ++q) {
    if (!WantsFiles() && warm_ != nullptr && (SecondsLeft() < kMinSolveSeconds || StopRequested()))
      return false;
    for (int r = q + 1; r < E_; ++r) {
      const auto& eq = p_.edges()[q];
      const auto& er = p_.edges()[r];
      // Related flows (one's destination reaches the other's source) are ordered already.
      if (eq.dst == er.src || er.dst == eq.src) continue;
      if (Reaches(reach_, eq.dst, er.src) || Reaches(reach_, er.dst, eq.src)) continue;
      Var delta = m_.AddBinary("f_" + std::to_string(q) + "_" + std::to_string(r));
      flow_pairs_.emplace_back(q, r, delta);
      for (int k = 0; k < D_; ++k) {
        const std::string id =
            std::to_string(q) + "_" + std::to_string(r) + "_" + std::to_string(k);
        LinExpr both = 2 - LinExpr(z_[q]) - LinExpr(z_[r]);
        // Outgoing from k: x_a + x_c - x_b - x_d = 2. Incoming into k: x_b + x_d - x_a - x_c = 2.
        LinExpr out_k = LinExpr(x_[eq.src][k]) + LinExpr(x_[er.src][k]) - LinExpr(x_[eq.dst][k]) -
                        LinExpr(x_[er.dst][k]) - 2;
        LinExpr in_k = LinExpr(x_[eq.dst][k]) + LinExpr(x_[er.dst][k]) - LinExpr(x_[eq.src][k]) -
                       LinExpr(x_[er.src][k]) - 2;
        for (const auto& [side, dir] : {std::pair{out_k, "out"}, std::pair{in_k, "in"}}) {
          m_.AddGreaterEqual(
              LinExpr(Sq_[r]),
              LinExpr(Cq_[q]) - horizon_ * (1 - LinExpr(delta)) - horizon_ * both + horizon_ * side,
              std::string("cg_a_") + dir + id, "congestion");
          m_.AddGreaterEqual(
              LinExpr(Sq_[q]),
              LinExpr(Cq_[r]) - horizon_ * LinExpr(delta) - horizon_ * both + horizon_ * side,
              std::string("cg_b_") + dir + id, "congestion");
        }
      }
    }
  }
  return true;
}

// MIP start: the warm placement and order, timed in the model (TimeInModel); only for a caller's
// warm start. A MIP start turns CBC's preprocessing off (milp::Preprocess), which costs more than
// the memory packing's start is worth (example-1: 28 s with it, 18 s without); the packed start
// still sets the horizon and is kept when CBC finds nothing better.
std::vector<double> MoiraiMilp::MipStart() const {
  if (warm_ == nullptr || packed_) return {};
  const Schedule& warm = *warm_;
  std::vector<double> start(m_.num_vars(), 0.0);
  start[makespan_.index()] = timed_->makespan;
  for (int i = 0; i < n_; ++i) {
    start[S_[i].index()] = timed_->S[i];
    start[C_[i].index()] = timed_->C[i];
    start[x_[i][warm.device[i]].index()] = 1;
  }
  for (int q = 0; q < E_; ++q) {
    const auto& edge = p_.edges()[q];
    start[Sq_[q].index()] = timed_->Sq[q];
    start[Cq_[q].index()] = timed_->Cq[q];
    start[z_[q].index()] = warm.device[edge.src] != warm.device[edge.dst];
  }
  // u values: continuous and derived, filled by scanning the names.
  for (size_t v = 0; v < m_.num_vars(); ++v) {
    const std::string& name = m_.vars()[v].name;
    if (name.rfind("u_", 0) != 0) continue;
    int q, a, b;
    if (std::sscanf(name.c_str(), "u_%d_%d_%d", &q, &a, &b) == 3)
      start[v] =
          (warm.device[p_.edges()[q].src] == a && warm.device[p_.edges()[q].dst] == b) ? 1 : 0;
  }
  // Ordering binaries: "i before j" when i ends by the time j starts (zero-length intervals at one
  // instant make the start order ambiguous).
  for (const auto& [i, j, delta] : pairs_)
    start[delta.index()] = timed_->C[i] <= timed_->S[j] ? 1 : 0;
  for (const auto& [q, r, delta] : flow_pairs_)
    start[delta.index()] = timed_->Cq[q] <= timed_->Sq[r] ? 1 : 0;
  return start;
}

// An external solver's solution: the placement and per-device order, re-timed.
StatusOr<MoiraiResult> MoiraiMilp::FromSolution(const MilpRun& run) {
  const std::string& file = options_.solution_path;
  const std::vector<double>& values = run.result.values;
  std::vector<int> device(n_, -1);
  std::vector<double> key(n_, 0.0), used(D_, 0.0);
  for (int i = 0; i < n_; ++i) {
    int count = 0;
    for (int k = 0; k < D_; ++k)
      if (values[x_[i][k].index()] > 0.5) device[i] = k, ++count;
    if (count != 1)
      return InvalidArgument(file + ": operator '" + p_.name(i) + "' (x_" + std::to_string(i) +
                             "_*) is on " + std::to_string(count) +
                             " devices; the assignment constraint (4c) wants exactly one");
    if (std::isinf(p_.cost(i, device[i])))
      return InvalidArgument(file + ": operator '" + p_.name(i) + "' is on device " +
                             std::to_string(device[i]) + ", which cannot run it");
    used[device[i]] += p_.task_memory(i);
    key[i] = values[S_[i].index()];
  }
  for (int k = 0; k < D_; ++k)
    if (used[k] > p_.device_memory(k) * (1 + 1e-9))
      return ResourceExhausted(file + ": memory constraint (5) mem_" + std::to_string(k) +
                               " violated: the solution puts " + std::to_string(used[k]) +
                               " bytes on a device that holds " +
                               std::to_string(p_.device_memory(k)) + " (over by " +
                               std::to_string(used[k] - p_.device_memory(k)) + ")");
  result_.solution_violations = run.violations;
  result_.schedule = TightenSchedule(p_, device, key);
  if (std::string why = result_.schedule.Check(p_, 1e-9); !why.empty())
    return InvalidArgument(file +
                           ": the solution's placement and order give no valid schedule: " + why);
  result_.model_objective = run.violations == 0 ? run.result.objective : result_.schedule.makespan;
  result_.status = PlanStatus::kFeasible;
  result_.solve_time_s = clock_.ElapsedSeconds();
  return result_;
}

StatusOr<MoiraiResult> FailWithoutSolution(const milp::SolveResult& r) {
  if (r.status == milp::SolveStatus::kInfeasible)
    return ResourceExhausted(
        "moirai: the MILP is infeasible (memory constraints (5) cannot be met together with the "
        "device supports)");
  return ResourceExhausted("moirai: the time limit ended before any placement was found");
}

StatusOr<MoiraiResult> MoiraiMilp::FromSolve(const milp::SolveResult& r) {
  result_.solve_time_s = clock_.ElapsedSeconds();
  // CBC stopped before its first node has no bound: the combinatorial one stands in.
  result_.has_bound = true;
  result_.bound = std::max(MakespanLowerBound(p_), std::isfinite(r.bound) ? r.bound : 0.0);
  if (!r.has_solution()) {
    if (warm_ == nullptr) return FailWithoutSolution(r);
    result_.status = PlanStatus::kWarmStart;
    GapToWarm();
    return result_;
  }
  std::vector<int> device(n_, 0);
  std::vector<double> key(n_, 0.0);
  for (int i = 0; i < n_; ++i) {
    for (int k = 0; k < D_; ++k)
      if (r.values[x_[i][k].index()] > 0.5) device[i] = k;
    key[i] = r.values[S_[i].index()];
  }
  Schedule tight = TightenSchedule(p_, device, key);
  const bool proven = r.status == milp::SolveStatus::kOptimal;
  // Never worse than the warm start in the model's own terms (its makespan timed in the model).
  if (tight.Check(p_, 1e-9).empty() &&
      (!timed_ || r.objective <= timed_->makespan * (1 + 1e-9) + 1e-12)) {
    result_.schedule = tight;
    result_.model_objective = r.objective;
    // An incumbent no better than the MIP start is the warm start again.
    const bool improved = !timed_ || r.objective < timed_->makespan * (1 - 1e-9) - 1e-12;
    result_.status = proven     ? PlanStatus::kOptimal
                     : improved ? PlanStatus::kTimeLimit
                                : PlanStatus::kWarmStart;
    result_.gap = std::isfinite(r.bound) ? r.gap : 0.0;
    if (!std::isfinite(r.bound) && r.objective > 0)
      result_.gap = std::max(0.0, (r.objective - result_.bound) / r.objective);
    if (proven) result_.gap = 0.0;
  } else {
    // The incumbent is no better than the warm start: keep the warm start (the MILP's makespan for
    // its placement as the objective; the solver's bound stands for the MILP).
    result_.status = proven && result_.model_objective <= r.objective * (1 + 1e-9) + 1e-12
                         ? PlanStatus::kOptimal
                         : PlanStatus::kWarmStart;
    GapToWarm();
  }
  return result_;
}

}  // namespace

StatusOr<MoiraiResult> ScheduleMoirai(const SchedulingProblem& p, const Schedule* warm_start,
                                      const MoiraiOptions& options, Logger* logger) {
  HX_RETURN_IF_ERROR(options.Validate());
  HX_RETURN_IF_ERROR(p.Validate());
  if (warm_start != nullptr) {
    if (std::string why = warm_start->Check(p, 1e-6); !why.empty())
      return InvalidArgument("moirai: the warm start is not a valid schedule: " + why);
  }
  MoiraiMilp milp(p, options, logger);
  return milp.Run(warm_start);
}

}  // namespace hx::place
