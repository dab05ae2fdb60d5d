#include "hexplan/graph/fusion.h"

#include <gtest/gtest.h>

#include <set>

#include "hexplan/core/file_util.h"
#include "hexplan/graph/analysis.h"
#include "hexplan/graph/zoo.h"
#include "testing/graph_builders.h"
#include "testing/test_paths.h"

namespace hx::graph {
namespace {

// A small builder for hand-made graphs: every op has one output of shape [8, 16].
class Hand {
 public:
  Hand() : g_("hand") {}
  TensorId Input(const std::string& name) { return Out(g_.AddInput(name, DType::kF32, {8, 16})); }
  TensorId Weight(const std::string& name) {
    return Out(g_.AddWeight(name, DType::kF32, {16, 16}));
  }
  TensorId Op(const std::string& type, const std::string& name, std::vector<TensorId> in) {
    return Out(
        g_.AddOpWithOutputs(type, name, std::move(in), {{name + ":0", DType::kF32, {8, 16}}}));
  }
  void Output(TensorId t) { g_.AddOutput(t); }
  Graph& graph() { return g_; }
  std::vector<std::string> Names(const FusionGroup& group) const {
    std::vector<std::string> out;
    for (NodeId op : group.ops) out.push_back(g_.node(op).name);
    return out;
  }

