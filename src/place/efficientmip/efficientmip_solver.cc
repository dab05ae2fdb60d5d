// SolveEfficientMip: the greedy, a DP over topological orders of the blocks, a local search on the
// exact latency, then EfficientMIP's latency IP on CBC warm-started with the best of them.

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "hexplan/core/interrupt.h"
#include "hexplan/core/stopwatch.h"
#include "hexplan/milp/model.h"
#include "hexplan/milp/solver.h"
#include "hexplan/place/exact/exact_planner.h"
#include "place/efficientmip/efficientmip_internal.h"

namespace hx::place {
namespace {

using efficientmip_internal::Blocks;
using efficientmip_internal::SplitLatency;
using efficientmip_internal::SplitTimes;

constexpr double kSolverInf = std::numeric_limits<double>::infinity();
// CBC is not started with less than this (a limit that ends inside its preprocessing can crash
// CBC 2.10, and nothing is found in less anyway).
constexpr double kMinMilpSeconds = 0.5;

struct Candidate {
  EfficientMipSplit split;
  double latency = kSolverInf;
  std::string source;
};

std::string Mib(double bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / 1048576.0);
  return buf;
}

// Why no split exists, naming the constraint class and the shortfall: a block that only an
// accelerator can run and that is larger than an accelerator's memory (the memory constraint of
// every accelerator, short by the excess), or the accelerator-only blocks together larger than all
// accelerators (the memory constraints summed, short by the excess; a lower bound on what is
// missing, as blocks do not split).
Status InfeasibleSplitStatus(const EfficientMipInstance& inst, const Blocks& blocks) {
  const std::string where = inst.name + ": efficientmip: no valid split: ";
  const int64_t memory = inst.accelerator_memory_bytes;
  double must_total = 0.0;
  int must_count = 0;
  for (size_t b = 0; b < blocks.nodes.size(); ++b) {
    int cpu_blocker = -1, acc_blocker = -1;
    for (int v : blocks.nodes[b]) {
      if (!inst.has_cpu || !std::isfinite(inst.cpu_latency_s[v])) cpu_blocker = v;
      if (!std::isfinite(inst.accelerator_latency_s[v])) acc_blocker = v;
    }
    if (cpu_blocker < 0) continue;  // the CPU can take it
    const std::string node = "'" + inst.node_names[cpu_blocker] + "'";
    if (acc_blocker >= 0)
      return ResourceExhausted(
          where + "assignment: node " + node +
          (inst.has_cpu ? " cannot run on the CPU" : " needs an accelerator (no CPU)") +
          " and node '" + inst.node_names[acc_blocker] +
          "' of its colour class cannot run on an accelerator");
    if (inst.num_accelerators == 0)
      return ResourceExhausted(where + "assignment: node " + node +
                               " needs an accelerator and the instance has none");
    if (blocks.size_bytes[b] > memory)
      return ResourceExhausted(
          where + "memory: node " + node +
          (blocks.nodes[b].size() > 1 ? " and its colour class" : "") +
          " cannot run on the CPU and need " + Mib(static_cast<double>(blocks.size_bytes[b])) +
          " on one accelerator, which holds " + Mib(static_cast<double>(memory)) + ": short by " +
          Mib(static_cast<double>(blocks.size_bytes[b] - memory)));
    must_total += static_cast<double>(blocks.size_bytes[b]);
    ++must_count;
  }
  const double capacity = static_cast<double>(memory) * inst.num_accelerators;
  if (must_total > capacity)
    return ResourceExhausted(where + "memory: " + std::to_string(must_count) +
                             " blocks that cannot run on the CPU need " + Mib(must_total) +
                             " in all, the " + std::to_string(inst.num_accelerators) +
                             " accelerators hold " + Mib(capacity) + ": short by at least " +
                             Mib(must_total - capacity));
  return ResourceExhausted(
      where + "memory: the blocks that cannot run on the CPU (" + Mib(must_total) + ") fit the " +
      std::to_string(inst.num_accelerators) + " accelerators' " + Mib(capacity) +
      " in total, but no packing of them into " + Mib(static_cast<double>(memory)) +
      " accelerators was found (bin packing), and no heuristic split was valid");
}

// ---- DP over one topological order of the blocks (q = 1): consecutive runs of blocks become
// subgraphs (or single blocks go to the CPU), minimising the serial sum of the subgraph costs
// (in + compute + out) and CPU times, an upper bound of the exact latency of the result.
struct DpResult {
  EfficientMipSplit split;
  double value = kSolverInf;  // the serial sum it minimises
};
std::optional<DpResult> DpSplit(const EfficientMipInstance& inst, const Blocks& blocks,
                                const std::vector<int>& order) {
  const int num = static_cast<int>(order.size());
  const int k = inst.num_accelerators;
  std::vector<int> pos(num);
  for (int p = 0; p < num; ++p) pos[order[p]] = p;
  // Per position: accelerator time, CPU time, size.
  std::vector<double> acc(num, 0.0), cpu(num, 0.0);
  std::vector<int64_t> size(num, 0);
  for (int p = 0; p < num; ++p) {
    for (int v : blocks.nodes[order[p]]) {
      acc[p] += inst.accelerator_latency_s[v];
      cpu[p] += inst.has_cpu ? inst.cpu_latency_s[v] : kSolverInf;
    }
    size[p] = blocks.size_bytes[order[p]];
  }
  // Items: producer position and last reader position.
  const int num_items = static_cast<int>(inst.items.size());
  std::vector<int> prod_pos(num_items), last_pos(num_items);
  std::vector<std::vector<int>> ending_at(num);
  for (int i = 0; i < num_items; ++i) {
    prod_pos[i] = pos[blocks.block_of[inst.items[i].producer]];
    int last = prod_pos[i];
    for (int r : inst.items[i].readers) last = std::max(last, pos[blocks.block_of[r]]);
    last_pos[i] = last;
    ending_at[last].push_back(i);
  }
  std::vector<std::vector<int>> items_read_at(num), items_made_at(num);
  for (int p = 0; p < num; ++p)
    for (int v : blocks.nodes[order[p]]) {
      for (int i : inst.items_read[v]) items_read_at[p].push_back(i);
      for (int i : inst.items_produced[v]) items_made_at[p].push_back(i);
    }
  // f[s][j]: best cost of positions [0, j) with s subgraphs; choice for reconstruction.
  std::vector<std::vector<double>> f(k + 1, std::vector<double>(num + 1, kSolverInf));
  std::vector<std::vector<int>> from(k + 1, std::vector<int>(num + 1, -2));  // -1: CPU step
  f[0][0] = 0.0;
  std::vector<int> stamp(num_items, -1);
  for (int i = 0; i < num; ++i) {
    for (int s = 0; s <= k; ++s) {
      if (!std::isfinite(f[s][i])) continue;
      if (std::isfinite(cpu[i]) && f[s][i] + cpu[i] < f[s][i + 1]) {
        f[s][i + 1] = f[s][i] + cpu[i];
        from[s][i + 1] = -1;
      }
    }
    // Segments [i, j).
    double compute = 0.0, in = 0.0, out = 0.0;
    int64_t used = 0;
    for (int j = i + 1; j <= num; ++j) {
      const int p = j - 1;
      used += size[p];
      compute += acc[p];
      if (used > inst.accelerator_memory_bytes || !std::isfinite(compute)) break;
      for (int it : items_read_at[p])
        if (prod_pos[it] < i && stamp[it] != i) {
          stamp[it] = i;
          in += inst.items[it].cost_s;
        }
      for (int it : ending_at[p])
        if (prod_pos[it] >= i && prod_pos[it] < p) out -= inst.items[it].cost_s;
      for (int it : items_made_at[p])
        if (last_pos[it] > p) out += inst.items[it].cost_s;
      const double seg = in + compute + std::max(0.0, out);
      for (int s = 0; s < k; ++s) {
        if (!std::isfinite(f[s][i])) continue;
        if (f[s][i] + seg < f[s + 1][j]) {
          f[s + 1][j] = f[s][i] + seg;
          from[s + 1][j] = i;
        }
      }
    }
  }
  int best_s = -1;
  for (int s = 0; s <= k; ++s)
    if (std::isfinite(f[s][num]) && (best_s < 0 || f[s][num] < f[best_s][num])) best_s = s;
  if (best_s < 0) return std::nullopt;
  EfficientMipSplit split;
  split.subgraph_of.assign(inst.num_nodes(), EfficientMipSplit::kCpu);
  split.subgraph_device.assign(best_s, 0);
  for (int s = 0; s < best_s; ++s) split.subgraph_device[s] = s;
  int j = num, s = best_s;
  while (j > 0) {
    const int i = from[s][j];
    if (i == -1) {
      --j;  // CPU block
      continue;
    }
    for (int p = i; p < j; ++p)
      for (int v : blocks.nodes[order[p]]) split.subgraph_of[v] = s - 1;
    j = i;
    --s;
  }
  return DpResult{std::move(split), f[best_s][num]};
}

// A lower bound on every split's latency with at most q subgraphs per accelerator: along any path
// P of the graph, a split's units follow one another (each feeds the next), a contiguous subgraph
// meets P in an interval, and each unit costs at least its part restricted to P (P's nodes, items
// made and read on P). So the best split of P alone into at most k*q intervals (each within one
// accelerator's memory) or CPU nodes, which the DP finds exactly, is a lower bound. P: the
// longest path by fastest node time, and the longest by accelerator time plus transfer costs.
double PathBound(const EfficientMipInstance& inst, int q) {
  const int n = inst.num_nodes();
  const std::vector<int> order = efficientmip_internal::NodeOrder(inst);
  double best_bound = 0.0;
  for (int weighting = 0; weighting < 2; ++weighting) {
    std::vector<double> dist(n, 0.0);
    std::vector<int> parent(n, -1);
    auto weight = [&](int v) {
      double w = std::min(inst.cpu_latency_s[v], inst.accelerator_latency_s[v]);
      if (weighting == 1) {
        w = std::isfinite(inst.accelerator_latency_s[v]) ? inst.accelerator_latency_s[v] : w;
        for (int i : inst.items_produced[v]) w += inst.items[i].cost_s;
      }
      return w;
    };
    int end = -1;
    for (int v : order) {
      double start = 0.0;
      for (int u : inst.predecessors[v])
        if (parent[v] < 0 || dist[u] > start) {
          start = dist[u];
          parent[v] = u;
        }
      dist[v] = start + weight(v);
      if (end < 0 || dist[v] > dist[end]) end = v;
    }
    if (end < 0) continue;
    std::vector<int> path;
    for (int v = end; v >= 0; v = parent[v]) path.push_back(v);
    std::reverse(path.begin(), path.end());
    // The instance of P alone.
    std::vector<int> pos(n, -1);
    for (size_t i = 0; i < path.size(); ++i) pos[path[i]] = static_cast<int>(i);
    EfficientMipInstance sub;
    sub.name = inst.name + "-path";
    sub.num_accelerators = inst.num_accelerators * q;
    sub.accelerator_memory_bytes = inst.accelerator_memory_bytes;
    sub.has_cpu = inst.has_cpu;
    for (int v : path) {
      sub.node_names.push_back(inst.node_names[v]);
      sub.cpu_latency_s.push_back(inst.cpu_latency_s[v]);
      sub.accelerator_latency_s.push_back(inst.accelerator_latency_s[v]);
      sub.size_bytes.push_back(inst.size_bytes[v]);
      sub.color_class.push_back(static_cast<int>(sub.color_class.size()));
      for (int i : inst.items_produced[v]) {
        EfficientMipInstance::Item item{pos[v], {}, inst.items[i].cost_s};
        for (int r : inst.items[i].readers)
          if (pos[r] >= 0) item.readers.push_back(pos[r]);
        if (!item.readers.empty()) sub.items.push_back(std::move(item));
      }
    }
    efficientmip_internal::FinishAdjacency(sub);
    const Blocks blocks = efficientmip_internal::ComputeBlocks(sub);
    std::vector<int> identity(blocks.nodes.size());
    for (size_t b = 0; b < identity.size(); ++b) identity[b] = static_cast<int>(b);
    auto dp = DpSplit(sub, blocks, identity);
    if (dp) best_bound = std::max(best_bound, dp->value);
  }
  return best_bound;
}

// ---- Local search on the exact latency: move one block to a neighbouring subgraph, to the CPU or
// to an unused accelerator; first improvement, until none or the deadline.
void LocalSearch(const EfficientMipInstance& inst, const Blocks& blocks,
                 const EfficientMipEvalOptions& eval, Candidate& current, const Stopwatch& watch,
                 double deadline_s) {
  const int num = static_cast<int>(blocks.nodes.size());
  const int k = inst.num_accelerators;
  bool improved = true;
  while (improved && watch.ElapsedSeconds() < deadline_s) {
    improved = false;
    for (int b = 0; b < num && watch.ElapsedSeconds() < deadline_s; ++b) {
      const int here = current.split.subgraph_of[blocks.nodes[b][0]];
      std::set<int> targets;  // subgraph indices; kCpu; num_subgraphs() = a new subgraph
      for (const auto* list : {&blocks.predecessors[b], &blocks.successors[b]})
        for (int o : *list) targets.insert(current.split.subgraph_of[blocks.nodes[o][0]]);
      if (inst.has_cpu) targets.insert(EfficientMipSplit::kCpu);
      std::vector<char> device_used(k, 0);
      for (int d : current.split.subgraph_device) device_used[d] = 1;
      int free_device = -1;
      for (int d = 0; d < k && free_device < 0; ++d)
        if (!device_used[d]) free_device = d;
      if (free_device >= 0) targets.insert(current.split.num_subgraphs());
      targets.erase(here);
      if (targets.empty()) continue;
      bool boundary = false;  // only blocks next to another unit can gain
      for (const auto* list : {&blocks.predecessors[b], &blocks.successors[b]})
        for (int o : *list) boundary |= current.split.subgraph_of[blocks.nodes[o][0]] != here;
      if (!boundary && here != EfficientMipSplit::kCpu) continue;
      for (int t : targets) {
        EfficientMipSplit trial = current.split;
        if (t == trial.num_subgraphs()) trial.subgraph_device.push_back(free_device);
        for (int v : blocks.nodes[b]) trial.subgraph_of[v] = t;
        const double lat = SplitLatency(inst, trial, eval, nullptr);
        if (lat < current.latency * (1 - 1e-12) - 1e-15) {
          current.split = efficientmip_internal::Compact(trial);
          current.latency = lat;
          current.source = "local search";
          improved = true;
          break;
        }
      }
    }
  }
}

// ---- The latency IP (lip.py of the paper's repository, per block): x[b][m] for the CPU (m = 0)
// and k*q subgraph slots; contiguity (z), in/out transfers, subgraph start/finish, node latencies.
struct LatencyMilp {
  milp::Model model{"efficientmip"};
  int num_blocks = 0;
  int slots = 0;  // k * q
  int q = 1;
  std::vector<std::vector<milp::Var>> x, z;               // [block][m], m = 0 CPU, 1..slots
  std::vector<std::vector<milp::Var>> comm_in, comm_out;  // [item][slot-1] (invalid: not needed)
  std::vector<milp::Var> latency, start, finish;
  milp::Var total;
};

// Whether v is read outside its block or is a sink (its finish matters to the IP).
bool BoundaryNode(const EfficientMipInstance& inst, const Blocks& blocks, int v) {
  if (inst.successors[v].empty()) return true;
  for (int w : inst.successors[v])
    if (blocks.block_of[w] != blocks.block_of[v]) return true;
  return false;
}

// The size of the IP BuildLatencyMilp makes over `blocks` with `slots` subgraph slots, without
// building it (the size guard: CBC does not look at its time limit while it solves the root LP or
// preprocesses, so a model too large is never handed to it).
struct MilpSize {
  size_t binaries = 0;
  size_t rows = 0;
  size_t nonzeros = 0;
};
MilpSize EstimateLatencyMilp(const EfficientMipInstance& inst, const Blocks& blocks, int slots) {
  const size_t nb = blocks.nodes.size(), S = static_cast<size_t>(slots);
  const size_t k = static_cast<size_t>(inst.num_accelerators);
  size_t block_edges = 0;
  for (const auto& succ : blocks.successors) block_edges += succ.size();
  size_t cross_items = 0, cross_readers = 0;
  std::vector<int> seen(nb, -1);
  for (size_t i = 0; i < inst.items.size(); ++i) {
    const int pb = blocks.block_of[inst.items[i].producer];
    size_t readers = 0;
    for (int r : inst.items[i].readers) {
      const int rb = blocks.block_of[r];
      if (rb != pb && seen[rb] != static_cast<int>(i)) {
        seen[rb] = static_cast<int>(i);
        ++readers;
      }
    }
    if (readers == 0) continue;
    ++cross_items;
    cross_readers += readers;
  }
  size_t preds = 0, boundary = 0, sinks = 0;
  for (int v = 0; v < inst.num_nodes(); ++v) {
    preds += inst.predecessors[v].size();
    boundary += BoundaryNode(inst, blocks, v) ? 1 : 0;
    sinks += inst.successors[v].empty() ? 1 : 0;
  }
  const size_t n = static_cast<size_t>(inst.num_nodes());
  MilpSize size;
  size.binaries = nb * (S + 1);
  size.rows = nb + k + S * (nb + 2 * block_edges) + S * (2 * cross_readers + cross_items) + S +
              (S > k ? S - k : 0) + n + preds + S * boundary + sinks;
  size.nonzeros = nb * (S + 1) + nb * S + S * (2 * nb + 5 * block_edges) +
                  S * (6 * cross_readers + 3 * cross_items) + S * (nb + 2 * cross_items + 1) +
                  2 * S + 2 * n + 3 * preds + 3 * S * boundary + 2 * sinks;
  return size;
}

// A coarser set of blocks around a split, for the IP when the full one is too large: the blocks in
// a topological order that keeps each unit of the split together (its units' order, then block
// index), cut at every unit boundary; in each unit's run the `width` blocks at either end stay
// single (the IP can move the cut points by up to `width` blocks) and the middle becomes one block.
// Runs of a topological order are convex and their contraction is acyclic, so a split of the
// coarse blocks that the IP finds contiguous is contiguous on the nodes.
Blocks CoarsenAround(const EfficientMipInstance& inst, const Blocks& blocks,
                     const EfficientMipSplit& split, const SplitTimes& times, int width) {
  const int nb = static_cast<int>(blocks.nodes.size());
  // A subgraph, or kCpu (CPU blocks next to each other in the order may merge: their nodes keep
  // their own CPU times in the IP).
  auto unit_of = [&](int b) { return split.subgraph_of[blocks.nodes[b][0]]; };
  // Kahn's order, the ready block whose unit the evaluation started first taken first.
  std::vector<int> key(nb, std::numeric_limits<int>::max()), indeg(nb);
  for (int b = 0; b < nb; ++b) {
    for (int v : blocks.nodes[b]) key[b] = std::min(key[b], times.node_rank[v]);
    indeg[b] = static_cast<int>(blocks.predecessors[b].size());
  }
  std::set<std::pair<int, int>> ready;
  for (int b = 0; b < nb; ++b)
    if (indeg[b] == 0) ready.insert({key[b], b});
  std::vector<int> order;
  while (!ready.empty()) {
    const int b = ready.begin()->second;
    ready.erase(ready.begin());
    order.push_back(b);
    for (int s : blocks.successors[b])
      if (--indeg[s] == 0) ready.insert({key[s], s});
  }
  std::vector<int> coarse_of(nb, -1);
  int next = 0;
  for (int i = 0; i < nb;) {
    int j = i + 1;
    while (j < nb && unit_of(order[j]) == unit_of(order[i])) ++j;
    const int len = j - i;
    for (int p = i; p < j; ++p) {
      const int from_start = p - i, from_end = j - 1 - p;
      if (len <= 2 * width + 1 || from_start < width || from_end < width) {
        coarse_of[order[p]] = next++;
      } else {
        coarse_of[order[p]] = next;  // the middle
        if (from_end == width) ++next;
      }
    }
    i = j;
  }
  Blocks c;
  c.nodes.assign(next, {});
  c.size_bytes.assign(next, 0);
  c.block_of.assign(inst.num_nodes(), -1);
  c.successors.assign(next, {});
  c.predecessors.assign(next, {});
  for (int b = 0; b < nb; ++b) {
    const int cb = coarse_of[b];
    for (int v : blocks.nodes[b]) {
      c.nodes[cb].push_back(v);
      c.block_of[v] = cb;
    }
    c.size_bytes[cb] += blocks.size_bytes[b];
    for (int s : blocks.successors[b])
      if (coarse_of[s] != cb) {
        c.successors[cb].push_back(coarse_of[s]);
        c.predecessors[coarse_of[s]].push_back(cb);
      }
  }
  for (auto* lists : {&c.nodes, &c.predecessors, &c.successors})
    for (auto& l : *lists) {
      std::sort(l.begin(), l.end());
      l.erase(std::unique(l.begin(), l.end()), l.end());
    }
  return c;
}

LatencyMilp BuildLatencyMilp(const EfficientMipInstance& inst, const Blocks& blocks, int q,
                             double horizon) {
  LatencyMilp lp;
  lp.q = q;
  lp.num_blocks = static_cast<int>(blocks.nodes.size());
  lp.slots = inst.num_accelerators * q;
  milp::Model& m = lp.model;
  const int nb = lp.num_blocks, S = lp.slots;
  auto slot_name = [](int s) { return s == 0 ? std::string("cpu") : "s" + std::to_string(s); };
  lp.x.assign(nb, std::vector<milp::Var>(S + 1));
  lp.z.assign(nb, std::vector<milp::Var>(S + 1));
  for (int b = 0; b < nb; ++b) {
    bool cpu_ok = inst.has_cpu, acc_ok = blocks.size_bytes[b] <= inst.accelerator_memory_bytes;
    for (int v : blocks.nodes[b]) {
      cpu_ok &= std::isfinite(inst.cpu_latency_s[v]);
      acc_ok &= std::isfinite(inst.accelerator_latency_s[v]);
    }
    milp::LinExpr once;
    for (int s = 0; s <= S; ++s) {
      const bool ok = s == 0 ? cpu_ok : acc_ok;
      lp.x[b][s] = m.AddVar(0.0, ok ? 1.0 : 0.0, milp::VarType::kBinary,
                            "x_b" + std::to_string(b) + "_" + slot_name(s));
      once += lp.x[b][s];
    }
    m.AddEqual(once, 1.0, "assign_b" + std::to_string(b), "assignment");
  }
  // Memory per accelerator (all its slots).
  for (int d = 0; d < inst.num_accelerators; ++d) {
    milp::LinExpr used;
    for (int s = d * q + 1; s <= (d + 1) * q; ++s)
      for (int b = 0; b < nb; ++b)
        if (blocks.size_bytes[b] > 0)
          used.Add(lp.x[b][s], static_cast<double>(blocks.size_bytes[b]) / 1048576.0);
    m.AddLessEqual(used, static_cast<double>(inst.accelerator_memory_bytes) / 1048576.0,
                   "mem_acc" + std::to_string(d), "memory");
  }
  // Contiguity per slot.
  for (int s = 1; s <= S; ++s) {
    for (int b = 0; b < nb; ++b) {
      lp.z[b][s] = m.AddContinuous(0.0, 1.0, "z_b" + std::to_string(b) + "_" + slot_name(s));
      m.AddGreaterEqual(lp.z[b][s], lp.x[b][s], "", "contiguity");
    }
    for (int a = 0; a < nb; ++a)
      for (int b : blocks.successors[a]) {
        m.AddLessEqual(lp.z[b][s], lp.z[a][s], "", "contiguity");
        m.AddLessEqual(milp::LinExpr(lp.z[b][s]) - lp.x[b][s] + lp.x[a][s], 1.0, "", "contiguity");
      }
  }
  // Transfers: per item and slot.
  const int num_items = static_cast<int>(inst.items.size());
  lp.comm_in.assign(num_items, std::vector<milp::Var>(S + 1));
  lp.comm_out.assign(num_items, std::vector<milp::Var>(S + 1));
  std::vector<std::vector<int>> item_reader_blocks(num_items);
  for (int i = 0; i < num_items; ++i) {
    const int pb = blocks.block_of[inst.items[i].producer];
    for (int r : inst.items[i].readers)
      if (blocks.block_of[r] != pb) item_reader_blocks[i].push_back(blocks.block_of[r]);
    auto& rb = item_reader_blocks[i];
    std::sort(rb.begin(), rb.end());
    rb.erase(std::unique(rb.begin(), rb.end()), rb.end());
    if (rb.empty()) continue;
    for (int s = 1; s <= S; ++s) {
      const std::string tag = "_i" + std::to_string(i) + "_" + slot_name(s);
      lp.comm_in[i][s] = m.AddContinuous(0.0, 1.0, "cin" + tag);
      lp.comm_out[i][s] = m.AddContinuous(0.0, 1.0, "cout" + tag);
      for (int r : rb) {
        m.AddGreaterEqual(lp.comm_in[i][s], milp::LinExpr(lp.x[r][s]) - lp.x[pb][s], "",
                          "transfer");
        m.AddGreaterEqual(lp.comm_out[i][s], milp::LinExpr(lp.x[pb][s]) - lp.x[r][s], "",
                          "transfer");
      }
    }
  }
  // Times.
  const int n = inst.num_nodes();
  lp.latency.resize(n);
  for (int v = 0; v < n; ++v)
    lp.latency[v] = m.AddContinuous(0.0, horizon, "lat_" + std::to_string(v));
  lp.start.resize(S + 1);
  lp.finish.resize(S + 1);
  for (int s = 1; s <= S; ++s) {
    lp.start[s] = m.AddContinuous(0.0, horizon, "start_" + slot_name(s));
    lp.finish[s] = m.AddContinuous(0.0, horizon, "finish_" + slot_name(s));
    milp::LinExpr load(lp.start[s]);
    for (int b = 0; b < nb; ++b) {
      double acc = 0.0;
      for (int v : blocks.nodes[b]) acc += inst.accelerator_latency_s[v];
      if (std::isfinite(acc) && acc > 0) load.Add(lp.x[b][s], acc);
    }
    for (int i = 0; i < num_items; ++i)
      if (lp.comm_in[i][s].valid() && inst.items[i].cost_s > 0) {
        load.Add(lp.comm_in[i][s], inst.items[i].cost_s);
        load.Add(lp.comm_out[i][s], inst.items[i].cost_s);
      }
    m.AddEqual(lp.finish[s], load, "finish_" + slot_name(s), "subgraph time");
    // Inputs ready: start >= latency[producer] when the item comes in.
    for (int i = 0; i < num_items; ++i)
      if (lp.comm_in[i][s].valid())
        m.AddGreaterEqual(milp::LinExpr(lp.start[s]) - lp.latency[inst.items[i].producer] -
                              horizon * milp::LinExpr(lp.comm_in[i][s]),
                          -horizon, "", "precedence");
    // Slots of one accelerator run in order.
    if ((s - 1) % q != 0) m.AddGreaterEqual(lp.start[s], lp.finish[s - 1], "", "device order");
  }
  for (int v = 0; v < n; ++v) {
    const int b = blocks.block_of[v];
    const double cpu =
        inst.has_cpu && std::isfinite(inst.cpu_latency_s[v]) ? inst.cpu_latency_s[v] : 0.0;
    milp::LinExpr own;
    if (cpu > 0) own.Add(lp.x[b][0], cpu);
    m.AddGreaterEqual(milp::LinExpr(lp.latency[v]) - own, 0.0, "", "precedence");
    for (int u : inst.predecessors[v])
      m.AddGreaterEqual(milp::LinExpr(lp.latency[v]) - lp.latency[u] - own, 0.0, "", "precedence");
    // A node finishes with its subgraph; only nodes read outside their block (or sinks) need it:
    // nothing else reads an inner node's latency.
    if (!BoundaryNode(inst, blocks, v)) continue;
    for (int s = 1; s <= S; ++s)
      m.AddGreaterEqual(
          milp::LinExpr(lp.latency[v]) - lp.finish[s] - horizon * milp::LinExpr(lp.x[b][s]),
          -horizon, "", "precedence");
  }
  lp.total = m.AddContinuous(0.0, horizon, "total_latency");
  for (int v = 0; v < n; ++v)
    if (inst.successors[v].empty())
      m.AddGreaterEqual(milp::LinExpr(lp.total) - lp.latency[v], 0.0, "", "objective");
  m.Minimize(lp.total);
  return lp;
}

// The MILP's variable values for a split (slots: each device's subgraphs in order).
std::optional<std::vector<double>> MilpStart(const EfficientMipInstance& inst, const Blocks& blocks,
                                             const LatencyMilp& lp, const EfficientMipSplit& split,
                                             double horizon) {
  const int q = lp.q, S = lp.slots, nb = lp.num_blocks;
  std::vector<int> slot_of_subgraph(split.num_subgraphs(), -1);
  std::vector<int> next(inst.num_accelerators, 0);
  for (int s = 0; s < split.num_subgraphs(); ++s) {
    const int d = split.subgraph_device[s];
    if (next[d] >= q) return std::nullopt;
    slot_of_subgraph[s] = d * q + 1 + next[d]++;
  }
  EfficientMipEvalOptions eval;
  eval.max_subgraphs_per_device = q;
  SplitTimes times;
  const double latency = SplitLatency(inst, split, eval, nullptr, &times);
  if (!std::isfinite(latency) || latency > horizon) return std::nullopt;
  std::vector<double> values(lp.model.num_vars(), 0.0);
  std::vector<int> block_slot(nb, 0);
  for (int b = 0; b < nb; ++b) {
    const int sg = split.subgraph_of[blocks.nodes[b][0]];
    for (int v : blocks.nodes[b])
      if (split.subgraph_of[v] != sg) return std::nullopt;  // a block split across subgraphs
    block_slot[b] = sg < 0 ? 0 : slot_of_subgraph[sg];
    values[lp.x[b][block_slot[b]].index()] = 1.0;
  }
  // z: the slot's blocks and all their ancestors.
  for (int s = 1; s <= S; ++s) {
    std::vector<int> stack;
    std::vector<char> seen(nb, 0);
    for (int b = 0; b < nb; ++b)
      if (block_slot[b] == s) {
        seen[b] = 1;
        stack.push_back(b);
      }
    while (!stack.empty()) {
      int b = stack.back();
      stack.pop_back();
      for (int a : blocks.predecessors[b])
        if (!seen[a]) {
          seen[a] = 1;
          stack.push_back(a);
        }
    }
    for (int b = 0; b < nb; ++b) values[lp.z[b][s].index()] = seen[b] ? 1.0 : 0.0;
  }
  for (size_t i = 0; i < inst.items.size(); ++i)
    for (int s = 1; s <= S; ++s) {
      if (!lp.comm_in[i][s].valid()) continue;
      const int ps = block_slot[blocks.block_of[inst.items[i].producer]];
      bool in = false, out = false;
      for (int r : inst.items[i].readers) {
        const int rs = block_slot[blocks.block_of[r]];
        in |= rs == s && ps != s;
        out |= ps == s && rs != s;
      }
      values[lp.comm_in[i][s].index()] = in ? 1.0 : 0.0;
      values[lp.comm_out[i][s].index()] = out ? 1.0 : 0.0;
    }
  for (int v = 0; v < inst.num_nodes(); ++v) values[lp.latency[v].index()] = times.node_finish[v];
  // Slot times: used slots from the evaluation; empty slots start and finish when the previous
  // slot of their device finishes.
  std::vector<double> st(S + 1, 0.0), fi(S + 1, 0.0);
  std::vector<char> used(S + 1, 0);
  for (int sg = 0; sg < split.num_subgraphs(); ++sg) {
    const int s = slot_of_subgraph[sg];
    used[s] = 1;
    st[s] = times.subgraph_start[sg];
    fi[s] = times.subgraph_finish[sg];
  }
  for (int s = 1; s <= S; ++s) {
    if (used[s]) continue;
    st[s] = fi[s] = ((s - 1) % q != 0) ? fi[s - 1] : 0.0;
  }
  for (int s = 1; s <= S; ++s) {
    values[lp.start[s].index()] = st[s];
    values[lp.finish[s].index()] = fi[s];
  }
  values[lp.total.index()] = latency;
  return values;
}

EfficientMipSplit SplitFromMilp(const EfficientMipInstance& inst, const Blocks& blocks,
                                const LatencyMilp& lp, const std::vector<double>& values) {
  EfficientMipSplit split;
  split.subgraph_of.assign(inst.num_nodes(), EfficientMipSplit::kCpu);
  for (int s = 1; s <= lp.slots; ++s) split.subgraph_device.push_back((s - 1) / lp.q);
  for (int b = 0; b < lp.num_blocks; ++b) {
    int best = 0;
    for (int s = 1; s <= lp.slots; ++s)
      if (values[lp.x[b][s].index()] > values[lp.x[b][best].index()]) best = s;
    for (int v : blocks.nodes[b]) split.subgraph_of[v] = best - 1;  // slot 0 (CPU) -> -1
  }
  return efficientmip_internal::Compact(split);
}

}  // namespace

