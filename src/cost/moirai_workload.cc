// MOIRAI's MILP sample inputs (moirai-placement/moirai sample-data, exported to CSV): one row per
// compute task with per-device processing times, per-out-edge per-device-pair transfer times,
// memory footprints and (first row) device memories. Format: docs/formats.md, "MOIRAI CSV".

#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cost/csv_table.h"
#include "hexplan/core/time_caps.h"
#include "hexplan/cost/workload.h"

namespace hx::cost {
namespace {

constexpr double kMoiraiMsToS = 1e-3;
// MOIRAI's inter-server testbed: 100 Gb/s InfiniBand (the file gives times, not bandwidths; every
// MOIRAI tensor carries 0 bytes, so every transfer time comes from the file's pc columns).
constexpr double kInfinibandBytesPerS = 12.5e9;
constexpr double kPcieGen3BytesPerS = 15.75e9;

std::vector<std::string> SplitList(const std::string& field) {
  std::vector<std::string> out;
  std::string trimmed = internal::Trim(field);
  if (trimmed.empty()) return out;
  size_t pos = 0;
  while (true) {
    size_t comma = trimmed.find(',', pos);
    out.push_back(internal::Trim(trimmed.substr(pos, comma - pos)));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

bool ParseNumber(const std::string& text, double* out) {
  std::string t = internal::Trim(text);
  if (t.empty()) return false;
  auto res = std::from_chars(t.data(), t.data() + t.size(), *out);
  return res.ec == std::errc() && res.ptr == t.data() + t.size() && std::isfinite(*out);
}

bool ParseId(const std::string& text, int64_t* out) {
  double v = 0;
  if (!ParseNumber(text, &v) || v < 0 || v != std::floor(v) || v > 9e15) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

struct Task {
  int64_t id = 0;
  int line = 0;
  std::vector<int64_t> comm;  // c_task
  std::vector<int64_t> succ;  // dir_succ
  std::vector<double> p;      // per device, file units (ms)
  // pc[k1][k2][edge]
  std::vector<std::vector<std::vector<double>>> pc;
  int64_t memory = 0;
};

}  // namespace

StatusOr<Workload> ParseMoiraiCsv(const std::string& text, const std::string& source_name) {
  HX_ASSIGN_OR_RETURN(std::vector<internal::CsvRow> rows, internal::ParseCsv(text, source_name));
  if (rows.empty()) return ParseError(source_name + ": empty file: expected a MOIRAI header");
  const internal::CsvRow& header = rows[0];
  auto at = [&](int line, const std::string& field) {
    return source_name + ":" + std::to_string(line) + ": " + field + ": ";
  };
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.fields.size(); ++i) {
    std::string name = internal::Trim(header.fields[i]);
    if (!name.empty()) col[name] = i;
  }
  for (const char* required : {"task", "c_task", "dir_succ", "mi"}) {
    if (!col.count(required)) {
      return ParseError(at(header.line, "header") + "missing column \"" + required + "\"");
    }
  }
  int k = 0;
  while (col.count("p" + std::to_string(k))) ++k;
  if (k == 0) return ParseError(at(header.line, "header") + "expected columns p0..p{K-1}");
  if (k > 10) return ParseError(at(header.line, "header") + "more than 10 devices");
  for (int a = 0; a < k; ++a) {
    for (int b = 0; b < k; ++b) {
      std::string name = "pc" + std::to_string(a) + std::to_string(b);
      if (!col.count(name)) {
        return ParseError(at(header.line, "header") + "missing column \"" + name + "\" (K=" +
                          std::to_string(k) + " from p0..p" + std::to_string(k - 1) + ")");
      }
    }
    if (!col.count("m" + std::to_string(a))) {
      return ParseError(at(header.line, "header") + "missing column \"m" + std::to_string(a) +
                        "\"");
    }
  }

  std::vector<Task> tasks;
  std::vector<double> device_memory(k, 0.0);
  std::map<int64_t, size_t> task_index;
  std::set<int64_t> comm_ids;
  for (size_t r = 1; r < rows.size(); ++r) {
    const internal::CsvRow& row = rows[r];
    if (row.IsBlank()) break;  // the table ends at the first blank row (notes may follow)
    auto get = [&](const std::string& name) -> std::string {
      size_t i = col.at(name);
      return i < row.fields.size() ? row.fields[i] : "";
    };
    Task task;
    task.line = row.line;
    if (!ParseId(get("task"), &task.id)) {
      return ParseError(at(row.line, "task") + "expected a non-negative integer id, got \"" +
                        get("task") + "\"");
    }
    if (task_index.count(task.id) || comm_ids.count(task.id)) {
      return ParseError(at(row.line, "task") + "duplicate id " + std::to_string(task.id));
    }
    for (const char* list : {"c_task", "dir_succ"}) {
      for (const std::string& item : SplitList(get(list))) {
        int64_t id = 0;
        if (!ParseId(item, &id)) {
          return ParseError(at(row.line, list) + "expected a comma list of integer ids, got \"" +
                            get(list) + "\"");
        }
        (std::string(list) == "c_task" ? task.comm : task.succ).push_back(id);
      }
    }
    if (!task.comm.empty() && task.comm.size() != task.succ.size()) {
      return ParseError(at(row.line, "c_task") + std::to_string(task.comm.size()) +
                        " communication tasks for " + std::to_string(task.succ.size()) +
                        " successors in dir_succ");
    }
    for (int64_t c : task.comm) {
      if (!comm_ids.insert(c).second || task_index.count(c)) {
        return ParseError(at(row.line, "c_task") + "duplicate id " + std::to_string(c));
      }
    }
    for (int a = 0; a < k; ++a) {
      std::string name = "p" + std::to_string(a);
      double v = 0;
      if (!ParseNumber(get(name), &v) || v < 0 || v > kMaxStatedSeconds * 1e3) {
        return ParseError(at(row.line, name) + "expected a time in [0, 1e9] ms, got \"" +
                          get(name) + "\"");
      }
      task.p.push_back(v);
    }
    task.pc.assign(k, std::vector<std::vector<double>>(k));
    for (int a = 0; a < k; ++a) {
      for (int b = 0; b < k; ++b) {
        std::string name = "pc" + std::to_string(a) + std::to_string(b);
        std::vector<std::string> items = SplitList(get(name));
        if (task.comm.empty()) {
          continue;  // no communication tasks: the column is empty (or ignored)
        }
        if (items.size() != task.comm.size()) {
          return ParseError(at(row.line, name) + "expected " + std::to_string(task.comm.size()) +
                            " transfer time(s), one per communication task, got \"" + get(name) +
                            "\"");
        }
        for (const std::string& item : items) {
          double v = 0;
          if (!ParseNumber(item, &v) || v < 0 || v > kMaxStatedSeconds * 1e3) {
            return ParseError(at(row.line, name) + "expected times in [0, 1e9] ms, got \"" +
                              get(name) + "\"");
          }
          task.pc[a][b].push_back(v);
        }
      }
    }
    double mi = 0;
    if (!ParseNumber(get("mi"), &mi) || mi < 0) {
      return ParseError(at(row.line, "mi") + "expected a non-negative memory size, got \"" +
                        get("mi") + "\"");
    }
    task.memory = static_cast<int64_t>(std::llround(mi));
    if (tasks.empty()) {
      for (int a = 0; a < k; ++a) {
        std::string name = "m" + std::to_string(a);
        if (!ParseNumber(get(name), &device_memory[a]) || device_memory[a] <= 0) {
          return ParseError(at(row.line, name) + "expected a positive device memory, got \"" +
                            get(name) + "\"");
        }
      }
    }
    task_index[task.id] = tasks.size();
    tasks.push_back(std::move(task));
  }
  if (tasks.empty()) return ParseError(source_name + ": no task rows after the header");
  for (const Task& t : tasks) {
    for (int64_t s : t.succ) {
      if (!task_index.count(s)) {
        return ParseError(at(t.line, "dir_succ") + "unknown successor task " + std::to_string(s));
      }
    }
  }

  Workload w;
  w.format = "moirai";
  std::string stem = source_name.substr(source_name.find_last_of('/') + 1);
  if (auto dot = stem.rfind('.'); dot != std::string::npos && dot > 0) stem.resize(dot);
  w.name = stem;
  graph::Graph& g = w.graph;
  g.set_name(stem);
  auto task_name = [](int64_t id) { return "task" + std::to_string(id); };
  std::vector<std::string> device_names;
  for (int a = 0; a < k; ++a) device_names.push_back("dev" + std::to_string(a));

  // Tensors: one per communication task ("c<id>", 0 bytes: the file gives times, not sizes); a task
  // with successors but no communication tasks (the virtual source) feeds them one "<task>:out";
  // a task without successors (the sink) writes "<task>:out" to a graph output.
  std::vector<std::vector<TensorId>> inputs(tasks.size());
  std::vector<std::vector<TensorId>> outputs(tasks.size());
  std::vector<TensorId> sink_outputs;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const Task& t = tasks[i];
    if (!t.comm.empty()) {
      for (size_t e = 0; e < t.comm.size(); ++e) {
        std::string name = "c" + std::to_string(t.comm[e]);
        TensorId tensor = g.AddTensor(name, graph::DType::kU8, {0});
        outputs[i].push_back(tensor);
        inputs[task_index.at(t.succ[e])].push_back(tensor);
        for (int a = 0; a < k; ++a) {
          for (int b = 0; b < k; ++b) {
            if (a == b) continue;
            w.profile.SetTransferTime(name, device_names[a], device_names[b],
                                      t.pc[a][b][e] * kMoiraiMsToS);
          }
        }
      }
    } else {
      TensorId tensor = g.AddTensor(task_name(t.id) + ":out", graph::DType::kU8, {0});
      outputs[i].push_back(tensor);
      for (int64_t s : t.succ) inputs[task_index.at(s)].push_back(tensor);
      if (t.succ.empty()) sink_outputs.push_back(tensor);
    }
  }
  for (size_t i = 0; i < tasks.size(); ++i) {
    const Task& t = tasks[i];
    graph::Attributes attrs;
    attrs.Set("moirai_id", t.id);
    attrs.Set("memory_bytes", t.memory);
    g.AddOp("MoiraiTask", task_name(t.id), inputs[i], outputs[i], std::move(attrs));
    for (int a = 0; a < k; ++a) {
      w.profile.SetNodeTime(task_name(t.id), device_names[a], t.p[a] * kMoiraiMsToS);
    }
    w.profile.SetNodeMemory(task_name(t.id), t.memory);
  }
  for (TensorId t : sink_outputs) g.AddOutput(t);
  Status valid = g.Validate();
  if (!valid.ok()) return valid.WithContext(source_name);

  // The implicit cluster: K anonymous devices with the file's memories on one network.
  hw::Cluster cluster(stem + "-moirai");
  const std::string node = "moirai";
  PlaceId host = cluster.AddHostMemory(node);
  PlaceId net = cluster.AddSwitch("moirai-net", node);
  cluster.AddLink("pcie:host", hw::LinkKind::kPcie, host, net, kPcieGen3BytesPerS, 0.0);
  for (int a = 0; a < k; ++a) {
    hw::DeviceSpec spec;
    spec.model = "moirai-" + device_names[a];
    // Anonymous: every task is profiled; the hw layer needs a positive peak (placeholder).
    spec.peak_flops_fp32 = 1.0;
    spec.memory_bytes = static_cast<int64_t>(std::llround(device_memory[a]));
    DeviceId d = cluster.AddDevice(device_names[a], hw::DeviceKind::kGpu, node, spec);
    cluster.AddLink("ib:" + device_names[a], hw::LinkKind::kInfiniband, cluster.PlaceOf(d), net,
                    kInfinibandBytesPerS, 0.0);
  }
  Status finalized = cluster.Finalize();
  if (!finalized.ok()) return finalized.WithContext(source_name + ": implicit cluster");
  w.cluster = std::move(cluster);
  return w;
}

}  // namespace hx::cost
