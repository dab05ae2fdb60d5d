#include "hexplan/share/exact.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "hexplan/share/configurator.h"

namespace hx::share {
namespace {

constexpr int kInf = std::numeric_limits<int>::max() / 4;

struct Memo {
  int value;   // fewest GPCs for the remaining services, kInf: infeasible
  int choice;  // cover index taken at this state
};

class Search {
 public:
  Search(const std::vector<std::vector<SizeCounts>>& covers, const std::vector<int>& order,
         const std::vector<int>& rest_lb, int gpus, int64_t* nodes, int64_t node_limit)
      : covers_(covers),
        order_(order),
        rest_lb_(rest_lb),
        gpus_(gpus),
        nodes_(nodes),
        node_limit_(node_limit) {}

  // Fewest GPCs for services order_[depth..] given the counts so far, or kInf.
  int Solve(size_t depth, const SizeCounts& n) {
    if (aborted_) return kInf;
    if (depth == order_.size()) return FitsOnGpus(n, gpus_) ? 0 : kInf;
    if (!Promising(depth, n)) return kInf;
    const uint64_t key = Key(depth, n);
    const bool memoizable = key != 0;
    if (memoizable) {
      auto it = memo_.find(key);
      if (it != memo_.end()) return it->second.value;
    }
    if (++*nodes_ > node_limit_) {
      aborted_ = true;
      return kInf;
    }
    int best = kInf, best_choice = -1;
    const auto& cs = covers_[order_[depth]];
    for (size_t c = 0; c < cs.size(); ++c) {
      const int g = cs[c].Gpcs();
      if (best != kInf && g + rest_lb_[depth + 1] >= best) break;  // sorted by GPCs
      SizeCounts next = n;
      for (int i = 0; i < kNumInstanceSizes; ++i) next.n[i] += cs[c].n[i];
      const int sub = Solve(depth + 1, next);
      if (aborted_) return kInf;
      if (sub != kInf && g + sub < best) {
        best = g + sub;
        best_choice = static_cast<int>(c);
      }
    }
    if (memoizable) memo_[key] = {best, best_choice};
    return best;
  }

  bool aborted() const { return aborted_; }

  // The choices of the optimum found from the root (after Solve(0, {}) returned a finite value).
  std::vector<int> Reconstruct() {
    std::vector<int> choice;
    SizeCounts n;
    for (size_t d = 0; d < order_.size(); ++d) {
      const uint64_t key = Key(d, n);
      auto it = memo_.find(key);
      int c = it != memo_.end() ? it->second.choice : -1;
      if (c < 0) {  // not memoised (counts too large): re-derive by trying each cover
        const int target = Solve(d, n);
        const auto& cs = covers_[order_[d]];
        for (size_t k = 0; k < cs.size(); ++k) {
          SizeCounts next = n;
          for (int i = 0; i < kNumInstanceSizes; ++i) next.n[i] += cs[k].n[i];
          if (cs[k].Gpcs() + Solve(d + 1, next) == target) {
            c = static_cast<int>(k);
            break;
          }
        }
      }
      choice.push_back(c);
      for (int i = 0; i < kNumInstanceSizes; ++i) n.n[i] += covers_[order_[d]][c].n[i];
    }
    return choice;
  }

 private:
  static uint64_t Key(size_t depth, const SizeCounts& n) {
    if (depth >= 127) return 0;
    uint64_t k = depth + 1;
    for (int i = 0; i < kNumInstanceSizes; ++i) {
      if (n.n[i] >= 2048) return 0;
      k = (k << 11) | static_cast<uint64_t>(n.n[i]);
    }
    return k;
  }

  // The packing conditions of FitsOnGpus, relaxed for the services still to choose: they only add
  // instances, and they need at least rest_lb_ GPCs.
  bool Promising(size_t depth, const SizeCounts& c) const {
    const long n1 = c.n[0], n2 = c.n[1], n3 = c.n[2], n4 = c.n[3], n7 = c.n[4];
    const long g = static_cast<long>(gpus_) - n7;
    if (g < 0) return false;
    const long a = std::max(0L, n3 - g);
    if (n4 + a > g) return false;
    if (n2 + 2 * n4 + n3 + a > 3 * g) return false;
    return n1 + 2 * n2 + 3 * n3 + 4 * n4 + a + rest_lb_[depth] <= 7 * g;
  }

