// GETF: the group-assignment MILP, then earliest-time-first within groups (getf.h).

#include "hexplan/place/exact/getf.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "hexplan/core/stopwatch.h"
#include "hexplan/milp/solver.h"
#include "hexplan/place/exact/exact_planner.h"
#include "hexplan/place/list/list_scheduling.h"
#include "hexplan/place/warm_start.h"

namespace hx::place {
namespace {

using milp::LinExpr;
using milp::Var;

// Finish times of a group assignment when every task runs as soon as its inputs arrive, with the
// cheapest transfer between two groups (the MILP's C for that assignment).
std::vector<double> AssignmentTimes(const SchedulingProblem& p,
                                    const std::vector<int>& group_cost_device,
                                    const std::vector<int>& task_group,
                                    const std::vector<std::vector<std::vector<double>>>& comm) {
  std::vector<double> c(p.num_tasks(), 0.0);
  for (int t : p.TopologicalOrder()) {
    double ready = 0.0;
    for (int e : p.in_edges(t)) {
      const int src = p.edges()[e].src;
      ready = std::max(ready, c[src] + comm[e][task_group[src]][task_group[t]]);
    }
    c[t] = ready + p.cost(t, group_cost_device[task_group[t]]);
  }
  return c;
}

}  // namespace

Status GetfOptions::Validate() const {
  if (!(time_limit_s > 0)) return InvalidArgument("getf: --time-limit must be positive");
  if (!(relative_gap >= 0 && relative_gap < 1))
    return InvalidArgument("getf: --gap must be in [0, 1)");
  if (threads < 1) return InvalidArgument("getf: --threads must be >= 1");
  return Status::Ok();
}

std::vector<std::vector<int>> RelatedDeviceGroups(const SchedulingProblem& p) {
  std::vector<std::vector<int>> groups;
  for (int k = 0; k < p.num_devices(); ++k) {
    bool placed = false;
    for (auto& g : groups) {
      const int r = g.front();
      bool same = p.device_memory(r) == p.device_memory(k);
      for (int t = 0; t < p.num_tasks() && same; ++t)
        same = p.cost(t, r) == p.cost(t, k) && p.load_time(t, r) == p.load_time(t, k);
      if (same) {
        g.push_back(k);
        placed = true;
        break;
      }
    }
    if (!placed) groups.push_back({k});
  }
  return groups;
}

StatusOr<Schedule> ScheduleEtfWithinGroups(const SchedulingProblem& p,
                                           const std::vector<std::vector<int>>& groups,
                                           const std::vector<int>& task_group) {
  const int n = p.num_tasks(), D = p.num_devices();
  if (static_cast<int>(task_group.size()) != n)
    return InvalidArgument("getf: group assignment does not match the problem");
  const std::vector<double> rank = UpwardRanks(p);
  std::vector<int> missing(n, 0);
  for (int t = 0; t < n; ++t) missing[t] = static_cast<int>(p.in_edges(t).size());
  std::vector<int> ready;
  for (int t = 0; t < n; ++t)
    if (missing[t] == 0) ready.push_back(t);
  Schedule s;
  s.device.assign(n, -1);
  s.start.assign(n, 0.0);
  s.finish.assign(n, 0.0);
  std::vector<double> free_at(D, 0.0), load_free(D, 0.0), used(D, 0.0);
  auto fits = [&](int t, int k) {
    return !std::isinf(p.cost(t, k)) &&
           used[k] + p.task_memory(t) <= p.device_memory(k) * (1 + 1e-12);
  };
  auto earliest = [&](int t, int k) {
    double at = std::max(free_at[k], load_free[k] + p.load_time(t, k));
    for (int e : p.in_edges(t)) {
      const int src = p.edges()[e].src;
      at = std::max(at, s.finish[src] + p.CommTime(e, s.device[src], k));
    }
    return at;
  };
  for (int step = 0; step < n; ++step) {
    int best_t = -1, best_k = -1;
    double best_at = 0.0;
    for (int t : ready) {
      const int g = task_group[t];
      std::vector<int> candidates;
      if (g >= 0 && g < static_cast<int>(groups.size()))
        for (int k : groups[g])
          if (fits(t, k)) candidates.push_back(k);
      if (candidates.empty())
        for (int k = 0; k < D; ++k)
          if (fits(t, k)) candidates.push_back(k);
      for (int k : candidates) {
        const double at = earliest(t, k);
        bool better = best_t < 0 || at < best_at - 1e-12;
        if (!better && std::abs(at - best_at) <= 1e-12)
          better = rank[t] > rank[best_t] || (rank[t] == rank[best_t] && t < best_t);
        if (better) best_t = t, best_k = k, best_at = at;
      }
    }
    if (best_t < 0) {
      int t = ready.empty() ? 0 : ready.front();
      return ResourceExhausted("getf: no device has memory left for task '" + p.name(t) + "' (" +
                               std::to_string(p.task_memory(t)) + " bytes)");
    }
    const int t = best_t, k = best_k;
    s.device[t] = k;
    s.start[t] = best_at;
    s.finish[t] = best_at + p.cost(t, k);
    free_at[k] = s.finish[t];
    load_free[k] += p.load_time(t, k);
    used[k] += p.task_memory(t);
    ready.erase(std::find(ready.begin(), ready.end(), t));
    for (int e : p.out_edges(t))
      if (--missing[p.edges()[e].dst] == 0) ready.push_back(p.edges()[e].dst);
  }
  s.makespan = 0.0;
  for (int t = 0; t < n; ++t) s.makespan = std::max(s.makespan, s.finish[t]);
  return s;
}

namespace {

// ScheduleGetf's steps: device groups and their cheapest transfers, the horizon, the assignment
// MILP and its MIP start, and ETF (and HEFT's order) within the groups the MILP chose.
class GetfMilp {
 public:
  GetfMilp(const SchedulingProblem& p, const GetfOptions& options, Logger* logger)
      : p_(p),
        options_(options),
        logger_(logger),
        n_(p.num_tasks()),
        E_(static_cast<int>(p.edges().size())),
        groups_(RelatedDeviceGroups(p)),
        G_(static_cast<int>(groups_.size())) {}

