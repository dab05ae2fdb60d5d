#pragma once
// Graph coarsening by operator fusion: MOIRAI's GCOF (Algorithm 1 of
// ../shared/papers/004_25e251f7090b3bd7.txt). A fusion rule is an ordered list of ONNX op types
// (MOIRAI Table I: Conv,BatchNormalization / Conv,BatchNormalization,Relu /
// Conv,BatchNormalization,Add,Relu, plus what backends commonly fuse). A chain of ops matching a
// rule becomes one fused op when every link of it is a "direct" or "multi-inputs" connection: the
// predecessor's outputs go to the successor only (a predecessor with several consumers, a
// "multi-outputs" connection, is never fused, as the paper prescribes). Contracting such links can
// never close a cycle, so the fused graph is a DAG.
//
// Rules file (docs/formats.md, "Fusion rules"):
//   {"format": "hexplan-fusion-rules", "version": 1,
//    "rules": [{"name": "conv-bn-relu", "ops": ["Conv", "BatchNormalization", "Relu"]}, ...]}

#include <string>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/graph/graph.h"

namespace hx::graph {

struct FusionRule {
  std::string name;
  std::vector<std::string> ops;  // ONNX op types, in data-flow order; at least two
};

struct FusionRules {
  std::vector<FusionRule> rules;
  // Every rule named (names unique), with at least two non-empty op types; no two rules alike.
  Status Validate() const;
};

// The built-in rules (compiled in, so they work from any directory): MOIRAI's Table I and the
// fusions inference backends commonly apply (conv+relu, conv+add+relu, matmul+bias(+gelu/relu),
// decomposed GELU, LayerNorm and RMSNorm bodies, attention scores, SiLU gating).
const FusionRules& BuiltinFusionRules();

// Parses / reads / writes the rules file. Errors name the source and the offending rule or field.
StatusOr<FusionRules> ParseFusionRules(const std::string& json_text,
                                       const std::string& source_name);
StatusOr<FusionRules> ReadFusionRulesFile(const std::string& path);
std::string FusionRulesToJson(const FusionRules& rules);
// `path` when given, else the built-in rules.
StatusOr<FusionRules> LoadFusionRules(const std::string& path);

// One group of original ops that becomes one op of the coarsened graph.
struct FusionGroup {
  std::vector<NodeId> ops;  // original ops, in data-flow order (they run back to back)
  std::string rule;         // the rule that fused them; empty for a single op left alone
};

// GCOF's grouping: every op of `graph` in exactly one group; groups in a topological order of the
// coarsened graph. Ops are visited in topological order; from each op not yet grouped, the chain of
// sole consumers is followed while its op types remain a prefix of some rule, and the longest
// prefix that is a whole rule is fused (the paper's bind / unbind: the rest is released).
StatusOr<std::vector<FusionGroup>> FindFusionGroups(const Graph& graph, const FusionRules& rules);

struct FusionResult {
  Graph graph;                      // the coarsened graph (validated)
  std::vector<FusionGroup> groups;  // one per op of `graph`
  // Per coarsened node: its group index (ops), or -1 (weights, inputs, outputs).
  std::vector<int> group_of_node;
  // Per original node: its node in the coarsened graph (invalid only for nothing: weights, inputs
  // and outputs have copies of the same name, ops map to their group's op).
  std::vector<NodeId> coarse_node;
  size_t num_fused_groups = 0;  // groups of two or more ops
  size_t num_fused_ops = 0;     // ops inside those groups
};

// Builds the coarsened graph: a group of one op is copied unchanged (name, type, attributes); a
// fused group becomes an op named "<first>+<last>" (made unique), of type "<T1>+<T2>+..." in domain
// "hexplan.fused", reading every tensor its members read from outside the group and producing every
// member output used outside it (intermediate tensors disappear). Weights, inputs and outputs keep
// their names, as do the tensors that remain.
StatusOr<FusionResult> FuseGraph(const Graph& graph, const FusionRules& rules);

}  // namespace hx::graph
