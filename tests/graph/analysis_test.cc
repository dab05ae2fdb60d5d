// Critical paths (against brute-force path enumeration) and subgraph extraction.

#include "hexplan/graph/analysis.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>
#include <set>

#include "testing/graph_builders.h"

namespace hx::graph {
namespace {

// Every source-to-sink path's weight, by exhaustive DFS; parallel edges (two tensors between the
// same nodes) are separate alternatives.
double BruteForceLongest(const Graph& g, const std::vector<double>& node_w,
                         const std::map<uint32_t, double>& tensor_w) {
  std::vector<std::vector<Edge>> out(g.num_nodes());
  for (const Edge& e : g.Edges()) out[e.src.index()].push_back(e);
  double best = -1e300;
  std::function<void(NodeId, double)> walk = [&](NodeId v, double so_far) {
    so_far += node_w[v.index()];
    if (out[v.index()].empty()) {
      best = std::max(best, so_far);
      return;
    }
    for (const Edge& e : out[v.index()]) walk(e.dst, so_far + tensor_w.at(e.tensor.value()));
  };
  for (NodeId v : g.NodeIds())
    if (g.predecessors(v).empty()) walk(v, 0.0);
  return best;
}

TEST(CriticalPathTest, ChainIsTheWholeChain) {
  Graph g = testing::MakeChain(4);
  auto cp = CriticalPath(g, [&](NodeId id) { return g.node(id).is_op() ? 2.0 : 0.5; });
  ASSERT_TRUE(cp.ok());
  // x (0.5) + 4 ops (2 each) + output (0.5); weights (0.5) are sources off the path.
  EXPECT_DOUBLE_EQ(cp->length, 9.0);
  ASSERT_EQ(cp->nodes.size(), 6u);
  EXPECT_EQ(g.node(cp->nodes.front()).name, "x");
  EXPECT_EQ(g.node(cp->nodes.back()).kind, NodeKind::kOutput);
}

TEST(CriticalPathTest, DiamondTakesTheHeavierBranchAndEdgeWeights) {
  Graph g = testing::MakeDiamond();
  const NodeId b = *g.FindNode("b"), c = *g.FindNode("c");
  auto by_node = [&](NodeId id) { return id == b ? 5.0 : id == c ? 3.0 : 1.0; };
  auto cp = CriticalPath(g, by_node);
  ASSERT_TRUE(cp.ok());
  std::vector<std::string> names;
  for (NodeId id : cp->nodes) names.push_back(g.node(id).name);
  EXPECT_EQ(names, (std::vector<std::string>{"x", "a", "b", "d", "d.out"}));
  EXPECT_DOUBLE_EQ(cp->length, 1 + 1 + 5 + 1 + 1);
  // A heavy edge into c makes the other branch critical.
  const TensorId a_out = *g.FindTensor("a.out");
  auto cp2 = CriticalPath(
      g, by_node, [&](const Edge& e) { return (e.tensor == a_out && e.dst == c) ? 10.0 : 0.0; });
  ASSERT_TRUE(cp2.ok());
  EXPECT_DOUBLE_EQ(cp2->length, 1 + 1 + 10 + 3 + 1 + 1);
  EXPECT_EQ(g.node(cp2->nodes[2]).name, "c");
}

TEST(CriticalPathTest, EmptyAndCyclicGraphs) {
  Graph empty("empty");
  auto cp = CriticalPath(empty, [](NodeId) { return 1.0; });
  ASSERT_TRUE(cp.ok());
  EXPECT_EQ(cp->length, 0.0);
  EXPECT_TRUE(cp->nodes.empty());

  Graph g("cyclic");
  TensorId a = g.AddTensor("a", DType::kF32, {4});
  TensorId b = g.AddTensor("b", DType::kF32, {4});
  g.AddOp("Relu", "p", {a}, {b});
  g.AddOp("Relu", "q", {b}, {a});
  auto bad = CriticalPath(g, [](NodeId) { return 1.0; });
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cycle"), std::string::npos);
}

TEST(CriticalPathTest, MatchesBruteForceOnRandomDags) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Graph g = testing::MakeRandomDag(14, seed);
    std::mt19937_64 rng(seed * 7919);
    std::uniform_real_distribution<double> dist(0.0, 10.0);
    std::vector<double> node_w(g.num_nodes());
    for (double& w : node_w) w = dist(rng);
    std::map<uint32_t, double> tensor_w;
    for (size_t t = 0; t < g.num_tensors(); ++t) tensor_w[t] = (seed % 2) ? dist(rng) : 0.0;
    auto cp = CriticalPath(
        g, [&](NodeId id) { return node_w[id.index()]; },
        [&](const Edge& e) { return tensor_w.at(e.tensor.value()); });
    ASSERT_TRUE(cp.ok());
    EXPECT_NEAR(cp->length, BruteForceLongest(g, node_w, tensor_w), 1e-9) << g.name();
    // The returned path is a real source-to-sink path whose weight is the length.
    ASSERT_FALSE(cp->nodes.empty());
    EXPECT_TRUE(g.predecessors(cp->nodes.front()).empty());
    EXPECT_TRUE(g.successors(cp->nodes.back()).empty());
    double total = node_w[cp->nodes[0].index()];
    for (size_t i = 1; i < cp->nodes.size(); ++i) {
      double heaviest = -1;
      for (const Edge& e : g.Edges())
        if (e.src == cp->nodes[i - 1] && e.dst == cp->nodes[i])
          heaviest = std::max(heaviest, tensor_w.at(e.tensor.value()));
      ASSERT_GE(heaviest, 0.0) << "no edge between consecutive path nodes";
      total += heaviest + node_w[cp->nodes[i].index()];
    }
    EXPECT_NEAR(total, cp->length, 1e-9);
  }
}

