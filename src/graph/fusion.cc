// GCOF operator fusion (MOIRAI Algorithm 1) and its rules file. See include/hexplan/graph/fusion.h.

#include "hexplan/graph/fusion.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_set>

#include "hexplan/core/file_util.h"
#include "hexplan/core/json_text.h"
#include "hexplan/graph/analysis.h"

namespace hx::graph {
namespace {

using Json = nlohmann::json;

constexpr const char* kFusionFormatName = "hexplan-fusion-rules";
constexpr int64_t kFusionFormatVersion = 1;
constexpr const char* kFusedDomain = "hexplan.fused";

FusionRules MakeBuiltinRules() {
  FusionRules r;
  auto add = [&](const char* name, std::vector<std::string> ops) {
    r.rules.push_back({name, std::move(ops)});
  };
  // MOIRAI Table I (Eigen's GPU kernel fusions).
  add("conv-bn", {"Conv", "BatchNormalization"});
  add("conv-bn-relu", {"Conv", "BatchNormalization", "Relu"});
  add("conv-bn-add-relu", {"Conv", "BatchNormalization", "Add", "Relu"});
  // The same with the BatchNormalization folded into the Conv (torch.onnx.export in eval mode).
  add("conv-relu", {"Conv", "Relu"});
  add("conv-add", {"Conv", "Add"});
  add("conv-add-relu", {"Conv", "Add", "Relu"});
  add("conv-clip", {"Conv", "Clip"});  // ReLU6
  add("conv-bn-clip", {"Conv", "BatchNormalization", "Clip"});
  add("bn-relu", {"BatchNormalization", "Relu"});
  add("add-relu", {"Add", "Relu"});
  // Dense layers: GEMM epilogues (bias, activation).
  add("gemm-relu", {"Gemm", "Relu"});
  add("matmul-add", {"MatMul", "Add"});
  add("matmul-add-relu", {"MatMul", "Add", "Relu"});
  add("matmul-add-gelu", {"MatMul", "Add", "Gelu"});
  // Decomposed activations and norms as exporters write them (the chain after the op that fans
  // out): GELU erf x*0.5*(1+erf(x/sqrt2)), GELU tanh, LayerNorm, RMSNorm, SiLU gating.
  add("gelu-erf", {"Div", "Erf", "Add", "Mul", "Mul"});
  add("gelu-tanh", {"Pow", "Mul", "Add", "Mul", "Tanh", "Add", "Mul"});
  add("layernorm-mean", {"ReduceMean", "Sub"});
  add("rmsnorm", {"Pow", "ReduceMean", "Add", "Sqrt", "Div", "Mul"});
  add("layernorm-body", {"Pow", "ReduceMean", "Add", "Sqrt", "Div", "Mul", "Add"});
  add("silu-gate", {"Sigmoid", "Mul", "Mul"});
  // Attention scores: QK^T, scale, (mask), softmax.
  add("attention-scores", {"MatMul", "Div", "Softmax"});
  add("attention-scores-mask", {"MatMul", "Div", "Add", "Softmax"});
  add("attention-scores-mul", {"MatMul", "Mul", "Softmax"});
  return r;
}

// The single op every output of `u` feeds (a link GCOF may fuse: direct or multi-inputs), or an
// invalid id (no consumer, several consumers, or a graph output).
NodeId SoleConsumer(const Graph& g, NodeId u) {
  NodeId only;
  for (TensorId t : g.node(u).outputs) {
    for (NodeId c : g.tensor(t).consumers) {
      if (!g.node(c).is_op()) return NodeId();
      if (!only.valid()) {
        only = c;
      } else if (only != c) {
        return NodeId();
      }
    }
  }
  return only;
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

}  // namespace

Status FusionRules::Validate() const {
  std::set<std::string> names;
  std::set<std::vector<std::string>> seen;
  for (size_t i = 0; i < rules.size(); ++i) {
    const FusionRule& r = rules[i];
    const std::string where =
        "rule " + std::to_string(i) + (r.name.empty() ? "" : " '" + r.name + "'");
    if (r.name.empty()) return InvalidArgument(where + ": name: expected a non-empty string");
    if (!names.insert(r.name).second) return InvalidArgument(where + ": name: duplicate");
    if (r.ops.size() < 2)
      return InvalidArgument(where + ": ops: expected at least two op types, got " +
                             std::to_string(r.ops.size()));
    for (const std::string& op : r.ops)
      if (op.empty()) return InvalidArgument(where + ": ops: empty op type");
    if (!seen.insert(r.ops).second)
      return InvalidArgument(where + ": ops: the same sequence as an earlier rule");
  }
  return Status::Ok();
}

const FusionRules& BuiltinFusionRules() {
  static const FusionRules rules = MakeBuiltinRules();
  return rules;
}

StatusOr<FusionRules> ParseFusionRules(const std::string& json_text,
                                       const std::string& source_name) {
  HX_ASSIGN_OR_RETURN(Json j, ParseJson<Json>(json_text, source_name));
  if (!j.is_object()) return ParseError(source_name + ": expected a JSON object");
  auto format = j.find("format");
  if (format == j.end() || !format->is_string() || *format != kFusionFormatName)
    return ParseError(source_name + ": format: expected \"" + kFusionFormatName + "\"");
  auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer() ||
      version->get<int64_t>() != kFusionFormatVersion)
    return ParseError(source_name + ": version: expected " + std::to_string(kFusionFormatVersion));
  auto list = j.find("rules");
  if (list == j.end() || !list->is_array())
    return ParseError(source_name + ": rules: expected an array of {name, ops}");
  FusionRules out;
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& r = (*list)[i];
    const std::string where = source_name + ": rules[" + std::to_string(i) + "]";
    if (!r.is_object()) return ParseError(where + ": expected an object {name, ops}");
    auto name = r.find("name");
    if (name == r.end() || !name->is_string())
      return ParseError(where + ".name: expected a string");
    auto ops = r.find("ops");
    if (ops == r.end() || !ops->is_array())
      return ParseError(where + ".ops: expected an array of op types");
    FusionRule rule;
    rule.name = name->get<std::string>();
    for (size_t k = 0; k < ops->size(); ++k) {
      if (!(*ops)[k].is_string())
        return ParseError(where + ".ops[" + std::to_string(k) + "]: expected an op type string");
      rule.ops.push_back((*ops)[k].get<std::string>());
    }
    for (auto it = r.begin(); it != r.end(); ++it)
      if (it.key() != "name" && it.key() != "ops" && it.key() != "comment")
        return ParseError(where + ": unknown field '" + it.key() + "'");
    out.rules.push_back(std::move(rule));
  }
  Status valid = out.Validate();
  if (!valid.ok()) return ParseError(source_name + ": " + valid.message());
  return out;
}