  StatusOr<GetfResult> Run(const Schedule* warm_start);

 private:
  void GroupCosts();
  double Horizon(const Schedule* warm_start) const;
  void BuildModel(double horizon);
  std::vector<double> MipStart(const Schedule& warm, double horizon) const;
  // The best valid schedule of ETF and of HEFT's order within the groups of `values`.
  std::optional<Schedule> WithinGroups(const std::vector<double>& values, double horizon) const;

  const SchedulingProblem& p_;
  const GetfOptions& options_;
  Logger* logger_;
  const int n_, E_;
  const std::vector<std::vector<int>> groups_;
  const int G_;
  std::vector<int> rep_;  // a device standing for its group's costs
  std::vector<int> group_of_device_;
  std::vector<std::vector<std::vector<double>>> comm_;  // per edge: cheapest time group to group
  milp::Model m_{"getf"};
  Var makespan_;
  std::vector<std::vector<Var>> x_;
  std::vector<Var> C_;
};

void GetfMilp::GroupCosts() {
  rep_.resize(G_);
  for (int g = 0; g < G_; ++g) rep_[g] = groups_[g].front();
  group_of_device_.resize(p_.num_devices());
  for (int g = 0; g < G_; ++g)
    for (int k : groups_[g]) group_of_device_[k] = g;
  // Cheapest transfer of every edge between two groups (0 inside a group: same device possible).
  comm_.assign(E_, std::vector<std::vector<double>>(G_, std::vector<double>(G_, 0.0)));
  for (int e = 0; e < E_; ++e)
    for (int g = 0; g < G_; ++g)
      for (int h = 0; h < G_; ++h) {
        if (g == h) continue;
        double best = milp::kInfinity;
        for (int a : groups_[g])
          for (int b : groups_[h]) best = std::min(best, p_.CommTime(e, a, b));
        comm_[e][g][h] = best;
      }
}

double GetfMilp::Horizon(const Schedule* warm_start) const {
  double horizon = 0.0;
  if (warm_start != nullptr) {
    horizon = warm_start->makespan;
  } else {
    for (int t = 0; t < n_; ++t) {
      double worst = 0.0;
      for (int k = 0; k < p_.num_devices(); ++k)
        if (!std::isinf(p_.cost(t, k))) worst = std::max(worst, p_.cost(t, k));
      horizon += worst;
    }
    for (int e = 0; e < E_; ++e) {
      double worst = 0.0;
      for (int g = 0; g < G_; ++g)
        for (int h = 0; h < G_; ++h) worst = std::max(worst, comm_[e][g][h]);
      horizon += worst;
    }
  }
  return horizon * (1 + 1e-9) + 1e-9;
}

void GetfMilp::BuildModel(double horizon) {
  makespan_ = m_.AddContinuous(0, horizon, "D");
  x_.assign(n_, std::vector<Var>(G_));
  C_.resize(n_);
  std::vector<LinExpr> duration(n_);
  for (int t = 0; t < n_; ++t) {
    C_[t] = m_.AddContinuous(0, horizon, "C_" + std::to_string(t));
    LinExpr assign;
    for (int g = 0; g < G_; ++g) {
      x_[t][g] = m_.AddBinary("x_" + std::to_string(t) + "_" + std::to_string(g));
      const double cost = p_.cost(t, rep_[g]);
      if (std::isinf(cost)) {
        m_.SetBounds(x_[t][g], 0, 0);
      } else {
        duration[t].Add(x_[t][g], cost);
      }
      assign += LinExpr(x_[t][g]);
    }
    m_.AddEqual(assign, 1, "assign_" + std::to_string(t), "assignment");
    m_.AddGreaterEqual(LinExpr(C_[t]), duration[t], "release_" + std::to_string(t), "precedence");
    m_.AddLessEqual(LinExpr(C_[t]), LinExpr(makespan_), "end_" + std::to_string(t), "makespan");
  }
  for (int e = 0; e < E_; ++e) {
    const int i = p_.edges()[e].src, j = p_.edges()[e].dst;
    const std::string id = std::to_string(e);
    LinExpr transfer;
    for (int g = 0; g < G_; ++g)
      for (int h = 0; h < G_; ++h) {
        if (g == h || !(comm_[e][g][h] > 0)) continue;
        Var u =
            m_.AddContinuous(0, 1, "u_" + id + "_" + std::to_string(g) + "_" + std::to_string(h));
        m_.AddGreaterEqual(LinExpr(u), LinExpr(x_[i][g]) + LinExpr(x_[j][h]) - 1, "u_" + id,
                           "communication");
        transfer.Add(u, comm_[e][g][h]);
      }
    m_.AddGreaterEqual(LinExpr(C_[j]), LinExpr(C_[i]) + duration[j] + transfer, "prec_" + id,
                       "precedence");
  }
  for (int g = 0; g < G_; ++g) {
    LinExpr load, used;
    double capacity = 0.0;
    for (int k : groups_[g]) capacity += p_.device_memory(k);
    for (int t = 0; t < n_; ++t) {
      const double cost = p_.cost(t, rep_[g]);
      if (!std::isinf(cost)) load.Add(x_[t][g], cost);
      if (p_.task_memory(t) > 0) used.Add(x_[t][g], p_.task_memory(t));
    }
    m_.AddLessEqual(load, static_cast<double>(groups_[g].size()) * LinExpr(makespan_),
                    "load_" + std::to_string(g), "group load");
    if (!std::isinf(capacity))
      m_.AddLessEqual(used, capacity, "mem_" + std::to_string(g), "group memory");
  }
  m_.Minimize(LinExpr(makespan_));
}

std::vector<double> GetfMilp::MipStart(const Schedule& warm, double horizon) const {
  std::vector<int> warm_group(n_);
  for (int t = 0; t < n_; ++t) warm_group[t] = group_of_device_[warm.device[t]];
  std::vector<double> c = AssignmentTimes(p_, rep_, warm_group, comm_);
  std::vector<double> start(m_.num_vars(), 0.0);
  double d = 0.0;
  for (int t = 0; t < n_; ++t) {
    start[x_[t][warm_group[t]].index()] = 1;
    start[C_[t].index()] = c[t];
    d = std::max(d, c[t]);
  }
  for (int g = 0; g < G_; ++g) {
    double load = 0.0;
    for (int t = 0; t < n_; ++t)
      if (warm_group[t] == g) load += p_.cost(t, rep_[g]);
    d = std::max(d, load / static_cast<double>(groups_[g].size()));
  }
  start[makespan_.index()] = std::min(d, horizon);
  for (size_t v = 0; v < m_.num_vars(); ++v) {
    int e, g, h;
    if (std::sscanf(m_.vars()[v].name.c_str(), "u_%d_%d_%d", &e, &g, &h) == 3)
      start[v] = warm_group[p_.edges()[e].src] == g && warm_group[p_.edges()[e].dst] == h;
  }
  return start;
}

std::optional<Schedule> GetfMilp::WithinGroups(const std::vector<double>& values,
                                               double horizon) const {
  std::vector<int> task_group(n_, 0);
  for (int t = 0; t < n_; ++t)
    for (int g = 0; g < G_; ++g)
      if (values[x_[t][g].index()] > 0.5) task_group[t] = g;
  // GETF's ETF, and (our addition) HEFT's order with insertion, each task kept in its group by a
  // penalty on the other devices; the shorter valid schedule is GETF's answer.
  std::vector<StatusOr<Schedule>> tries;
  tries.push_back(ScheduleEtfWithinGroups(p_, groups_, task_group));
  {
    const std::vector<double> rank = UpwardRanks(p_);
    const std::vector<int> topo = p_.TopologicalOrder();
    std::vector<int> pos(n_), order = topo;
    for (int i = 0; i < n_; ++i) pos[topo[i]] = i;
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return rank[a] != rank[b] ? rank[a] > rank[b] : pos[a] < pos[b];
    });
    const double penalty = 1e3 * (horizon + 1.0);
    std::vector<std::vector<double>> extra(n_, std::vector<double>(p_.num_devices(), penalty));
    for (int t = 0; t < n_; ++t)
      for (int k : groups_[task_group[t]]) extra[t][k] = 0.0;
    tries.push_back(ScheduleInOrder(p_, order, extra));
  }
  std::optional<Schedule> best;
  for (auto& s : tries) {
    if (!s.ok()) {
      LogTo(logger_, LogLevel::kInfo,
            "getf: list scheduling on the MILP's groups failed: " + s.status().message());
      continue;
    }
    if (!s->Check(p_, 1e-6).empty()) continue;
    if (!best || s->makespan < best->makespan) best = std::move(*s);
  }
  return best;
}