 private:
  TensorId Out(NodeId n) { return g_.node(n).outputs.at(0); }
  Graph g_;
};

using NameList = std::vector<std::string>;

std::vector<NameList> GroupNames(Hand& h, const std::vector<FusionGroup>& groups) {
  std::vector<NameList> out;
  for (const FusionGroup& g : groups) out.push_back(h.Names(g));
  return out;
}

TEST(FusionTest, ConvBnReluBecomesOneOp) {
  Hand h;
  TensorId x = h.Input("x");
  TensorId c = h.Op("Conv", "conv", {x, h.Weight("w")});
  TensorId b = h.Op("BatchNormalization", "bn",
                    {c, h.Weight("scale"), h.Weight("shift"), h.Weight("mean"), h.Weight("var")});
  TensorId r = h.Op("Relu", "relu", {b});
  h.Output(r);
  auto fused = FuseGraph(h.graph(), BuiltinFusionRules());
  ASSERT_TRUE(fused.ok()) << fused.status().ToString();
  ASSERT_EQ(fused->groups.size(), 1u);
  EXPECT_EQ(h.Names(fused->groups[0]), (NameList{"conv", "bn", "relu"}));
  EXPECT_EQ(fused->groups[0].rule, "conv-bn-relu");
  EXPECT_EQ(fused->num_fused_groups, 1u);
  EXPECT_EQ(fused->num_fused_ops, 3u);
  const Graph& f = fused->graph;
  ASSERT_EQ(f.Ops().size(), 1u);
  const Node& op = f.node(f.Ops()[0]);
  EXPECT_EQ(op.op_type, "Conv+BatchNormalization+Relu");
  EXPECT_EQ(op.domain, "hexplan.fused");
  EXPECT_EQ(op.name, "conv+relu");
  // Reads x and the five weights; writes only relu's output (the intermediates are gone).
  EXPECT_EQ(op.inputs.size(), 6u);
  ASSERT_EQ(op.outputs.size(), 1u);
  EXPECT_EQ(f.tensor(op.outputs[0]).name, "relu:0");
  EXPECT_FALSE(f.FindTensor("conv:0").has_value());
  EXPECT_FALSE(f.FindTensor("bn:0").has_value());
  EXPECT_EQ(f.Weights().size(), 5u);
  EXPECT_EQ(f.NumParameters(), h.graph().NumParameters());
  // Every original node maps to the fused node that stands for it.
  for (NodeId id : h.graph().Ops()) EXPECT_EQ(fused->coarse_node[id.index()], f.Ops()[0]);
  EXPECT_EQ(fused->group_of_node[f.Ops()[0].index()], 0);
}

TEST(FusionTest, ResidualConvBnAddReluFusesThroughTheMultiInputAdd) {
  Hand h;
  TensorId x = h.Input("x");
  TensorId c = h.Op("Conv", "conv", {x, h.Weight("w")});
  TensorId b = h.Op("BatchNormalization", "bn", {c, h.Weight("scale")});
  TensorId a = h.Op("Add", "add", {b, x});  // multi-inputs: the skip connection
  TensorId r = h.Op("Relu", "relu", {a});
  h.Output(r);
  auto groups = FindFusionGroups(h.graph(), BuiltinFusionRules());
  ASSERT_TRUE(groups.ok());
  ASSERT_EQ(groups->size(), 1u);
  EXPECT_EQ((*groups)[0].rule, "conv-bn-add-relu");
}

TEST(FusionTest, MultiOutputLinksAreNeverFused) {
  // MOIRAI Fig. 7: an add whose output also feeds another branch is not fused with its relu.
  Hand h;
  TensorId x = h.Input("x");
  TensorId a1 = h.Op("Add", "add1", {x, x});
  TensorId r1 = h.Op("Relu", "relu1", {a1});
  TensorId c = h.Op("Conv", "conv", {a1, h.Weight("w")});  // add1 fans out: relu1 and conv
  TensorId b = h.Op("BatchNormalization", "bn", {c, h.Weight("s")});
  TensorId r2 = h.Op("Relu", "relu2", {b});
  TensorId bn_tap = h.Op("Sigmoid", "tap", {b});  // bn fans out too: conv-bn only
  h.Output(r1);
  h.Output(r2);
  h.Output(bn_tap);
  auto groups = FindFusionGroups(h.graph(), BuiltinFusionRules());
  ASSERT_TRUE(groups.ok());
  std::set<NameList> got;
  for (const NameList& n : GroupNames(h, *groups)) got.insert(n);
  EXPECT_EQ(got, (std::set<NameList>{{"add1"}, {"relu1"}, {"conv", "bn"}, {"relu2"}, {"tap"}}));
}

TEST(FusionTest, MatMulAddGeluAndLayerNormChains) {
  Hand h;
  TensorId x = h.Input("x");
  // LayerNorm written out: x - mean fans out to Pow and Div, so two chains fuse.
  TensorId mean = h.Op("ReduceMean", "mean", {x});
  TensorId d = h.Op("Sub", "sub", {x, mean});
  TensorId sq = h.Op("Pow", "pow", {d, h.Weight("two")});
  TensorId var = h.Op("ReduceMean", "var", {sq});
  TensorId ve = h.Op("Add", "eps", {var, h.Weight("epsilon")});
  TensorId sd = h.Op("Sqrt", "sqrt", {ve});
  TensorId n = h.Op("Div", "div", {d, sd});
  TensorId sc = h.Op("Mul", "gamma", {n, h.Weight("g")});
  TensorId ln = h.Op("Add", "beta", {sc, h.Weight("b")});
  // Dense layer with bias and GELU.
  TensorId mm = h.Op("MatMul", "fc", {ln, h.Weight("w")});
  TensorId bias = h.Op("Add", "bias", {mm, h.Weight("b2")});
  TensorId act = h.Op("Gelu", "gelu", {bias});
  h.Output(act);
  auto groups = FindFusionGroups(h.graph(), BuiltinFusionRules());
  ASSERT_TRUE(groups.ok());
  EXPECT_EQ(GroupNames(h, *groups),
            (std::vector<NameList>{{"mean", "sub"},
                                   {"pow", "var", "eps", "sqrt", "div", "gamma", "beta"},
                                   {"fc", "bias", "gelu"}}));
  EXPECT_EQ((*groups)[0].rule, "layernorm-mean");
  EXPECT_EQ((*groups)[1].rule, "layernorm-body");
  EXPECT_EQ((*groups)[2].rule, "matmul-add-gelu");
  auto fused = FuseGraph(h.graph(), BuiltinFusionRules());
  ASSERT_TRUE(fused.ok()) << fused.status().ToString();
  EXPECT_EQ(fused->graph.Ops().size(), 3u);
  // The Sub's output stays (it leaves its group towards the Div).
  EXPECT_TRUE(fused->graph.FindTensor("sub:0").has_value());
}

TEST(FusionTest, PartialMatchIsReleased) {
  // Conv, BN, Add without the closing Relu: conv-bn fuses, the Add is left alone.
  Hand h;
  TensorId x = h.Input("x");
  TensorId c = h.Op("Conv", "conv", {x, h.Weight("w")});
  TensorId b = h.Op("BatchNormalization", "bn", {c, h.Weight("s")});
  TensorId a = h.Op("Add", "add", {b, x});
  TensorId s = h.Op("Sigmoid", "sig", {a});
  h.Output(s);
  auto groups = FindFusionGroups(h.graph(), BuiltinFusionRules());
  ASSERT_TRUE(groups.ok());
  EXPECT_EQ(GroupNames(h, *groups), (std::vector<NameList>{{"conv", "bn"}, {"add"}, {"sig"}}));
}

// Property: on random DAGs and random rules every op is in exactly one group, each fused group is
// a chain of sole-consumer links spelling a whole rule, the fused graph is acyclic, and every
// original edge between groups survives as an edge between their fused nodes.
TEST(FusionTest, RandomDagsFuseIntoAcyclicPartitions) {
  FusionRules rules;
  rules.rules = {{"ma", {"MatMul", "Add"}},
                 {"am", {"Add", "MatMul"}},
                 {"mm", {"MatMul", "MatMul"}},
                 {"aam", {"Add", "Add", "MatMul"}},
                 {"maam", {"MatMul", "Add", "Add", "MatMul"}},
                 {"mmm", {"MatMul", "MatMul", "MatMul"}}};
  std::map<std::vector<std::string>, std::string> by_ops;
  for (const auto& r : rules.rules) by_ops[r.ops] = r.name;
  size_t total_fused = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Graph g = testing::MakeRandomDag(60, seed);
    auto fused = FuseGraph(g, rules);
    ASSERT_TRUE(fused.ok()) << fused.status().ToString();
    std::vector<int> seen(g.num_nodes(), 0);
    for (const FusionGroup& group : fused->groups) {
      for (NodeId op : group.ops) ++seen[op.index()];
      if (group.ops.size() > 1) {
        std::vector<std::string> types;
        for (NodeId op : group.ops) types.push_back(g.node(op).op_type);
        ASSERT_TRUE(by_ops.count(types)) << "seed " << seed;
        EXPECT_EQ(by_ops[types], group.rule);
        for (size_t k = 0; k + 1 < group.ops.size(); ++k)
          for (NodeId s : g.successors(group.ops[k])) EXPECT_EQ(s, group.ops[k + 1]);
      }
    }
    for (NodeId op : g.Ops()) EXPECT_EQ(seen[op.index()], 1) << "seed " << seed;
    const Graph& f = fused->graph;
    ASSERT_TRUE(f.Validate().ok()) << f.Validate().ToString();
    ASSERT_TRUE(TopologicalOrder(f).ok());
    EXPECT_EQ(f.Ops().size(), fused->groups.size());
    for (const Edge& e : g.Edges()) {
      NodeId a = fused->coarse_node[e.src.index()], b = fused->coarse_node[e.dst.index()];
      if (a == b) continue;
      const auto& succ = f.successors(a);
      EXPECT_NE(std::find(succ.begin(), succ.end(), b), succ.end()) << "seed " << seed;
    }
    total_fused += fused->num_fused_groups;
  }
  EXPECT_GT(total_fused, 30u);  // the rules do fire on these graphs
}

TEST(FusionTest, ResNet50CoarsensAndKeepsItsParameters) {
  auto g = BuildZooModel("resnet50", {});
  ASSERT_TRUE(g.ok());
  auto fused = FuseGraph(*g, BuiltinFusionRules());
  ASSERT_TRUE(fused.ok()) << fused.status().ToString();
  EXPECT_LT(fused->graph.Ops().size(), g->Ops().size() * 2 / 3);
  EXPECT_EQ(fused->graph.NumParameters(), g->NumParameters());
  EXPECT_EQ(fused->graph.Outputs().size(), g->Outputs().size());
}

TEST(FusionTest, RulesFileRoundTripsAndShippedCopyMatchesTheBuiltins) {
  auto parsed = ParseFusionRules(FusionRulesToJson(BuiltinFusionRules()), "builtin");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->rules.size(), BuiltinFusionRules().rules.size());
  for (size_t i = 0; i < parsed->rules.size(); ++i) {
    EXPECT_EQ(parsed->rules[i].name, BuiltinFusionRules().rules[i].name);
    EXPECT_EQ(parsed->rules[i].ops, BuiltinFusionRules().rules[i].ops);
  }
  auto shipped = ReadFusionRulesFile(testing::SourceDir() + "/examples/fusion-rules.json");
  ASSERT_TRUE(shipped.ok()) << shipped.status().ToString();
  EXPECT_EQ(FusionRulesToJson(*shipped), FusionRulesToJson(BuiltinFusionRules()));
}