// ---- ExtractSubgraph

TEST(ExtractSubgraphTest, MiddleOfAChain) {
  Graph g = testing::MakeChain(3, 16, 4);
  const NodeId op1 = *g.FindNode("op1");
  auto sub = ExtractSubgraph(g, {op1});
  ASSERT_TRUE(sub.ok()) << sub.status().ToString();
  const Graph& s = sub->graph;
  EXPECT_TRUE(s.Validate().ok());
  ASSERT_EQ(s.Ops().size(), 1u);
  ASSERT_EQ(sub->node_map.size(), 1u);
  EXPECT_EQ(s.node(sub->node_map[0]).name, "op1");
  EXPECT_EQ(sub->original_of[sub->node_map[0].index()], op1);
  // The activation enters as a graph input; the weight outside the set stays a weight.
  ASSERT_EQ(s.Inputs().size(), 1u);
  EXPECT_EQ(s.node(s.Inputs()[0]).name, "op0.out");
  EXPECT_FALSE(sub->original_of[s.Inputs()[0].index()].valid());
  ASSERT_EQ(s.Weights().size(), 1u);
  EXPECT_EQ(s.node(s.Weights()[0]).name, "op1.weight");
  EXPECT_EQ(sub->original_of[s.Weights()[0].index()], *g.FindNode("op1.weight"));
  EXPECT_EQ(s.NumParameters(), 16 * 16);
  // op1.out is read by op2 outside: it becomes an output.
  ASSERT_EQ(s.Outputs().size(), 1u);
  EXPECT_EQ(s.tensor(s.node(s.Outputs()[0]).inputs[0]).name, "op1.out");
  EXPECT_FALSE(sub->original_of[s.Outputs()[0].index()].valid());
  EXPECT_EQ(s.tensor(*s.FindTensor("op1.out")).shape, (Shape{4, 16}));
}

TEST(ExtractSubgraphTest, WholeGraphIsACopy) {
  Graph g = testing::MakeRandomDag(30, 3);
  auto sub = ExtractSubgraph(g, g.NodeIds());
  ASSERT_TRUE(sub.ok());
  const Graph& s = sub->graph;
  EXPECT_EQ(s.num_nodes(), g.num_nodes());
  EXPECT_EQ(s.num_tensors(), g.num_tensors());
  EXPECT_EQ(s.num_edges(), g.num_edges());
  EXPECT_EQ(s.NumParameters(), g.NumParameters());
  for (size_t i = 0; i < s.num_nodes(); ++i) {
    const NodeId original = sub->original_of[i];
    ASSERT_TRUE(original.valid());
    EXPECT_EQ(s.node(NodeId(i)).name, g.node(original).name);
    EXPECT_EQ(s.node(NodeId(i)).kind, g.node(original).kind);
    EXPECT_EQ(s.node(NodeId(i)).op_type, g.node(original).op_type);
    EXPECT_EQ(s.node(NodeId(i)).attrs, g.node(original).attrs);
  }
}

