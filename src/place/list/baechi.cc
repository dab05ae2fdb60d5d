#include "hexplan/place/list/baechi.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "hexplan/milp/model.h"
#include "hexplan/milp/solver.h"
#include "hexplan/place/list/memory_reservation.h"

namespace hx::place {
namespace {

double ReadyTime(const SchedulingProblem& p, const Schedule& s, int t, int d) {
  double ready = 0.0;
  for (int e : p.in_edges(t)) {
    int src = p.edges()[e].src;
    ready = std::max(ready, s.finish[src] + p.CommTime(e, s.device[src], d));
  }
  return ready;
}

Schedule EmptySchedule(int n) {
  Schedule s;
  s.device.assign(n, -1);
  s.start.assign(n, 0.0);
  s.finish.assign(n, 0.0);
  return s;
}

// The ETF loop shared by m-ETF and m-SCT. `favourite_parent[t]` (may be empty) pins a task to its
// favourite parent's device when that device has memory for it.
StatusOr<Schedule> EarliestTaskFirst(const SchedulingProblem& p,
                                     const std::vector<int>& favourite_parent) {
  HX_RETURN_IF_ERROR(p.Validate());
  const int n = p.num_tasks(), D = p.num_devices();
  Schedule s = EmptySchedule(n);
  std::vector<double> device_free(D, 0.0), load_free(D, 0.0);
  std::vector<int> missing(n, 0);
  for (const auto& e : p.edges()) missing[e.dst]++;
  std::vector<int> ready;
  for (int t = 0; t < n; ++t)
    if (missing[t] == 0) ready.push_back(t);
  // Static level (longest path to an exit at mean costs) breaks ties, as in ETF.
  std::vector<double> level(n, 0.0);
  {
    auto order = p.TopologicalOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      double best = 0.0;
      for (int e : p.out_edges(*it)) best = std::max(best, level[p.edges()[e].dst]);
      level[*it] = p.MeanCost(*it) + best;
    }
  }
  MemoryReservation memory(p);
  struct Pick {
    int t = -1, d = -1;
    double start = kUnsupported, load = 0.0;
  };
  // The (ready task, device) pair that starts first among those `allowed` lets through.
  auto pick = [&](const std::function<bool(int, int, TaskSlot)>& allowed) {
    Pick best;
    for (int t : ready) {
      int pinned = -1;
      if (!favourite_parent.empty() && favourite_parent[t] >= 0) {
        int d = s.device[favourite_parent[t]];
        const double start =
            std::max({device_free[d], ReadyTime(p, s, t, d), load_free[d] + p.load_time(t, d)});
        if (allowed(t, d, {start, start + p.cost(t, d)})) pinned = d;
      }
      for (int d = 0; d < D; ++d) {
        if (pinned >= 0 && d != pinned) continue;
        if (std::isinf(p.cost(t, d))) continue;
        const double load_done = load_free[d] + p.load_time(t, d);
        double start = std::max({device_free[d], ReadyTime(p, s, t, d), load_done});
        if (!allowed(t, d, {start, start + p.cost(t, d)})) continue;
        bool better = start < best.start - 1e-12;
        if (!better && std::abs(start - best.start) <= 1e-12 && best.t >= 0)
          better = level[t] > level[best.t] + 1e-12 ||
                   (std::abs(level[t] - level[best.t]) <= 1e-12 &&
                    (t < best.t || (t == best.t && p.cost(t, d) < p.cost(t, best.d))));
        if (better) best = Pick{t, d, start, load_done};
      }
    }
    return best;
  };
  for (int scheduled = 0; scheduled < n; ++scheduled) {
    Pick best = pick([&](int t, int d, TaskSlot slot) { return memory.Allows(t, d, slot); });
    auto fits = [&](int t, int d, TaskSlot slot) { return memory.Fits(t, d, slot); };
    if (memory.CanRepack()) {  // the earliest start with free memory, when a new packing allows it
      const Pick wanted = pick(fits);
      if (wanted.t >= 0 && (wanted.t != best.t || wanted.d != best.d) &&
          memory.TryRepack(wanted.t, wanted.d,
                           {wanted.start, wanted.start + p.cost(wanted.t, wanted.d)}))
        best = wanted;
    }
    // No pair the reservation allows (live activations it could not foresee): the earliest start
    // on any device with room.
    if (best.t < 0) {
      best = pick(fits);
      if (best.t >= 0)  // a packing of the rest around it, when one exists
        memory.TryRepack(best.t, best.d, {best.start, best.start + p.cost(best.t, best.d)});
    }
    if (best.t < 0) {
      // Every ready task is out of memory everywhere: name the first.
      int t = ready.empty() ? 0 : *std::min_element(ready.begin(), ready.end());
      return ResourceExhausted("task '" + p.name(t) + "' (" +
                               std::to_string(static_cast<int64_t>(p.task_memory(t))) +
                               " bytes) fits on no device: memory is full");
    }
    const int best_t = best.t, best_d = best.d;
    const double best_start = best.start, best_load = best.load;
    s.device[best_t] = best_d;
    s.start[best_t] = best_start;
    s.finish[best_t] = best_start + p.cost(best_t, best_d);
    device_free[best_d] = s.finish[best_t];
    load_free[best_d] = best_load;
    memory.Place(best_t, best_d, {best_start, best_start + p.cost(best_t, best_d)});
    s.makespan = std::max(s.makespan, s.finish[best_t]);
    ready.erase(std::find(ready.begin(), ready.end(), best_t));
    for (int e : p.out_edges(best_t))
      if (--missing[p.edges()[e].dst] == 0) ready.push_back(p.edges()[e].dst);
  }
  return s;
}

}  // namespace

