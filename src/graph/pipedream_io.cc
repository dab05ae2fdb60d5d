// Reader for PipeDream profile graphs (graph.txt).

#include "hexplan/graph/pipedream_io.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "hexplan/core/file_util.h"
#include "hexplan/core/time_caps.h"
#include "hexplan/core/utf8.h"

namespace hx::graph {
namespace {

constexpr const char* kSep = " -- ";

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool ParseNumber(const std::string& text, double* out) {
  const std::string t = Trim(text);
  if (t.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() && std::isfinite(*out) && *out >= 0;
}

bool IsInputModule(const std::string& module) {
  if (module.rfind("Input", 0) != 0) return false;  // "Input", "Input0", "Input1", ...
  for (size_t i = 5; i < module.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(module[i]))) return false;
  return true;
}

}  // namespace

StatusOr<PipeDreamProfile> ReadPipeDreamGraph(const std::string& text,
                                              const std::string& source_name) {
  HX_RETURN_IF_ERROR(CheckUtf8Text(text, source_name));
  PipeDreamProfile profile;
  std::unordered_map<std::string, size_t> index;
  std::set<std::pair<size_t, size_t>> seen;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  auto error = [&](const std::string& message) {
    return ParseError(source_name + ":" + std::to_string(line_no) + ": " + message);
  };
  std::vector<std::pair<std::string, std::string>> edge_names;
  std::vector<int> edge_lines;
  while (std::getline(in, line)) {
    ++line_no;
    if (Trim(line).empty()) continue;
    if (line[0] == '\t' || line[0] == ' ') {  // an edge: "\tnodeA -- nodeB"
      const std::string body = Trim(line);
      const size_t sep = body.find(kSep);
      if (sep == std::string::npos) return error("expected an edge 'nodeA -- nodeB'");
      edge_names.emplace_back(Trim(body.substr(0, sep)), Trim(body.substr(sep + 4)));
      edge_lines.push_back(line_no);
      continue;
    }
    const size_t first = line.find(kSep);
    const size_t last = line.rfind(kSep);
    if (first == std::string::npos || first == last) {
      return error("expected 'nodeN -- <module> -- forward_compute_time=..., ...'");
    }
    PipeDreamLayer layer;
    layer.name = Trim(line.substr(0, first));
    layer.module = Trim(line.substr(first + 4, last - first - 4));
    if (layer.name.empty()) return error("empty layer name");
    std::map<std::string, std::string> fields;
    std::istringstream metrics(line.substr(last + 4));
    std::string item;
    while (std::getline(metrics, item, ',')) {
      const size_t eq = item.find('=');
      if (eq == std::string::npos) return error("expected key=value, got '" + Trim(item) + "'");
      fields[Trim(item.substr(0, eq))] = Trim(item.substr(eq + 1));
    }
    for (const char* key :
         {"forward_compute_time", "backward_compute_time", "activation_size", "parameter_size"}) {
      if (!fields.count(key)) return error(std::string("missing ") + key);
    }
    double v = 0;
    constexpr double kMaxMs = kMaxStatedSeconds * 1e3;
    if (!ParseNumber(fields["forward_compute_time"], &layer.forward_ms) ||
        layer.forward_ms > kMaxMs)
      return error("forward_compute_time: expected a number of ms in [0, 1e9]");
    if (!ParseNumber(fields["backward_compute_time"], &layer.backward_ms) ||
        layer.backward_ms > kMaxMs)
      return error("backward_compute_time: expected a number of ms in [0, 1e9]");
    if (!ParseNumber(fields["parameter_size"], &v) || v > 4e18)
      return error("parameter_size: expected a non-negative number of bytes");
    layer.parameter_bytes = std::llround(v);
    std::string sizes = fields["activation_size"];
    if (!sizes.empty() && sizes.front() == '[' && sizes.back() == ']') {
      sizes = sizes.substr(1, sizes.size() - 2);
    }
    std::istringstream parts(sizes);
    std::string part;
    while (std::getline(parts, part, ';')) {
      if (!ParseNumber(part, &v) || v > 4e18)
        return error("activation_size: expected bytes or a list '[a; b]' of them");
      layer.activation_sizes.push_back(std::llround(v));
      layer.activation_bytes += layer.activation_sizes.back();
    }
    if (layer.activation_sizes.empty()) return error("activation_size: empty");
    if (!index.emplace(layer.name, profile.layers.size()).second)
      return error("duplicate layer '" + layer.name + "'");
    profile.layers.push_back(std::move(layer));
  }
  for (size_t i = 0; i < edge_names.size(); ++i) {
    line_no = edge_lines[i];
    auto a = index.find(edge_names[i].first);
    if (a == index.end()) return error("edge from unknown layer '" + edge_names[i].first + "'");
    auto b = index.find(edge_names[i].second);
    if (b == index.end()) return error("edge to unknown layer '" + edge_names[i].second + "'");
    if (a->second == b->second) return error("self-loop on '" + edge_names[i].first + "'");
    if (!seen.emplace(a->second, b->second).second)
      return error("duplicate edge " + edge_names[i].first + " -> " + edge_names[i].second);
    profile.edges.emplace_back(a->second, b->second);
  }

  Graph& g = profile.graph;
  std::string stem = source_name;
  if (stem.size() > 10 && stem.compare(stem.size() - 10, 10, "/graph.txt") == 0) {
    stem.resize(stem.size() - 10);  // .../profiles/resnet50/graph.txt -> resnet50
  }
  g.set_name(stem.substr(stem.find_last_of('/') + 1));
  const size_t n = profile.layers.size();
  std::vector<TensorId> out(n);
  std::vector<std::vector<TensorId>> inputs(n);
  std::vector<bool> has_successor(n, false);
  for (size_t i = 0; i < n; ++i) {
    PipeDreamLayer& layer = profile.layers[i];
    const Shape shape{layer.activation_bytes};
    if (IsInputModule(layer.module)) {
      layer.node = g.AddInput(layer.name, DType::kU8, shape);
      out[i] = g.node(layer.node).outputs[0];
    } else {
      out[i] = g.AddTensor(layer.name + ":out", DType::kU8, shape);
    }
  }
  for (const auto& [a, b] : profile.edges) {
    inputs[b].push_back(out[a]);
    has_successor[a] = true;
  }
  for (size_t i = 0; i < n; ++i) {
    PipeDreamLayer& layer = profile.layers[i];
    Attributes attrs;
    attrs.Set("forward_ms", layer.forward_ms);
    attrs.Set("backward_ms", layer.backward_ms);
    attrs.Set("parameter_bytes", layer.parameter_bytes);
    attrs.Set("module", layer.module);
    if (layer.node.valid()) {
      if (!inputs[i].empty()) {
        line_no = 0;
        return ParseError(source_name + ": input layer '" + layer.name + "' has incoming edges");
      }
      g.mutable_node(layer.node).attrs = std::move(attrs);
      continue;
    }
    std::string op_type = layer.module.substr(0, layer.module.find('('));
    if (op_type.empty()) op_type = "Layer";
    layer.node = g.AddOp(op_type, layer.name, inputs[i], {out[i]}, std::move(attrs));
  }
  for (size_t i = 0; i < n; ++i)
    if (!has_successor[i]) g.AddOutput(out[i]);
  Status valid = g.Validate();
  if (!valid.ok()) return ParseError(source_name + ": " + valid.message());
  return profile;
}

StatusOr<PipeDreamProfile> ReadPipeDreamGraphFile(const std::string& path) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ReadPipeDreamGraph(text, path);
}

}  // namespace hx::graph