// Splits the graph at its topological order into `pieces` contiguous runs of operators; each weight
// goes with its first consumer and each output node with its producer.
std::vector<std::vector<NodeId>> Split(const Graph& g, int pieces) {
  auto order = TopologicalOrder(g);
  HX_CHECK(order.ok());
  std::vector<NodeId> ops;
  for (NodeId v : *order)
    if (g.node(v).is_op()) ops.push_back(v);
  std::vector<int> piece_of(g.num_nodes(), -1);
  for (size_t i = 0; i < ops.size(); ++i)
    piece_of[ops[i].index()] = static_cast<int>(i * pieces / ops.size());
  for (NodeId v : *order) {
    const Node& n = g.node(v);
    if (n.kind == NodeKind::kOutput)
      piece_of[v.index()] = piece_of[g.tensor(n.inputs[0]).producer.index()];
  }
  for (NodeId v : g.NodeIds()) {
    const Node& n = g.node(v);
    if (n.kind == NodeKind::kWeight || n.kind == NodeKind::kInput) {
      const auto& readers = g.tensor(n.outputs[0]).consumers;
      piece_of[v.index()] = readers.empty() ? 0 : piece_of[readers.front().index()];
    }
  }
  std::vector<std::vector<NodeId>> result(pieces);
  for (NodeId v : g.NodeIds()) result[piece_of[v.index()]].push_back(v);
  return result;
}

TEST(ExtractSubgraphTest, PiecesAddUpToTheWhole) {
  std::vector<Graph> graphs = {testing::MakeChain(7), testing::MakeDiamond(),
                               testing::MakeForkJoin(3, 4)};
  for (uint64_t seed = 1; seed <= 10; ++seed) graphs.push_back(testing::MakeRandomDag(40, seed));
  for (const Graph& g : graphs) {
    for (int pieces : {1, 2, 3, 5}) {
      size_t ops = 0, weights = 0, crossing_in = 0, crossing_out = 0;
      int64_t params = 0;
      for (const auto& piece : Split(g, pieces)) {
        if (piece.empty()) continue;
        // Shuffled order must not matter.
        std::vector<NodeId> shuffled(piece.rbegin(), piece.rend());
        auto sub = ExtractSubgraph(g, shuffled);
        ASSERT_TRUE(sub.ok()) << g.name() << ": " << sub.status().ToString();
        const Graph& s = sub->graph;
        ASSERT_TRUE(s.Validate().ok());
        ops += s.Ops().size();
        weights += s.Weights().size();
        params += s.NumParameters();
        for (size_t i = 0; i < shuffled.size(); ++i) {
          EXPECT_EQ(s.node(sub->node_map[i]).name, g.node(shuffled[i]).name);
        }
        std::set<NodeId> in_piece(piece.begin(), piece.end());
        for (NodeId v : s.Inputs())
          if (!sub->original_of[v.index()].valid()) ++crossing_in;
        for (NodeId v : s.Outputs())
          if (!sub->original_of[v.index()].valid()) ++crossing_out;
        // Operators keep their inputs' shapes and names.
        for (NodeId v : s.Ops()) {
          const Node& copy = s.node(v);
          const Node& original = g.node(sub->original_of[v.index()]);
          ASSERT_EQ(copy.inputs.size(), original.inputs.size());
          for (size_t k = 0; k < copy.inputs.size(); ++k) {
            EXPECT_EQ(s.tensor(copy.inputs[k]).name, g.tensor(original.inputs[k]).name);
            EXPECT_EQ(s.tensor(copy.inputs[k]).shape, g.tensor(original.inputs[k]).shape);
          }
        }
      }
      EXPECT_EQ(ops, g.Ops().size()) << g.name() << " in " << pieces;
      EXPECT_EQ(weights, g.Weights().size()) << g.name() << " in " << pieces;
      EXPECT_EQ(params, g.NumParameters()) << g.name() << " in " << pieces;
      // Every tensor crossing a cut is an output of one piece and an input of each later piece
      // reading it, so pieces > 1 have both; a single piece has neither.
      if (pieces == 1) {
        EXPECT_EQ(crossing_in, 0u);
        EXPECT_EQ(crossing_out, 0u);
      } else {
        EXPECT_GE(crossing_in, crossing_out) << g.name();
        EXPECT_GT(crossing_out, 0u) << g.name();
      }
    }
  }
}

TEST(ExtractSubgraphTest, RejectsBadNodeLists) {
  Graph g = testing::MakeChain(2);
  const NodeId op0 = *g.FindNode("op0");
  EXPECT_FALSE(ExtractSubgraph(g, {op0, op0}).ok());
  EXPECT_FALSE(ExtractSubgraph(g, {NodeId(1000)}).ok());
  EXPECT_FALSE(ExtractSubgraph(g, {NodeId::Invalid()}).ok());
  auto empty = ExtractSubgraph(g, {});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->graph.num_nodes(), 0u);
}

}  // namespace
}  // namespace hx::graph
