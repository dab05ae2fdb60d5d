// The exact EfficientMIP latency of a split (see efficientmip.h for the model).

#include <algorithm>
#include <cmath>
#include <limits>

#include "place/efficientmip/efficientmip_internal.h"

namespace hx::place {
namespace efficientmip_internal {
namespace {

constexpr double kLatencyInf = std::numeric_limits<double>::infinity();

std::string Mib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / 1048576.0);
  return buf;
}

double Fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return kLatencyInf;
}

}  // namespace

namespace {

// Every node on a device that runs it, colour classes together, memory within bounds; the device
// of each node (-1 CPU) in `device`. An empty string when the placement holds.
std::string CheckPlacement(const EfficientMipInstance& inst, const EfficientMipSplit& split,
                           const EfficientMipEvalOptions& options, std::vector<int>* device) {
  const int n = inst.num_nodes();
  const int num_sub = split.num_subgraphs();
  const int k = inst.num_accelerators;
  device->assign(n, -1);
  std::vector<int64_t> used(k, 0);
  int num_classes = 0;
  for (int c : inst.color_class) num_classes = std::max(num_classes, c + 1);
  std::vector<int> class_device(num_classes, -2), class_witness(num_classes, -1);
  for (int v = 0; v < n; ++v) {
    const int s = split.subgraph_of[v];
    if (s < EfficientMipSplit::kCpu || s >= num_sub)
      return "node '" + inst.node_names[v] + "' is in subgraph " + std::to_string(s) + " of " +
             std::to_string(num_sub);
    const int d = s < 0 ? -1 : split.subgraph_device[s];
    (*device)[v] = d;
    if (d < 0 && !std::isfinite(inst.cpu_latency_s[v]))
      return "node '" + inst.node_names[v] + "' is on the CPU, which cannot run it";
    if (d >= 0 && !std::isfinite(inst.accelerator_latency_s[v]))
      return "node '" + inst.node_names[v] + "' is on accelerator " + std::to_string(d) +
             ", which cannot run it";
    if (d >= 0) used[d] += inst.size_bytes[v];
    const int c = inst.color_class[v];
    if (class_device[c] == -2) {
      class_device[c] = d;
      class_witness[c] = v;
    } else if (class_device[c] != d) {
      auto where = [](int x) {
        return x < 0 ? std::string("the CPU") : "accelerator " + std::to_string(x);
      };
      return "nodes '" + inst.node_names[class_witness[c]] + "' and '" + inst.node_names[v] +
             "' share a colour class but are on " + where(class_device[c]) + " and " + where(d);
    }
  }
  if (options.check_memory)
    for (int d = 0; d < k; ++d)
      if (used[d] > inst.accelerator_memory_bytes)
        return "accelerator " + std::to_string(d) + " holds " + Mib(used[d]) + " but has " +
               Mib(inst.accelerator_memory_bytes);
  return "";
}

// At most q subgraphs per accelerator, each contiguous; `members` and `device_subgraphs` filled.
std::string CheckSubgraphs(const EfficientMipInstance& inst, const EfficientMipSplit& split,
                           const EfficientMipEvalOptions& options,
                           std::vector<std::vector<int>>* members,
                           std::vector<std::vector<int>>* device_subgraphs) {
  const int n = inst.num_nodes();
  const int num_sub = split.num_subgraphs();
  const int k = inst.num_accelerators;
  device_subgraphs->assign(k, {});
  members->assign(num_sub, {});
  for (int v = 0; v < n; ++v)
    if (split.subgraph_of[v] >= 0) (*members)[split.subgraph_of[v]].push_back(v);
  for (int s = 0; s < num_sub; ++s)
    if (!(*members)[s].empty()) (*device_subgraphs)[split.subgraph_device[s]].push_back(s);
  if (options.max_subgraphs_per_device > 0)
    for (int d = 0; d < k; ++d)
      if (static_cast<int>((*device_subgraphs)[d].size()) > options.max_subgraphs_per_device)
        return "accelerator " + std::to_string(d) + " runs " +
               std::to_string((*device_subgraphs)[d].size()) +
               " subgraphs, more than q = " + std::to_string(options.max_subgraphs_per_device);
  std::vector<char> in_set(n, 0), mark(n, 0);
  for (int s = 0; s < num_sub; ++s) {
    if ((*members)[s].empty()) continue;
    for (int v : (*members)[s]) in_set[v] = 1;
    const bool ok = IsContiguous(inst, in_set, mark);
    for (int v : (*members)[s]) in_set[v] = 0;
    if (!ok)
      return "subgraph " + std::to_string(s) + " (accelerator " +
             std::to_string(split.subgraph_device[s]) + ", with node '" +
             inst.node_names[(*members)[s][0]] +
             "') is not contiguous: a path leaves it and comes back";
  }
  return "";
}

// A subgraph's time on its accelerator: its nodes, the items it reads from outside (once each)
// and the items it sends out.
double SubgraphTime(const EfficientMipInstance& inst, const EfficientMipSplit& split, int s,
                    const std::vector<int>& members, std::vector<int>& item_stamp) {
  double t = 0.0;
  for (int v : members) {
    t += inst.accelerator_latency_s[v];
    for (int i : inst.items_read[v]) {
      const auto& item = inst.items[i];
      if (split.subgraph_of[item.producer] != s && item_stamp[i] != s) {
        item_stamp[i] = s;
        t += item.cost_s;
      }
    }
    for (int i : inst.items_produced[v])
      for (int r : inst.items[i].readers)
        if (split.subgraph_of[r] != s) {
          t += inst.items[i].cost_s;
          break;
        }
  }
  return t;
}

}  // namespace

