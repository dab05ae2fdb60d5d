// Coarsening a scheduling problem for MOIRAI's MILP (task_coarsening.h).

#include "hexplan/place/exact/task_coarsening.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <utility>

#include "hexplan/core/split_text.h"
#include "hexplan/core/stopwatch.h"
#include "hexplan/place/exact/moirai_milp.h"

namespace hx::place {
namespace {

// Where a task's name puts it: its scope, its block and the block's stem (task_coarsening.h).
struct CoarseNameKeys {
  std::string scope;
  std::string block;
  std::string stem;
  bool numbered = false;
};

CoarseNameKeys CoarseKeysOfName(const std::string& full) {
  const std::string name = full.substr(0, full.find('+'));  // a GCOF op: its first member
  CoarseNameKeys k;
  const char sep = name.find('/') != std::string::npos ? '/' : '.';
  std::vector<std::string> parts = SplitNonEmpty(name, sep);
  if (!parts.empty() && (parts.size() > 1 || sep == '/')) parts.pop_back();  // the op itself
  std::string prefix;
  for (size_t i = 0; i < parts.size(); ++i) {
    prefix += (i > 0 ? std::string(1, sep) : std::string()) + parts[i];
    const size_t digit = parts[i].find_first_of("0123456789");
    if (digit != std::string::npos && !k.numbered) {
      k.numbered = true;
      k.block = prefix;
      k.stem = prefix.substr(0, prefix.size() - parts[i].size() + digit);
    }
  }
  k.scope = parts.empty() ? name : prefix;
  if (!k.numbered) k.block = k.stem = k.scope;
  return k;
}

// reach[i]: the tasks reachable from i (bitset rows).
std::vector<std::vector<uint64_t>> CoarseReachability(const SchedulingProblem& p) {
  const int n = p.num_tasks();
  const size_t words = (static_cast<size_t>(n) + 63) / 64;
  std::vector<std::vector<uint64_t>> reach(n, std::vector<uint64_t>(words, 0));
  const std::vector<int> order = p.TopologicalOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    for (int e : p.out_edges(*it)) {
      const int j = p.edges()[e].dst;
      reach[*it][j / 64] |= uint64_t{1} << (j % 64);
      for (size_t w = 0; w < words; ++w) reach[*it][w] |= reach[j][w];
    }
  }
  return reach;
}

bool CoarseReaches(const std::vector<std::vector<uint64_t>>& reach, int i, int j) {
  return (reach[i][j / 64] >> (j % 64)) & 1;
}

// Kahn's order, the ready task with the smallest (rank, topological position) first.
std::vector<int> KeyedTopologicalOrder(const SchedulingProblem& p, const std::vector<int>& rank) {
  const int n = p.num_tasks();
  std::vector<int> pos(n), indegree(n, 0), order;
  const std::vector<int> topo = p.TopologicalOrder();
  for (int i = 0; i < n; ++i) pos[topo[i]] = i;
  for (const SchedulingEdge& e : p.edges()) ++indegree[e.dst];
  using Entry = std::pair<std::pair<int, int>, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
  for (int t = 0; t < n; ++t)
    if (indegree[t] == 0) ready.push({{rank[t], pos[t]}, t});
  while (!ready.empty()) {
    const int t = ready.top().second;
    ready.pop();
    order.push_back(t);
    for (int e : p.out_edges(t))
      if (--indegree[p.edges()[e].dst] == 0) {
        const int d = p.edges()[e].dst;
        ready.push({{rank[d], pos[d]}, d});
      }
  }
  return order;
}

// Each key's rank: the position of its first task in the plain topological order.
std::vector<int> RanksOfKeys(const SchedulingProblem& p, const std::vector<std::string>& key) {
  std::map<std::string, int> first;
  std::vector<int> rank(p.num_tasks(), 0);
  for (int t : p.TopologicalOrder()) first.emplace(key[t], static_cast<int>(first.size()));
  for (int t = 0; t < p.num_tasks(); ++t) rank[t] = first[key[t]];
  return rank;
}

// The devices a task can run on, as a bit mask (the first 64 devices; more are treated as one).
uint64_t SupportMask(const SchedulingProblem& p, int t) {
  uint64_t mask = 0;
  for (int d = 0; d < p.num_devices(); ++d)
    if (!std::isinf(p.cost(t, d))) mask |= uint64_t{1} << std::min(d, 63);
  return mask;
}

// Runs of `order` with one key each and a device that runs all of them: the coarse task per task.
std::vector<int> RunsOfOrder(const SchedulingProblem& p, const std::vector<int>& order,
                             const std::vector<int>& group) {
  std::vector<int> coarse_of(p.num_tasks(), -1);
  int current = -1, last_group = -1;
  uint64_t support = 0;
  for (int t : order) {
    const uint64_t mask = SupportMask(p, t);
    if (current < 0 || group[t] != last_group || (support & mask) == 0) {
      ++current;
      support = mask;
      last_group = group[t];
    }
    support &= mask;
    coarse_of[t] = current;
  }
  return coarse_of;
}

std::vector<int> GroupsOfKeys(const SchedulingProblem& p, const std::vector<std::string>& key,
                              std::vector<int>* order) {
  const std::vector<int> rank = RanksOfKeys(p, key);
  *order = KeyedTopologicalOrder(p, rank);
  return rank;  // equal keys, equal ranks
}

// About `chunks` contiguous stretches of the plain topological order with equal mean work.
std::vector<int> ChunksOfOrder(const SchedulingProblem& p, int chunks) {
  const std::vector<int> order = p.TopologicalOrder();
  const int n = p.num_tasks();
  std::vector<double> work(n, 0.0);
  double total = 0.0;
  for (int t = 0; t < n; ++t) {
    const double mean = p.MeanCost(t);
    work[t] = (std::isfinite(mean) ? mean : 0.0);
    total += work[t];
  }
  const double tiny = total > 0 ? total * 1e-9 : 1.0;  // so that zero-work tasks still split
  total += tiny * n;
  std::vector<int> group(n, 0);
  double done = 0.0;
  for (int t : order) {
    group[t] = std::min(chunks - 1, static_cast<int>(done / total * chunks));
    done += work[t] + tiny;
  }
  return RunsOfOrder(p, order, group);
}

int CountCoarse(const std::vector<int>& coarse_of) {
  int m = 0;
  for (int c : coarse_of) m = std::max(m, c + 1);
  return m;
}

// The per-pair times of edge `e` (0 on the diagonal).
std::vector<double> PairTimes(const SchedulingProblem& p, int e) {
  const int D = p.num_devices();
  std::vector<double> t(static_cast<size_t>(D) * D, 0.0);
  for (int a = 0; a < D; ++a)
    for (int b = 0; b < D; ++b)
      if (a != b) t[static_cast<size_t>(a) * D + b] = p.CommTime(e, a, b);
  return t;
}

void AddCoarseEdges(const SchedulingProblem& p, const std::vector<int>& coarse_of,
                    SchedulingProblem* coarse) {
  // Per (producer task, consuming coarse task): the largest edge (one tensor read by several
  // members moves once); per coarse pair: the sum over producers.
  std::map<std::pair<int, int>, std::vector<double>> per_producer;
  for (int e = 0; e < static_cast<int>(p.edges().size()); ++e) {
    const SchedulingEdge& edge = p.edges()[e];
    if (coarse_of[edge.src] == coarse_of[edge.dst]) continue;
    std::vector<double> t = PairTimes(p, e);
    auto [it, fresh] = per_producer.emplace(std::pair{edge.src, coarse_of[edge.dst]}, t);
    if (!fresh)
      for (size_t i = 0; i < t.size(); ++i) it->second[i] = std::max(it->second[i], t[i]);
  }
  std::map<std::pair<int, int>, std::vector<double>> per_pair;
  for (auto& [key, t] : per_producer) {
    auto [it, fresh] = per_pair.emplace(std::pair{coarse_of[key.first], key.second}, t);
    if (!fresh)
      for (size_t i = 0; i < t.size(); ++i) it->second[i] += t[i];
  }
  for (auto& [key, t] : per_pair) coarse->AddEdgeWithPairTimes(key.first, key.second, t);
}

}  // namespace

