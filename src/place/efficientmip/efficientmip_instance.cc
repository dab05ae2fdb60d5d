// EfficientMIP instances (from the paper's JSON files or from a cost model), its split files, and
// the blocks and orders the greedy and the DP work on.

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <set>
#include <unordered_map>

#include "hexplan/core/file_util.h"
#include "hexplan/core/json_text.h"
#include "place/efficientmip/efficientmip_internal.h"

namespace hx::place {
namespace {

constexpr double kInstanceInf = std::numeric_limits<double>::infinity();
constexpr double kMsToS = 1e-3;

}  // namespace

namespace efficientmip_internal {

void FinishAdjacency(EfficientMipInstance& inst) {
  const int n = inst.num_nodes();
  inst.successors.assign(n, {});
  inst.predecessors.assign(n, {});
  inst.items_produced.assign(n, {});
  inst.items_read.assign(n, {});
  for (size_t i = 0; i < inst.items.size(); ++i) {
    auto& item = inst.items[i];
    std::sort(item.readers.begin(), item.readers.end());
    item.readers.erase(std::unique(item.readers.begin(), item.readers.end()), item.readers.end());
    inst.items_produced[item.producer].push_back(static_cast<int>(i));
    for (int r : item.readers) {
      inst.items_read[r].push_back(static_cast<int>(i));
      inst.successors[item.producer].push_back(r);
      inst.predecessors[r].push_back(item.producer);
    }
  }
  for (int v = 0; v < n; ++v) {
    for (auto* list : {&inst.successors[v], &inst.predecessors[v]}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
    }
  }
}

}  // namespace efficientmip_internal

namespace {

using efficientmip_internal::FinishAdjacency;

// Dense colour classes: equal raw values share a class; raw -1 gets a class of its own.
std::vector<int> DenseClasses(const std::vector<int64_t>& raw) {
  std::map<int64_t, int> id;
  std::vector<int> out(raw.size());
  int next = 0;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] < 0) {
      out[i] = next++;
      continue;
    }
    auto [it, fresh] = id.emplace(raw[i], next);
    if (fresh) ++next;
    out[i] = it->second;
  }
  return out;
}

}  // namespace

Status EfficientMipInstance::Validate() const {
  const size_t n = node_names.size();
  if (cpu_latency_s.size() != n || accelerator_latency_s.size() != n || size_bytes.size() != n ||
      color_class.size() != n || successors.size() != n || predecessors.size() != n ||
      items_produced.size() != n || items_read.size() != n)
    return InvalidArgument(name + ": EfficientMIP instance with inconsistent per-node arrays");
  if (num_accelerators < 0) return InvalidArgument(name + ": negative accelerator count");
  for (size_t v = 0; v < n; ++v) {
    if (!(cpu_latency_s[v] >= 0) || !(accelerator_latency_s[v] >= 0) || size_bytes[v] < 0)
      return InvalidArgument(name + ": node '" + node_names[v] +
                             "': latencies and size must be non-negative");
    if (std::isinf(cpu_latency_s[v]) && std::isinf(accelerator_latency_s[v]))
      return InvalidArgument(name + ": node '" + node_names[v] + "' can run on no device");
  }
  for (const Item& item : items) {
    if (!(item.cost_s >= 0) || !std::isfinite(item.cost_s))
      return InvalidArgument(name + ": node '" + node_names[item.producer] +
                             "': transfer cost must be finite and non-negative");
  }
  // Acyclic (Kahn).
  std::vector<int> indeg(n, 0);
  for (size_t v = 0; v < n; ++v) indeg[v] = static_cast<int>(predecessors[v].size());
  std::vector<int> ready;
  for (size_t v = 0; v < n; ++v)
    if (indeg[v] == 0) ready.push_back(static_cast<int>(v));
  size_t seen = 0;
  while (!ready.empty()) {
    int v = ready.back();
    ready.pop_back();
    ++seen;
    for (int w : successors[v])
      if (--indeg[w] == 0) ready.push_back(w);
  }
  if (seen != n) return InvalidArgument(name + ": the graph has a cycle");
  return Status::Ok();
}

