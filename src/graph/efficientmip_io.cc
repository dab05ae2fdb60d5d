// Reader for the EfficientMIP JSON workloads (docs/formats.md, "EfficientMIP JSON").

#include "hexplan/graph/efficientmip_io.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "hexplan/core/file_util.h"
#include "hexplan/core/json_text.h"
#include "hexplan/core/time_caps.h"

namespace hx::graph {
namespace {

using Json = nlohmann::json;

constexpr double kMaxBytes = 4.0e18;  // below int64 overflow

class EfficientMipReader {
 public:
  explicit EfficientMipReader(std::string source) : source_(std::move(source)) {}

  StatusOr<EfficientMipWorkload> Read(const std::string& text) {
    HX_ASSIGN_OR_RETURN(Json root, ParseJson<Json>(text, source_));
    try {
      return FromJson(root);
    } catch (const Json::exception& e) {
      return ParseError(source_ + ": malformed EfficientMIP JSON: " + e.what());
    }
  }

 private:
  Status Error(const std::string& path, const std::string& message) const {
    return ParseError(source_ + ": " + (path.empty() ? "" : path + ": ") + message);
  }
  Status TypeError(const std::string& path, const char* expected, const Json& got) const {
    std::string text = DumpJson(got);
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return Error(path, std::string("expected ") + expected + ", got " + got.type_name() +
                           (got.is_structured() ? "" : " " + text));
  }

  StatusOr<const Json*> Field(const Json& obj, const std::string& path, const char* key) {
    if (!obj.contains(key)) return Error(path, std::string("missing field '") + key + "'");
    return &obj[key];
  }
  StatusOr<int64_t> Integer(const Json& j, const std::string& path) {
    if (j.is_number_unsigned()) {
      if (j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return Error(path, "integer " + DumpJson(j) + " is too large");
      return static_cast<int64_t>(j.get<uint64_t>());
    }
    if (j.is_number_integer()) return j.get<int64_t>();
    if (j.is_number_float()) {
      const double v = j.get<double>();
      if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < kMaxBytes)
        return static_cast<int64_t>(v);
    }
    return TypeError(path, "an integer", j);
  }
  // A non-negative finite number (latencies, costs).
  StatusOr<double> NonNegative(const Json& j, const std::string& path) {
    if (!j.is_number()) return TypeError(path, "a number", j);
    const double v = j.get<double>();
    if (!std::isfinite(v) || v < 0)
      return Error(path, "expected a non-negative number, got " + DumpJson(j));
    return v;
  }
  // Milliseconds (latencies, costs): non-negative, at most kMaxStatedSeconds.
  StatusOr<double> Milliseconds(const Json& j, const std::string& path) {
    HX_ASSIGN_OR_RETURN(double v, NonNegative(j, path));
    if (v > kMaxStatedSeconds * 1e3)
      return Error(path, "expected a number of ms in [0, 1e9], got " + DumpJson(j));
    return v;
  }
  // Bytes: a non-negative number (the files write them as floats), rounded to an integer.
  StatusOr<int64_t> Bytes(const Json& j, const std::string& path) {
    HX_ASSIGN_OR_RETURN(double v, NonNegative(j, path));
    if (v > kMaxBytes) return Error(path, "size " + DumpJson(j) + " bytes is too large");
    return static_cast<int64_t>(std::llround(v));
  }
  // true/false, or 0/1 as some files write them.
  StatusOr<bool> Flag(const Json& j, const std::string& path) {
    if (j.is_boolean()) return j.get<bool>();
    if (j.is_number_integer() || j.is_number_unsigned()) {
      const int64_t v = j.get<int64_t>();
      if (v == 0 || v == 1) return v == 1;
    }
    return TypeError(path, "true, false, 0 or 1", j);
  }

  // A device count (maxFPGAs, maxCPUs): an integer in [0, kEfficientMipMaxDevices], checked as the
  // JSON number it is (a double such as 1e300 or 2.5 is never cast first).
  StatusOr<int64_t> DeviceCount(const Json& j, const std::string& path) {
    const std::string expected =
        "expected an integer in [0, " + std::to_string(kEfficientMipMaxDevices) + "], got ";
    if (!j.is_number()) return TypeError(path, "an integer", j);
    const double v = j.get<double>();
    if (!(v >= 0 && v <= kEfficientMipMaxDevices) || v != std::floor(v))
      return Error(path, expected + DumpJson(j));
    return static_cast<int64_t>(v);
  }

