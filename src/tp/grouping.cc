#include "hexplan/tp/grouping.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <sstream>

namespace hx::tp {
namespace {

constexpr double kEps = 1e-12;

// Per-group statistics the cost needs.
struct GroupStats {
  double sum = 0.0;
  double max = 0.0;
  double min = std::numeric_limits<double>::infinity();
  int size = 0;
};

// Eqs. 2-5 from an assignment node -> group slot (slot = ring position).
AsymCost CostFromAssignment(const std::vector<double>& caps, const std::vector<int>& slot_of, int k,
                            double batch, std::vector<GroupStats>& stats) {
  stats.assign(k, GroupStats{});
  double total = 0.0;
  for (size_t n = 0; n < caps.size(); ++n) {
    GroupStats& g = stats[slot_of[n]];
    g.sum += caps[n];
    g.max = std::max(g.max, caps[n]);
    g.min = std::min(g.min, caps[n]);
    ++g.size;
    total += caps[n];
  }
  AsymCost cost;
  if (total <= 0.0) return cost;
  double worst_ag_group_value = -1.0;
  int worst_ag_group = 0;
  for (int s = 0; s + 1 < k; ++s) {
    double step = 0.0;
    for (int t = 0; t < k; ++t) {
      const GroupStats& src = stats[((t - s) % k + k) % k];
      const GroupStats& a = stats[t];
      const GroupStats& b = stats[(t + 1) % k];
      double ra = a.sum > 0 ? a.max / a.sum : 0.0;
      double rb = b.sum > 0 ? b.max / b.sum : 0.0;
      double v = batch * (src.sum / total) * std::max(ra, rb);
      if (v > step) step = v;
      if (v > worst_ag_group_value) {
        worst_ag_group_value = v;
        worst_ag_group = ra >= rb ? t : (t + 1) % k;
      }
    }
    cost.step_costs.push_back(step);
    cost.all_gather += step;
  }
  int worst_rs_group = 0;
  double worst_rs = -1.0;
  for (int t = 0; t < k; ++t) {
    double v = batch * (stats[t].sum - stats[t].min) / total;
    if (v > worst_rs) {
      worst_rs = v;
      worst_rs_group = t;
    }
  }
  cost.reduce_scatter = std::max(worst_rs, 0.0);
  cost.dominant_group =
      (k > 1 && worst_ag_group_value > worst_rs) ? worst_ag_group : worst_rs_group;
  return cost;
}

std::vector<int> AssignmentOf(const Grouping& g, int n) {
  std::vector<int> slot(n, -1);
  for (int t = 0; t < g.k(); ++t)
    for (int node : g.groups[t]) slot[node] = t;
  return slot;
}

Grouping GroupingOf(const std::vector<int>& slot_of, int k) {
  Grouping g;
  g.groups.assign(k, {});
  for (size_t n = 0; n < slot_of.size(); ++n) g.groups[slot_of[n]].push_back(static_cast<int>(n));
  return g;
}

class Evaluator {
 public:
  Evaluator(const std::vector<double>& caps, int k) : caps_(caps), k_(k) {}
  double Total(const std::vector<int>& slot_of) {
    ++evaluations_;
    return CostFromAssignment(caps_, slot_of, k_, 1.0, stats_).total();
  }
  AsymCost Full(const std::vector<int>& slot_of) {
    ++evaluations_;
    return CostFromAssignment(caps_, slot_of, k_, 1.0, stats_);
  }
  int64_t evaluations() const { return evaluations_; }

