// hexplan's JSON graph format (docs/formats.md, "Graph JSON"): tensors by name, then nodes in id
// order. The reader checks every field and names the file and the JSON path of the first problem;
// it never lets a nlohmann exception escape.

#include "hexplan/graph/json_io.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "hexplan/core/file_util.h"
#include "hexplan/core/json_text.h"
#include "hexplan/graph/onnx_io.h"

namespace hx::graph {
namespace {

using Json = nlohmann::json;

constexpr const char* kFormatName = "hexplan-graph";
constexpr int64_t kFormatVersion = 1;
// Far above any real tensor, far below int64 overflow once multiplied by a dtype size.
constexpr int64_t kMaxElements = int64_t{1} << 56;

// ---------------------------------------------------------------- writing

Json FloatJson(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

Json AttributeJson(const AttributeValue& value) {
  if (auto* v = std::get_if<int64_t>(&value)) return *v;
  if (auto* v = std::get_if<std::string>(&value)) return *v;
  if (auto* v = std::get_if<std::vector<int64_t>>(&value)) return *v;
  if (auto* v = std::get_if<double>(&value)) {
    if (std::isfinite(*v)) return *v;
    return Json{{"float", FloatJson(*v)}};
  }
  const auto& floats = std::get<std::vector<double>>(value);
  bool plain = !floats.empty();
  Json list = Json::array();
  for (double f : floats) {
    plain = plain && std::isfinite(f);
    list.push_back(FloatJson(f));
  }
  // An empty or non-finite list is tagged so that it reads back as floats.
  if (plain) return list;
  return Json{{"floats", list}};
}

Json NodeJson(const Graph& graph, const Node& node) {
  auto names = [&](const std::vector<TensorId>& ids) {
    Json list = Json::array();
    for (TensorId t : ids) {
      if (t.valid())
        list.push_back(graph.tensor(t).name);
      else
        list.push_back(nullptr);
    }
    return list;
  };
  Json j = Json::object();
  j["name"] = node.name;
  j["kind"] = NodeKindName(node.kind);
  if (node.kind == NodeKind::kOp) j["op_type"] = node.op_type;
  if (!node.domain.empty()) j["domain"] = node.domain;
  if (!node.inputs.empty()) j["inputs"] = names(node.inputs);
  if (!node.outputs.empty()) j["outputs"] = names(node.outputs);
  if (!node.attrs.values().empty()) {
    Json attrs = Json::object();
    for (const auto& [name, value] : node.attrs.values()) attrs[name] = AttributeJson(value);
    j["attrs"] = attrs;
  }
  return j;
}

// ---------------------------------------------------------------- reading

struct TensorSpec {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
};

struct NodeSpec {
  std::string name;
  bool has_name = false;
  NodeKind kind = NodeKind::kOp;
  std::string op_type;
  std::string domain;
  std::vector<int64_t> inputs;  // tensor indices, -1 for an omitted optional input (null)
  std::vector<int64_t> outputs;
  Attributes attrs;
};

std::string Describe(const Json& j) {
  std::string type = j.type_name();
  if (j.is_string() || j.is_number() || j.is_boolean()) {
    std::string text = DumpJson(j);
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return type + " " + text;
  }
  return type;
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  StatusOr<Graph> Read(const std::string& text) {
    HX_ASSIGN_OR_RETURN(Json root, ParseJson<Json>(text, source_));
    try {
      return FromJson(root);
    } catch (const Json::exception& e) {
      // Every access is checked first; this is a last line of defence, not a code path.
      return ParseError(source_ + ": malformed graph JSON: " + e.what());
    }
  }

 private:
  Status Error(const std::string& path, const std::string& message) const {
    return ParseError(source_ + ": " + (path.empty() ? "" : path + ": ") + message);
  }
  Status TypeError(const std::string& path, const char* expected, const Json& got) const {
    return Error(path, std::string("expected ") + expected + ", got " + Describe(got));
  }

  Status CheckKeys(const Json& obj, const std::string& path, const std::set<std::string>& allowed) {
    for (const auto& item : obj.items()) {
      if (allowed.count(item.key()) == 0) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        return Error(path, "unknown field " + Quote(item.key()) + " (expected " + list + ")");
      }
    }
    return Status::Ok();
  }

  StatusOr<std::string> String(const Json& j, const std::string& path) {
    if (!j.is_string()) return TypeError(path, "a string", j);
    return j.get<std::string>();
  }

  StatusOr<int64_t> Integer(const Json& j, const std::string& path) {
    if (j.is_number_unsigned()) {
      if (j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return Error(path, "integer " + DumpJson(j) + " is too large");
      return static_cast<int64_t>(j.get<uint64_t>());
    }
    if (j.is_number_integer()) return j.get<int64_t>();
    return TypeError(path, "an integer", j);
  }

  StatusOr<double> Float(const Json& j, const std::string& path) {
    if (j.is_number()) return j.get<double>();
    if (j.is_string()) {
      const std::string s = j.get<std::string>();
      if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
      if (s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    return TypeError(path, "a number (or \"nan\", \"inf\", \"-inf\")", j);
  }

  StatusOr<AttributeValue> Attribute(const Json& j, const std::string& path) {
    if (j.is_boolean()) return AttributeValue(int64_t{j.get<bool>() ? 1 : 0});
    if (j.is_number_integer()) {
      HX_ASSIGN_OR_RETURN(int64_t v, Integer(j, path));
      return AttributeValue(v);
    }
    if (j.is_number_float()) return AttributeValue(j.get<double>());
    if (j.is_string()) return AttributeValue(j.get<std::string>());
    if (j.is_array()) {
      bool any_float = false;
      for (size_t i = 0; i < j.size(); ++i) {
        const std::string p = path + "[" + std::to_string(i) + "]";
        if (!j[i].is_number()) return TypeError(p, "a number (lists hold numbers)", j[i]);
        any_float = any_float || j[i].is_number_float();
      }
      if (any_float) {
        std::vector<double> floats;
        for (const Json& e : j) floats.push_back(e.get<double>());
        return AttributeValue(std::move(floats));
      }
      std::vector<int64_t> ints;
      for (size_t i = 0; i < j.size(); ++i) {
        HX_ASSIGN_OR_RETURN(int64_t v, Integer(j[i], path + "[" + std::to_string(i) + "]"));
        ints.push_back(v);
      }
      return AttributeValue(std::move(ints));
    }
    if (j.is_object() && j.size() == 1) {
      const std::string tag = j.begin().key();
      const Json& v = j.begin().value();
      const std::string p = path + "." + tag;
      if (tag == "int") {
        HX_ASSIGN_OR_RETURN(int64_t i, Integer(v, p));
        return AttributeValue(i);
      }
      if (tag == "float") {
        HX_ASSIGN_OR_RETURN(double f, Float(v, p));
        return AttributeValue(f);
      }
      if (tag == "string") {
        HX_ASSIGN_OR_RETURN(std::string s, String(v, p));
        return AttributeValue(std::move(s));
      }
      if (tag == "ints" || tag == "floats") {
        if (!v.is_array()) return TypeError(p, "an array", v);
        if (tag == "ints") {
          std::vector<int64_t> ints;
          for (size_t i = 0; i < v.size(); ++i) {
            HX_ASSIGN_OR_RETURN(int64_t x, Integer(v[i], p + "[" + std::to_string(i) + "]"));
            ints.push_back(x);
          }
          return AttributeValue(std::move(ints));
        }
        std::vector<double> floats;
        for (size_t i = 0; i < v.size(); ++i) {
          HX_ASSIGN_OR_RETURN(double x, Float(v[i], p + "[" + std::to_string(i) + "]"));
          floats.push_back(x);
        }
        return AttributeValue(std::move(floats));
      }
      return Error(path, "unknown attribute tag " + Quote(tag) +
                             " (expected int, float, string, ints or floats)");
    }
    return TypeError(path,
                     "a number, a string, a list of numbers or a tagged value such as "
                     "{\"floats\": []}",
                     j);
  }

  StatusOr<TensorSpec> ReadTensor(const Json& j, const std::string& path) {
    if (!j.is_object()) return TypeError(path, "an object", j);
    HX_RETURN_IF_ERROR(CheckKeys(j, path, {"name", "dtype", "shape"}));
    TensorSpec t;
    for (const char* key : {"name", "dtype", "shape"}) {
      if (!j.contains(key)) return Error(path, std::string("missing field '") + key + "'");
    }
    HX_ASSIGN_OR_RETURN(t.name, String(j["name"], path + ".name"));
    if (t.name.empty()) return Error(path + ".name", "empty tensor name");
    HX_ASSIGN_OR_RETURN(std::string dtype, String(j["dtype"], path + ".dtype"));
    auto parsed = ParseDType(dtype);
    if (!parsed) {
      return Error(path + ".dtype", "unknown dtype " + Quote(dtype) +
                                        " (expected fp32, fp16, bf16, fp64, int64, int32, int16, "
                                        "int8, uint8 or bool)");
    }
    t.dtype = *parsed;
    const Json& shape = j["shape"];
    if (!shape.is_array()) return TypeError(path + ".shape", "an array of dimensions", shape);
    int64_t elements = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      const std::string p = path + ".shape[" + std::to_string(i) + "]";
      HX_ASSIGN_OR_RETURN(int64_t d, Integer(shape[i], p));
      if (d < 0) return Error(p, "negative dimension " + std::to_string(d));
      if (d > 0 && elements > kMaxElements / d)
        return Error(path + ".shape", "more than 2^56 elements");
      elements *= d;
      t.shape.push_back(d);
    }
    return t;
  }

  StatusOr<std::vector<int64_t>> TensorList(const Json& j, const std::string& path,
                                            bool allow_null) {
    if (!j.is_array()) return TypeError(path, "an array of tensor names", j);
    std::vector<int64_t> ids;
    for (size_t i = 0; i < j.size(); ++i) {
      const std::string p = path + "[" + std::to_string(i) + "]";
      if (j[i].is_null() && allow_null) {
        ids.push_back(-1);
        continue;
      }
      HX_ASSIGN_OR_RETURN(std::string name, String(j[i], p));
      auto it = tensor_index_.find(name);
      if (it == tensor_index_.end()) return Error(p, "unknown tensor " + Quote(name));
      ids.push_back(it->second);
    }
    return ids;
  }

  StatusOr<NodeSpec> ReadNode(const Json& j, const std::string& path) {
    if (!j.is_object()) return TypeError(path, "an object", j);
    HX_RETURN_IF_ERROR(
        CheckKeys(j, path, {"name", "kind", "op_type", "domain", "inputs", "outputs", "attrs"}));
    NodeSpec n;
    if (!j.contains("kind")) return Error(path, "missing field 'kind'");
    HX_ASSIGN_OR_RETURN(std::string kind, String(j["kind"], path + ".kind"));
    if (kind == "op")
      n.kind = NodeKind::kOp;
    else if (kind == "weight")
      n.kind = NodeKind::kWeight;
    else if (kind == "input")
      n.kind = NodeKind::kInput;
    else if (kind == "output")
      n.kind = NodeKind::kOutput;
    else
      return Error(path + ".kind",
                   "unknown kind " + Quote(kind) + " (expected op, weight, input or output)");
    if (j.contains("name")) {
      HX_ASSIGN_OR_RETURN(n.name, String(j["name"], path + ".name"));
      if (n.name.empty()) return Error(path + ".name", "empty node name");
      n.has_name = true;
    } else if (n.kind != NodeKind::kOutput) {
      return Error(path, "missing field 'name'");
    }
    if (j.contains("op_type")) {
      HX_ASSIGN_OR_RETURN(n.op_type, String(j["op_type"], path + ".op_type"));
      if (n.kind != NodeKind::kOp && !n.op_type.empty())
        return Error(path + ".op_type", "only op nodes have an op_type");
    }
    if (n.kind == NodeKind::kOp && n.op_type.empty())
      return Error(path, "an op node needs a non-empty 'op_type'");
    if (j.contains("domain")) {
      HX_ASSIGN_OR_RETURN(n.domain, String(j["domain"], path + ".domain"));
    }
    if (j.contains("inputs")) {
      HX_ASSIGN_OR_RETURN(n.inputs, TensorList(j["inputs"], path + ".inputs",
                                               /*allow_null=*/n.kind == NodeKind::kOp));
    }
    if (j.contains("outputs")) {
      HX_ASSIGN_OR_RETURN(n.outputs, TensorList(j["outputs"], path + ".outputs", false));
    }
    switch (n.kind) {
      case NodeKind::kInput:
      case NodeKind::kWeight: {
        if (!n.inputs.empty()) return Error(path + ".inputs", "a " + kind + " node reads nothing");
        auto own = tensor_index_.find(n.name);
        if (!j.contains("outputs")) {
          if (own == tensor_index_.end())
            return Error(path, "no tensor named " + Quote(n.name) + " for this " + kind);
          n.outputs = {own->second};
        }
        if (n.outputs.size() != 1 || tensors_[n.outputs[0]].name != n.name) {
          return Error(path + ".outputs", "a " + kind +
                                              " node produces exactly one tensor, named " +
                                              "like the node (" + Quote(n.name) + ")");
        }
        break;
      }
      case NodeKind::kOutput:
        if (n.inputs.size() != 1)
          return Error(path + ".inputs", "an output node reads exactly one tensor");
        if (!n.outputs.empty()) return Error(path + ".outputs", "an output node produces nothing");
        break;
      case NodeKind::kOp:
        break;
    }
    if (j.contains("attrs")) {
      const Json& attrs = j["attrs"];
      if (!attrs.is_object()) return TypeError(path + ".attrs", "an object", attrs);
      for (const auto& item : attrs.items()) {
        HX_ASSIGN_OR_RETURN(AttributeValue v,
                            Attribute(item.value(), path + ".attrs." + item.key()));
        n.attrs.Set(item.key(), std::move(v));
      }
    }
    return n;
  }

  StatusOr<Graph> FromJson(const Json& root) {
    if (!root.is_object()) return TypeError("", "a JSON object at the top level", root);
    HX_RETURN_IF_ERROR(CheckKeys(root, "", {"format", "version", "name", "tensors", "nodes"}));
    if (!root.contains("format")) {
      return Error("",
                   "missing field 'format' (a hexplan graph has \"format\": \"hexplan-graph\")");
    }
    HX_ASSIGN_OR_RETURN(std::string format, String(root["format"], "format"));
    if (format != kFormatName)
      return Error("format", "expected \"hexplan-graph\", got " + Quote(format));
    if (!root.contains("version")) return Error("", "missing field 'version'");
    HX_ASSIGN_OR_RETURN(int64_t version, Integer(root["version"], "version"));
    if (version != kFormatVersion)
      return Error("version", "unsupported version " + std::to_string(version) + " (expected 1)");
    std::string name;
    if (root.contains("name")) {
      HX_ASSIGN_OR_RETURN(name, String(root["name"], "name"));
    }
    for (const char* key : {"tensors", "nodes"}) {
      if (!root.contains(key)) return Error("", std::string("missing field '") + key + "'");
      if (!root[key].is_array()) return TypeError(key, "an array", root[key]);
    }

    const Json& tensors = root["tensors"];
    for (size_t i = 0; i < tensors.size(); ++i) {
      const std::string path = "tensors[" + std::to_string(i) + "]";
      HX_ASSIGN_OR_RETURN(TensorSpec t, ReadTensor(tensors[i], path));
      auto [it, fresh] = tensor_index_.emplace(t.name, static_cast<int64_t>(tensors_.size()));
      if (!fresh) {
        return Error(path + ".name", "duplicate tensor name " + Quote(t.name) +
                                         " (first at tensors[" + std::to_string(it->second) + "])");
      }
      tensors_.push_back(std::move(t));
    }

    const Json& nodes = root["nodes"];
    std::vector<NodeSpec> specs;
    std::unordered_map<std::string, size_t> node_index;
    std::vector<int64_t> producer(tensors_.size(), -1);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const std::string path = "nodes[" + std::to_string(i) + "]";
      HX_ASSIGN_OR_RETURN(NodeSpec n, ReadNode(nodes[i], path));
      if (n.has_name) {
        auto [it, fresh] = node_index.emplace(n.name, i);
        if (!fresh) {
          return Error(path + ".name", "duplicate node name " + Quote(n.name) +
                                           " (first at nodes[" + std::to_string(it->second) + "])");
        }
      }
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        int64_t t = n.outputs[k];
        if (producer[t] >= 0) {
          return Error(path + ".outputs[" + std::to_string(k) + "]",
                       "tensor " + Quote(tensors_[t].name) + " is already produced by nodes[" +
                           std::to_string(producer[t]) + "] (" + Quote(specs[producer[t]].name) +
                           ")");
        }
        producer[t] = static_cast<int64_t>(i);
      }
      specs.push_back(std::move(n));
    }
    for (size_t i = 0; i < specs.size(); ++i) {
      for (size_t k = 0; k < specs[i].inputs.size(); ++k) {
        int64_t t = specs[i].inputs[k];
        if (t >= 0 && producer[t] < 0) {
          return Error("nodes[" + std::to_string(i) + "].inputs[" + std::to_string(k) + "]",
                       "tensor " + Quote(tensors_[t].name) +
                           " has no producer (dangling edge): no node lists it in its outputs");
        }
      }
    }

    Graph g(name);
    HX_RETURN_IF_ERROR(Build(specs, producer, g));
    Status valid = g.Validate();
    if (!valid.ok()) return ParseError(source_ + ": " + valid.message());
    HX_RETURN_IF_ERROR(CheckGraphWithOnnx(g, source_));
    return g;
  }

  // Adds the nodes and tensors. When the file lists them in an order a Graph could have been built
  // in (what WriteGraphJson writes), ids come back exactly as they were; otherwise sources go
  // first.
  Status Build(const std::vector<NodeSpec>& specs, const std::vector<int64_t>& producer, Graph& g) {
    auto is_source = [&](const NodeSpec& n) {
      return n.kind == NodeKind::kInput || n.kind == NodeKind::kWeight;
    };
    auto source_tensor = [&](size_t t) {
      return producer[t] >= 0 && is_source(specs[producer[t]]);
    };
    // Can the file order be replayed?
    bool replay = true;
    {
      size_t ti = 0, ni = 0;
      while (replay && (ti < tensors_.size() || ni < specs.size())) {
        if (ti < tensors_.size() && !source_tensor(ti)) {
          ++ti;
        } else if (ni >= specs.size()) {
          replay = false;
        } else if (is_source(specs[ni])) {
          if (specs[ni].outputs[0] != static_cast<int64_t>(ti)) replay = false;
          ++ti;
          ++ni;
        } else {
          for (const auto* list : {&specs[ni].inputs, &specs[ni].outputs})
            for (int64_t t : *list)
              if (t >= static_cast<int64_t>(ti)) replay = false;
          ++ni;
        }
      }
    }
    std::vector<TensorId> ids(tensors_.size(), TensorId::Invalid());
    auto add_tensor = [&](size_t t) {
      ids[t] = g.AddTensor(tensors_[t].name, tensors_[t].dtype, tensors_[t].shape);
    };
    auto add_source = [&](const NodeSpec& n) {
      const TensorSpec& t = tensors_[n.outputs[0]];
      NodeId id = n.kind == NodeKind::kInput ? g.AddInput(t.name, t.dtype, t.shape)
                                             : g.AddWeight(t.name, t.dtype, t.shape);
      g.mutable_node(id).domain = n.domain;
      for (const auto& [key, value] : n.attrs.values()) g.mutable_node(id).attrs.Set(key, value);
      ids[n.outputs[0]] = g.node(id).outputs[0];
    };
    auto add_other = [&](size_t i) -> Status {
      const NodeSpec& n = specs[i];
      auto map = [&](const std::vector<int64_t>& list) {
        std::vector<TensorId> out;
        for (int64_t t : list) out.push_back(t < 0 ? TensorId::Invalid() : ids[t]);
        return out;
      };
      if (n.kind == NodeKind::kOp) {
        NodeId id = g.AddOp(n.op_type, n.name, map(n.inputs), map(n.outputs), n.attrs);
        g.mutable_node(id).domain = n.domain;
        return Status::Ok();
      }
      NodeId id = g.AddOutput(ids[n.inputs[0]]);
      g.mutable_node(id).domain = n.domain;
      for (const auto& [key, value] : n.attrs.values()) g.mutable_node(id).attrs.Set(key, value);
      if (n.has_name && g.node(id).name != n.name) {
        const std::string& t = tensors_[n.inputs[0]].name;
        return Error("nodes[" + std::to_string(i) + "].name",
                     "an output node is named after the tensor it exports: expected " +
                         Quote(g.node(id).name) + " (" + Quote(t) + ", or " + Quote(t + ":output") +
                         " when a node already has that name), got " + Quote(n.name));
      }
      return Status::Ok();
    };

    if (replay) {
      size_t ti = 0, ni = 0;
      while (ti < tensors_.size() || ni < specs.size()) {
        if (ti < tensors_.size() && !source_tensor(ti)) {
          add_tensor(ti++);
        } else if (is_source(specs[ni])) {
          add_source(specs[ni++]);
          ++ti;
        } else {
          HX_RETURN_IF_ERROR(add_other(ni++));
        }
      }
      return Status::Ok();
    }
    for (const NodeSpec& n : specs)
      if (is_source(n)) add_source(n);
    for (size_t t = 0; t < tensors_.size(); ++t)
      if (!ids[t].valid()) add_tensor(t);
    for (size_t i = 0; i < specs.size(); ++i)
      if (!is_source(specs[i])) HX_RETURN_IF_ERROR(add_other(i));
    return Status::Ok();
  }

  std::string source_;
  std::vector<TensorSpec> tensors_;
  std::unordered_map<std::string, int64_t> tensor_index_;
};

}  // namespace

std::string WriteGraphJson(const Graph& graph) {
  // One tensor or node per line: diffable, and still valid JSON.
  std::ostringstream os;
  os << "{\n";
  os << "  \"format\": " << DumpJson(Json(kFormatName)) << ",\n";
  os << "  \"version\": " << kFormatVersion << ",\n";
  os << "  \"name\": " << DumpJson(Json(graph.name())) << ",\n";
  os << "  \"tensors\": [";
  for (size_t i = 0; i < graph.num_tensors(); ++i) {
    const Tensor& t = graph.tensor(TensorId(i));
    Json j = {{"name", t.name}, {"dtype", DTypeName(t.dtype)}, {"shape", t.shape}};
    os << (i ? ",\n    " : "\n    ") << DumpJson(j);
  }
  os << (graph.num_tensors() ? "\n  ],\n" : "],\n");
  os << "  \"nodes\": [";
  for (size_t i = 0; i < graph.num_nodes(); ++i) {
    os << (i ? ",\n    " : "\n    ") << DumpJson(NodeJson(graph, graph.node(NodeId(i))));
  }
  os << (graph.num_nodes() ? "\n  ]\n" : "]\n");
  os << "}\n";
  return os.str();
}

Status WriteGraphJsonFile(const Graph& graph, const std::string& path) {
  return WriteFileAtomic(path, WriteGraphJson(graph));
}

StatusOr<Graph> ReadGraphJson(const std::string& text, const std::string& source_name) {
  return Reader(source_name).Read(text);
}

StatusOr<Graph> ReadGraphJsonFile(const std::string& path) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ReadGraphJson(text, path);
}

}  // namespace hx::graph
