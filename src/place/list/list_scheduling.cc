#include "hexplan/place/list/list_scheduling.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>

#include "hexplan/place/list/memory_reservation.h"

namespace hx::place {
namespace {

// Busy intervals of one device, sorted by start.
struct DeviceTimeline {
  std::vector<std::pair<double, double>> busy;

  // Earliest start >= ready for a task of `duration` (insertion into an idle gap allowed). The
  // intervals do not overlap, so their finishes are sorted too: the scan starts at the first one
  // that ends after `ready` (those before it leave no gap at or after `ready`), which keeps a
  // long chain's schedule O(n log n) instead of O(n^2).
  double EarliestStart(double ready, double duration) const {
    double t = ready;
    auto it =
        std::partition_point(busy.begin(), busy.end(),
                             [&](const std::pair<double, double>& b) { return b.second <= ready; });
    for (; it != busy.end(); ++it) {
      if (t + duration <= it->first) return t;
      t = std::max(t, it->second);
    }
    return t;
  }
  void Insert(double s, double f) {
    auto it = std::lower_bound(busy.begin(), busy.end(), std::make_pair(s, f));
    busy.insert(it, {s, f});
  }
};

struct Choice {
  int device = -1;
  double key = kUnsupported, start = 0.0, eft = kUnsupported, load = 0.0;
  // Ties: lower EFT, then the lower device index (deterministic).
  bool Beats(const Choice& o) const {
    return key < o.key - 1e-12 || (std::abs(key - o.key) <= 1e-12 && eft < o.eft - 1e-12);
  }
};

// The best of the `fitting` devices that the reservation allows; a better one when a new packing
// of the tasks still to come leaves room there (TryRepack). When the reservation allows none (live
// activations it could not foresee), the best device a new packing allows, else the best with room
// for the task: the next-best device instead of failing. No device (-1) when none fits.
Choice ChooseWithinReservation(int t, std::vector<Choice> fitting, MemoryReservation& memory) {
  std::stable_sort(fitting.begin(), fitting.end(),
                   [](const Choice& a, const Choice& b) { return a.Beats(b); });
  if (fitting.empty()) return Choice{};
  size_t allowed = 0;
  while (allowed < fitting.size() &&
         !memory.Allows(t, fitting[allowed].device, {fitting[allowed].start, fitting[allowed].eft}))
    ++allowed;
  const size_t tries = allowed < fitting.size() ? std::min<size_t>(allowed, 1) : fitting.size();
  for (size_t i = 0; i < tries; ++i)
    if (memory.TryRepack(t, fitting[i].device, {fitting[i].start, fitting[i].eft}))
      return fitting[i];
  return allowed < fitting.size() ? fitting[allowed] : fitting.front();
}

}  // namespace

std::vector<double> UpwardRanks(const SchedulingProblem& p) {
  std::vector<int> order = p.TopologicalOrder();
  std::vector<double> rank(p.num_tasks(), 0.0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    int t = *it;
    double best = 0.0;
    for (int e : p.out_edges(t)) best = std::max(best, p.MeanCommTime(e) + rank[p.edges()[e].dst]);
    rank[t] = p.MeanCost(t) + best;
  }
  return rank;
}

std::vector<std::vector<double>> OptimisticCostTable(const SchedulingProblem& p) {
  const int D = p.num_devices();
  std::vector<int> order = p.TopologicalOrder();
  std::vector<std::vector<double>> oct(p.num_tasks(), std::vector<double>(D, 0.0));
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    int t = *it;
    for (int k = 0; k < D; ++k) {
      double worst = 0.0;
      for (int e : p.out_edges(t)) {
        int s = p.edges()[e].dst;
        double best = kUnsupported;
        for (int w = 0; w < D; ++w) {
          if (std::isinf(p.cost(s, w))) continue;
          double c = oct[s][w] + p.cost(s, w) + (w == k ? 0.0 : p.MeanCommTime(e));
          best = std::min(best, c);
        }
        worst = std::max(worst, best);
      }
      oct[t][k] = worst;
    }
  }
  return oct;
}