Status EfficientMipSolveOptions::Validate() const {
  if (!(time_limit_s > 0)) return InvalidArgument("efficientmip: time limit must be positive");
  if (!(relative_gap >= 0 && relative_gap < 1))
    return InvalidArgument("efficientmip: gap must be in [0, 1)");
  if (threads < 1) return InvalidArgument("efficientmip: threads must be >= 1");
  if (subgraphs_per_device < 1)
    return InvalidArgument("efficientmip: q (subgraphs per accelerator) must be >= 1");
  return Status::Ok();
}

namespace {

// SolveEfficientMip's steps: the heuristics (the paper's greedy, the caller's warm starts, DP over
// block orders, local search), the files of the exact-planner skeleton (the full IP exported, or an
// external solution read), the IP sized to the solver (full, restricted or coarsened around the
// incumbent) and solved, and the result with its bound.
class EfficientMipSolve {
 public:
  EfficientMipSolve(const EfficientMipInstance& inst, const EfficientMipSolveOptions& options,
                    Logger* logger)
      : inst_(inst),
        options_(options),
        logger_(logger),
        blocks_(efficientmip_internal::ComputeBlocks(inst)) {
    eval_.max_subgraphs_per_device = options.subgraphs_per_device;
  }

  StatusOr<EfficientMipSolveResult> Run();