 private:
  const std::vector<double>& caps_;
  int k_;
  std::vector<GroupStats> stats_;
  int64_t evaluations_ = 0;
};

std::vector<int> GroupSizes(const std::vector<int>& slot_of, int k) {
  std::vector<int> sizes(k, 0);
  for (int s : slot_of) ++sizes[s];
  return sizes;
}

// The paper's iterative reassignment: take the dominant group, move the node whose move lowers the
// total most; stop when no single move of a node in that group helps.
int GreedyReassign(const std::vector<double>& caps, int k, int max_iterations,
                   std::vector<int>& slot_of, Evaluator& eval) {
  int n = static_cast<int>(caps.size());
  int iterations = 0;
  while (iterations < max_iterations) {
    AsymCost current = eval.Full(slot_of);
    double current_total = current.total();
    int dominant = current.dominant_group;
    std::vector<int> sizes = GroupSizes(slot_of, k);
    if (dominant < 0 || sizes[dominant] <= 1) break;
    double best = current_total;
    int best_node = -1, best_target = -1;
    for (int node = 0; node < n; ++node) {
      if (slot_of[node] != dominant) continue;
      for (int target = 0; target < k; ++target) {
        if (target == dominant) continue;
        slot_of[node] = target;
        double v = eval.Total(slot_of);
        slot_of[node] = dominant;
        if (v < best - kEps) {
          best = v;
          best_node = node;
          best_target = target;
        }
      }
    }
    if (best_node < 0) break;
    slot_of[best_node] = best_target;
    ++iterations;
  }
  return iterations;
}

// Our local search: best-improvement over all single moves, all swaps of unequal nodes, and swaps
// of two groups' ring positions. Never returns something worse than its start.
int LocalSearch(const std::vector<double>& caps, int k, int max_iterations,
                std::vector<int>& slot_of, Evaluator& eval) {
  int n = static_cast<int>(caps.size());
  int iterations = 0;
  double current = eval.Total(slot_of);
  while (iterations < max_iterations) {
    std::vector<int> sizes = GroupSizes(slot_of, k);
    double best = current;
    std::vector<int> best_assignment;
    // Moves.
    for (int node = 0; node < n; ++node) {
      int from = slot_of[node];
      if (sizes[from] <= 1) continue;
      for (int target = 0; target < k; ++target) {
        if (target == from) continue;
        slot_of[node] = target;
        double v = eval.Total(slot_of);
        if (v < best - kEps) {
          best = v;
          best_assignment = slot_of;
        }
        slot_of[node] = from;
      }
    }
    // Swaps of nodes with different capabilities in different groups.
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        if (slot_of[a] == slot_of[b] || std::abs(caps[a] - caps[b]) < kEps) continue;
        std::swap(slot_of[a], slot_of[b]);
        double v = eval.Total(slot_of);
        if (v < best - kEps) {
          best = v;
          best_assignment = slot_of;
        }
        std::swap(slot_of[a], slot_of[b]);
      }
    }
    // Ring order: exchange the positions of two groups.
    if (k >= 3) {
      for (int x = 0; x < k; ++x) {
        for (int y = x + 1; y < k; ++y) {
          std::vector<int> trial = slot_of;
          for (int& s : trial) s = s == x ? y : (s == y ? x : s);
          double v = eval.Total(trial);
          if (v < best - kEps) {
            best = v;
            best_assignment = trial;
          }
        }
      }
    }
    if (best_assignment.empty()) break;
    slot_of = best_assignment;
    current = best;
    ++iterations;
  }
  return iterations;
}

// Exhaustive: set partitions into exactly k blocks (restricted growth strings) x ring orders with
// block 0 first.
std::vector<int> ExactSearch(const std::vector<double>& caps, int k, Evaluator& eval) {
  int n = static_cast<int>(caps.size());
  std::vector<int> rgs(n, 0), best_slot;
  double best = std::numeric_limits<double>::infinity();
  std::vector<int> perm(k);
  std::vector<int> slot(n);
  std::function<void(int, int)> rec = [&](int i, int used) {
    if (n - i < k - used) return;  // not enough nodes left to open the remaining blocks
    if (i == n) {
      if (used != k) return;
      std::iota(perm.begin(), perm.end(), 0);
      do {
        for (int v = 0; v < n; ++v) slot[v] = perm[rgs[v]];
        double c = eval.Total(slot);
        if (c < best - kEps) {
          best = c;
          best_slot = slot;
        }
      } while (std::next_permutation(perm.begin() + 1, perm.end()));
      return;
    }
    for (int b = 0; b <= used && b < k; ++b) {
      rgs[i] = b;
      rec(i + 1, b == used ? used + 1 : used);
    }
  };
  rec(0, 0);
  return best_slot;
}

// Balanced "snake" start: capabilities descending, each to the group with the smallest sum.
std::vector<int> SnakeStart(const std::vector<double>& caps, int k) {
  int n = static_cast<int>(caps.size());
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return caps[a] > caps[b]; });
  std::vector<double> sums(k, 0.0);
  std::vector<int> slot(n, 0);
  for (int i = 0; i < n; ++i) {
    int node = order[i];
    int target =
        i < k ? i : static_cast<int>(std::min_element(sums.begin(), sums.end()) - sums.begin());
    slot[node] = target;
    sums[target] += caps[node];
  }
  return slot;
}

}  // namespace

std::string Grouping::ToString() const {
  std::ostringstream out;
  for (size_t t = 0; t < groups.size(); ++t) {
    if (t) out << ' ';
    out << '{';
    for (size_t i = 0; i < groups[t].size(); ++i) out << (i ? "," : "") << groups[t][i];
    out << '}';
  }
  return out.str();
}

Status ValidateCapabilities(const std::vector<double>& capabilities) {
  if (capabilities.empty()) return InvalidArgument("tensor parallelism needs at least one node");
  for (size_t n = 0; n < capabilities.size(); ++n) {
    if (!std::isfinite(capabilities[n]) || capabilities[n] <= 0.0) {
      std::ostringstream msg;
      msg << "node " << n << " has capability " << capabilities[n]
          << "; every node needs a capability > 0 (a GPU with non-zero FLOP/s)";
      return InvalidArgument(msg.str());
    }
  }
  return Status::Ok();
}