  StatusOr<EfficientMipWorkload> FromJson(const Json& root) {
    if (!root.is_object()) return TypeError("", "a JSON object at the top level", root);
    EfficientMipWorkload w;
    HX_ASSIGN_OR_RETURN(const Json* max_size, Field(root, "", "maxSizePerFPGA"));
    HX_ASSIGN_OR_RETURN(w.max_size_per_accelerator_bytes, Bytes(*max_size, "maxSizePerFPGA"));
    HX_ASSIGN_OR_RETURN(const Json* max_fpgas, Field(root, "", "maxFPGAs"));
    HX_ASSIGN_OR_RETURN(w.max_accelerators, DeviceCount(*max_fpgas, "maxFPGAs"));
    HX_ASSIGN_OR_RETURN(const Json* max_cpus, Field(root, "", "maxCPUs"));
    HX_ASSIGN_OR_RETURN(w.max_cpus, DeviceCount(*max_cpus, "maxCPUs"));
    HX_ASSIGN_OR_RETURN(const Json* nodes, Field(root, "", "nodes"));
    if (!nodes->is_array()) return TypeError("nodes", "an array", *nodes);
    HX_ASSIGN_OR_RETURN(const Json* edges, Field(root, "", "edges"));
    if (!edges->is_array()) return TypeError("edges", "an array", *edges);

    std::unordered_map<int64_t, size_t> index_of_id;  // file id -> position in w.nodes
    std::unordered_map<std::string, size_t> index_of_name;
    std::vector<std::string> names;
    for (size_t i = 0; i < nodes->size(); ++i) {
      const std::string path = "nodes[" + std::to_string(i) + "]";
      const Json& j = (*nodes)[i];
      if (!j.is_object()) return TypeError(path, "an object", j);
      EfficientMipNode n;
      HX_ASSIGN_OR_RETURN(const Json* id, Field(j, path, "id"));
      HX_ASSIGN_OR_RETURN(n.file_id, Integer(*id, path + ".id"));
      HX_ASSIGN_OR_RETURN(const Json* name, Field(j, path, "name"));
      if (!name->is_string()) return TypeError(path + ".name", "a string", *name);
      std::string node_name = name->get<std::string>();
      if (node_name.empty()) return Error(path + ".name", "empty node name");
      HX_ASSIGN_OR_RETURN(const Json* supported, Field(j, path, "supportedOnFpga"));
      HX_ASSIGN_OR_RETURN(n.supported_on_accelerator, Flag(*supported, path + ".supportedOnFpga"));
      HX_ASSIGN_OR_RETURN(const Json* cpu, Field(j, path, "cpuLatency"));
      HX_ASSIGN_OR_RETURN(n.cpu_latency_ms, Milliseconds(*cpu, path + ".cpuLatency"));
      HX_ASSIGN_OR_RETURN(const Json* fpga, Field(j, path, "fpgaLatency"));
      HX_ASSIGN_OR_RETURN(n.accelerator_latency_ms, Milliseconds(*fpga, path + ".fpgaLatency"));
      HX_ASSIGN_OR_RETURN(const Json* backward, Field(j, path, "isBackwardNode"));
      HX_ASSIGN_OR_RETURN(n.is_backward, Flag(*backward, path + ".isBackwardNode"));
      HX_ASSIGN_OR_RETURN(const Json* size, Field(j, path, "size"));
      HX_ASSIGN_OR_RETURN(n.size_bytes, Bytes(*size, path + ".size"));
      if (j.contains("colorClass")) {
        HX_ASSIGN_OR_RETURN(n.color_class, Integer(j["colorClass"], path + ".colorClass"));
      }
      if (j.contains("layerId")) {
        HX_ASSIGN_OR_RETURN(n.layer_id, Integer(j["layerId"], path + ".layerId"));
      }
      if (auto [it, fresh] = index_of_id.emplace(n.file_id, i); !fresh) {
        return Error(path + ".id", "duplicate node id " + std::to_string(n.file_id) +
                                       " (first at nodes[" + std::to_string(it->second) + "])");
      }
      if (auto [it, fresh] = index_of_name.emplace(node_name, i); !fresh) {
        return Error(path + ".name", "duplicate node name '" + node_name + "' (first at nodes[" +
                                         std::to_string(it->second) + "])");
      }
      names.push_back(std::move(node_name));
      w.nodes.push_back(n);
    }

    // Edges, grouped per source by size (one tensor per distinct size).
    std::vector<std::map<int64_t, std::vector<size_t>>> readers_by_size(w.nodes.size());
    std::vector<std::vector<int64_t>> size_order(w.nodes.size());  // first-appearance order
    std::map<std::pair<size_t, size_t>, size_t> seen;
    for (size_t i = 0; i < edges->size(); ++i) {
      const std::string path = "edges[" + std::to_string(i) + "]";
      const Json& j = (*edges)[i];
      if (!j.is_object()) return TypeError(path, "an object", j);
      EfficientMipEdge e;
      HX_ASSIGN_OR_RETURN(const Json* src, Field(j, path, "sourceId"));
      HX_ASSIGN_OR_RETURN(e.source_file_id, Integer(*src, path + ".sourceId"));
      HX_ASSIGN_OR_RETURN(const Json* dst, Field(j, path, "destId"));
      HX_ASSIGN_OR_RETURN(e.dest_file_id, Integer(*dst, path + ".destId"));
      HX_ASSIGN_OR_RETURN(const Json* cost, Field(j, path, "cost"));
      HX_ASSIGN_OR_RETURN(e.cost_ms, Milliseconds(*cost, path + ".cost"));
      HX_ASSIGN_OR_RETURN(const Json* size, Field(j, path, "size"));
      HX_ASSIGN_OR_RETURN(e.size_bytes, Bytes(*size, path + ".size"));
      auto s = index_of_id.find(e.source_file_id);
      if (s == index_of_id.end())
        return Error(path + ".sourceId", "unknown node id " + std::to_string(e.source_file_id));
      auto d = index_of_id.find(e.dest_file_id);
      if (d == index_of_id.end())
        return Error(path + ".destId", "unknown node id " + std::to_string(e.dest_file_id));
      if (s->second == d->second)
        return Error(path, "self-loop on node id " + std::to_string(e.source_file_id));
      if (auto [it, fresh] = seen.emplace(std::make_pair(s->second, d->second), i); !fresh) {
        return Error(path, "duplicate edge " + std::to_string(e.source_file_id) + " -> " +
                               std::to_string(e.dest_file_id) + " (first at edges[" +
                               std::to_string(it->second) + "])");
      }
      auto& groups = readers_by_size[s->second];
      if (!groups.count(e.size_bytes)) size_order[s->second].push_back(e.size_bytes);
      groups[e.size_bytes].push_back(d->second);
      w.edges.push_back(e);
    }

    // The graph: tensors first, then one op per node in file order (node id = file position).
    Graph& g = w.graph;
    std::string stem = source_.substr(source_.find_last_of('/') + 1);
    if (auto dot = stem.rfind('.'); dot != std::string::npos && dot > 0) stem.resize(dot);
    g.set_name(stem);
    std::vector<std::vector<TensorId>> outputs(w.nodes.size());
    std::vector<std::vector<TensorId>> inputs(w.nodes.size());
    for (size_t i = 0; i < w.nodes.size(); ++i) {
      const auto& order = size_order[i];
      for (size_t k = 0; k < order.size(); ++k) {
        const std::string name =
            names[i] + (order.size() == 1 ? ":out" : ":out" + std::to_string(k));
        TensorId t = g.AddTensor(name, DType::kU8, {order[k]});
        outputs[i].push_back(t);
        for (size_t reader : readers_by_size[i][order[k]]) inputs[reader].push_back(t);
      }
    }
    for (size_t i = 0; i < w.nodes.size(); ++i) {
      EfficientMipNode& n = w.nodes[i];
      Attributes attrs;
      attrs.Set("efficientmip_id", n.file_id);
      attrs.Set("cpu_latency_ms", n.cpu_latency_ms);
      attrs.Set("accelerator_latency_ms", n.accelerator_latency_ms);
      attrs.Set("memory_bytes", n.size_bytes);
      attrs.Set("color_class", n.color_class);
      attrs.Set("supported_on_accelerator", int64_t{n.supported_on_accelerator ? 1 : 0});
      attrs.Set("is_backward", int64_t{n.is_backward ? 1 : 0});
      n.node = g.AddOp("EfficientMipNode", names[i], inputs[i], outputs[i], std::move(attrs));
    }
    Status valid = g.Validate();
    if (!valid.ok()) return ParseError(source_ + ": " + valid.message());
    return w;
  }

  std::string source_;
};

}  // namespace

bool LooksLikeEfficientMipJson(const std::string& text) {
  Json root = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) return false;
  if (root.contains("maxSizePerFPGA")) return true;
  auto nodes = root.find("nodes");
  if (nodes == root.end() || !nodes->is_array()) return false;
  for (const Json& n : *nodes) {
    if (n.is_object() && n.contains("fpgaLatency")) return true;
  }
  return false;
}

StatusOr<EfficientMipWorkload> ReadEfficientMipJson(const std::string& text,
                                                    const std::string& source_name) {
  return EfficientMipReader(source_name).Read(text);
}

StatusOr<EfficientMipWorkload> ReadEfficientMipFile(const std::string& path) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ReadEfficientMipJson(text, path);
}

}  // namespace hx::graph