StatusOr<Schedule> ScheduleMTopo(const SchedulingProblem& p) {
  HX_RETURN_IF_ERROR(p.Validate());
  const int n = p.num_tasks(), D = p.num_devices();
  double total = 0.0;
  for (int t = 0; t < n; ++t) total += p.task_memory(t);
  Schedule s = EmptySchedule(n);
  std::vector<double> device_free(D, 0.0), load_free(D, 0.0), memory(D, 0.0);
  MemoryReservation reservation(p);
  int d = 0;
  for (int t : p.TopologicalOrder()) {
    // Move on when the device holds its share (or cannot run the task at all); when every device
    // holds its share, the rounding remainder goes wherever capacity is left.
    auto share = [&](int dev) { return std::min(p.device_memory(dev), total / D * (1 + 1e-9)); };
    auto slot = [&](int dev) {
      const double start = std::max(
          {device_free[dev], ReadyTime(p, s, t, dev), load_free[dev] + p.load_time(t, dev)});
      return TaskSlot{start, start + p.cost(t, dev)};
    };
    auto fits = [&](int dev, bool within_share) {
      if (!reservation.Allows(t, dev, slot(dev))) return false;
      return !within_share || memory[dev] == 0 || memory[dev] + p.task_memory(t) <= share(dev);
    };
    int chosen = -1;
    for (bool within_share : {true, false}) {
      for (int k = 0; k < D && chosen < 0; ++k)
        if (fits((d + k) % D, within_share)) chosen = (d + k) % D;
      if (chosen >= 0) break;
    }
    // No device the reservation allows (live activations it could not foresee): the next device
    // with room.
    for (int k = 0; k < D && chosen < 0; ++k)
      if (reservation.Fits(t, (d + k) % D, slot((d + k) % D))) chosen = (d + k) % D;
    if (chosen < 0) {
      return ResourceExhausted("task '" + p.name(t) + "' (" +
                               std::to_string(static_cast<int64_t>(p.task_memory(t))) +
                               " bytes) fits on no device: memory is full");
    }
    d = chosen;
    const double load_done = load_free[d] + p.load_time(t, d);
    double start = std::max({device_free[d], ReadyTime(p, s, t, d), load_done});
    s.device[t] = d;
    s.start[t] = start;
    s.finish[t] = start + p.cost(t, d);
    device_free[d] = s.finish[t];
    load_free[d] = load_done;
    memory[d] += p.task_memory(t);
    reservation.Place(t, d, {start, s.finish[t]});
    s.makespan = std::max(s.makespan, s.finish[t]);
  }
  return s;
}

StatusOr<Schedule> ScheduleMEtf(const SchedulingProblem& p) { return EarliestTaskFirst(p, {}); }

