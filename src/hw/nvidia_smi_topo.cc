#include "hexplan/hw/nvidia_smi_topo.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <sstream>

#include "hexplan/core/utf8.h"
#include "hexplan/hw/device_spec.h"
#include "hw/link_rates.h"

namespace hx::hw {
namespace {

enum class Rel { kSelf, kNvlink, kPix, kPxb, kPhb, kNode, kSys };

struct Cell {
  Rel rel = Rel::kSys;
  int nvlinks = 0;
};

std::vector<std::string> Tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

bool IsDeviceColumn(const std::string& t) {
  return t.rfind("GPU", 0) == 0 || t.rfind("NIC", 0) == 0 || t.rfind("mlx", 0) == 0 ||
         t.rfind("CX", 0) == 0;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\"");
  size_t e = s.find_last_not_of(" \t\r\"");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

StatusOr<Cell> ParseCell(const std::string& t, const std::string& where) {
  Cell c;
  if (t == "X") {
    c.rel = Rel::kSelf;
  } else if (t.rfind("NV", 0) == 0 && t.size() > 2 &&
             std::all_of(t.begin() + 2, t.end(),
                         [](unsigned char ch) { return std::isdigit(ch); })) {
    c.rel = Rel::kNvlink;
    // More than two digits is out of range (and may not fit an int: std::stoi would throw).
    c.nvlinks = t.size() <= 4 ? std::stoi(t.substr(2)) : 0;
    if (c.nvlinks < 1 || c.nvlinks > 64) return ParseError(where + "bad NVLink count '" + t + "'");
  } else if (t == "PIX") {
    c.rel = Rel::kPix;
  } else if (t == "PXB") {
    c.rel = Rel::kPxb;
  } else if (t == "PHB") {
    c.rel = Rel::kPhb;
  } else if (t == "NODE") {
    c.rel = Rel::kNode;
  } else if (t == "SYS" || t == "SOC") {
    c.rel = Rel::kSys;
  } else {
    return ParseError(where + "unknown connection '" + t +
                      "' (expected X, NV#, PIX, PXB, PHB, NODE or SYS)");
  }
  return c;
}

// NVLink bricks a GPU generation has, its per-brick rate and its PCIe rate.
struct Generation {
  int max_links;
  double per_link;
  double pcie;
};

Generation GenerationOf(const std::string& model) {
  auto starts = [&](const char* p) { return model.rfind(p, 0) == 0; };
  if (starts("P100")) return {4, kNvlink1PerLink, kPcieGen3x16};
  if (starts("V100")) return {6, kNvlinkPerLink, kPcieGen3x16};
  if (starts("A100")) return {12, kNvlinkPerLink, kPcieGen4x16};
  if (starts("H100") || starts("H200")) return {18, kNvlinkPerLink, kPcieGen5x16};
  if (starts("RTX-A6000")) return {4, kA6000BridgePerLink, kPcieGen4x16};
  if (starts("RTX-3060")) return {4, kNvlinkPerLink, kPcieGen4x16};
  return {18, kNvlinkPerLink, kPcieGen3x16};
}

struct UnionFind {
  std::vector<size_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  size_t Find(size_t x) { return parent[x] == x ? x : parent[x] = Find(parent[x]); }
  void Union(size_t a, size_t b) { parent[Find(a)] = Find(b); }
};

}  // namespace

Status NvidiaSmiImportOptions::Validate() const {
  if (!FindDeviceSpec(default_model)) {
    return InvalidArgument("nvidia-smi import: unknown default_model '" + default_model + "'");
  }
  if (node.empty()) return InvalidArgument("nvidia-smi import: node name is empty");
  return Status::Ok();
}

bool LooksLikeNvidiaSmiTopo(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto t = Tokens(line);
    if (!t.empty()) return t[0] == "GPU0" && t.size() >= 2;
  }
  return false;
}

StatusOr<std::vector<std::string>> ParseGpuNamesCsv(const std::string& text,
                                                    const std::string& source_name) {
  HX_RETURN_IF_ERROR(CheckUtf8Text(text, source_name));
  std::istringstream in(text);
  std::vector<std::string> names;
  int column = 0;
  int line_no = 0;
  bool first = true;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (Trim(line).empty()) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(Trim(cell));
    if (first) {
      first = false;
      auto it = std::find(cells.begin(), cells.end(), "name");
      if (it != cells.end()) {
        column = static_cast<int>(it - cells.begin());
        continue;
      }
    }
    if (column >= static_cast<int>(cells.size()) || cells[column].empty()) {
      return ParseError(source_name + ":" + std::to_string(line_no) + ": no GPU name in '" + line +
                        "'");
    }
    names.push_back(cells[column]);
  }
  if (names.empty()) return ParseError(source_name + ": no GPU names found");
  return names;
}