TEST(FusionTest, BadRulesFilesNameTheRuleAndField) {
  const std::string head = R"({"format": "hexplan-fusion-rules", "version": 1, "rules": )";
  auto one_op = ParseFusionRules(head + R"([{"name": "x", "ops": ["Conv"]}]})", "r.json");
  ASSERT_FALSE(one_op.ok());
  EXPECT_NE(one_op.status().message().find("r.json"), std::string::npos);
  EXPECT_NE(one_op.status().message().find("rule 0 'x': ops: expected at least two"),
            std::string::npos)
      << one_op.status().message();
  auto not_string = ParseFusionRules(head + R"([{"name": "x", "ops": ["Conv", 3]}]})", "r.json");
  ASSERT_FALSE(not_string.ok());
  EXPECT_NE(not_string.status().message().find("rules[0].ops[1]"), std::string::npos);
  auto dup = ParseFusionRules(
      head + R"([{"name": "a", "ops": ["Conv", "Relu"]}, {"name": "a", "ops": ["A", "B"]}]})",
      "r.json");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("duplicate"), std::string::npos);
  auto format = ParseFusionRules(R"({"rules": []})", "r.json");
  ASSERT_FALSE(format.ok());
  EXPECT_NE(format.status().message().find("format"), std::string::npos);
  EXPECT_FALSE(ReadFusionRulesFile("/nonexistent/rules.json").ok());
}

}  // namespace
}  // namespace hx::graph