Status ValidateGrouping(const Grouping& grouping, int num_nodes) {
  std::vector<int> seen(num_nodes, 0);
  for (int t = 0; t < grouping.k(); ++t) {
    if (grouping.groups[t].empty())
      return InvalidArgument("group " + std::to_string(t) + " is empty");
    for (int node : grouping.groups[t]) {
      if (node < 0 || node >= num_nodes)
        return InvalidArgument("group " + std::to_string(t) + " names node " +
                               std::to_string(node) + ", expected 0.." +
                               std::to_string(num_nodes - 1));
      if (seen[node]++)
        return InvalidArgument("node " + std::to_string(node) + " is in more than one group");
    }
  }
  for (int n = 0; n < num_nodes; ++n)
    if (!seen[n]) return InvalidArgument("node " + std::to_string(n) + " is in no group");
  return Status::Ok();
}

std::vector<int64_t> ProportionalSplit(int64_t items, const std::vector<double>& weights) {
  std::vector<int64_t> out(weights.size(), 0);
  double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  if (weights.empty() || total <= 0.0) return out;
  std::vector<std::pair<double, size_t>> remainders;
  int64_t assigned = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    double exact = static_cast<double>(items) * weights[i] / total;
    out[i] = static_cast<int64_t>(std::floor(exact + 1e-9));
    assigned += out[i];
    remainders.push_back({exact - static_cast<double>(out[i]), i});
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first + 1e-12; });
  for (size_t r = 0; assigned < items && r < remainders.size(); ++r, ++assigned)
    ++out[remainders[r].second];
  return out;
}

std::vector<double> BatchSplit(double batch, const std::vector<double>& capabilities) {
  double total = std::accumulate(capabilities.begin(), capabilities.end(), 0.0);
  std::vector<double> out;
  for (double c : capabilities) out.push_back(total > 0 ? batch * c / total : 0.0);
  return out;
}

AsymCost EvaluateAsymCost(const std::vector<double>& capabilities, const Grouping& grouping,
                          double batch) {
  std::vector<GroupStats> stats;
  return CostFromAssignment(capabilities,
                            AssignmentOf(grouping, static_cast<int>(capabilities.size())),
                            grouping.k(), batch, stats);
}

double SymmetricCost(double batch, double g, double k) {
  return batch / g * ((k - 1.0) + (g / k - 1.0));
}

double OneDCost(double batch, double g) { return batch * (g - 1.0) / g; }

const std::vector<GroupAlgoEntry>& GroupAlgos() {
  static const std::vector<GroupAlgoEntry> algos = {
      {"greedy", "the paper's: sorted contiguous groups, then iterative reassignment",
       GroupAlgo::kGreedy},
      {"exact", "every set partition and ring order (small N only)", GroupAlgo::kExact},
      {"optimized", "ours: greedy, then moves, swaps and ring reordering from several starts",
       GroupAlgo::kOptimized},
  };
  return algos;
}

const Registry<GroupAlgoEntry>& GroupAlgoRegistry() {
  static Registry<GroupAlgoEntry> registry("--group-algo: unknown grouping algorithm");
  static const bool listed = [] {
    for (const GroupAlgoEntry& a : GroupAlgos()) registry.Register(a.name, a);
    return true;
  }();
  (void)listed;
  return registry;
}

const char* GroupAlgoName(GroupAlgo algo) {
  for (const GroupAlgoEntry& a : GroupAlgos()) {
    if (a.algo == algo) return a.name.c_str();
  }
  return "?";
}

StatusOr<GroupAlgo> ParseGroupAlgo(const std::string& name) {
  HX_ASSIGN_OR_RETURN(const GroupAlgoEntry entry, GroupAlgoRegistry().Find(name));
  return entry.algo;
}

Status GroupingOptions::Validate() const {
  if (max_exact_nodes < 1 || max_exact_nodes > 12)
    return InvalidArgument("grouping max_exact_nodes must be in 1..12, got " +
                           std::to_string(max_exact_nodes));
  if (max_iterations < 0)
    return InvalidArgument("grouping max_iterations must be >= 0, got " +
                           std::to_string(max_iterations));
  return Status::Ok();
}