const char* CoarseLevelName(CoarseLevel level) {
  switch (level) {
    case CoarseLevel::kNone:
      return "none";
    case CoarseLevel::kScope:
      return "scope";
    case CoarseLevel::kBlock:
      return "block";
    case CoarseLevel::kBlockGroups:
      return "blocks";
    case CoarseLevel::kChunks:
      return "chunks";
  }
  return "?";
}

std::string TaskCoarsening::Summary(int original_tasks) const {
  std::string level_text = CoarseLevelName(level);
  if (level == CoarseLevel::kBlockGroups)
    level_text = std::to_string(blocks_per_task) + " blocks per task";
  return std::to_string(original_tasks) + " tasks -> " + std::to_string(coarse.num_tasks()) + " (" +
         level_text + " level, about " + std::to_string(estimated_constraints) +
         " MILP constraints)";
}

size_t EstimateMoiraiConstraints(const SchedulingProblem& p, bool congestion_control,
                                 size_t stop_above) {
  const size_t n = p.num_tasks(), D = p.num_devices(), E = p.edges().size();
  size_t count = n * 4 + 3 * D + E * (3 + 3 * D + D * (D - 1));
  if (count > stop_above) return count;
  const auto reach = CoarseReachability(p);
  for (int i = 0; i < static_cast<int>(n); ++i) {
    for (int j = i + 1; j < static_cast<int>(n); ++j)
      if (!CoarseReaches(reach, i, j) && !CoarseReaches(reach, j, i)) count += 2 * D;
    if (count > stop_above) return count;
  }
  if (!congestion_control) return count;
  for (size_t q = 0; q < E; ++q) {
    const SchedulingEdge& eq = p.edges()[q];
    for (size_t r = q + 1; r < E; ++r) {
      const SchedulingEdge& er = p.edges()[r];
      if (eq.dst == er.src || er.dst == eq.src) continue;
      if (CoarseReaches(reach, eq.dst, er.src) || CoarseReaches(reach, er.dst, eq.src)) continue;
      count += 4 * D;
    }
    if (count > stop_above) return count;
  }
  return count;
}