StatusOr<EfficientMipInstance> EfficientMipInstanceFromWorkload(
    const graph::EfficientMipWorkload& w) {
  EfficientMipInstance inst;
  inst.name = w.graph.name();
  const int n = static_cast<int>(w.nodes.size());
  std::unordered_map<int64_t, int> index;
  std::vector<int64_t> raw_class;
  for (int i = 0; i < n; ++i) {
    const graph::EfficientMipNode& node = w.nodes[i];
    index[node.file_id] = i;
    inst.node_names.push_back(w.graph.node(node.node).name);
    inst.file_ids.push_back(node.file_id);
    inst.graph_nodes.push_back(node.node);
    inst.cpu_latency_s.push_back(w.max_cpus > 0 ? node.cpu_latency_ms * kMsToS : kInstanceInf);
    inst.accelerator_latency_s.push_back(
        node.supported_on_accelerator ? node.accelerator_latency_ms * kMsToS : kInstanceInf);
    inst.size_bytes.push_back(node.size_bytes);
    raw_class.push_back(node.color_class);
  }
  inst.color_class = DenseClasses(raw_class);
  std::vector<int> item_of(n, -1);
  for (size_t e = 0; e < w.edges.size(); ++e) {
    const graph::EfficientMipEdge& edge = w.edges[e];
    const int u = index.at(edge.source_file_id);
    const int v = index.at(edge.dest_file_id);
    const double cost = edge.cost_ms * kMsToS;
    if (item_of[u] < 0) {
      item_of[u] = static_cast<int>(inst.items.size());
      inst.items.push_back({u, {}, cost});
    } else if (std::fabs(inst.items[item_of[u]].cost_s - cost) > 1e-9) {
      return InvalidArgument(inst.name + ": edges[" + std::to_string(e) + "]: node " +
                             std::to_string(edge.source_file_id) +
                             " has out-edges of different costs (EfficientMIP's model has one "
                             "transfer cost per node)");
    }
    inst.items[item_of[u]].readers.push_back(v);
    inst.edges.push_back({u, v});
  }
  if (w.max_accelerators < 0 || w.max_accelerators > graph::kEfficientMipMaxDevices) {
    return InvalidArgument(inst.name + ": maxFPGAs: expected an integer in [0, " +
                           std::to_string(graph::kEfficientMipMaxDevices) + "], got " +
                           std::to_string(w.max_accelerators));
  }
  inst.num_accelerators = static_cast<int>(w.max_accelerators);
  inst.accelerator_memory_bytes = w.max_size_per_accelerator_bytes;
  inst.has_cpu = w.max_cpus > 0;
  FinishAdjacency(inst);
  HX_RETURN_IF_ERROR(inst.Validate());
  return inst;
}

StatusOr<EfficientMipInstance> ReadEfficientMipInstance(const std::string& path) {
  HX_ASSIGN_OR_RETURN(graph::EfficientMipWorkload w, graph::ReadEfficientMipFile(path));
  auto inst = EfficientMipInstanceFromWorkload(w);
  if (!inst.ok()) return inst.status().WithContext(path);
  return inst;
}

StatusOr<EfficientMipInstance> EfficientMipInstanceFromCostModel(const cost::CostModel& cost) {
  const graph::Graph& g = cost.graph();
  const hw::Cluster& cluster = cost.cluster();
  EfficientMipInstance inst;
  inst.name = g.name();
  inst.accelerator_devices = cluster.DevicesOfKind(hw::DeviceKind::kGpu);
  for (DeviceId d : cluster.DevicesOfKind(hw::DeviceKind::kMig))
    inst.accelerator_devices.push_back(d);
  inst.cpu_devices = cluster.DevicesOfKind(hw::DeviceKind::kCpu);
  if (inst.accelerator_devices.empty() && inst.cpu_devices.empty())
    return InvalidArgument("efficientmip: cluster '" + cluster.name() + "' has no device");
  inst.num_accelerators = static_cast<int>(inst.accelerator_devices.size());
  inst.has_cpu = !inst.cpu_devices.empty();
  inst.accelerator_memory_bytes = std::numeric_limits<int64_t>::max();
  for (DeviceId d : inst.accelerator_devices)
    inst.accelerator_memory_bytes =
        std::min(inst.accelerator_memory_bytes, cluster.device(d).memory_bytes());
  if (inst.accelerator_devices.empty()) inst.accelerator_memory_bytes = 0;

  std::vector<int> index(g.num_nodes(), -1);
  std::vector<int64_t> raw_class;
  for (NodeId op : g.Ops()) {
    index[op.index()] = inst.num_nodes();
    const graph::Node& node = g.node(op);
    inst.node_names.push_back(node.name);
    inst.graph_nodes.push_back(op);
    double acc = 0.0;
    for (DeviceId d : inst.accelerator_devices) {
      if (!cost.Supports(op, d)) {
        acc = kInstanceInf;
        break;
      }
      acc += cost.OpTime(op, d);
    }
    if (inst.accelerator_devices.empty()) acc = kInstanceInf;
    if (std::isfinite(acc)) acc /= static_cast<double>(inst.accelerator_devices.size());
    double cpu = kInstanceInf;
    for (DeviceId d : inst.cpu_devices)
      if (cost.Supports(op, d)) cpu = std::min(cpu, cost.OpTime(op, d));
    inst.accelerator_latency_s.push_back(acc);
    inst.cpu_latency_s.push_back(cpu);
    inst.size_bytes.push_back(cost.OpMemoryBytes(op));
    raw_class.push_back(node.attrs.GetInt("color_class", -1));
  }
  inst.color_class = DenseClasses(raw_class);
  for (NodeId op : g.Ops()) {
    for (TensorId t : g.node(op).outputs) {
      const graph::Tensor& tensor = g.tensor(t);
      EfficientMipInstance::Item item;
      item.producer = index[op.index()];
      for (NodeId c : tensor.consumers)
        if (c.valid() && index[c.index()] >= 0 && index[c.index()] != item.producer) {
          item.readers.push_back(index[c.index()]);
          inst.edges.push_back({item.producer, index[c.index()]});
        }
      if (item.readers.empty()) continue;
      for (DeviceId d : inst.accelerator_devices) {
        const PlaceId host = cluster.HostOf(d);
        item.cost_s =
            std::max({item.cost_s, cost.TransferTime(tensor.Bytes(), cluster.PlaceOf(d), host),
                      cost.TransferTime(tensor.Bytes(), host, cluster.PlaceOf(d))});
      }
      inst.items.push_back(std::move(item));
    }
  }
  FinishAdjacency(inst);
  Status valid = inst.Validate();
  if (!valid.ok()) return valid.WithContext("efficientmip");
  return inst;
}

