#include "hexplan/plan/op_runs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/graph_builders.h"

namespace hx::plan {
namespace {

using ::testing::ElementsAre;

// A chain of Relu ops with these names.
graph::Graph NamedChain(const std::vector<std::string>& names) {
  graph::Graph g("named");
  TensorId t = g.node(g.AddInput("x", graph::DType::kF32, {4})).outputs[0];
  for (const std::string& name : names)
    t = g.node(g.AddOpWithOutputs("Relu", name, {t}, {{name + ":out", graph::DType::kF32, {4}}}))
            .outputs[0];
  g.AddOutput(t);
  return g;
}

std::vector<std::string> Labels(const std::vector<OpRun>& runs) {
  std::vector<std::string> labels;
  for (const OpRun& run : runs) labels.push_back(run.label);
  return labels;
}

std::vector<std::string> GptNames(int layers) {
  std::vector<std::string> names = {"/transformer/Gather", "/transformer/Add"};
  for (int l = 0; l < layers; ++l)
    for (const char* op : {"ln_1/LayerNormalization", "attn/MatMul", "attn/Softmax", "mlp/MatMul"})
      names.push_back("/transformer/h." + std::to_string(l) + "/" + op);
  names.push_back("/transformer/ln_f/LayerNormalization");
  names.push_back("/lm_head/MatMul");
  return names;
}

TEST(OpRunsTest, CollapsesNumberedLayersAndNamesTheRestFirstToLast) {
  graph::Graph g = NamedChain(GptNames(12));
  std::vector<OpRun> runs = CollapseOpRuns(g.Ops(), g);
  EXPECT_THAT(Labels(runs),
              ElementsAre("transformer", "transformer/h.0-11", "transformer/ln_f .. lm_head"));
  EXPECT_EQ(runs[1].ops.size(), 48u);
  EXPECT_TRUE(runs[1].numbered);
  EXPECT_EQ(runs[1].blocks, 12u);
  EXPECT_EQ(runs[1].block_ops, 48u);
  EXPECT_EQ(g.node(runs[1].first).name, "/transformer/h.0/ln_1/LayerNormalization");
  EXPECT_EQ(g.node(runs[1].last).name, "/transformer/h.11/mlp/MatMul");
}

TEST(OpRunsTest, PartOfOneLayerIsNamedByItsCommonScope) {
  graph::Graph g = NamedChain(GptNames(6));
  std::vector<NodeId> attn;
  for (NodeId op : g.Ops())
    if (g.node(op).name.rfind("/transformer/h.3/attn/", 0) == 0) attn.push_back(op);
  std::vector<OpRun> runs = CollapseOpRuns(attn, g);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].label, "transformer/h.3/attn");
  EXPECT_EQ(runs[0].ops.size(), 2u);
  EXPECT_EQ(runs[0].block_ops, 4u);  // h.3 has 4 ops, the run holds 2
}

TEST(OpRunsTest, ReadsDottedCnnAndUnstructuredNames) {
  graph::Graph dotted = NamedChain({"h0.attn.qkv", "h0.mlp.fc", "h1.attn.qkv", "h2.mlp.fc"});
  EXPECT_THAT(Labels(CollapseOpRuns(dotted.Ops(), dotted)), ElementsAre("h0-2"));
  graph::Graph cnn = NamedChain({"/conv1/Conv", "/maxpool/MaxPool", "/layer3.2/Conv",
                                 "/layer4.0/Conv", "/layer4.1/Relu", "/fc/Gemm"});
  EXPECT_THAT(Labels(CollapseOpRuns(cnn.Ops(), cnn)),
              ElementsAre("conv1", "maxpool", "layer3.2 .. layer4.1", "fc"));
  graph::Graph nested = NamedChain({"/features.5.9/Conv", "/features.5.10/Add"});
  EXPECT_THAT(Labels(CollapseOpRuns(nested.Ops(), nested)), ElementsAre("features.5.9-10"));
  graph::Graph plain = NamedChain({"alpha", "beta", "gamma"});
  EXPECT_THAT(Labels(CollapseOpRuns(plain.Ops(), plain)), ElementsAre("alpha .. gamma"));
  graph::Graph chain = testing::MakeChain(6);
  EXPECT_THAT(Labels(CollapseOpRuns(chain.Ops(), chain)), ElementsAre("op0-5"));
}

TEST(OpRunsTest, TheSamePartsOfConsecutiveBlocksShareARun) {
  std::vector<std::string> names;
  for (int step = 0; step < 3; ++step)
    for (int cell = 0; cell < 4; ++cell)
      names.push_back("/lstm/step" + std::to_string(step) + "/cell" + std::to_string(cell) +
                      "/Add");
  graph::Graph g = NamedChain(names);
  std::vector<NodeId> low_cells;  // cells 0-1 of every step, as a two-device pipeline gives them
  for (NodeId op : g.Ops())
    if (g.node(op).name.find("/cell0/") != std::string::npos ||
        g.node(op).name.find("/cell1/") != std::string::npos)
      low_cells.push_back(op);
  std::vector<OpRun> runs = CollapseOpRuns(low_cells, g);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].label, "lstm/step0-2/cell0-1");
  EXPECT_EQ(runs[0].ops.size(), 6u);
  EXPECT_EQ(runs[0].block_ops, 12u);
}

TEST(OpRunsTest, EveryOpLandsInExactlyOneRunInOrder) {
  graph::Graph g = NamedChain(GptNames(3));
  std::vector<NodeId> order = g.Ops();
  std::vector<NodeId> seen;
  for (const OpRun& run : CollapseOpRuns(order, g))
    seen.insert(seen.end(), run.ops.begin(), run.ops.end());
  EXPECT_EQ(seen, order);
  EXPECT_TRUE(CollapseOpRuns({}, g).empty());
}

}  // namespace
}  // namespace hx::plan