StatusOr<TaskCoarsening> ContractTasks(const SchedulingProblem& p,
                                       const std::vector<int>& coarse_of) {
  const int n = p.num_tasks(), D = p.num_devices();
  if (static_cast<int>(coarse_of.size()) != n) return Internal("coarsening: one group per task");
  TaskCoarsening out;
  const int m = CountCoarse(coarse_of);
  out.coarse = SchedulingProblem(m, D);
  out.coarse_of = coarse_of;
  out.members.assign(m, {});
  for (int t : p.TopologicalOrder()) {
    if (coarse_of[t] < 0) return Internal("coarsening: a task in no group");
    out.members[coarse_of[t]].push_back(t);
  }
  SchedulingProblem& c = out.coarse;
  for (int d = 0; d < D; ++d) c.SetDeviceMemory(d, p.device_memory(d));
  for (int g = 0; g < m; ++g) {
    const std::vector<int>& ops = out.members[g];
    if (ops.empty()) return Internal("coarsening: an empty coarse task");
    c.SetName(g, p.name(ops.front()) +
                     (ops.size() > 1 ? " (+" + std::to_string(ops.size() - 1) + ")" : ""));
    double memory = 0.0;
    for (int t : ops) memory += p.task_memory(t);
    c.SetTaskMemory(g, memory);
    for (int d = 0; d < D; ++d) {
      double cost = 0.0, load = 0.0;
      for (int t : ops) {
        cost += p.cost(t, d);
        load += p.load_time(t, d);
      }
      c.SetCost(g, d, std::isinf(cost) ? kUnsupported : cost);
      if (load > 0) c.SetLoadTime(g, d, load);
    }
  }
  AddCoarseEdges(p, coarse_of, &c);
  if (Status valid = c.Validate(); !valid.ok())
    return Internal("coarsening: the coarse problem is not valid: " + valid.message());
  return out;
}

namespace {

// The groupings CoarsenTasks tries, finest first: one per level (blocks: k = 2, 4, 8, ...).
std::vector<std::pair<CoarseLevel, std::vector<int>>> CandidateGroupings(
    const SchedulingProblem& p) {
  const int n = p.num_tasks();
  std::vector<CoarseNameKeys> keys(n);
  for (int t = 0; t < n; ++t) keys[t] = CoarseKeysOfName(p.name(t));
  std::vector<std::pair<CoarseLevel, std::vector<int>>> out;
  auto add = [&](CoarseLevel level, const std::vector<std::string>& key) {
    std::vector<int> order;
    const std::vector<int> group = GroupsOfKeys(p, key, &order);
    out.emplace_back(level, RunsOfOrder(p, order, group));
  };
  std::vector<std::string> scope(n), block(n);
  for (int t = 0; t < n; ++t) scope[t] = keys[t].scope, block[t] = keys[t].block;
  add(CoarseLevel::kScope, scope);
  add(CoarseLevel::kBlock, block);
  // Blocks of one stem ranked by first appearance; k of them per key.
  std::map<std::string, std::map<std::string, int>> block_rank;
  for (int t : p.TopologicalOrder())
    if (keys[t].numbered) {
      auto& ranks = block_rank[keys[t].stem];
      ranks.emplace(keys[t].block, static_cast<int>(ranks.size()));
    }
  size_t most = 0;
  for (const auto& [stem, ranks] : block_rank) most = std::max(most, ranks.size());
  for (size_t k = 2; k < 2 * most; k *= 2) {
    std::vector<std::string> key(n);
    for (int t = 0; t < n; ++t)
      key[t] = keys[t].numbered ? keys[t].stem + "#" +
                                      std::to_string(block_rank[keys[t].stem][keys[t].block] / k)
                                : keys[t].block;
    add(CoarseLevel::kBlockGroups, key);
  }
  return out;
}

}  // namespace