StatusOr<EfficientMipSplit> ReadEfficientMipSplitFile(const std::string& path,
                                                      const EfficientMipInstance& inst) {
  using Json = nlohmann::json;
  if (inst.file_ids.size() != static_cast<size_t>(inst.num_nodes()))
    return InvalidArgument(path + ": split files need an instance read from an EfficientMIP file");
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  HX_ASSIGN_OR_RETURN(Json root, ParseJson<Json>(text, path));
  if (!root.is_object())
    return ParseError(path + ": expected a JSON object {cpus: [...], fpgas: [...]}");
  std::unordered_map<int64_t, int> index;
  for (int v = 0; v < inst.num_nodes(); ++v) index[inst.file_ids[v]] = v;
  const int n = inst.num_nodes();
  std::vector<int> device(n, -2);  // -2: not listed, -1: CPU, else accelerator
  int num_fpgas = 0;
  for (const char* key : {"cpus", "fpgas"}) {
    if (!root.contains(key) || !root[key].is_array())
      return ParseError(path + ": missing array '" + key + "'");
    const Json& machines = root[key];
    const bool cpu = std::string(key) == "cpus";
    if (!cpu) num_fpgas = static_cast<int>(machines.size());
    for (size_t m = 0; m < machines.size(); ++m) {
      const std::string where = path + ": " + key + "[" + std::to_string(m) + "].nodes";
      if (!machines[m].is_object() || !machines[m].contains("nodes") ||
          !machines[m]["nodes"].is_array())
        return ParseError(where + ": expected an array of node ids");
      for (const Json& id : machines[m]["nodes"]) {
        if (!id.is_number_integer()) return ParseError(where + ": expected integer node ids");
        auto it = index.find(id.get<int64_t>());
        if (it == index.end()) return InvalidArgument(where + ": unknown node id " + DumpJson(id));
        if (device[it->second] != -2)
          return InvalidArgument(where + ": node id " + DumpJson(id) + " is listed twice");
        device[it->second] = cpu ? -1 : static_cast<int>(m);
      }
    }
  }
  for (int v = 0; v < n; ++v)
    if (device[v] == -2)
      return InvalidArgument(path + ": node id " + std::to_string(inst.file_ids[v]) + " ('" +
                             inst.node_names[v] + "') is on no device");

  EfficientMipInstance wide = inst;  // the split may use more accelerators than the instance
  wide.num_accelerators = std::max(inst.num_accelerators, num_fpgas);
  return efficientmip_internal::SplitFromDevices(wide, device);
}