StatusOr<Cluster> ImportNvidiaSmiTopo(const std::string& topo_text, const std::string& source_name,
                                      const NvidiaSmiImportOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  HX_RETURN_IF_ERROR(CheckUtf8Text(topo_text, source_name));
  std::istringstream in(topo_text);
  std::vector<std::string> columns;
  size_t num_gpus = 0;
  std::map<std::string, size_t> column_index;
  std::map<std::string, int> row_line;    // row name -> its line
  std::vector<std::vector<Cell>> matrix;  // rows of GPUs and NICs, in column order
  std::vector<std::string> cpu_affinity, numa_affinity;
  int line_no = 0;
  int header_line = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    auto t = Tokens(line);
    if (t.empty()) continue;
    if (t[0] == "Legend:" || t[0] == "NIC") break;
    if (columns.empty()) {
      if (t[0] != "GPU0") continue;
      header_line = line_no;
      for (const std::string& tok : t) {
        if (!IsDeviceColumn(tok)) break;
        if (column_index.count(tok)) {
          return ParseError(source_name + ":" + std::to_string(line_no) + ": duplicate column '" +
                            tok + "' in the header (columns " +
                            std::to_string(column_index[tok] + 1) + " and " +
                            std::to_string(columns.size() + 1) + ")");
        }
        column_index[tok] = columns.size();
        columns.push_back(tok);
      }
      for (const std::string& c : columns) num_gpus += c.rfind("GPU", 0) == 0 ? 1 : 0;
      continue;
    }
    auto it = column_index.find(t[0]);
    if (it == column_index.end()) {
      return ParseError(source_name + ":" + std::to_string(line_no) + ": unexpected row '" + t[0] +
                        "' (not a column of the header at line " + std::to_string(header_line) +
                        ")");
    }
    if (auto first = row_line.find(t[0]); first != row_line.end()) {
      return ParseError(source_name + ":" + std::to_string(line_no) + ": duplicate row '" + t[0] +
                        "' (first at line " + std::to_string(first->second) + ")");
    }
    row_line[t[0]] = line_no;
    if (it->second != matrix.size()) {
      return ParseError(source_name + ":" + std::to_string(line_no) + ": row '" + t[0] +
                        "' out of order");
    }
    if (t.size() < columns.size() + 1) {
      return ParseError(source_name + ":" + std::to_string(line_no) + ": row '" + t[0] + "' has " +
                        std::to_string(t.size() - 1) + " cells, expected " +
                        std::to_string(columns.size()));
    }
    std::string where = source_name + ":" + std::to_string(line_no) + ": ";
    std::vector<Cell> row;
    for (size_t k = 0; k < columns.size(); ++k) {
      HX_ASSIGN_OR_RETURN(Cell cell, ParseCell(t[k + 1], where));
      if ((cell.rel == Rel::kSelf) != (k == matrix.size())) {
        return ParseError(where + "'X' must be on the diagonal only (row '" + t[0] + "', column '" +
                          columns[k] + "')");
      }
      row.push_back(cell);
    }
    if (matrix.size() < num_gpus) {
      cpu_affinity.push_back(t.size() > columns.size() + 1 ? t[columns.size() + 1] : "");
      numa_affinity.push_back(t.size() > columns.size() + 2 ? t[columns.size() + 2] : "");
    }
    matrix.push_back(std::move(row));
  }
  if (columns.empty() || num_gpus == 0) {
    return ParseError(source_name +
                      ": not `nvidia-smi topo -m` output: no header row starting "
                      "with GPU0");
  }
  if (matrix.size() < num_gpus) {
    return ParseError(source_name + ": expected " + std::to_string(num_gpus) + " GPU rows, found " +
                      std::to_string(matrix.size()));
  }
  for (size_t i = 0; i < num_gpus; ++i) {
    for (size_t j = 0; j < num_gpus; ++j) {
      if (matrix[i][j].rel != matrix[j][i].rel || matrix[i][j].nvlinks != matrix[j][i].nvlinks) {
        return ParseError(source_name + ": the matrix is not symmetric between " + columns[i] +
                          " and " + columns[j]);
      }
    }
  }

  // GPU models.
  std::vector<DeviceSpec> specs(num_gpus, *FindDeviceSpec(options.default_model));
  if (!options.gpu_names_csv.empty()) {
    HX_ASSIGN_OR_RETURN(auto names,
                        ParseGpuNamesCsv(options.gpu_names_csv, options.gpu_names_source));
    if (names.size() != num_gpus) {
      return InvalidArgument(options.gpu_names_source + ": " + std::to_string(names.size()) +
                             " GPU names for the " + std::to_string(num_gpus) + " GPUs of " +
                             source_name);
    }
    for (size_t i = 0; i < num_gpus; ++i) {
      auto spec = MatchGpuName(names[i]);
      if (!spec) {
        return InvalidArgument(options.gpu_names_source + ": GPU " + std::to_string(i) + " '" +
                               names[i] + "' is not in the device table (see docs/hardware.md)");
      }
      specs[i] = *spec;
    }
  }

  // Sockets: NUMA affinity when printed, else any relationship closer than SYS (directly or
  // through a NIC).
  const size_t rows = matrix.size();
  UnionFind socket(num_gpus), pcie_switch(num_gpus);
  auto same_socket = [](Rel r) { return r != Rel::kSys && r != Rel::kNvlink; };
  auto same_switch = [](Rel r) { return r == Rel::kPix || r == Rel::kPxb; };
  bool numa_known = std::all_of(numa_affinity.begin(), numa_affinity.end(), [](const auto& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), ::isdigit);
  });
  for (size_t i = 0; i < num_gpus; ++i) {
    for (size_t j = i + 1; j < num_gpus; ++j) {
      if (numa_known ? numa_affinity[i] == numa_affinity[j]
                     : (same_socket(matrix[i][j].rel) ||
                        (!cpu_affinity[i].empty() && cpu_affinity[i] == cpu_affinity[j]))) {
        socket.Union(i, j);
      }
      if (same_switch(matrix[i][j].rel)) pcie_switch.Union(i, j);
      for (size_t k = num_gpus; k < rows; ++k) {
        if (!numa_known && same_socket(matrix[i][k].rel) && same_socket(matrix[j][k].rel)) {
          socket.Union(i, j);
        }
        if (same_switch(matrix[i][k].rel) && same_switch(matrix[j][k].rel)) pcie_switch.Union(i, j);
      }
    }
  }

  Cluster c(source_name);
  PlaceId host = c.AddHostMemory(options.node);
  std::map<size_t, PlaceId> roots;
  std::map<size_t, std::vector<size_t>> switch_members;
  for (size_t i = 0; i < num_gpus; ++i) switch_members[pcie_switch.Find(i)].push_back(i);
  std::vector<DeviceId> gpus;
  for (size_t i = 0; i < num_gpus; ++i) {
    gpus.push_back(
        c.AddDevice("gpu" + std::to_string(i), DeviceKind::kGpu, options.node, specs[i]));
  }
  int bus = 0;
  for (const auto& [rep, members] : switch_members) {
    size_t s = socket.Find(members.front());
    if (!roots.count(s)) {
      std::string name = options.node + ".cpu" + std::to_string(roots.size());
      PlaceId root = c.AddSwitch(name, options.node);
      c.AddLink(name + ".membus", LinkKind::kMemoryBus, host, root, 100 * kGBps, kMemoryBusLatency);
      roots[s] = root;
    }
    double rate = GenerationOf(specs[members.front()].model).pcie;
    std::string bus_name = "pcie-bus" + std::to_string(bus);
    if (members.size() == 1) {
      c.AddLink(bus_name, LinkKind::kPcie, roots[s], c.PlaceOf(gpus[members.front()]), rate,
                kPcieHopLatency);
    } else {
      PlaceId sw = c.AddSwitch("pcie-switch" + std::to_string(bus), options.node);
      c.AddLink(bus_name, LinkKind::kPcie, roots[s], sw, rate, kPcieHopLatency);
      for (size_t g : members) {
        c.AddLink("pcie:gpu" + std::to_string(g), LinkKind::kPcie, sw, c.PlaceOf(gpus[g]), rate,
                  kPcieHopLatency);
      }
    }
    ++bus;
  }

  // NVLink: pairwise bricks, or one NVSwitch when the bricks exceed what a GPU has.
  bool nvswitch = false;
  std::vector<int> max_count(num_gpus, 0);
  for (size_t i = 0; i < num_gpus; ++i) {
    int total = 0;
    for (size_t j = 0; j < num_gpus; ++j) {
      if (matrix[i][j].rel == Rel::kNvlink) {
        total += matrix[i][j].nvlinks;
        max_count[i] = std::max(max_count[i], matrix[i][j].nvlinks);
      }
    }
    if (total > GenerationOf(specs[i].model).max_links) nvswitch = true;
  }
  if (nvswitch) {
    PlaceId sw = c.AddSwitch("nvswitch", options.node);
    for (size_t i = 0; i < num_gpus; ++i) {
      if (max_count[i] == 0) continue;
      Generation gen = GenerationOf(specs[i].model);
      c.AddLink("nvswitch:gpu" + std::to_string(i), LinkKind::kNvswitch, c.PlaceOf(gpus[i]), sw,
                max_count[i] * gen.per_link, kNvlinkLatency / 2, true, max_count[i]);
    }
  } else {
    for (size_t i = 0; i < num_gpus; ++i) {
      for (size_t j = i + 1; j < num_gpus; ++j) {
        if (matrix[i][j].rel != Rel::kNvlink) continue;
        int n = matrix[i][j].nvlinks;
        double per_link =
            std::min(GenerationOf(specs[i].model).per_link, GenerationOf(specs[j].model).per_link);
        c.AddLink("nvlink:gpu" + std::to_string(i) + "-gpu" + std::to_string(j), LinkKind::kNvlink,
                  c.PlaceOf(gpus[i]), c.PlaceOf(gpus[j]), n * per_link, kNvlinkLatency, true, n);
      }
    }
  }
  HX_RETURN_IF_ERROR(c.Finalize());
  return c;
}

}  // namespace hx::hw
