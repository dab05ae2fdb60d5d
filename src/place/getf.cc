// GETF: the group-assignment MILP, then earliest-time-first within groups (getf.h).

#include "hexplan/place/getf.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "hexplan/core/stopwatch.h"
#include "hexplan/milp/solver.h"
#include "hexplan/place/list_scheduling.h"
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
  Stopwatch clock;
  const int n = p.num_tasks(), E = static_cast<int>(p.edges().size());
  GetfResult result;
  const std::vector<std::vector<int>> groups = RelatedDeviceGroups(p);
  const int G = static_cast<int>(groups.size());
  result.num_groups = G;
  std::vector<int> rep(G);  // a device standing for its group's costs
  for (int g = 0; g < G; ++g) rep[g] = groups[g].front();
  std::vector<int> group_of_device(p.num_devices());
  for (int g = 0; g < G; ++g)
    for (int k : groups[g]) group_of_device[k] = g;
  // Cheapest transfer of every edge between two groups (0 inside a group: same device possible).
  std::vector<std::vector<std::vector<double>>> comm(
      E, std::vector<std::vector<double>>(G, std::vector<double>(G, 0.0)));
  for (int e = 0; e < E; ++e)
    for (int g = 0; g < G; ++g)
      for (int h = 0; h < G; ++h) {
        if (g == h) continue;
        double best = milp::kInfinity;
        for (int a : groups[g])
          for (int b : groups[h]) best = std::min(best, p.CommTime(e, a, b));
        comm[e][g][h] = best;
      }

  double horizon = 0.0;
  if (warm_start != nullptr) {
    horizon = warm_start->makespan;
  } else {
    for (int t = 0; t < n; ++t) {
      double worst = 0.0;
      for (int k = 0; k < p.num_devices(); ++k)
        if (!std::isinf(p.cost(t, k))) worst = std::max(worst, p.cost(t, k));
      horizon += worst;
    }
    for (int e = 0; e < E; ++e) {
      double worst = 0.0;
      for (int g = 0; g < G; ++g)
        for (int h = 0; h < G; ++h) worst = std::max(worst, comm[e][g][h]);
      horizon += worst;
    }
  }
  horizon = horizon * (1 + 1e-9) + 1e-9;

  milp::Model m("getf");
  Var makespan = m.AddContinuous(0, horizon, "D");
  std::vector<std::vector<Var>> x(n, std::vector<Var>(G));
  std::vector<Var> C(n);
  std::vector<LinExpr> duration(n);
  for (int t = 0; t < n; ++t) {
    C[t] = m.AddContinuous(0, horizon, "C_" + std::to_string(t));
    LinExpr assign;
    for (int g = 0; g < G; ++g) {
      x[t][g] = m.AddBinary("x_" + std::to_string(t) + "_" + std::to_string(g));
      const double cost = p.cost(t, rep[g]);
      if (std::isinf(cost)) {
        m.SetBounds(x[t][g], 0, 0);
      } else {
        duration[t].Add(x[t][g], cost);
      }
      assign += LinExpr(x[t][g]);
    }
    m.AddEqual(assign, 1, "assign_" + std::to_string(t), "assignment");
    m.AddGreaterEqual(LinExpr(C[t]), duration[t], "release_" + std::to_string(t), "precedence");
    m.AddLessEqual(LinExpr(C[t]), LinExpr(makespan), "end_" + std::to_string(t), "makespan");
  }
  for (int e = 0; e < E; ++e) {
    const int i = p.edges()[e].src, j = p.edges()[e].dst;
    const std::string id = std::to_string(e);
    LinExpr transfer;
    for (int g = 0; g < G; ++g)
      for (int h = 0; h < G; ++h) {
        if (g == h || !(comm[e][g][h] > 0)) continue;
        Var u =
            m.AddContinuous(0, 1, "u_" + id + "_" + std::to_string(g) + "_" + std::to_string(h));
        m.AddGreaterEqual(LinExpr(u), LinExpr(x[i][g]) + LinExpr(x[j][h]) - 1, "u_" + id,
                          "communication");
        transfer.Add(u, comm[e][g][h]);
      }
    m.AddGreaterEqual(LinExpr(C[j]), LinExpr(C[i]) + duration[j] + transfer, "prec_" + id,
                      "precedence");
  }
  for (int g = 0; g < G; ++g) {
    LinExpr load, used;
    double capacity = 0.0;
    for (int k : groups[g]) capacity += p.device_memory(k);
    for (int t = 0; t < n; ++t) {
      const double cost = p.cost(t, rep[g]);
      if (!std::isinf(cost)) load.Add(x[t][g], cost);
      if (p.task_memory(t) > 0) used.Add(x[t][g], p.task_memory(t));
    }
    m.AddLessEqual(load, static_cast<double>(groups[g].size()) * LinExpr(makespan),
                   "load_" + std::to_string(g), "group load");
    if (!std::isinf(capacity))
      m.AddLessEqual(used, capacity, "mem_" + std::to_string(g), "group memory");
  }
  m.Minimize(LinExpr(makespan));
  result.num_binaries = m.num_integer_vars();

  milp::SolveOptions solve;
  // The limit covers the whole call (building the model included).
  solve.time_limit_s = std::max(0.01, options.time_limit_s - clock.ElapsedSeconds());
  solve.relative_gap = options.relative_gap;
  solve.threads = options.threads;
  solve.seed = options.seed;
  if (warm_start != nullptr) {
    std::vector<int> warm_group(n);
    for (int t = 0; t < n; ++t) warm_group[t] = group_of_device[warm_start->device[t]];
    std::vector<double> c = AssignmentTimes(p, rep, warm_group, comm);
    std::vector<double> start(m.num_vars(), 0.0);
    double d = 0.0;
    for (int t = 0; t < n; ++t) {
      start[x[t][warm_group[t]].index()] = 1;
      start[C[t].index()] = c[t];
      d = std::max(d, c[t]);
    }
    for (int g = 0; g < G; ++g) {
      double load = 0.0;
      for (int t = 0; t < n; ++t)
        if (warm_group[t] == g) load += p.cost(t, rep[g]);
      d = std::max(d, load / static_cast<double>(groups[g].size()));
    }
    start[makespan.index()] = std::min(d, horizon);
    for (size_t v = 0; v < m.num_vars(); ++v) {
      int e, g, h;
      if (std::sscanf(m.vars()[v].name.c_str(), "u_%d_%d_%d", &e, &g, &h) == 3)
        start[v] = warm_group[p.edges()[e].src] == g && warm_group[p.edges()[e].dst] == h;
    }
    solve.mip_start = std::move(start);
  }
  HX_ASSIGN_OR_RETURN(milp::SolveResult r, milp::SolveWithCbc(m, solve, logger));
  result.bound = std::isfinite(r.bound) ? std::max(0.0, r.bound) : 0.0;
  if (r.status == milp::SolveStatus::kInfeasible && warm_start == nullptr)
    return ResourceExhausted(
        "getf: infeasible group memory constraints: no assignment of the operators fits the "
        "devices' memory");

  std::optional<Schedule> etf;
  if (r.has_solution()) {
    result.assignment_objective = r.objective;
    std::vector<int> task_group(n, 0);
    for (int t = 0; t < n; ++t)
      for (int g = 0; g < G; ++g)
        if (r.values[x[t][g].index()] > 0.5) task_group[t] = g;
    // GETF's ETF, and (our addition) HEFT's order with insertion, each task kept in its group by a
    // penalty on the other devices; the shorter valid schedule is GETF's answer.
    std::vector<StatusOr<Schedule>> tries;
    tries.push_back(ScheduleEtfWithinGroups(p, groups, task_group));
    {
      const std::vector<double> rank = UpwardRanks(p);
      const std::vector<int> topo = p.TopologicalOrder();
      std::vector<int> pos(n), order = topo;
      for (int i = 0; i < n; ++i) pos[topo[i]] = i;
      std::sort(order.begin(), order.end(), [&](int a, int b) {
        return rank[a] != rank[b] ? rank[a] > rank[b] : pos[a] < pos[b];
      });
      const double penalty = 1e3 * (horizon + 1.0);
      std::vector<std::vector<double>> extra(n, std::vector<double>(p.num_devices(), penalty));
      for (int t = 0; t < n; ++t)
        for (int k : groups[task_group[t]]) extra[t][k] = 0.0;
      tries.push_back(ScheduleInOrder(p, order, extra));
    }
    for (auto& s : tries) {
      if (!s.ok()) {
        LogTo(logger, LogLevel::kInfo,
              "getf: list scheduling on the MILP's groups failed: " + s.status().message());
        continue;
      }
      if (!s->Check(p, 1e-6).empty()) continue;
      if (!etf || s->makespan < etf->makespan) etf = std::move(*s);
    }
  }
  result.solve_time_s = clock.ElapsedSeconds();
  if (etf && (warm_start == nullptr || etf->makespan <= warm_start->makespan + 1e-12)) {
    result.schedule = std::move(*etf);
    result.status = "feasible";
  } else if (warm_start != nullptr) {
    result.schedule = *warm_start;
    result.status = "warm_start";
  } else {
    return ResourceExhausted(
        "getf: the time limit ended before the assignment MILP found a solution, and the fast "
        "planners found no schedule to fall back on");
  }
  const double ms = result.schedule.makespan;
  result.bound = std::min(result.bound, ms);
  result.gap = ms > 0 ? (ms - result.bound) / ms : 0.0;
  if (result.gap <= std::max(options.relative_gap, 1e-9)) result.status = "optimal";
  return result;
}

}  // namespace hx::place
