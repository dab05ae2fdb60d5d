#include "hexplan/place/moirai_milp.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>

#include "hexplan/core/stopwatch.h"
#include "hexplan/place/getf.h"
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
  std::vector<double> device_free(D, 0.0), out_free(D, 0.0), in_free(D, 0.0);
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
    t.S[j] = ready;
    t.C[j] = ready + p.cost(j, d);
    device_free[d] = t.C[j];
    t.makespan = std::max(t.makespan, t.C[j]);
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

StatusOr<MoiraiResult> ScheduleMoirai(const SchedulingProblem& p, const Schedule* warm_start,
                                      const MoiraiOptions& options, Logger* logger) {
  HX_RETURN_IF_ERROR(options.Validate());
  HX_RETURN_IF_ERROR(p.Validate());
  if (warm_start != nullptr) {
    if (std::string why = warm_start->Check(p, 1e-6); !why.empty())
      return InvalidArgument("moirai: the warm start is not a valid schedule: " + why);
  }
  Stopwatch clock;  // the time limit covers the whole call: packing, building and solving
  auto seconds_left = [&] { return options.time_limit_s - clock.ElapsedSeconds(); };
  const int n = p.num_tasks(), D = p.num_devices();
  const int E = static_cast<int>(p.edges().size());

  // Memory (5) that cannot hold: say so before building anything.
  HX_RETURN_IF_ERROR(CheckMemoryCapacity(p, "moirai", "memory constraints (5)"));

  // Without a warm start from the caller, a memory-feasible packing gives one (and a tight
  // horizon).
  std::optional<Schedule> packed;
  if (warm_start == nullptr) {
    auto s = MemoryFeasibleSchedule(p, std::max(0.05, options.time_limit_s / 10));
    if (s.ok() && s->Check(p, 1e-6).empty()) {
      packed = std::move(*s);
      warm_start = &*packed;
    }
  }
  MoiraiResult result;
  double horizon = 0.0;
  std::optional<ModelTiming> timed;
  if (warm_start != nullptr) {
    timed = TimeInModel(p, *warm_start, options.congestion_control);
    result.schedule = *warm_start;
    result.model_objective = timed->makespan;  // the MILP's makespan for the warm placement
    // Large enough for the warm start, timed in the model, to be feasible.
    horizon = std::max(warm_start->makespan, timed->makespan) * (1 + 1e-9) + 1e-9;
  } else {
    // Serial bound: some task or transfer is in progress at every moment of a semi-active schedule.
    for (int i = 0; i < n; ++i) {
      double worst = 0.0;
      for (int k = 0; k < D; ++k)
        if (!std::isinf(p.cost(i, k))) worst = std::max(worst, p.cost(i, k) + p.load_time(i, k));
      horizon += worst;
    }
    for (int q = 0; q < E; ++q) {
      double worst = 0.0;
      for (int a = 0; a < D; ++a)
        for (int b = 0; b < D; ++b) worst = std::max(worst, p.CommTime(q, a, b));
      horizon += worst;
    }
    horizon = horizon * (1 + 1e-9) + 1e-9;
  }
  result.status = "warm_start";
  auto reach = Reachability(p);

  // Size estimate before building.
  size_t unrelated_tasks = 0;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (!Reaches(reach, i, j) && !Reaches(reach, j, i)) ++unrelated_tasks;
  size_t estimate =
      static_cast<size_t>(n) * 3 + static_cast<size_t>(E) * (4 + D * D) + unrelated_tasks * 2 * D;
  if (options.congestion_control) estimate += static_cast<size_t>(E) * E * 2 * D;  // upper bound
  const bool too_large = estimate > options.max_constraints;
  result.estimated_constraints = estimate;
  const bool wanted =
      !options.export_lp.empty() || !options.export_mps.empty() || !options.solution_path.empty();
  if (too_large && !wanted) {
    if (warm_start == nullptr)
      return ResourceExhausted("moirai: the MILP would have about " + std::to_string(estimate) +
                               " constraints (limit " + std::to_string(options.max_constraints) +
                               ") and no fast planner found a warm start; coarsen the graph");
    LogTo(logger, LogLevel::kWarning,
          "moirai: the MILP would have about " + std::to_string(estimate) + " constraints (limit " +
              std::to_string(options.max_constraints) +
              "); returning the warm start, with GETF's assignment bound (a relaxation of this "
              "model). Coarsen the graph first (--coarsen fusion) if it has fusable ops.");
    if (seconds_left() < kMinSolveSeconds) {
      result.solve_time_s = clock.ElapsedSeconds();
      return result;  // no time left even for the bound
    }
    GetfOptions relax;
    relax.time_limit_s = seconds_left();
    relax.relative_gap = std::max(options.relative_gap, 1e-4);
    relax.threads = options.threads;
    relax.seed = options.seed;
    if (auto bound = ScheduleGetf(p, warm_start, relax); bound.ok()) {
      result.has_bound = true;
      result.bound = std::min(bound->bound, result.model_objective);
      result.gap = result.model_objective > 0
                       ? (result.model_objective - result.bound) / result.model_objective
                       : 0.0;
    }
    result.solve_time_s = clock.ElapsedSeconds();
    return result;
  }

  milp::Model m("moirai");
  std::vector<std::vector<Var>> x(n, std::vector<Var>(D));
  std::vector<Var> S(n), C(n);
  Var makespan = m.AddContinuous(0, horizon, "makespan");
  for (int i = 0; i < n; ++i) {
    S[i] = m.AddContinuous(0, horizon, "S_" + std::to_string(i));
    C[i] = m.AddContinuous(0, horizon, "C_" + std::to_string(i));
    LinExpr assign, duration;
    for (int k = 0; k < D; ++k) {
      x[i][k] = m.AddBinary("x_" + std::to_string(i) + "_" + std::to_string(k));
      if (std::isinf(p.cost(i, k))) m.SetBounds(x[i][k], 0, 0);
      assign += LinExpr(x[i][k]);
      if (!std::isinf(p.cost(i, k))) duration.Add(x[i][k], p.cost(i, k));
    }
    m.AddEqual(assign, 1, "assign_" + std::to_string(i), "assignment");  // (4c)
    m.AddEqual(LinExpr(C[i]), LinExpr(S[i]) + duration, "dur_" + std::to_string(i),
               "duration");  // (4b)
    m.AddGreaterEqual(LinExpr(makespan), LinExpr(C[i]), "end_" + std::to_string(i), "makespan");
  }
  // Valid cuts the LP relaxation of (6) does not see: a device runs its operators one at a time, so
  // its total work bounds the makespan.
  for (int k = 0; k < D; ++k) {
    LinExpr work;
    for (int i = 0; i < n; ++i)
      if (!std::isinf(p.cost(i, k))) work.Add(x[i][k], p.cost(i, k));
    m.AddLessEqual(work, LinExpr(makespan), "load_" + std::to_string(k), "device load");
  }
  // Memory (5).
  for (int k = 0; k < D; ++k) {
    if (std::isinf(p.device_memory(k))) continue;
    LinExpr used;
    for (int i = 0; i < n; ++i)
      if (p.task_memory(i) > 0) used.Add(x[i][k], p.task_memory(i));
    m.AddLessEqual(used, p.device_memory(k), "mem_" + std::to_string(k), "memory");
  }
  // Data flows (4a, 7).
  std::vector<Var> Sq(E), Cq(E), z(E);
  for (int q = 0; q < E; ++q) {
    const auto& edge = p.edges()[q];
    const int i = edge.src, j = edge.dst;
    const std::string id = std::to_string(q);
    Sq[q] = m.AddContinuous(0, horizon, "Sq_" + id);
    Cq[q] = m.AddContinuous(0, horizon, "Cq_" + id);
    z[q] = m.AddBinary("z_" + id);
    m.AddLessEqual(LinExpr(C[i]), LinExpr(Sq[q]), "flow_after_" + id, "precedence");
    m.AddLessEqual(LinExpr(Cq[q]), LinExpr(S[j]), "flow_before_" + id, "precedence");
    for (int k = 0; k < D; ++k) {
      m.AddLessEqual(LinExpr(z[q]), 2 - LinExpr(x[i][k]) - LinExpr(x[j][k]),
                     "z1_" + id + "_" + std::to_string(k), "communication");
      m.AddGreaterEqual(LinExpr(z[q]), LinExpr(x[i][k]) - LinExpr(x[j][k]),
                        "z2_" + id + "_" + std::to_string(k), "communication");
      m.AddGreaterEqual(LinExpr(z[q]), LinExpr(x[j][k]) - LinExpr(x[i][k]),
                        "z3_" + id + "_" + std::to_string(k), "communication");
    }
    LinExpr transmission;
    for (int a = 0; a < D; ++a) {
      for (int b = 0; b < D; ++b) {
        if (a == b) continue;
        double t = p.CommTime(q, a, b);
        if (t <= 0) continue;
        Var u =
            m.AddContinuous(0, 1, "u_" + id + "_" + std::to_string(a) + "_" + std::to_string(b));
        m.AddGreaterEqual(LinExpr(u), LinExpr(x[i][a]) + LinExpr(x[j][b]) - 1, "u_" + id,
                          "communication");
        transmission.Add(u, t);
      }
    }
    m.AddEqual(LinExpr(Cq[q]), LinExpr(Sq[q]) + transmission, "flow_dur_" + id, "communication");
  }
  // Non-overlap (6): unrelated operators on one device.
  // Building a large model takes a while: with a warm start to fall back on, stop building when
  // the time limit is spent.
  auto out_of_time = [&] {
    return !wanted && warm_start != nullptr && seconds_left() < kMinSolveSeconds;
  };
  std::vector<std::tuple<int, int, Var>> pairs;
  bool abandoned = false;
  for (int i = 0; i < n && !abandoned; ++i) {
    abandoned = out_of_time();
    for (int j = i + 1; j < n && !abandoned; ++j) {
      if (Reaches(reach, i, j) || Reaches(reach, j, i)) continue;
      Var delta = m.AddBinary("d_" + std::to_string(i) + "_" + std::to_string(j));
      pairs.emplace_back(i, j, delta);
      for (int k = 0; k < D; ++k) {
        if (std::isinf(p.cost(i, k)) || std::isinf(p.cost(j, k))) continue;
        const std::string id =
            std::to_string(i) + "_" + std::to_string(j) + "_" + std::to_string(k);
        // delta = 1: i before j. Relaxed by `horizon` when the pair is not both on k.
        LinExpr off = 2 - LinExpr(x[i][k]) - LinExpr(x[j][k]);
        m.AddGreaterEqual(LinExpr(S[j]),
                          LinExpr(C[i]) - horizon * (1 - LinExpr(delta)) - horizon * off,
                          "ovl_a_" + id, "non-overlap");
        m.AddGreaterEqual(LinExpr(S[i]), LinExpr(C[j]) - horizon * LinExpr(delta) - horizon * off,
                          "ovl_b_" + id, "non-overlap");
      }
    }
  }
  // Congestion control (8): two flows out of (or into) one device never overlap.
  std::vector<std::tuple<int, int, Var>> flow_pairs;
  if (options.congestion_control) {
    for (int q = 0; q < E && !abandoned; ++q) {
      abandoned = out_of_time();
      for (int r = q + 1; r < E && !abandoned; ++r) {
        const auto& eq = p.edges()[q];
        const auto& er = p.edges()[r];
        // Related flows (one's destination reaches the other's source) are ordered already.
        if (eq.dst == er.src || er.dst == eq.src) continue;
        if (Reaches(reach, eq.dst, er.src) || Reaches(reach, er.dst, eq.src)) continue;
        Var delta = m.AddBinary("f_" + std::to_string(q) + "_" + std::to_string(r));
        flow_pairs.emplace_back(q, r, delta);
        for (int k = 0; k < D; ++k) {
          const std::string id =
              std::to_string(q) + "_" + std::to_string(r) + "_" + std::to_string(k);
          LinExpr both = 2 - LinExpr(z[q]) - LinExpr(z[r]);
          // Outgoing from k: x_a + x_c - x_b - x_d = 2. Incoming into k: x_b + x_d - x_a - x_c = 2.
          LinExpr out_k = LinExpr(x[eq.src][k]) + LinExpr(x[er.src][k]) - LinExpr(x[eq.dst][k]) -
                          LinExpr(x[er.dst][k]) - 2;
          LinExpr in_k = LinExpr(x[eq.dst][k]) + LinExpr(x[er.dst][k]) - LinExpr(x[eq.src][k]) -
                         LinExpr(x[er.src][k]) - 2;
          for (const auto& [side, dir] : {std::pair{out_k, "out"}, std::pair{in_k, "in"}}) {
            m.AddGreaterEqual(
                LinExpr(Sq[r]),
                LinExpr(Cq[q]) - horizon * (1 - LinExpr(delta)) - horizon * both + horizon * side,
                std::string("cg_a_") + dir + id, "congestion");
            m.AddGreaterEqual(
                LinExpr(Sq[q]),
                LinExpr(Cq[r]) - horizon * LinExpr(delta) - horizon * both + horizon * side,
                std::string("cg_b_") + dir + id, "congestion");
          }
        }
      }
    }
  }
  if (abandoned) {
    LogTo(logger, LogLevel::kWarning,
          "moirai: the time limit ended while the MILP was being built (" +
              std::to_string(m.num_constraints()) + " of about " + std::to_string(estimate) +
              " constraints); returning the warm start");
    result.solve_time_s = clock.ElapsedSeconds();
    return result;
  }
  m.Minimize(LinExpr(makespan));
  result.num_binaries = m.num_integer_vars();
  result.num_constraints = m.num_constraints();
  if (!options.export_lp.empty()) HX_RETURN_IF_ERROR(milp::WriteLpFile(m, options.export_lp));
  if (!options.export_mps.empty()) HX_RETURN_IF_ERROR(milp::WriteMpsFile(m, options.export_mps));
  if (!options.solution_path.empty()) {
    // An external solver's solution: the placement and per-device order, re-timed.
    const std::string& file = options.solution_path;
    HX_ASSIGN_OR_RETURN(std::vector<double> values, milp::ReadSolutionFile(file, m));
    std::vector<int> device(n, -1);
    std::vector<double> key(n, 0.0), used(D, 0.0);
    for (int i = 0; i < n; ++i) {
      int count = 0;
      for (int k = 0; k < D; ++k)
        if (values[x[i][k].index()] > 0.5) device[i] = k, ++count;
      if (count != 1)
        return InvalidArgument(file + ": operator '" + p.name(i) + "' (x_" + std::to_string(i) +
                               "_*) is on " + std::to_string(count) +
                               " devices; the assignment constraint (4c) wants exactly one");
      if (std::isinf(p.cost(i, device[i])))
        return InvalidArgument(file + ": operator '" + p.name(i) + "' is on device " +
                               std::to_string(device[i]) + ", which cannot run it");
      used[device[i]] += p.task_memory(i);
      key[i] = values[S[i].index()];
    }
    for (int k = 0; k < D; ++k)
      if (used[k] > p.device_memory(k) * (1 + 1e-9))
        return ResourceExhausted(file + ": memory constraint (5) mem_" + std::to_string(k) +
                                 " violated: the solution puts " + std::to_string(used[k]) +
                                 " bytes on a device that holds " +
                                 std::to_string(p.device_memory(k)) + " (over by " +
                                 std::to_string(used[k] - p.device_memory(k)) + ")");
    auto violations = m.Violations(values, 1e-6);
    result.solution_violations = violations.size();
    if (!violations.empty()) {
      std::set<std::string> groups;
      for (const auto& v : violations) groups.insert(v.group.empty() ? "bounds" : v.group);
      std::string list;
      for (const auto& g : groups) list += (list.empty() ? "" : ", ") + g;
      LogTo(logger, LogLevel::kWarning,
            "moirai: " + file + " violates " + std::to_string(violations.size()) +
                " bounds or constraints of the model (" + list + "; first: " +
                violations.front().what + " by " + std::to_string(violations.front().amount) +
                "); using its placement and order, re-timed");
    }
    result.schedule = TightenSchedule(p, device, key);
    if (std::string why = result.schedule.Check(p, 1e-9); !why.empty())
      return InvalidArgument(file +
                             ": the solution's placement and order give no valid schedule: " + why);
    result.model_objective = violations.empty() ? m.Evaluate(values) : result.schedule.makespan;
    result.status = "feasible";
    result.solve_time_s = clock.ElapsedSeconds();
    return result;
  }
  if (too_large) {
    LogTo(logger, LogLevel::kWarning,
          "moirai: the model was written; it is above " + std::to_string(options.max_constraints) +
              " constraints, so the warm start is returned without solving");
    result.solve_time_s = clock.ElapsedSeconds();
    return result;
  }

  // MIP start: the warm placement and order, timed in the model (TimeInModel); only for a caller's
  // warm start. A MIP start turns CBC's preprocessing off (milp::Preprocess), which costs more than
  // the memory packing's start is worth (example-1: 28 s with it, 18 s without); the packed start
  // still sets the horizon and is kept when CBC finds nothing better.
  milp::SolveOptions solve;
  if (warm_start != nullptr && !packed) {
    const Schedule& warm = *warm_start;
    std::vector<double> start(m.num_vars(), 0.0);
    start[makespan.index()] = timed->makespan;
    for (int i = 0; i < n; ++i) {
      start[S[i].index()] = timed->S[i];
      start[C[i].index()] = timed->C[i];
      start[x[i][warm.device[i]].index()] = 1;
    }
    for (int q = 0; q < E; ++q) {
      const auto& edge = p.edges()[q];
      start[Sq[q].index()] = timed->Sq[q];
      start[Cq[q].index()] = timed->Cq[q];
      start[z[q].index()] = warm.device[edge.src] != warm.device[edge.dst];
    }
    // u values: set through names is awkward; they are continuous and derived, so fill by scanning.
    for (size_t v = 0; v < m.num_vars(); ++v) {
      const std::string& name = m.vars()[v].name;
      if (name.rfind("u_", 0) != 0) continue;
      int q, a, b;
      if (std::sscanf(name.c_str(), "u_%d_%d_%d", &q, &a, &b) == 3)
        start[v] =
            (warm.device[p.edges()[q].src] == a && warm.device[p.edges()[q].dst] == b) ? 1 : 0;
    }
    // Ordering binaries: "i before j" when i ends by the time j starts (zero-length intervals
    // at one instant make the start order ambiguous).
    for (const auto& [i, j, delta] : pairs)
      start[delta.index()] = timed->C[i] <= timed->S[j] ? 1 : 0;
    for (const auto& [q, r, delta] : flow_pairs)
      start[delta.index()] = timed->Cq[q] <= timed->Sq[r] ? 1 : 0;

    solve.mip_start = start;
  }
  if (warm_start != nullptr && seconds_left() < kMinSolveSeconds) {
    LogTo(logger, LogLevel::kInfo,
          "moirai: the time limit was spent building the MILP; returning the warm start");
    result.solve_time_s = clock.ElapsedSeconds();
    return result;
  }
  solve.time_limit_s = std::max(kMinSolveSeconds, seconds_left());
  solve.relative_gap = options.relative_gap;
  solve.threads = options.threads;
  solve.seed = options.seed;
  solve.progress_to_stderr = options.progress_to_stderr;
  HX_ASSIGN_OR_RETURN(milp::SolveResult r, milp::SolveWithCbc(m, solve, logger));
  result.solve_time_s = clock.ElapsedSeconds();
  result.has_bound = std::isfinite(r.bound);
  result.bound = std::isfinite(r.bound) ? std::max(0.0, r.bound) : 0.0;
  if (!r.has_solution()) {
    if (warm_start == nullptr) {
      if (r.status == milp::SolveStatus::kInfeasible)
        return ResourceExhausted(
            "moirai: the MILP is infeasible (memory constraints (5) cannot "
            "be met together with the device supports)");
      return ResourceExhausted("moirai: the time limit ended before any placement was found");
    }
    result.status = "warm_start";
    result.gap =
        result.model_objective > 0
            ? std::max(0.0, (result.model_objective - result.bound) / result.model_objective)
            : 0.0;
    return result;
  }
  std::vector<int> device(n, 0);
  std::vector<double> key(n, 0.0);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < D; ++k)
      if (r.values[x[i][k].index()] > 0.5) device[i] = k;
    key[i] = r.values[S[i].index()];
  }
  Schedule tight = TightenSchedule(p, device, key);
  const bool proven = r.status == milp::SolveStatus::kOptimal;
  // Never worse than the warm start in the model's own terms (its makespan timed in the model).
  if (tight.Check(p, 1e-9).empty() &&
      (!timed || r.objective <= timed->makespan * (1 + 1e-9) + 1e-12)) {
    result.schedule = tight;
    result.model_objective = r.objective;
    // An incumbent no better than the MIP start is the warm start again.
    const bool improved = !timed || r.objective < timed->makespan * (1 - 1e-9) - 1e-12;
    result.status = proven ? "optimal" : improved ? "time_limit" : "warm_start";
    result.gap = r.gap;
  } else {
    // The incumbent is no better than the warm start: keep the warm start (the MILP's makespan for
    // its placement as the objective; the solver's bound stands for the MILP).
    result.status = proven && result.model_objective <= r.objective * (1 + 1e-9) + 1e-12
                        ? "optimal"
                        : "warm_start";
    result.gap =
        result.model_objective > 0
            ? std::max(0.0, (result.model_objective - result.bound) / result.model_objective)
            : 0.0;
  }
  return result;
}

}  // namespace hx::place