StatusOr<FusionRules> ReadFusionRulesFile(const std::string& path) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseFusionRules(text, path);
}

StatusOr<FusionRules> LoadFusionRules(const std::string& path) {
  if (path.empty()) return BuiltinFusionRules();
  return ReadFusionRulesFile(path);
}

std::string FusionRulesToJson(const FusionRules& rules) {
  Json list = Json::array();
  for (const FusionRule& r : rules.rules) list.push_back({{"name", r.name}, {"ops", r.ops}});
  Json j = {
      {"format", kFusionFormatName}, {"version", kFusionFormatVersion}, {"rules", std::move(list)}};
  return DumpJson(j, 2) + "\n";
}

StatusOr<std::vector<FusionGroup>> FindFusionGroups(const Graph& graph, const FusionRules& rules) {
  HX_RETURN_IF_ERROR(rules.Validate());
  HX_ASSIGN_OR_RETURN(std::vector<NodeId> order, TopologicalOrder(graph));
  std::set<std::vector<std::string>> prefixes;
  std::map<std::vector<std::string>, std::string> whole;
  for (const FusionRule& r : rules.rules) {
    whole[r.ops] = r.name;
    for (size_t k = 1; k <= r.ops.size(); ++k)
      prefixes.insert(std::vector<std::string>(r.ops.begin(), r.ops.begin() + k));
  }
  std::vector<int> group_of(graph.num_nodes(), -1);
  std::vector<FusionGroup> groups;
  for (NodeId v : order) {
    if (!graph.node(v).is_op() || group_of[v.index()] >= 0) continue;
    std::vector<NodeId> chain = {v};
    std::vector<std::string> types = {graph.node(v).op_type};
    size_t best = 1;
    std::string best_rule;
    if (prefixes.count(types)) {
      // Follow sole consumers while the types are a prefix of a rule (bind); keep the longest
      // whole rule (fuse); the rest is released (unbind) and visited later on its own.
      NodeId u = v;
      while (true) {
        NodeId w = SoleConsumer(graph, u);
        if (!w.valid() || group_of[w.index()] >= 0) break;
        types.push_back(graph.node(w).op_type);
        if (!prefixes.count(types)) break;
        chain.push_back(w);
        if (auto it = whole.find(types); it != whole.end()) {
          best = chain.size();
          best_rule = it->second;
        }
        u = w;
      }
    }
    FusionGroup group;
    group.ops.assign(chain.begin(), chain.begin() + best);
    group.rule = best > 1 ? best_rule : "";
    for (NodeId op : group.ops) group_of[op.index()] = static_cast<int>(groups.size());
    groups.push_back(std::move(group));
  }
  return groups;
}