namespace efficientmip_internal {

std::vector<int> NodeOrder(const EfficientMipInstance& inst) {
  const int n = inst.num_nodes();
  std::vector<int> indeg(n);
  std::set<int> ready;
  for (int v = 0; v < n; ++v) {
    indeg[v] = static_cast<int>(inst.predecessors[v].size());
    if (indeg[v] == 0) ready.insert(v);
  }
  std::vector<int> order;
  while (!ready.empty()) {
    const int v = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(v);
    for (int w : inst.successors[v])
      if (--indeg[w] == 0) ready.insert(w);
  }
  return order;
}

EfficientMipSplit SplitFromDevices(const EfficientMipInstance& inst,
                                   const std::vector<int>& device) {
  const int n = inst.num_nodes();
  const std::vector<int> order = NodeOrder(inst);
  EfficientMipSplit split;
  split.subgraph_of.assign(n, EfficientMipSplit::kCpu);
  std::vector<int> piece(n);
  for (int acc = 0; acc < inst.num_accelerators; ++acc) {
    int max_piece = 0;
    for (int v : order) {
      const bool in = device[v] == acc;
      int p = in ? 1 : 0;
      for (int u : inst.predecessors[v]) p = std::max(p, piece[u] + (in && device[u] != acc));
      piece[v] = p;
      if (in) max_piece = std::max(max_piece, p);
    }
    const int first = split.num_subgraphs();
    for (int p = 0; p < max_piece; ++p) split.subgraph_device.push_back(acc);
    for (int v = 0; v < n; ++v)
      if (device[v] == acc) split.subgraph_of[v] = first + piece[v] - 1;
  }
  return Compact(split);
}

EfficientMipSplit Compact(const EfficientMipSplit& split) {
  std::vector<int> count(split.subgraph_device.size(), 0);
  for (int s : split.subgraph_of)
    if (s >= 0) ++count[s];
  std::vector<int> renumber(split.subgraph_device.size(), -1);
  EfficientMipSplit out;
  for (size_t s = 0; s < split.subgraph_device.size(); ++s) {
    if (count[s] == 0) continue;
    renumber[s] = out.num_subgraphs();
    out.subgraph_device.push_back(split.subgraph_device[s]);
  }
  out.subgraph_of = split.subgraph_of;
  for (int& s : out.subgraph_of)
    if (s >= 0) s = renumber[s];
  return out;
}

bool IsContiguous(const EfficientMipInstance& inst, const std::vector<char>& in_set,
                  std::vector<char>& mark) {
  std::vector<int> stack, touched;
  const int n = inst.num_nodes();
  for (int u = 0; u < n; ++u) {
    if (!in_set[u]) continue;
    for (int w : inst.successors[u])
      if (!in_set[w] && !mark[w]) {
        mark[w] = 1;
        touched.push_back(w);
        stack.push_back(w);
      }
  }
  bool ok = true;
  while (ok && !stack.empty()) {
    int x = stack.back();
    stack.pop_back();
    for (int y : inst.successors[x]) {
      if (in_set[y]) {
        ok = false;
        break;
      }
      if (!mark[y]) {
        mark[y] = 1;
        touched.push_back(y);
        stack.push_back(y);
      }
    }
  }
  for (int t : touched) mark[t] = 0;
  return ok;
}

Blocks ComputeBlocks(const EfficientMipInstance& inst) {
  const int n = inst.num_nodes();
  int num_classes = 0;
  for (int c : inst.color_class) num_classes = std::max(num_classes, c + 1);
  std::vector<std::vector<int>> class_succ(num_classes);
  for (int u = 0; u < n; ++u)
    for (int w : inst.successors[u])
      if (inst.color_class[u] != inst.color_class[w])
        class_succ[inst.color_class[u]].push_back(inst.color_class[w]);
  // Tarjan's SCC on the class graph (iterative).
  std::vector<int> idx(num_classes, -1), low(num_classes, 0), comp(num_classes, -1);
  std::vector<char> on_stack(num_classes, 0);
  std::vector<int> stack;
  int counter = 0, num_comp = 0;
  for (int root = 0; root < num_classes; ++root) {
    if (idx[root] >= 0) continue;
    std::vector<std::pair<int, size_t>> call{{root, 0}};
    idx[root] = low[root] = counter++;
    stack.push_back(root);
    on_stack[root] = 1;
    while (!call.empty()) {
      auto& [c, i] = call.back();
      if (i < class_succ[c].size()) {
        int d = class_succ[c][i++];
        if (idx[d] < 0) {
          idx[d] = low[d] = counter++;
          stack.push_back(d);
          on_stack[d] = 1;
          call.push_back({d, 0});
        } else if (on_stack[d]) {
          low[c] = std::min(low[c], idx[d]);
        }
        continue;
      }
      if (low[c] == idx[c]) {
        int d;
        do {
          d = stack.back();
          stack.pop_back();
          on_stack[d] = 0;
          comp[d] = num_comp;
        } while (d != c);
        ++num_comp;
      }
      const int done = c;
      call.pop_back();
      if (!call.empty()) low[call.back().first] = std::min(low[call.back().first], low[done]);
    }
  }
  // Contracted DAG on components; components named by their smallest node for determinism.
  std::vector<int> comp_min(num_comp, n);
  for (int v = 0; v < n; ++v) {
    int c = comp[inst.color_class[v]];
    comp_min[c] = std::min(comp_min[c], v);
  }
  // As the released greedy: one entry per edge in file order (repeats kept).
  std::vector<std::vector<int>> succ(num_comp);
  std::vector<int> indeg(num_comp, 0);
  for (auto [u, w] : inst.edges) {
    int a = comp[inst.color_class[u]], b = comp[inst.color_class[w]];
    if (a == b) continue;
    succ[a].push_back(b);
    ++indeg[b];
  }
  // The greedy's DFS-like order: a stack of ready components.
  std::vector<int> by_min(num_comp);
  std::iota(by_min.begin(), by_min.end(), 0);
  std::sort(by_min.begin(), by_min.end(),
            [&](int a, int b) { return comp_min[a] > comp_min[b]; });  // smallest popped first
  std::vector<int> ready;
  for (int c : by_min)
    if (indeg[c] == 0) ready.push_back(c);
  std::vector<int> position(num_comp, -1);
  int next = 0;
  while (!ready.empty()) {
    int c = ready.back();
    ready.pop_back();
    position[c] = next++;
    for (int d : succ[c])
      if (--indeg[d] == 0) ready.push_back(d);
  }
  Blocks b;
  b.nodes.assign(num_comp, {});
  b.block_of.assign(n, -1);
  b.size_bytes.assign(num_comp, 0);
  for (int v = 0; v < n; ++v) {
    int blk = position[comp[inst.color_class[v]]];
    b.block_of[v] = blk;
    b.nodes[blk].push_back(v);
    b.size_bytes[blk] += inst.size_bytes[v];
  }
  b.successors.assign(num_comp, {});
  b.predecessors.assign(num_comp, {});
  for (int c = 0; c < num_comp; ++c)
    for (int d : succ[c]) {
      b.successors[position[c]].push_back(position[d]);
      b.predecessors[position[d]].push_back(position[c]);
    }
  for (auto* lists : {&b.predecessors, &b.successors})
    for (auto& s : *lists) {
      std::sort(s.begin(), s.end());
      s.erase(std::unique(s.begin(), s.end()), s.end());
    }
  return b;
}

std::vector<int> BlockOrder(const Blocks& blocks, const EfficientMipInstance& inst, int kind,
                            uint64_t seed) {
  const int num = static_cast<int>(blocks.nodes.size());
  std::vector<int> order;
  if (kind == 1) {
    order.resize(num);
    std::iota(order.begin(), order.end(), 0);
    return order;
  }
  // Priority for kind 2: longest path (accelerator time) from the block to a sink.
  std::vector<double> tail(num, 0.0);
  for (int b = num - 1; b >= 0; --b) {
    double own = 0.0;
    for (int v : blocks.nodes[b])
      own += std::isfinite(inst.accelerator_latency_s[v]) ? inst.accelerator_latency_s[v]
                                                          : inst.cpu_latency_s[v];
    double best = 0.0;
    for (int s : blocks.successors[b]) best = std::max(best, tail[s]);
    tail[b] = own + best;
  }
  std::mt19937_64 rng(seed + static_cast<uint64_t>(kind) * 7919);
  std::vector<int> indeg(num);
  for (int b = 0; b < num; ++b) indeg[b] = static_cast<int>(blocks.predecessors[b].size());
  std::set<std::pair<double, int>> ready;  // (key, block), smallest key first
  auto key = [&](int b) -> double {
    if (kind == 0) return b;
    if (kind == 2) return -tail[b];
    return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  };
  for (int b = 0; b < num; ++b)
    if (indeg[b] == 0) ready.insert({key(b), b});
  while (!ready.empty()) {
    int b = ready.begin()->second;
    ready.erase(ready.begin());
    order.push_back(b);
    for (int s : blocks.successors[b])
      if (--indeg[s] == 0) ready.insert({key(s), s});
  }
  return order;
}

}  // namespace efficientmip_internal
}  // namespace hx::place