StatusOr<std::vector<int>> FavouriteChildren(const SchedulingProblem& p, double lp_time_limit_s) {
  HX_RETURN_IF_ERROR(p.Validate());
  const int n = p.num_tasks();
  milp::Model lp("m-sct favourite children");
  std::vector<milp::Var> start(n);
  milp::Var makespan = lp.AddContinuous(0, milp::kInfinity, "w");
  for (int t = 0; t < n; ++t)
    start[t] = lp.AddContinuous(0, milp::kInfinity, "s" + std::to_string(t));
  std::vector<milp::Var> x(p.edges().size());
  for (size_t e = 0; e < p.edges().size(); ++e) {
    const auto& edge = p.edges()[e];
    x[e] = lp.AddContinuous(0, 1, "x" + std::to_string(e));
    // s_dst >= s_src + w_src + c_e * x_e: the edge pays its communication unless it is favourite.
    lp.AddGreaterEqual(milp::LinExpr(start[edge.dst]),
                       milp::LinExpr(start[edge.src]) + p.MeanCost(edge.src) +
                           p.MeanCommTime(static_cast<int>(e)) * milp::LinExpr(x[e]),
                       "prec" + std::to_string(e), "precedence");
  }
  for (int t = 0; t < n; ++t) {
    lp.AddGreaterEqual(milp::LinExpr(makespan), milp::LinExpr(start[t]) + p.MeanCost(t),
                       "end" + std::to_string(t), "makespan");
    if (p.out_edges(t).size() > 1) {
      milp::LinExpr sum;
      for (int e : p.out_edges(t)) sum += milp::LinExpr(x[e]);
      lp.AddGreaterEqual(sum, double(p.out_edges(t).size()) - 1, "child" + std::to_string(t),
                         "one favourite child");
    }
    if (p.in_edges(t).size() > 1) {
      milp::LinExpr sum;
      for (int e : p.in_edges(t)) sum += milp::LinExpr(x[e]);
      lp.AddGreaterEqual(sum, double(p.in_edges(t).size()) - 1, "parent" + std::to_string(t),
                         "one favourite parent");
    }
  }
  lp.Minimize(milp::LinExpr(makespan));
  milp::SolveOptions options;
  options.time_limit_s = lp_time_limit_s;
  HX_ASSIGN_OR_RETURN(milp::SolveResult r, milp::SolveWithCbc(lp, options));
  std::vector<int> child(n, -1);
  if (!r.has_solution()) return child;  // no LP answer in time: plain m-ETF
  // Rounding: an edge with x < 0.5 is favourite; keep at most one per task and per child.
  std::vector<bool> has_parent(n, false);
  for (int t = 0; t < n; ++t) {
    int best = -1;
    double best_x = 0.5;
    for (int e : p.out_edges(t)) {
      double v = r.values[x[e].index()];
      int c = p.edges()[e].dst;
      if (v < best_x && !has_parent[c]) {
        best_x = v;
        best = c;
      }
    }
    if (best >= 0) {
      child[t] = best;
      has_parent[best] = true;
    }
  }
  return child;
}

StatusOr<Schedule> ScheduleMSct(const SchedulingProblem& p, double lp_time_limit_s) {
  HX_ASSIGN_OR_RETURN(std::vector<int> child, FavouriteChildren(p, lp_time_limit_s));
  return ScheduleMSctWith(p, child);
}

StatusOr<Schedule> ScheduleMSctWith(const SchedulingProblem& p, const std::vector<int>& child) {
  if (static_cast<int>(child.size()) != p.num_tasks())
    return InvalidArgument("m-sct: one favourite child per task expected");
  std::vector<int> parent(p.num_tasks(), -1);
  for (int t = 0; t < p.num_tasks(); ++t)
    if (child[t] >= 0) parent[child[t]] = t;
  StatusOr<Schedule> pinned = EarliestTaskFirst(p, parent);
  // A favourite child is a preference: when following them leaves a task no room (live
  // activations pile up where the chains run; swin-6.6b on moirai-inter), the schedule without
  // them (m-ETF's).
  if (!pinned.ok() && pinned.status().code() == StatusCode::kResourceExhausted)
    return EarliestTaskFirst(p, {});
  return pinned;
}

}  // namespace hx::place