StatusOr<FusionResult> FuseGraph(const Graph& graph, const FusionRules& rules) {
  HX_RETURN_IF_ERROR(graph.Validate());
  FusionResult out;
  HX_ASSIGN_OR_RETURN(out.groups, FindFusionGroups(graph, rules));
  std::vector<int> group_of(graph.num_nodes(), -1);
  for (size_t gi = 0; gi < out.groups.size(); ++gi)
    for (NodeId op : out.groups[gi].ops) group_of[op.index()] = static_cast<int>(gi);

  // A tensor disappears when it is produced inside a fused group and every reader is in the same
  // group (at least one reader, no graph output).
  auto internal = [&](TensorId t) {
    const Tensor& tensor = graph.tensor(t);
    if (!tensor.producer.valid() || tensor.consumers.empty()) return false;
    int g = group_of[tensor.producer.index()];
    if (g < 0 || out.groups[g].ops.size() < 2) return false;
    for (NodeId c : tensor.consumers)
      if (group_of[c.index()] != g) return false;
    return true;
  };

  Graph& fused = out.graph;
  fused.set_name(graph.name());
  // Inputs and weights (each makes its own tensor), then every remaining op output.
  for (NodeId id : graph.NodeIds()) {
    const Node& node = graph.node(id);
    if (node.kind == NodeKind::kInput) {
      const Tensor& t = graph.tensor(node.outputs.at(0));
      fused.AddInput(node.name, t.dtype, t.shape);
    } else if (node.kind == NodeKind::kWeight) {
      const Tensor& t = graph.tensor(node.outputs.at(0));
      fused.AddWeight(node.name, t.dtype, t.shape, node.data);
    }
  }
  for (NodeId id : graph.Ops()) {
    for (TensorId t : graph.node(id).outputs) {
      if (internal(t)) continue;
      const Tensor& tensor = graph.tensor(t);
      fused.AddTensor(tensor.name, tensor.dtype, tensor.shape);
    }
  }
  auto map_tensor = [&](TensorId t) -> StatusOr<TensorId> {
    if (!t.valid()) return TensorId();
    auto found = fused.FindTensor(graph.tensor(t).name);
    if (!found) return Internal("fusion lost tensor '" + graph.tensor(t).name + "'");
    return *found;
  };

  std::set<std::string> used_names;
  for (NodeId id : graph.NodeIds()) used_names.insert(graph.node(id).name);
  std::vector<NodeId> group_node(out.groups.size());
  for (size_t gi = 0; gi < out.groups.size(); ++gi) {
    const FusionGroup& group = out.groups[gi];
    std::vector<TensorId> inputs, outputs;
    if (group.ops.size() == 1) {
      const Node& node = graph.node(group.ops[0]);
      for (TensorId t : node.inputs) {
        HX_ASSIGN_OR_RETURN(TensorId m, map_tensor(t));
        inputs.push_back(m);
      }
      for (TensorId t : node.outputs) {
        HX_ASSIGN_OR_RETURN(TensorId m, map_tensor(t));
        outputs.push_back(m);
      }
      NodeId op = fused.AddOp(node.op_type, node.name, inputs, outputs, node.attrs);
      fused.mutable_node(op).domain = node.domain;
      fused.mutable_node(op).data = node.data;
      group_node[gi] = op;
      continue;
    }
    std::unordered_set<int> member_set;
    for (NodeId op : group.ops) member_set.insert(op.index());
    std::unordered_set<int> seen_inputs;
    std::vector<std::string> types;
    for (NodeId op : group.ops) {
      const Node& node = graph.node(op);
      types.push_back(node.op_type);
      for (TensorId t : node.inputs) {
        if (!t.valid()) continue;
        const NodeId producer = graph.tensor(t).producer;
        if (producer.valid() && member_set.count(producer.index())) continue;
        if (!seen_inputs.insert(t.index()).second) continue;
        HX_ASSIGN_OR_RETURN(TensorId m, map_tensor(t));
        inputs.push_back(m);
      }
      for (TensorId t : node.outputs) {
        if (internal(t)) continue;
        HX_ASSIGN_OR_RETURN(TensorId m, map_tensor(t));
        outputs.push_back(m);
      }
    }
    std::string name = graph.node(group.ops.front()).name + "+" + graph.node(group.ops.back()).name;
    for (int k = 2; used_names.count(name); ++k)
      name = graph.node(group.ops.front()).name + "+" + graph.node(group.ops.back()).name + "#" +
             std::to_string(k);
    used_names.insert(name);
    Attributes attrs;
    attrs.Set("rule", group.rule);
    attrs.Set("members", static_cast<int64_t>(group.ops.size()));
    NodeId op = fused.AddOp(Join(types, "+"), name, inputs, outputs, std::move(attrs));
    fused.mutable_node(op).domain = kFusedDomain;
    group_node[gi] = op;
    ++out.num_fused_groups;
    out.num_fused_ops += group.ops.size();
  }
  for (NodeId id : graph.Outputs()) {
    const Node& node = graph.node(id);
    HX_ASSIGN_OR_RETURN(TensorId m, map_tensor(node.inputs.at(0)));
    fused.AddOutput(m);
  }
  HX_RETURN_IF_ERROR(fused.Validate());

  out.group_of_node.assign(fused.num_nodes(), -1);
  for (size_t gi = 0; gi < group_node.size(); ++gi)
    out.group_of_node[group_node[gi].index()] = static_cast<int>(gi);
  out.coarse_node.assign(graph.num_nodes(), NodeId());
  std::vector<NodeId> fused_outputs = fused.Outputs();
  size_t next_output = 0;
  for (NodeId id : graph.NodeIds()) {
    const Node& node = graph.node(id);
    if (node.is_op()) {
      out.coarse_node[id.index()] = group_node[group_of[id.index()]];
    } else if (node.kind == NodeKind::kOutput) {
      out.coarse_node[id.index()] = fused_outputs.at(next_output++);
    } else {
      auto found = fused.FindNode(node.name);
      if (!found) return Internal("fusion lost node '" + node.name + "'");
      out.coarse_node[id.index()] = *found;
    }
  }
  return out;
}

}  // namespace hx::graph