StatusOr<Schedule> ScheduleInOrder(const SchedulingProblem& p, const std::vector<int>& order,
                                   const std::vector<std::vector<double>>& extra) {
  HX_RETURN_IF_ERROR(p.Validate());
  const int n = p.num_tasks(), D = p.num_devices();
  if (static_cast<int>(order.size()) != n)
    return InvalidArgument("priority order does not list every task once");
  Schedule s;
  s.device.assign(n, -1);
  s.start.assign(n, 0.0);
  s.finish.assign(n, 0.0);
  std::vector<DeviceTimeline> timeline(D);
  MemoryReservation memory(p);
  std::vector<double> load_free(D, 0.0);  // when each device's host-to-device engine is next free
  std::vector<bool> done(n, false);
  for (int t : order) {
    for (int e : p.in_edges(t))
      if (!done[p.edges()[e].src])
        return InvalidArgument("priority order is not topological at task '" + p.name(t) + "'");
    // The devices with room for the task, best first.
    std::vector<Choice> fitting;
    for (int d = 0; d < D; ++d) {
      if (std::isinf(p.cost(t, d))) continue;
      Choice c;
      c.device = d;
      double ready = 0.0;
      for (int e : p.in_edges(t)) {
        int src = p.edges()[e].src;
        ready = std::max(ready, s.finish[src] + p.CommTime(e, s.device[src], d));
      }
      c.load = load_free[d] + p.load_time(t, d);
      c.start = timeline[d].EarliestStart(std::max(ready, c.load), p.cost(t, d));
      c.eft = c.start + p.cost(t, d);
      c.key = c.eft + (extra.empty() ? 0.0 : extra[t][d]);
      if (memory.Fits(t, d, {c.start, c.eft})) fitting.push_back(c);
    }
    const Choice best = ChooseWithinReservation(t, fitting, memory);
    if (best.device < 0) {
      return ResourceExhausted("task '" + p.name(t) + "' (" + std::to_string(p.task_memory(t)) +
                               " bytes) fits on no device it supports: memory is full");
    }
    s.device[t] = best.device;
    s.start[t] = best.start;
    s.finish[t] = best.eft;
    timeline[best.device].Insert(best.start, best.eft);
    memory.Place(t, best.device, {best.start, best.eft});
    load_free[best.device] = best.load;
    done[t] = true;
    s.makespan = std::max(s.makespan, best.eft);
  }
  return s;
}

namespace {
// Kahn's algorithm choosing, among ready tasks, the highest key (ties: the lower index). For HEFT's
// upward rank (and PEFT's mean OCT) with positive costs this is exactly "sort by decreasing rank";
// the readiness test keeps the order topological when zero-cost tasks tie with their successors.
std::vector<int> ByDecreasingKey(const SchedulingProblem& p, const std::vector<double>& key) {
  std::vector<int> indeg(p.num_tasks(), 0);
  for (const auto& e : p.edges()) indeg[e.dst]++;
  auto lower_priority = [&](int a, int b) { return key[a] != key[b] ? key[a] < key[b] : a > b; };
  std::priority_queue<int, std::vector<int>, decltype(lower_priority)> ready(lower_priority);
  for (int t = 0; t < p.num_tasks(); ++t)
    if (indeg[t] == 0) ready.push(t);
  std::vector<int> result;
  result.reserve(p.num_tasks());
  while (!ready.empty()) {
    int t = ready.top();
    ready.pop();
    result.push_back(t);
    for (int e : p.out_edges(t))
      if (--indeg[p.edges()[e].dst] == 0) ready.push(p.edges()[e].dst);
  }
  return result;
}
}  // namespace

StatusOr<Schedule> ScheduleHeft(const SchedulingProblem& p) {
  HX_RETURN_IF_ERROR(p.Validate());
  return ScheduleInOrder(p, ByDecreasingKey(p, UpwardRanks(p)), {});
}

StatusOr<Schedule> SchedulePeft(const SchedulingProblem& p) {
  HX_RETURN_IF_ERROR(p.Validate());
  auto oct = OptimisticCostTable(p);
  std::vector<double> rank(p.num_tasks(), 0.0);
  for (int t = 0; t < p.num_tasks(); ++t) {
    double sum = 0.0;
    for (double v : oct[t]) sum += v;
    rank[t] = sum / p.num_devices();
  }
  return ScheduleInOrder(p, ByDecreasingKey(p, rank), oct);
}

}  // namespace hx::place