 private:
  double Consider(const EfficientMipSplit& split, const std::string& source);
  // Greedy, warm starts, DP and local search; false when no split is valid.
  bool Heuristics();
  // --export-lp/--export-mps/--solution on the full IP; true when the solution file decided.
  StatusOr<bool> Files(double cp_bound);
  // The model the solver can take, or none (`note_` says why): its blocks, q and description.
  const Blocks* SizeModel(Blocks* coarse, int* model_q, bool* exact_model, std::string* what);
  void SolveIp(double reserve);
  MilpSettings Settings() const {
    MilpSettings s;
    s.relative_gap = options_.relative_gap;
    s.threads = options_.threads;
    s.seed = MilpSeed(options_.seed);
    s.export_lp = options_.export_lp_path;
    s.export_mps = options_.export_mps_path;
    s.solution_path = options_.solution_path;
    s.progress_to_stderr = options_.progress_to_stderr;
    s.on_progress = options_.on_progress;
    return s;
  }

  const EfficientMipInstance& inst_;
  const EfficientMipSolveOptions& options_;
  Logger* logger_;
  Stopwatch watch_;  // started before the blocks are computed: the limit covers the whole call
  const Blocks blocks_;
  EfficientMipEvalOptions eval_;
  Candidate best_;
  std::optional<EfficientMipSplit> greedy_;
  EfficientMipSolveResult result_;
};

double EfficientMipSolve::Consider(const EfficientMipSplit& split, const std::string& source) {
  std::string error;
  const double lat = SplitLatency(inst_, split, eval_, &error);
  if (!std::isfinite(lat)) {
    LogTo(logger_, LogLevel::kDebug, "efficientmip: " + source + " skipped: " + error);
    return lat;
  }
  if (lat < best_.latency) best_ = {efficientmip_internal::Compact(split), lat, source};
  return lat;
}

bool EfficientMipSolve::Heuristics() {
  // 1. The paper's greedy, and the caller's warm starts.
  auto greedy = EfficientMipGreedy(inst_);
  result_.greedy_latency_s = kSolverInf;
  if (greedy.ok()) {
    greedy_ = *greedy;
    result_.greedy_latency_s = Consider(*greedy, "greedy");
  } else {
    LogTo(logger_, LogLevel::kInfo, "efficientmip: greedy failed: " + greedy.status().message());
  }
  for (size_t i = 0; i < options_.warm_starts.size(); ++i)
    Consider(options_.warm_starts[i], i < options_.warm_start_names.size()
                                          ? options_.warm_start_names[i]
                                          : "warm start " + std::to_string(i + 1));
  // 2. DP over several topological orders of the blocks; 3. local search on the best few.
  const double heuristic_deadline = std::min(options_.time_limit_s * 0.5, 30.0);
  std::vector<Candidate> dp_results;
  const int num_orders = 3 + 29;
  auto time_left = [&] { return watch_.ElapsedSeconds() < heuristic_deadline && !StopRequested(); };
  for (int kind = 0; kind < num_orders && time_left(); ++kind) {
    const std::vector<int> order =
        efficientmip_internal::BlockOrder(blocks_, inst_, kind, options_.seed);
    auto dp = DpSplit(inst_, blocks_, order);
    if (!dp) continue;
    const double lat = Consider(dp->split, "dp");
    if (std::isfinite(lat)) dp_results.push_back({dp->split, lat, "dp"});
  }
  std::sort(dp_results.begin(), dp_results.end(),
            [](const Candidate& a, const Candidate& b) { return a.latency < b.latency; });
  std::vector<Candidate> starts;
  if (std::isfinite(best_.latency)) starts.push_back(best_);
  for (size_t i = 0; i < dp_results.size() && starts.size() < 6; ++i)
    starts.push_back(dp_results[i]);
  if (greedy_ && std::isfinite(result_.greedy_latency_s))
    starts.push_back({*greedy_, result_.greedy_latency_s, "greedy"});
  for (Candidate& c : starts) {
    if (!time_left()) break;
    LocalSearch(inst_, blocks_, eval_, c, watch_, heuristic_deadline);
    if (c.latency < best_.latency) best_ = c;
  }
  return std::isfinite(best_.latency);
}

StatusOr<bool> EfficientMipSolve::Files(double cp_bound) {
  const MilpSettings settings = Settings();
  if (!settings.WantsFiles()) return false;
  const double horizon = best_.latency * (1 + 1e-6) + 1e-9;
  LatencyMilp lp = BuildLatencyMilp(inst_, blocks_, options_.subgraphs_per_device, horizon);
  result_.milp_binaries = lp.model.num_integer_vars();
  result_.milp_constraints = lp.model.num_constraints();
  HX_RETURN_IF_ERROR(ExportMilp(lp.model, settings));
  if (settings.solution_path.empty()) return false;
  HX_ASSIGN_OR_RETURN(MilpRun run, ReadMilpSolution(lp.model, settings, "efficientmip", logger_));
  EfficientMipSplit split = SplitFromMilp(inst_, blocks_, lp, run.result.values);
  std::string error;
  const double lat = SplitLatency(inst_, split, eval_, &error);
  if (!std::isfinite(lat))
    return InvalidArgument(options_.solution_path +
                           ": the solution is not a valid split: " + error);
  result_.split = split;
  result_.latency_s = lat;
  result_.status = PlanStatus::kFeasible;
  result_.source = "solution file";
  result_.bound_s = std::min(cp_bound, lat);
  result_.gap = lat > 0 ? (lat - result_.bound_s) / lat : 0.0;
  return true;
}

std::string Describe(const MilpSize& z) {
  return std::to_string(z.binaries) + " binaries, " + std::to_string(z.rows) + " rows";
}

const Blocks* EfficientMipSolve::SizeModel(Blocks* coarse, int* model_q, bool* exact_model,
                                           std::string* what) {
  auto fits = [&](const MilpSize& z) {
    return z.binaries <= options_.max_milp_binaries && z.rows <= options_.max_milp_rows &&
           z.nonzeros <= options_.max_milp_nonzeros;
  };
  const int q = options_.subgraphs_per_device;
  const int k = inst_.num_accelerators;
  const MilpSize full = EstimateLatencyMilp(inst_, blocks_, k * q);
  *model_q = q;
  *exact_model = fits(full);
  *what = "the IP (" + Describe(full) + ")";
  if (*exact_model) return &blocks_;
  std::vector<int> per_device(k, 0);
  for (int d : best_.split.subgraph_device) ++per_device[d];
  *model_q = std::min(q, std::max(1, *std::max_element(per_device.begin(), per_device.end())));
  const MilpSize restricted = EstimateLatencyMilp(inst_, blocks_, k * *model_q);
  *what = "the IP with q = " + std::to_string(*model_q) + " (" + Describe(restricted) +
          "; the full one has " + Describe(full) + ")";
  if (fits(restricted)) return &blocks_;
  SplitTimes times;
  SplitLatency(inst_, best_.split, eval_, nullptr, &times);
  int lo = -1, hi = static_cast<int>(blocks_.nodes.size());  // widths: lo fits, hi not
  MilpSize lo_size;
  while (hi - lo > 1) {
    const int mid = lo < 0 ? std::min(hi - 1, 0) : lo + (hi - lo) / 2;
    Blocks trial = CoarsenAround(inst_, blocks_, best_.split, times, mid);
    const MilpSize z = EstimateLatencyMilp(inst_, trial, k * *model_q);
    if (fits(z)) {
      lo = mid;
      lo_size = z;
      *coarse = std::move(trial);
    } else {
      hi = mid;
    }
  }
  if (lo < 0) {
    result_.milp_note = "not run: too large (" + Describe(full) +
                        "; even coarsened to the incumbent's units it exceeds the cap of " +
                        std::to_string(options_.max_milp_binaries) + " binaries, " +
                        std::to_string(options_.max_milp_rows) + " rows)";
    return nullptr;
  }
  *what = "a coarsened IP (" + std::to_string(coarse->nodes.size()) + " of " +
          std::to_string(blocks_.nodes.size()) + " blocks, cut points movable by " +
          std::to_string(lo) + ", q = " + std::to_string(*model_q) + ": " + Describe(lo_size) +
          "; the full one has " + Describe(full) + ")";
  return coarse;
}

void EfficientMipSolve::SolveIp(double reserve) {
  Blocks coarse;
  int model_q = 0;
  bool exact_model = false;
  std::string what;
  const Blocks* model_blocks = SizeModel(&coarse, &model_q, &exact_model, &what);
  if (model_blocks == nullptr) return;
  const double horizon = best_.latency * (1 + 1e-6) + 1e-9;
  LatencyMilp lp = BuildLatencyMilp(inst_, *model_blocks, model_q, horizon);
  result_.milp_binaries = lp.model.num_integer_vars();
  result_.milp_constraints = lp.model.num_constraints();
  MilpSettings settings = Settings();
  settings.export_lp.clear();  // the files are the full IP's (Files)
  settings.export_mps.clear();
  settings.solution_path.clear();
  settings.time_limit_s =
      std::max(kMinMilpSeconds, options_.time_limit_s - reserve - watch_.ElapsedSeconds());
  std::vector<double> start;
  if (auto s = MilpStart(inst_, *model_blocks, lp, best_.split, horizon)) start = *s;
  auto solved = RunMilp(lp.model, std::move(start), settings, "efficientmip", logger_);
  if (!solved.ok()) {
    result_.milp_note = what + ": CBC failed (" + solved.status().message() + ")";
    LogTo(logger_, LogLevel::kWarning,
          "efficientmip: CBC failed (" + solved.status().message() + "); keeping " + best_.source);
    return;
  }
  const milp::SolveResult& r = solved->result;
  bool milp_won = false;
  if (r.has_solution()) {
    EfficientMipSplit split = SplitFromMilp(inst_, *model_blocks, lp, r.values);
    const double lat = SplitLatency(inst_, split, eval_, nullptr);
    if (lat < best_.latency * (1 - 1e-9)) {
      best_ = {split, lat, exact_model ? "milp" : "milp (restricted)"};
      milp_won = true;
    }
  }
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f s", r.solve_time_s);
  result_.milp_note = what + ": " + milp::SolveStatusName(r.status) + " in " + secs +
                      (milp_won ? ", improved the heuristics" : ", nothing better");
  // The horizon excludes solutions worse than the incumbent: "infeasible" proves it optimal.
  // Bounds count only from the exact model.
  const bool model_optimal =
      r.status == milp::SolveStatus::kOptimal || r.status == milp::SolveStatus::kInfeasible;
  if (exact_model && std::isfinite(r.bound))
    result_.bound_s = std::max(result_.bound_s, std::max(0.0, r.bound));
  if (exact_model && model_optimal) {
    result_.status = PlanStatus::kOptimal;
    result_.bound_s = best_.latency;
  } else if (milp_won) {
    result_.status = PlanStatus::kFeasible;
  } else if (!model_optimal) {
    result_.status = PlanStatus::kTimeLimit;
  }
}

StatusOr<EfficientMipSolveResult> EfficientMipSolve::Run() {
  if (!Heuristics()) return InfeasibleSplitStatus(inst_, blocks_);
  result_.heuristic_latency_s = best_.latency;
  const double cp_bound = std::max(EfficientMipCriticalPathBound(inst_),
                                   PathBound(inst_, options_.subgraphs_per_device));
  result_.bound_s = std::min(cp_bound, best_.latency);
  result_.status = PlanStatus::kWarmStart;
  // The path bound may prove the incumbent optimal already.
  const bool proven = best_.latency - cp_bound <= options_.relative_gap * best_.latency + 1e-12;
  if (proven) {
    result_.status = PlanStatus::kOptimal;
    result_.split = best_.split;
    result_.latency_s = best_.latency;
    result_.source = best_.source;
    result_.gap = best_.latency > 0 ? (best_.latency - result_.bound_s) / best_.latency : 0.0;
    if (!Settings().WantsFiles()) return result_;
  }
  // 4. The latency IP. Exported or loaded whatever its size; solved only when it is small enough
  // (the size guard), else on a model restricted to the incumbent's subgraph count per
  // accelerator, else on coarsened blocks around the incumbent (a neighbourhood of it), else not.
  HX_ASSIGN_OR_RETURN(const bool decided, Files(cp_bound));
  if (decided) return result_;
  // Time kept back for what the caller does with the split (the planner builds and checks a plan).
  const double reserve = std::min(1.0, 0.05 * options_.time_limit_s);
  const double remaining = options_.time_limit_s - watch_.ElapsedSeconds() - reserve;
  if (proven) {
    result_.milp_note = "not needed: the path bound proves the split optimal";
  } else if (!options_.use_milp) {
    result_.milp_note = "not run (off)";
  } else if (inst_.num_accelerators == 0) {
    result_.milp_note = "not run: no accelerator";
  } else if (remaining < kMinMilpSeconds) {
    result_.milp_note =
        "not run: no time left (" + std::to_string(std::max(0.0, remaining)) + " s)";
  } else {
    SolveIp(reserve);
  }
  if (!result_.milp_note.empty())
    LogTo(logger_, LogLevel::kInfo, "efficientmip: MILP " + result_.milp_note);
  result_.split = best_.split;
  result_.latency_s = best_.latency;
  result_.source = best_.source;
  result_.bound_s = std::min(result_.bound_s, best_.latency);
  if (best_.latency - result_.bound_s <= options_.relative_gap * best_.latency + 1e-12)
    result_.status = PlanStatus::kOptimal;
  result_.gap = best_.latency > 0 ? (best_.latency - result_.bound_s) / best_.latency : 0.0;
  return result_;
}

}  // namespace

StatusOr<EfficientMipSolveResult> SolveEfficientMip(const EfficientMipInstance& inst,
                                                    const EfficientMipSolveOptions& options,
                                                    Logger* logger) {
  HX_RETURN_IF_ERROR(options.Validate());
  HX_RETURN_IF_ERROR(inst.Validate());
  EfficientMipSolve solve(inst, options, logger);
  return solve.Run();
}

}  // namespace hx::place
