#include "hexplan/cost/profile.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cost/csv_table.h"
#include "hexplan/core/file_util.h"
#include "hexplan/core/json_text.h"
#include "hexplan/core/time_caps.h"

namespace hx::cost {

static_assert(kMaxStatedSeconds == 1e6, "the reader messages below spell the cap as 1e6");
namespace {

constexpr double kProfileInf = std::numeric_limits<double>::infinity();

std::string FormatDouble(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, res.ptr);
}

const std::map<std::string, double>* FindKey(
    const std::map<std::string, std::map<std::string, double>>& table, const std::string& key) {
  auto it = table.find(key);
  return it == table.end() ? nullptr : &it->second;
}

std::optional<std::pair<double, ProfileMatch>> FindDevice(const std::map<std::string, double>& row,
                                                          const std::string& name,
                                                          const std::string& model,
                                                          const std::string& kind) {
  const std::pair<const std::string*, ProfileMatch> keys[] = {
      {&name, ProfileMatch::kDeviceName},
      {&model, ProfileMatch::kDeviceModel},
      {&kind, ProfileMatch::kDeviceKind},
  };
  for (const auto& [key, match] : keys) {
    if (key->empty()) continue;
    auto it = row.find(*key);
    if (it != row.end()) return std::make_pair(it->second, match);
  }
  auto it = row.find("*");
  if (it != row.end()) return std::make_pair(it->second, ProfileMatch::kAnyDevice);
  return std::nullopt;
}

// Each entry of a profile file once: a second entry for the same (node, device), transfer, memory
// row or device setting with another value would replace the first without a word. The same value
// again is no conflict (a CSV may give a node's memory on each of its device rows).
class EntriesSeenOnce {
 public:
  // "" when `entry` is new or repeats its first value, else where it was first given.
  std::string Conflict(const std::string& entry, double value, const std::string& where) {
    auto [it, fresh] = first_.emplace(entry, std::make_pair(where, value));
    return fresh || it->second.second == value ? std::string() : it->second.first;
  }