Grouping SortedInitialGrouping(const std::vector<double>& capabilities, int k) {
  int n = static_cast<int>(capabilities.size());
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return capabilities[a] < capabilities[b]; });
  double total = std::accumulate(capabilities.begin(), capabilities.end(), 0.0);
  Grouping g;
  g.groups.assign(k, {});
  int group = 0;
  double cumulative = 0.0;
  for (int i = 0; i < n; ++i) {
    int node = order[i];
    int remaining_nodes = n - i;
    int remaining_groups = k - group;
    // Close the current group when the target C*(group+1)/k is better met without this node, or
    // when the remaining nodes are just enough to give each remaining group one.
    if (!g.groups[group].empty() && group + 1 < k) {
      double target = total * (group + 1) / k;
      bool must_close = remaining_nodes == remaining_groups - 1;
      bool better_without = std::abs(cumulative - target) <=
                            std::abs(cumulative + capabilities[node] - target) + kEps;
      if (must_close || better_without) ++group;
    }
    g.groups[group].push_back(node);
    cumulative += capabilities[node];
  }
  for (auto& members : g.groups) std::sort(members.begin(), members.end());
  return g;
}

StatusOr<GroupingResult> FormGroups(const std::vector<double>& capabilities, int k,
                                    const GroupingOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  HX_RETURN_IF_ERROR(ValidateCapabilities(capabilities));
  int n = static_cast<int>(capabilities.size());
  if (k < 1 || k > n)
    return InvalidArgument("--groups " + std::to_string(k) + " is out of range: the cluster has " +
                           std::to_string(n) + " nodes, so k must be in 1.." + std::to_string(n));
  if (options.algo == GroupAlgo::kExact && n > options.max_exact_nodes)
    return InvalidArgument("exact group search is limited to " +
                           std::to_string(options.max_exact_nodes) + " nodes, got " +
                           std::to_string(n));
  Evaluator eval(capabilities, k);
  GroupingResult result;
  std::vector<int> slot;
  if (options.algo == GroupAlgo::kExact) {
    slot = ExactSearch(capabilities, k, eval);
  } else {
    slot = AssignmentOf(SortedInitialGrouping(capabilities, k), n);
    result.iterations = GreedyReassign(capabilities, k, options.max_iterations, slot, eval);
    if (options.algo == GroupAlgo::kOptimized) {
      double greedy_cost = eval.Total(slot);
      std::vector<int> best = slot;
      double best_cost = greedy_cost;
      if (n <= options.max_exact_nodes) {
        std::vector<int> exact = ExactSearch(capabilities, k, eval);
        double c = eval.Total(exact);
        if (c < best_cost - kEps) best = exact, best_cost = c;
      } else {
        std::vector<std::vector<int>> starts = {slot, SnakeStart(capabilities, k)};
        for (auto& start : starts) {
          result.iterations += LocalSearch(capabilities, k, options.max_iterations, start, eval);
          double c = eval.Total(start);
          if (c < best_cost - kEps) best = start, best_cost = c;
        }
      }
      slot = best;
    }
  }
  result.grouping = GroupingOf(slot, k);
  result.cost = EvaluateAsymCost(capabilities, result.grouping, 1.0);
  result.evaluations = eval.evaluations();
  return result;
}

StatusOr<AutoGroupingResult> FormGroupsAutoK(const std::vector<double>& capabilities,
                                             const GroupingOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  HX_RETURN_IF_ERROR(ValidateCapabilities(capabilities));
  int n = static_cast<int>(capabilities.size());
  AutoGroupingResult out;
  // Cheap pass: the paper's greedy for every k; then our optimiser on the three best k (the cost
  // over k is smooth, so the optimum's k is among the greedy's best).
  GroupingOptions greedy = options;
  greedy.algo = GroupAlgo::kGreedy;
  std::vector<GroupingResult> per_k;
  for (int k = 1; k <= n; ++k) {
    HX_ASSIGN_OR_RETURN(GroupingResult r, FormGroups(capabilities, k, greedy));
    per_k.push_back(std::move(r));
  }
  if (options.algo != GroupAlgo::kGreedy) {
    std::vector<int> ks(n);
    std::iota(ks.begin(), ks.end(), 1);
    std::stable_sort(ks.begin(), ks.end(), [&](int a, int b) {
      return per_k[a - 1].cost.total() < per_k[b - 1].cost.total();
    });
    int refine = options.algo == GroupAlgo::kExact ? n : std::min(n, 3);
    for (int i = 0; i < refine; ++i) {
      int k = ks[i];
      HX_ASSIGN_OR_RETURN(GroupingResult r, FormGroups(capabilities, k, options));
      if (r.cost.total() < per_k[k - 1].cost.total() - kEps) per_k[k - 1] = std::move(r);
    }
  }
  int best_k = 1;
  for (int k = 1; k <= n; ++k) {
    out.cost_per_k.push_back(per_k[k - 1].cost.total());
    if (per_k[k - 1].cost.total() < per_k[best_k - 1].cost.total() - kEps) best_k = k;
  }
  out.best = std::move(per_k[best_k - 1]);
  return out;
}

}  // namespace hx::tp