  const std::vector<std::vector<SizeCounts>>& covers_;
  const std::vector<int>& order_;
  const std::vector<int>& rest_lb_;
  int gpus_;
  int64_t* nodes_;
  int64_t node_limit_;
  bool aborted_ = false;
  std::unordered_map<uint64_t, Memo> memo_;
};

}  // namespace

namespace {

struct Prepared {
  std::vector<std::vector<SizeCounts>> covers;
  std::vector<int> min_gpcs;
  std::vector<int> order;
  std::vector<int> rest_lb;
  bool ok = true;
};

Prepared Prepare(const std::vector<Service>& services, const std::vector<TripletArray>& triplets) {
  Prepared p;
  const size_t n = services.size();
  p.covers.resize(n);
  p.min_gpcs.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    p.covers[i] = MinimalCovers(services[i].rate, triplets[i]);
    if (p.covers[i].empty()) {
      p.ok = false;
      return p;
    }
    p.min_gpcs[i] = p.covers[i].front().Gpcs();
  }
  // Services with the most demanding covers first: they fail fastest.
  p.order.resize(n);
  std::iota(p.order.begin(), p.order.end(), 0);
  std::stable_sort(p.order.begin(), p.order.end(), [&](int a, int b) {
    if (p.min_gpcs[a] != p.min_gpcs[b]) return p.min_gpcs[a] > p.min_gpcs[b];
    return p.covers[a].size() < p.covers[b].size();
  });
  p.rest_lb.assign(n + 1, 0);
  for (int d = static_cast<int>(n) - 1; d >= 0; --d) {
    p.rest_lb[d] = p.rest_lb[d + 1] + p.min_gpcs[p.order[d]];
  }
  return p;
}

// How far counts are from fitting on `gpus` GPUs, in GPC-like units (0: they fit).
long Violation(const SizeCounts& c, int gpus) {
  const long n1 = c.n[0], n2 = c.n[1], n3 = c.n[2], n4 = c.n[3], n7 = c.n[4];
  const long g = static_cast<long>(gpus) - n7;
  if (g < 0) return 1000000L * (-g);
  const long b = std::min(n3, g);
  const long a = n3 - b;
  const long left = g - n4 - a;
  const long right = g - b;
  long v = 4 * std::max(0L, -left);
  v += 2 * std::max(0L, n2 - 2 * std::max(0L, left) - right);
  v += std::max(0L, n1 + 2 * n2 - 4 * std::max(0L, left) - 3 * right);
  return v;
}

SizeCounts Total(const std::vector<SizeCounts>& choice) {
  SizeCounts t;
  for (const auto& c : choice) {
    for (int i = 0; i < kNumInstanceSizes; ++i) t.n[i] += c.n[i];
  }
  return t;
}

}  // namespace

int GpuLowerBound(const std::vector<Service>& services, const std::vector<TripletArray>& triplets) {
  Prepared p = Prepare(services, triplets);
  if (!p.ok) return 0;
  return std::max(1, (p.rest_lb[0] + kGpcsPerGpu - 1) / kGpcsPerGpu);
}

std::vector<SizeCounts> ImproveChoice(const std::vector<Service>& services,
                                      const std::vector<TripletArray>& triplets,
                                      std::vector<SizeCounts> choice, int max_iterations) {
  Prepared p = Prepare(services, triplets);
  if (!p.ok) return choice;
  const int lb = std::max(1, (p.rest_lb[0] + kGpcsPerGpu - 1) / kGpcsPerGpu);
  std::vector<SizeCounts> best = choice;
  int best_gpus = MinGpus(Total(best));
  int iterations = 0;
  for (int target = best_gpus - 1; target >= lb && iterations < max_iterations; --target) {
    std::vector<SizeCounts> cur = best;
    SizeCounts total = Total(cur);
    long v = Violation(total, target);
    while (v > 0 && iterations < max_iterations) {
      ++iterations;
      long best_v = v;
      int best_gpcs = total.Gpcs();
      size_t best_s = 0;
      const SizeCounts* best_c = nullptr;
      for (size_t s = 0; s < cur.size(); ++s) {
        for (const auto& c : p.covers[s]) {
          SizeCounts t = total;
          for (int i = 0; i < kNumInstanceSizes; ++i) t.n[i] += c.n[i] - cur[s].n[i];
          const long tv = Violation(t, target);
          if (tv < best_v || (tv == best_v && tv < v && t.Gpcs() < best_gpcs)) {
            best_v = tv;
            best_gpcs = t.Gpcs();
            best_s = s;
            best_c = &c;
          }
        }
      }
      if (best_c == nullptr) break;  // stuck
      for (int i = 0; i < kNumInstanceSizes; ++i) total.n[i] += best_c->n[i] - cur[best_s].n[i];
      cur[best_s] = *best_c;
      v = best_v;
    }
    if (v > 0) break;
    best = cur;
    best_gpus = MinGpus(total);
    target = std::min(target, best_gpus);  // the loop decrements it
  }
  return best;
}

ExactResult MinGpusOverChoices(const std::vector<Service>& services,
                               const std::vector<TripletArray>& triplets, int upper_bound,
                               int upper_bound_gpcs, int64_t node_limit) {
  ExactResult r;
  Prepared p = Prepare(services, triplets);
  if (!p.ok) return r;
  const int lb = std::max(1, (p.rest_lb[0] + kGpcsPerGpu - 1) / kGpcsPerGpu);
  r.lower_bound = lb;
  auto run = [&](int g, bool* aborted) {
    Search search(p.covers, p.order, p.rest_lb, g, &r.nodes, node_limit);
    const int best = search.Solve(0, SizeCounts{});
    *aborted = search.aborted();
    if (best == kInf) return false;
    r.found = true;
    r.gpus = g;
    r.gpcs = best;
    const auto pick = search.Reconstruct();
    r.choice.assign(services.size(), SizeCounts{});
    for (size_t d = 0; d < services.size(); ++d)
      r.choice[p.order[d]] = p.covers[p.order[d]][pick[d]];
    return true;
  };
  bool aborted = false;
  if (upper_bound <= 0) {  // no known solution: search upwards from the lower bound
    for (int g = lb;; ++g) {
      if (run(g, &aborted)) {
        r.proven = true;
        r.lower_bound = g;
        return r;
      }
      if (aborted) return r;
      r.lower_bound = g + 1;
    }
  }
  // One GPU fewer at a time while the search finds a choice.
  int g = upper_bound;
  bool found_below = false;
  while (g > lb) {
    if (run(g - 1, &aborted)) {
      --g;
      found_below = true;
      continue;
    }
    if (!aborted) r.lower_bound = g;  // g - 1 has no choice: g is minimal
    break;
  }
  if (g == lb) r.lower_bound = lb;
  // Nothing below the bound: the fewest GPCs at the bound, within what is left of the budget.
  if (!found_below && upper_bound_gpcs != p.rest_lb[0]) run(g, &aborted);
  r.proven = r.found && r.lower_bound == r.gpus;
  return r;
}

}  // namespace hx::share