StatusOr<GetfResult> GetfMilp::Run(const Schedule* warm_start) {
  Stopwatch clock;
  GetfResult result;
  result.num_groups = G_;
  GroupCosts();
  const double horizon = Horizon(warm_start);
  BuildModel(horizon);
  result.num_binaries = m_.num_integer_vars();
  // The limit covers the whole call (building the model included).
  MilpSettings settings =
      MilpSettingsOf(options_, std::max(0.01, options_.time_limit_s - clock.ElapsedSeconds()));
  std::vector<double> start;
  if (warm_start != nullptr) start = MipStart(*warm_start, horizon);
  HX_ASSIGN_OR_RETURN(MilpRun run, RunMilp(m_, std::move(start), settings, "getf", logger_));
  const milp::SolveResult& r = run.result;
  // CBC stopped before its first node has no bound: the combinatorial one stands in.
  result.bound = std::max(MakespanLowerBound(p_), std::isfinite(r.bound) ? r.bound : 0.0);
  if (r.status == milp::SolveStatus::kInfeasible && warm_start == nullptr)
    return ResourceExhausted(
        "getf: infeasible group memory constraints: no assignment of the operators fits the "
        "devices' memory");
  std::optional<Schedule> etf;
  if (r.has_solution()) {
    result.assignment_objective = r.objective;
    etf = WithinGroups(r.values, horizon);
  }
  result.solve_time_s = clock.ElapsedSeconds();
  const bool from_file = run.kind == MilpRunKind::kFromSolution;
  if (from_file && !etf)
    return InvalidArgument(options_.solution_path +
                           ": no valid schedule within the solution's device groups");
  if (etf &&
      (from_file || warm_start == nullptr || etf->makespan <= warm_start->makespan + 1e-12)) {
    result.schedule = std::move(*etf);
    result.status = PlanStatus::kFeasible;
  } else if (warm_start != nullptr) {
    result.schedule = *warm_start;
    result.status = PlanStatus::kWarmStart;
  } else {
    return ResourceExhausted(
        "getf: the time limit ended before the assignment MILP found a solution, and the fast "
        "planners found no schedule to fall back on");
  }
  const double ms = result.schedule.makespan;
  result.bound = std::min(result.bound, ms);
  result.gap = ms > 0 ? (ms - result.bound) / ms : 0.0;
  if (!from_file && result.gap <= std::max(options_.relative_gap, 1e-9))
    result.status = PlanStatus::kOptimal;
  return result;
}

}  // namespace

StatusOr<GetfResult> ScheduleGetf(const SchedulingProblem& p, const Schedule* warm_start,
                                  const GetfOptions& options, Logger* logger) {
  HX_RETURN_IF_ERROR(options.Validate());
  HX_RETURN_IF_ERROR(p.Validate());
  if (warm_start != nullptr) {
    if (std::string why = warm_start->Check(p, 1e-6); !why.empty())
      return InvalidArgument("getf: the warm start is not a valid schedule: " + why);
  }
  if (warm_start == nullptr)
    HX_RETURN_IF_ERROR(CheckMemoryCapacity(p, "getf", "group memory constraints"));
  GetfMilp milp(p, options, logger);
  return milp.Run(warm_start);
}

}  // namespace hx::place