double SplitLatency(const EfficientMipInstance& inst, const EfficientMipSplit& split,
                    const EfficientMipEvalOptions& options, std::string* error, SplitTimes* times) {
  const int n = inst.num_nodes();
  const int num_sub = split.num_subgraphs();
  const int k = inst.num_accelerators;
  if (static_cast<int>(split.subgraph_of.size()) != n)
    return Fail(error, "split has " + std::to_string(split.subgraph_of.size()) +
                           " node entries, the instance " + std::to_string(n) + " nodes");
  for (int s = 0; s < num_sub; ++s)
    if (split.subgraph_device[s] < 0 || split.subgraph_device[s] >= k)
      return Fail(error, "subgraph " + std::to_string(s) + " is on accelerator " +
                             std::to_string(split.subgraph_device[s]) + ", the instance has " +
                             std::to_string(k));
  std::vector<int> device;
  if (std::string why = CheckPlacement(inst, split, options, &device); !why.empty())
    return Fail(error, why);
  std::vector<std::vector<int>> members, device_subgraphs;
  if (std::string why = CheckSubgraphs(inst, split, options, &members, &device_subgraphs);
      !why.empty())
    return Fail(error, why);
  // Units: CPU nodes (0..n-1) and subgraphs (n..n+S-1); contracted DAG plus device order.
  const int num_units = n + num_sub;
  auto unit = [&](int v) { return split.subgraph_of[v] < 0 ? v : n + split.subgraph_of[v]; };
  std::vector<std::vector<int>> unit_succ(num_units);
  std::vector<int> indeg(num_units, 0);
  for (int u = 0; u < n; ++u)
    for (int w : inst.successors[u]) {
      const int a = unit(u), b = unit(w);
      if (a != b) {
        unit_succ[a].push_back(b);
        ++indeg[b];
      }
    }
  if (options.serialize_device_subgraphs)
    for (int d = 0; d < k; ++d)
      for (size_t i = 1; i < device_subgraphs[d].size(); ++i) {
        const int a = n + device_subgraphs[d][i - 1], b = n + device_subgraphs[d][i];
        unit_succ[a].push_back(b);
        ++indeg[b];
      }
  std::vector<double> finish(num_units, 0.0);
  std::vector<int> ready;
  for (int x = 0; x < num_units; ++x)
    if (indeg[x] == 0) ready.push_back(x);
  std::vector<double> ready_at(num_units, 0.0);  // max finish of the unit's predecessors
  std::vector<int> item_stamp(inst.items.size(), -1);
  int visited = 0;
  double latency = 0.0;
  std::vector<int> rank(num_units, 0);
  std::vector<double> start(num_units, 0.0);
  while (!ready.empty()) {
    const int x = ready.back();
    ready.pop_back();
    rank[x] = visited++;
    start[x] = ready_at[x];
    if (x < n) {
      if (split.subgraph_of[x] >= 0) continue;  // a node inside a subgraph: not a unit
      finish[x] = ready_at[x] + inst.cpu_latency_s[x];
    } else {
      finish[x] = ready_at[x] + SubgraphTime(inst, split, x - n, members[x - n], item_stamp);
    }
    latency = std::max(latency, finish[x]);
    for (int y : unit_succ[x]) {
      ready_at[y] = std::max(ready_at[y], finish[x]);
      if (--indeg[y] == 0) ready.push_back(y);
    }
  }
  if (visited != num_units)
    return Fail(error,
                "the order of subgraphs on an accelerator contradicts the dependencies (a later "
                "subgraph feeds an earlier one)");
  if (times) {
    times->node_finish.resize(n);
    times->node_rank.resize(n);
    for (int v = 0; v < n; ++v) {
      times->node_finish[v] = finish[unit(v)];
      times->node_rank[v] = rank[unit(v)];
    }
    times->subgraph_start.assign(start.begin() + n, start.end());
    times->subgraph_finish.assign(finish.begin() + n, finish.end());
  }
  return latency;
}

}  // namespace efficientmip_internal

StatusOr<double> EfficientMipLatency(const EfficientMipInstance& instance,
                                     const EfficientMipSplit& split,
                                     const EfficientMipEvalOptions& options) {
  std::string error;
  const double latency = efficientmip_internal::SplitLatency(instance, split, options, &error);
  if (!std::isfinite(latency)) return InvalidArgument(instance.name + ": invalid split: " + error);
  return latency;
}

double EfficientMipCriticalPathBound(const EfficientMipInstance& inst) {
  const int n = inst.num_nodes();
  std::vector<int> indeg(n), order;
  for (int v = 0; v < n; ++v) indeg[v] = static_cast<int>(inst.predecessors[v].size());
  for (int v = 0; v < n; ++v)
    if (indeg[v] == 0) order.push_back(v);
  for (size_t i = 0; i < order.size(); ++i)
    for (int w : inst.successors[order[i]])
      if (--indeg[w] == 0) order.push_back(w);
  std::vector<double> finish(n, 0.0);
  double best = 0.0;
  for (int v : order) {
    double start = 0.0;
    for (int u : inst.predecessors[v]) start = std::max(start, finish[u]);
    finish[v] = start + std::min(inst.cpu_latency_s[v], inst.accelerator_latency_s[v]);
    best = std::max(best, finish[v]);
  }
  return best;
}

}  // namespace hx::place