StatusOr<TaskCoarsening> CoarsenTasks(const SchedulingProblem& p,
                                      const TaskCoarseningOptions& options) {
  HX_RETURN_IF_ERROR(p.Validate());
  const int n = p.num_tasks();
  const int max_tasks = std::max(1, options.max_tasks);
  auto fits = [&](TaskCoarsening& c) {
    if (c.coarse.num_tasks() > max_tasks) return false;
    c.estimated_constraints =
        EstimateMoiraiConstraints(c.coarse, options.congestion_control, options.max_constraints);
    return c.estimated_constraints <= options.max_constraints;
  };
  std::vector<int> identity(n);
  std::iota(identity.begin(), identity.end(), 0);
  if (n <= max_tasks) {
    HX_ASSIGN_OR_RETURN(TaskCoarsening c, ContractTasks(p, identity));
    if (fits(c)) return c;
  }
  int blocks = 1;
  for (auto& [level, grouping] : CandidateGroupings(p)) {
    if (level == CoarseLevel::kBlockGroups) blocks *= 2;
    if (CountCoarse(grouping) > max_tasks) continue;
    HX_ASSIGN_OR_RETURN(TaskCoarsening c, ContractTasks(p, grouping));
    c.level = level;
    c.blocks_per_task = level == CoarseLevel::kBlockGroups ? blocks : 1;
    if (fits(c)) return c;
  }
  for (int chunks = std::min(max_tasks, n);; chunks = std::max(1, chunks / 2)) {
    HX_ASSIGN_OR_RETURN(TaskCoarsening c, ContractTasks(p, ChunksOfOrder(p, chunks)));
    c.level = CoarseLevel::kChunks;
    c.blocks_per_task = chunks;
    if (fits(c) || chunks == 1) return c;
  }
}

Schedule ExpandCoarseSchedule(const SchedulingProblem& p, const TaskCoarsening& coarsening,
                              const Schedule& coarse) {
  const int n = p.num_tasks();
  std::vector<int> device(n, 0);
  std::vector<double> key(n, 0.0);
  for (int t = 0; t < n; ++t) {
    const int c = coarsening.coarse_of[t];
    device[t] = coarse.device[c];
    key[t] = coarse.start[c];
  }
  return TightenSchedule(p, device, key);
}

Schedule RefineBoundary(const SchedulingProblem& p, const Schedule& schedule, int max_rounds,
                        double max_seconds) {
  Stopwatch clock;
  const int D = p.num_devices();
  std::vector<int> device = schedule.device;
  Schedule best = TightenSchedule(p, device, schedule.start);
  std::vector<double> used(D, 0.0);
  for (int t = 0; t < p.num_tasks(); ++t) used[device[t]] += p.task_memory(t);
  for (int round = 0; round < max_rounds; ++round) {
    bool improved = false;
    for (const SchedulingEdge& e : p.edges()) {
      if (clock.ElapsedSeconds() > max_seconds) return best;
      for (const auto& [t, to] :
           {std::pair{e.src, device[e.dst]}, std::pair{e.dst, device[e.src]}}) {
        const int from = device[t];
        if (from == to || std::isinf(p.cost(t, to))) continue;
        if (used[to] + p.task_memory(t) > p.device_memory(to)) continue;
        device[t] = to;
        Schedule moved = TightenSchedule(p, device, best.start);
        if (moved.makespan < best.makespan * (1 - 1e-9) && moved.Check(p, 1e-6).empty()) {
          used[from] -= p.task_memory(t);
          used[to] += p.task_memory(t);
          best = std::move(moved);
          improved = true;
        } else {
          device[t] = from;
        }
      }
    }
    if (!improved) break;
  }
  return best;
}

}  // namespace hx::place