 private:
  std::map<std::string, std::pair<std::string, double>> first_;  // entry -> (where, value)
};

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

graph::DType OpComputeDType(const graph::Graph& graph, NodeId op) {
  const graph::Node& node = graph.node(op);
  for (TensorId t : node.outputs) {
    if (t.valid() && graph::IsFloatingPoint(graph.tensor(t).dtype)) return graph.tensor(t).dtype;
  }
  for (TensorId t : node.inputs) {
    if (t.valid() && graph::IsFloatingPoint(graph.tensor(t).dtype)) return graph.tensor(t).dtype;
  }
  return graph::DType::kF32;
}

std::string OpSignature(const graph::Graph& graph, NodeId op) {
  const graph::Node& node = graph.node(op);
  std::string sig = node.op_type.empty() ? graph::NodeKindName(node.kind) : node.op_type;
  sig += '|';
  sig += graph::DTypeName(OpComputeDType(graph, op));
  sig += '|';
  bool first = true;
  for (TensorId t : node.inputs) {
    if (!first) sig += 'x';
    first = false;
    sig += t.valid() ? graph::ShapeToString(graph.tensor(t).shape) : "-";
  }
  return sig;
}

void Profile::SetNodeTime(const std::string& node_name, const std::string& device, double seconds) {
  node_times_[node_name][device] = seconds;
}

void Profile::SetSignatureTime(const std::string& signature, const std::string& device,
                               double seconds) {
  signature_times_[signature][device] = seconds;
}

void Profile::SetNodeUnsupported(const std::string& node_name, const std::string& device) {
  node_times_[node_name][device] = kProfileInf;
}

void Profile::SetSignatureUnsupported(const std::string& signature, const std::string& device) {
  signature_times_[signature][device] = kProfileInf;
}

void Profile::SetTransferTime(const std::string& node_name, const std::string& src,
                              const std::string& dst, double seconds) {
  transfer_times_[node_name][{src, dst}] = seconds;
}

void Profile::SetNodeMemory(const std::string& node_name, int64_t bytes) {
  node_memory_[node_name] = bytes;
}

std::optional<ProfiledTime> Profile::FindOpTime(const graph::Graph& graph, NodeId op,
                                                const std::string& device_name,
                                                const std::string& device_model,
                                                const std::string& device_kind) const {
  if (const auto* row = FindKey(node_times_, graph.node(op).name)) {
    if (auto hit = FindDevice(*row, device_name, device_model, device_kind)) {
      return ProfiledTime{hit->first, hit->second, true};
    }
  }
  if (!signature_times_.empty()) {
    if (const auto* row = FindKey(signature_times_, OpSignature(graph, op))) {
      if (auto hit = FindDevice(*row, device_name, device_model, device_kind)) {
        return ProfiledTime{hit->first, hit->second, false};
      }
    }
  }
  return std::nullopt;
}

std::optional<double> Profile::OpTime(const graph::Graph& graph, NodeId op,
                                      const std::string& device_name,
                                      const std::string& device_model) const {
  auto hit = FindOpTime(graph, op, device_name, device_model, "");
  if (!hit) return std::nullopt;
  return hit->seconds;
}

std::optional<double> Profile::TransferTime(const std::string& node_name, const std::string& src,
                                            const std::string& dst) const {
  auto it = transfer_times_.find(node_name);
  if (it == transfer_times_.end()) return std::nullopt;
  auto jt = it->second.find({src, dst});
  if (jt == it->second.end()) return std::nullopt;
  return jt->second;
}

std::optional<int64_t> Profile::NodeMemory(const std::string& node_name) const {
  auto it = node_memory_.find(node_name);
  if (it == node_memory_.end()) return std::nullopt;
  return it->second;
}

void Profile::SetCpuContention(const std::string& device, double gamma) {
  cpu_contention_[device] = gamma;
}

namespace {

// A per-device value: by the device's name first, then its model.
std::optional<double> FindDeviceValue(const std::map<std::string, double>& m,
                                      const std::string& device_name,
                                      const std::string& device_model) {
  for (const std::string* key : {&device_name, &device_model}) {
    auto it = m.find(*key);
    if (it != m.end()) return it->second;
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> Profile::CpuContention(const std::string& device_name,
                                             const std::string& device_model) const {
  return FindDeviceValue(cpu_contention_, device_name, device_model);
}

void Profile::SetSubgraphCost(const std::string& device, double seconds) {
  subgraph_costs_[device] = seconds;
}

std::optional<double> Profile::SubgraphCost(const std::string& device_name,
                                            const std::string& device_model) const {
  return FindDeviceValue(subgraph_costs_, device_name, device_model);
}

namespace {

// A per-(source, destination) cost: by device names first, then by models.
std::optional<double> FindPairCost(const std::map<std::pair<std::string, std::string>, double>& m,
                                   const std::string& src_name, const std::string& src_model,
                                   const std::string& dst_name, const std::string& dst_model) {
  for (const auto& key :
       {std::make_pair(src_name, dst_name), std::make_pair(src_model, dst_model)}) {
    auto it = m.find(key);
    if (it != m.end()) return it->second;
  }
  return std::nullopt;
}

}  // namespace

void Profile::SetSendCost(const std::string& src, const std::string& dst, double seconds) {
  send_costs_[{src, dst}] = seconds;
}

std::optional<double> Profile::SendCost(const std::string& src_name, const std::string& src_model,
                                        const std::string& dst_name,
                                        const std::string& dst_model) const {
  return FindPairCost(send_costs_, src_name, src_model, dst_name, dst_model);
}

void Profile::SetRecvCost(const std::string& src, const std::string& dst, double seconds) {
  recv_costs_[{src, dst}] = seconds;
}

std::optional<double> Profile::RecvCost(const std::string& src_name, const std::string& src_model,
                                        const std::string& dst_name,
                                        const std::string& dst_model) const {
  return FindPairCost(recv_costs_, src_name, src_model, dst_name, dst_model);
}

bool Profile::empty() const { return num_entries() == 0; }

size_t Profile::num_entries() const {
  size_t n = node_memory_.size() + cpu_contention_.size() + subgraph_costs_.size() +
             send_costs_.size() + recv_costs_.size();
  for (const auto& [k, row] : node_times_) n += row.size();
  for (const auto& [k, row] : signature_times_) n += row.size();
  for (const auto& [k, row] : transfer_times_) n += row.size();
  return n;
}

void Profile::Merge(const Profile& other) {
  for (const auto& [k, row] : other.node_times_) {
    for (const auto& [d, s] : row) node_times_[k][d] = s;
  }
  for (const auto& [k, row] : other.signature_times_) {
    for (const auto& [d, s] : row) signature_times_[k][d] = s;
  }
  for (const auto& [k, row] : other.transfer_times_) {
    for (const auto& [d, s] : row) transfer_times_[k][d] = s;
  }
  for (const auto& [k, b] : other.node_memory_) node_memory_[k] = b;
  for (const auto& [k, g] : other.cpu_contention_) cpu_contention_[k] = g;
  for (const auto& [k, c] : other.subgraph_costs_) subgraph_costs_[k] = c;
  for (const auto& [k, c] : other.send_costs_) send_costs_[k] = c;
  for (const auto& [k, c] : other.recv_costs_) recv_costs_[k] = c;
}

// ---------------------------------------------------------------------------------------------
// JSON

std::string Profile::ToJson() const {
  using nlohmann::json;
  json ops = json::array();
  auto add_ops = [&ops](const std::map<std::string, std::map<std::string, double>>& table,
                        const char* key_field) {
    for (const auto& [key, row] : table) {
      for (const auto& [device, seconds] : row) {
        json e;
        e[key_field] = key;
        e["device"] = device;
        if (std::isinf(seconds)) {
          e["supported"] = false;
        } else {
          e["seconds"] = seconds;
        }
        ops.push_back(std::move(e));
      }
    }
  };
  add_ops(node_times_, "node");
  add_ops(signature_times_, "signature");
  json transfers = json::array();
  for (const auto& [node, row] : transfer_times_) {
    for (const auto& [pair, seconds] : row) {
      transfers.push_back(
          {{"node", node}, {"src", pair.first}, {"dst", pair.second}, {"seconds", seconds}});
    }
  }
  json memory = json::array();
  for (const auto& [node, bytes] : node_memory_) {
    memory.push_back({{"node", node}, {"bytes", bytes}});
  }
  json doc;
  doc["format"] = "hexplan-profile";
  doc["version"] = 1;
  doc["ops"] = std::move(ops);
  doc["transfers"] = std::move(transfers);
  doc["memory"] = std::move(memory);
  if (!cpu_contention_.empty()) {
    json contention = json::array();
    for (const auto& [device, gamma] : cpu_contention_)
      contention.push_back({{"device", device}, {"gamma", gamma}});
    doc["cpu_contention"] = std::move(contention);
  }
  if (!subgraph_costs_.empty()) {
    json rows = json::array();
    for (const auto& [device, seconds] : subgraph_costs_)
      rows.push_back({{"device", device}, {"seconds", seconds}});
    doc["subgraph_start"] = std::move(rows);
  }
  for (const auto& [key, costs] : {std::make_pair("transfer_send", &send_costs_),
                                   std::make_pair("transfer_recv", &recv_costs_)}) {
    if (costs->empty()) continue;
    json rows = json::array();
    for (const auto& [pair, seconds] : *costs)
      rows.push_back({{"src", pair.first}, {"dst", pair.second}, {"seconds", seconds}});
    doc[key] = std::move(rows);
  }
  return DumpJson(doc, 2) + "\n";
}

StatusOr<Profile> Profile::FromJson(const std::string& text, const std::string& source_name) {
  using nlohmann::json;
  HX_ASSIGN_OR_RETURN(json doc, ParseJson<json>(text, source_name));
  auto err = [&source_name](const std::string& where, const std::string& what) {
    return ParseError(source_name + ": " + where + ": " + what);
  };
  if (!doc.is_object()) return err("(top level)", "expected an object");
  if (doc.contains("format") &&
      (!doc["format"].is_string() || doc["format"].get<std::string>() != "hexplan-profile")) {
    return err("format", "expected \"hexplan-profile\"");
  }
  if (doc.contains("version") && (!doc["version"].is_number_integer() || doc["version"] != 1)) {
    return err("version", "expected 1");
  }
  for (const char* key : {"ops", "transfers", "memory", "cpu_contention", "subgraph_start",
                          "transfer_send", "transfer_recv"}) {
    if (doc.contains(key) && !doc[key].is_array()) return err(key, "expected an array");
  }
  auto get_string = [&](const json& e, const std::string& where, const char* field,
                        std::string* out) -> Status {
    if (!e.contains(field)) return err(where + "." + field, "missing");
    if (!e[field].is_string() || e[field].get<std::string>().empty()) {
      return err(where + "." + field, "expected a non-empty string");
    }
    *out = e[field].get<std::string>();
    return Status::Ok();
  };
  auto get_seconds = [&](const json& e, const std::string& where, double* out) -> Status {
    if (!e.contains("seconds")) return err(where + ".seconds", "missing");
    if (!e["seconds"].is_number() || !std::isfinite(e["seconds"].get<double>()) ||
        e["seconds"].get<double>() < 0 || e["seconds"].get<double>() > kMaxStatedSeconds) {
      return err(where + ".seconds",
                 "expected a number of seconds in [0, 1e6], got " + DumpJson(e["seconds"]));
    }
    *out = e["seconds"].get<double>();
    return Status::Ok();
  };

  EntriesSeenOnce seen;
  auto once = [&](const std::string& entry, double value, const std::string& where) -> Status {
    std::string first = seen.Conflict(entry, value, where);
    if (first.empty()) return Status::Ok();
    return err(where, entry + " is also given at " + first + " with another value");
  };
  Profile profile;
  if (doc.contains("ops")) {
    const json& ops = doc["ops"];
    for (size_t i = 0; i < ops.size(); ++i) {
      const json& e = ops[i];
      std::string where = "ops[" + std::to_string(i) + "]";
      if (!e.is_object()) return err(where, "expected an object");
      bool has_node = e.contains("node");
      bool has_sig = e.contains("signature");
      if (has_node == has_sig) return err(where, "expected exactly one of \"node\", \"signature\"");
      std::string key;
      HX_RETURN_IF_ERROR(get_string(e, where, has_node ? "node" : "signature", &key));
      std::string device;
      HX_RETURN_IF_ERROR(get_string(e, where, "device", &device));
      bool supported = true;
      if (e.contains("supported")) {
        if (!e["supported"].is_boolean()) return err(where + ".supported", "expected a boolean");
        supported = e["supported"].get<bool>();
      }
      double seconds = kProfileInf;
      if (supported) HX_RETURN_IF_ERROR(get_seconds(e, where, &seconds));
      HX_RETURN_IF_ERROR(
          once((has_node ? "node " : "signature ") + Quoted(key) + " on " + Quoted(device), seconds,
               where));
      (has_node ? profile.node_times_ : profile.signature_times_)[key][device] = seconds;
    }
  }
  if (doc.contains("transfers")) {
    const json& transfers = doc["transfers"];
    for (size_t i = 0; i < transfers.size(); ++i) {
      const json& e = transfers[i];
      std::string where = "transfers[" + std::to_string(i) + "]";
      if (!e.is_object()) return err(where, "expected an object");
      std::string node, src, dst;
      double seconds = 0;
      HX_RETURN_IF_ERROR(get_string(e, where, "node", &node));
      HX_RETURN_IF_ERROR(get_string(e, where, "src", &src));
      HX_RETURN_IF_ERROR(get_string(e, where, "dst", &dst));
      HX_RETURN_IF_ERROR(get_seconds(e, where, &seconds));
      HX_RETURN_IF_ERROR(
          once("the transfer of node " + Quoted(node) + " " + Quoted(src) + " -> " + Quoted(dst),
               seconds, where));
      profile.SetTransferTime(node, src, dst, seconds);
    }
  }
  if (doc.contains("memory")) {
    const json& memory = doc["memory"];
    for (size_t i = 0; i < memory.size(); ++i) {
      const json& e = memory[i];
      std::string where = "memory[" + std::to_string(i) + "]";
      if (!e.is_object()) return err(where, "expected an object");
      std::string node;
      HX_RETURN_IF_ERROR(get_string(e, where, "node", &node));
      if (!e.contains("bytes")) return err(where + ".bytes", "missing");
      if (!e["bytes"].is_number_integer() || e["bytes"].get<int64_t>() < 0) {
        return err(where + ".bytes", "expected a non-negative integer");
      }
      HX_RETURN_IF_ERROR(
          once("the memory of node " + Quoted(node), double(e["bytes"].get<int64_t>()), where));
      profile.SetNodeMemory(node, e["bytes"].get<int64_t>());
    }
  }
  if (doc.contains("cpu_contention")) {
    const json& contention = doc["cpu_contention"];
    for (size_t i = 0; i < contention.size(); ++i) {
      const json& e = contention[i];
      std::string where = "cpu_contention[" + std::to_string(i) + "]";
      if (!e.is_object()) return err(where, "expected an object");
      std::string device;
      HX_RETURN_IF_ERROR(get_string(e, where, "device", &device));
      if (!e.contains("gamma")) return err(where + ".gamma", "missing");
      if (!e["gamma"].is_number() || !std::isfinite(e["gamma"].get<double>()) ||
          e["gamma"].get<double>() < 0) {
        return err(where + ".gamma", "expected a non-negative number");
      }
      HX_RETURN_IF_ERROR(
          once("the contention of device " + Quoted(device), e["gamma"].get<double>(), where));
      profile.SetCpuContention(device, e["gamma"].get<double>());
    }
  }
  if (doc.contains("subgraph_start")) {
    const json& rows = doc["subgraph_start"];
    for (size_t i = 0; i < rows.size(); ++i) {
      const json& e = rows[i];
      const std::string where = "subgraph_start[" + std::to_string(i) + "]";
      if (!e.is_object()) return err(where, "expected an object");
      std::string device;
      double seconds = 0.0;
      HX_RETURN_IF_ERROR(get_string(e, where, "device", &device));
      HX_RETURN_IF_ERROR(get_seconds(e, where, &seconds));
      HX_RETURN_IF_ERROR(once("the subgraph start of device " + Quoted(device), seconds, where));
      profile.SetSubgraphCost(device, seconds);
    }
  }
  for (const char* key : {"transfer_send", "transfer_recv"}) {
    if (!doc.contains(key)) continue;
    const json& rows = doc[key];
    for (size_t i = 0; i < rows.size(); ++i) {
      const json& e = rows[i];
      const std::string where = std::string(key) + "[" + std::to_string(i) + "]";
      if (!e.is_object()) return err(where, "expected an object");
      std::string src, dst;
      double seconds = 0.0;
      HX_RETURN_IF_ERROR(get_string(e, where, "src", &src));
      HX_RETURN_IF_ERROR(get_string(e, where, "dst", &dst));
      HX_RETURN_IF_ERROR(get_seconds(e, where, &seconds));
      HX_RETURN_IF_ERROR(
          once(std::string(key) + " " + Quoted(src) + " -> " + Quoted(dst), seconds, where));
      if (std::string(key) == "transfer_send")
        profile.SetSendCost(src, dst, seconds);
      else
        profile.SetRecvCost(src, dst, seconds);
    }
  }
  return profile;
}

// ---------------------------------------------------------------------------------------------
// CSV

namespace {
const char* const kCsvColumns[] = {"node",    "signature",    "device",   "dst_device",
                                   "seconds", "memory_bytes", "supported"};
}  // namespace

std::string Profile::ToCsv() const {
  using internal::CsvEscape;
  std::string out = "node,signature,device,dst_device,seconds,memory_bytes,supported\n";
  for (const auto& [key, row] : node_times_) {
    for (const auto& [device, seconds] : row) {
      out += CsvEscape(key) + ",," + CsvEscape(device) + ",,";
      out += std::isinf(seconds) ? ",,false\n" : FormatDouble(seconds) + ",,\n";
    }
  }
  for (const auto& [key, row] : signature_times_) {
    for (const auto& [device, seconds] : row) {
      out += "," + CsvEscape(key) + "," + CsvEscape(device) + ",,";
      out += std::isinf(seconds) ? ",,false\n" : FormatDouble(seconds) + ",,\n";
    }
  }
  for (const auto& [node, row] : transfer_times_) {
    for (const auto& [pair, seconds] : row) {
      out += CsvEscape(node) + ",," + CsvEscape(pair.first) + "," + CsvEscape(pair.second) + "," +
             FormatDouble(seconds) + ",,\n";
    }
  }
  for (const auto& [node, bytes] : node_memory_) {
    out += CsvEscape(node) + ",,,,," + std::to_string(bytes) + ",\n";
  }
  return out;
}

StatusOr<Profile> Profile::FromCsv(const std::string& text, const std::string& source_name) {
  using internal::Trim;
  HX_ASSIGN_OR_RETURN(std::vector<internal::CsvRow> rows, internal::ParseCsv(text, source_name));
  size_t first = 0;
  while (first < rows.size() && rows[first].IsBlank()) ++first;
  if (first == rows.size()) return ParseError(source_name + ": empty file: expected a header row");
  const internal::CsvRow& header = rows[first];
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.fields.size(); ++i) {
    std::string name = Trim(header.fields[i]);
    bool known = false;
    for (const char* c : kCsvColumns) known = known || name == c;
    if (!known) {
      return ParseError(source_name + ":" + std::to_string(header.line) + ": unknown column \"" +
                        name +
                        "\" (expected node, signature, device, dst_device, seconds, "
                        "memory_bytes, supported)");
    }
    if (col.count(name)) {
      return ParseError(source_name + ":" + std::to_string(header.line) + ": duplicate column \"" +
                        name + "\"");
    }
    col[name] = i;
  }
  if (!col.count("node") && !col.count("signature")) {
    return ParseError(source_name + ":" + std::to_string(header.line) +
                      ": the header needs a \"node\" or \"signature\" column");
  }
  EntriesSeenOnce seen;
  Profile profile;
  for (size_t r = first + 1; r < rows.size(); ++r) {
    const internal::CsvRow& row = rows[r];
    if (row.IsBlank()) continue;
    auto where = [&](const std::string& field) {
      return source_name + ":" + std::to_string(row.line) + ": " + field + ": ";
    };
    if (row.fields.size() > header.fields.size()) {
      return ParseError(where("row") + "has " + std::to_string(row.fields.size()) +
                        " fields, the header " + std::to_string(header.fields.size()));
    }
    auto once = [&](const std::string& entry, double value) -> Status {
      std::string first_line = seen.Conflict(entry, value, "line " + std::to_string(row.line));
      if (first_line.empty()) return Status::Ok();
      return ParseError(where("row") + entry + " is also given at " + first_line +
                        " with another value");
    };
    auto get = [&](const char* name) -> std::string {
      auto it = col.find(name);
      if (it == col.end() || it->second >= row.fields.size()) return "";
      return Trim(row.fields[it->second]);
    };
    std::string node = get("node");
    std::string sig = get("signature");
    std::string device = get("device");
    std::string dst = get("dst_device");
    std::string seconds_text = get("seconds");
    std::string memory_text = get("memory_bytes");
    std::string supported_text = get("supported");
    if (node.empty() == sig.empty()) {
      return ParseError(where("node/signature") + "expected exactly one of node, signature");
    }
    double seconds = 0;
    bool has_seconds = !seconds_text.empty();
    if (has_seconds) {
      auto res =
          std::from_chars(seconds_text.data(), seconds_text.data() + seconds_text.size(), seconds);
      if (res.ec != std::errc() || res.ptr != seconds_text.data() + seconds_text.size() ||
          !std::isfinite(seconds) || seconds < 0 || seconds > kMaxStatedSeconds) {
        return ParseError(where("seconds") + "expected a number of seconds in [0, 1e6], got \"" +
                          seconds_text + "\"");
      }
    }
    bool supported = true;
    if (!supported_text.empty()) {
      if (supported_text == "true" || supported_text == "1" || supported_text == "yes") {
        supported = true;
      } else if (supported_text == "false" || supported_text == "0" || supported_text == "no") {
        supported = false;
      } else {
        return ParseError(where("supported") + "expected true or false, got \"" + supported_text +
                          "\"");
      }
    }
    bool used = false;
    if (!memory_text.empty()) {
      if (node.empty()) return ParseError(where("memory_bytes") + "needs a node, not a signature");
      int64_t bytes = 0;
      auto res =
          std::from_chars(memory_text.data(), memory_text.data() + memory_text.size(), bytes);
      if (res.ec != std::errc() || res.ptr != memory_text.data() + memory_text.size() ||
          bytes < 0) {
        return ParseError(where("memory_bytes") + "expected a non-negative integer, got \"" +
                          memory_text + "\"");
      }
      HX_RETURN_IF_ERROR(once("the memory of node " + Quoted(node), double(bytes)));
      profile.SetNodeMemory(node, bytes);
      used = true;
    }
    if (!dst.empty()) {
      if (node.empty()) return ParseError(where("dst_device") + "a transfer needs a node");
      if (device.empty()) return ParseError(where("device") + "a transfer needs a source device");
      if (!has_seconds) return ParseError(where("seconds") + "a transfer needs seconds");
      HX_RETURN_IF_ERROR(
          once("the transfer of node " + Quoted(node) + " " + Quoted(device) + " -> " + Quoted(dst),
               seconds));
      profile.SetTransferTime(node, device, dst, seconds);
      continue;
    }
    if (has_seconds || !supported) {
      if (device.empty()) return ParseError(where("device") + "missing");
      auto& table = node.empty() ? profile.signature_times_ : profile.node_times_;
      const std::string& key = node.empty() ? sig : node;
      HX_RETURN_IF_ERROR(
          once((node.empty() ? "signature " : "node ") + Quoted(key) + " on " + Quoted(device),
               supported ? seconds : kProfileInf));
      table[key][device] = supported ? seconds : kProfileInf;
      used = true;
    }
    if (!used) {
      return ParseError(where("row") + "expected seconds, memory_bytes or supported=false");
    }
  }
  return profile;
}

StatusOr<Profile> Profile::ReadFile(const std::string& path) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  std::string ext = FileExtension(path);
  if (ext == "csv") return FromCsv(text, path);
  if (ext == "json") return FromJson(text, path);
  // Sniff: JSON starts with '{'.
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '{') return FromJson(text, path);
    break;
  }
  return FromCsv(text, path);
}

Status Profile::WriteFile(const std::string& path) const {
  return WriteFileAtomic(path, FileExtension(path) == "csv" ? ToCsv() : ToJson());
}

}  // namespace hx::cost
