// Dominators, post-dominators and SortingHat's partition points (the sink's dominators).

#include <gtest/gtest.h>

#include <filesystem>
#include <queue>
#include <random>

#include "hexplan/graph/analysis.h"
#include "hexplan/graph/pipedream_io.h"
#include "testing/graph_builders.h"
#include "testing/test_paths.h"

namespace hx::graph {
namespace {

std::vector<std::string> Names(const Graph& g, const std::vector<NodeId>& ids) {
  std::vector<std::string> names;
  for (NodeId id : ids) names.push_back(g.node(id).name);
  return names;
}

std::string IdomName(const Graph& g, const DominatorTree& tree, const std::string& node) {
  NodeId d = tree.idom[g.FindNode(node)->index()];
  return d.valid() ? g.node(d).name : "<virtual>";
}

TEST(DominatorsTest, SortingHatFigure6PartitionsAtD) {
  Graph g = testing::MakeSortingHatFig6();
  auto dom = Dominators(g);
  ASSERT_TRUE(dom.ok()) << dom.status().ToString();
  EXPECT_EQ(IdomName(g, *dom, "A"), "<virtual>");
  EXPECT_EQ(IdomName(g, *dom, "B"), "A");
  EXPECT_EQ(IdomName(g, *dom, "C"), "A");
  EXPECT_EQ(IdomName(g, *dom, "D"), "A");
  EXPECT_EQ(IdomName(g, *dom, "E"), "D");
  EXPECT_EQ(IdomName(g, *dom, "G"), "D");
  EXPECT_EQ(IdomName(g, *dom, "G.y"), "G");  // the output node
  EXPECT_TRUE(dom->Dominates(*g.FindNode("D"), *g.FindNode("G")));
  EXPECT_FALSE(dom->Dominates(*g.FindNode("B"), *g.FindNode("D")));
  EXPECT_TRUE(dom->Dominates(*g.FindNode("B"), *g.FindNode("B")));

  auto post = PostDominators(g);
  ASSERT_TRUE(post.ok());
  EXPECT_EQ(IdomName(g, *post, "A"), "D");
  EXPECT_EQ(IdomName(g, *post, "B"), "D");
  EXPECT_EQ(IdomName(g, *post, "D"), "G");
  EXPECT_EQ(IdomName(g, *post, "E"), "G");
  EXPECT_EQ(IdomName(g, *post, "G.y"), "<virtual>");

  auto parts = SinkDominators(g);
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(Names(g, *parts), (std::vector<std::string>{"A", "D", "G", "G.y"}));
}

TEST(DominatorsTest, DiamondAndForkJoin) {
  Graph d = testing::MakeDiamond();
  auto dom = Dominators(d);
  ASSERT_TRUE(dom.ok());
  EXPECT_EQ(IdomName(d, *dom, "d"), "a");
  EXPECT_EQ(IdomName(d, *dom, "b"), "a");
  // The weights hang off the virtual source; their edges do not bypass the activations.
  EXPECT_EQ(IdomName(d, *dom, "b.weight"), "<virtual>");
  EXPECT_EQ(IdomName(d, *dom, "a"), "x");
  auto parts = SinkDominators(d);
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(Names(d, *parts), (std::vector<std::string>{"x", "a", "d", "d.out"}));

  // With every edge counted, a MatMul's weight is a second way in, and nothing but the node itself
  // dominates it.
  DominatorOptions all_edges;
  all_edges.ignore_constant_edges = false;
  auto raw = Dominators(d, all_edges);
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(IdomName(d, *raw, "a"), "<virtual>");
  EXPECT_EQ(IdomName(d, *raw, "d"), "<virtual>");

  Graph fj = testing::MakeForkJoin(3, 2);
  auto fj_parts = SinkDominators(fj);
  ASSERT_TRUE(fj_parts.ok());
  EXPECT_EQ(Names(fj, *fj_parts), (std::vector<std::string>{"x", "fork", "join", "join.out"}));
  auto fj_post = PostDominators(fj);
  ASSERT_TRUE(fj_post.ok());
  EXPECT_EQ(IdomName(fj, *fj_post, "fork"), "join");
  EXPECT_EQ(IdomName(fj, *fj_post, "b1_0"), "b1_1");
  EXPECT_EQ(IdomName(fj, *fj_post, "b1_0.weight"), "b1_0");
}

TEST(DominatorsTest, ChainPartitionsAtEveryOp) {
  Graph g = testing::MakeChain(5);
  auto parts = SinkDominators(g);
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(Names(g, *parts),
            (std::vector<std::string>{"x", "op0", "op1", "op2", "op3", "op4", "op4.out"}));
}

TEST(DominatorsTest, SeveralInputsAndOutputs) {
  // x1 -> p, x2 -> q, {p, q} -> r -> {s -> out1, t -> out2}
  Graph g("multi");
  TensorId x1 = g.node(g.AddInput("x1", DType::kF32, {4})).outputs[0];
  TensorId x2 = g.node(g.AddInput("x2", DType::kF32, {4})).outputs[0];
  auto op = [&](const std::string& name, std::vector<TensorId> ins) {
    return hx::testing::AddVectorOp(g, "Add", name, std::move(ins));
  };
  TensorId p = op("p", {x1});
  TensorId q = op("q", {x2});
  TensorId r = op("r", {p, q});
  TensorId s = op("s", {r});
  TensorId t = op("t", {r});
  g.AddOutput(s);
  g.AddOutput(t);
  auto dom = Dominators(g);
  ASSERT_TRUE(dom.ok());
  EXPECT_EQ(IdomName(g, *dom, "r"), "<virtual>");
  EXPECT_EQ(IdomName(g, *dom, "p"), "x1");
  EXPECT_EQ(IdomName(g, *dom, "s"), "r");
  auto post = PostDominators(g);
  ASSERT_TRUE(post.ok());
  EXPECT_EQ(IdomName(g, *post, "p"), "r");
  EXPECT_EQ(IdomName(g, *post, "x2"), "q");
  EXPECT_EQ(IdomName(g, *post, "r"), "<virtual>");
  auto parts = SinkDominators(g);
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(Names(g, *parts), (std::vector<std::string>{"r"}));
}

TEST(DominatorsTest, SideInputTableBesideTheFlowWithMainInputOnly) {
  // x -> l1 -> l2 -> l3 (output); a side input pos -> table, read by every layer (rotary tables
  // of LLaMA). Counting every input, the table is a way around each layer: only l3 dominates the
  // sink. With main_input_only the table sits beside the flow and every layer is a boundary.
  Graph g("side");
  TensorId x = g.node(g.AddInput("x", DType::kF32, {4})).outputs[0];
  TensorId pos = g.node(g.AddInput("pos", DType::kF32, {4})).outputs[0];
  auto op = [&](const std::string& name, std::vector<TensorId> ins) {
    return hx::testing::AddVectorOp(g, "Add", name, std::move(ins));
  };
  TensorId table = op("table", {pos});
  TensorId l1 = op("l1", {x, table});
  TensorId l2 = op("l2", {l1, table});
  g.AddOutput(op("l3", {l2, table}));
  auto all = SinkDominators(g);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(Names(g, *all), (std::vector<std::string>{"l3", "l3.y"}));
  DominatorOptions options;
  options.main_input_only = true;
  auto main = SinkDominators(g, options);
  ASSERT_TRUE(main.ok());
  EXPECT_EQ(Names(g, *main), (std::vector<std::string>{"x", "l1", "l2", "l3", "l3.y"}));
}

TEST(DominatorsTest, CyclicGraphIsAnError) {
  Graph g("cyclic");
  TensorId a = g.AddTensor("a", DType::kF32, {4});
  TensorId b = g.AddTensor("b", DType::kF32, {4});
  g.AddOp("Relu", "p", {a}, {b});
  g.AddOp("Relu", "q", {b}, {a});
  EXPECT_FALSE(Dominators(g).ok());
  EXPECT_FALSE(PostDominators(g).ok());
  EXPECT_FALSE(SinkDominators(g).ok());
}

// ---- Property test against the definition: a dominates b iff every path from the virtual source
// to b passes through a, i.e. removing a disconnects b.

// The flow the analysis uses: all edges, or without those from nodes no input reaches into nodes an
// input reaches (recomputed here by BFS, independently of the library).
std::vector<std::vector<NodeId>> FlowPredecessors(const Graph& g, bool ignore_constant_edges) {
  const size_t n = g.num_nodes();
  std::vector<bool> reached(n, false);
  std::queue<NodeId> queue;
  for (NodeId v : g.Inputs()) {
    reached[v.index()] = true;
    queue.push(v);
  }
  while (!queue.empty()) {
    NodeId v = queue.front();
    queue.pop();
    for (NodeId s : g.successors(v))
      if (!reached[s.index()]) {
        reached[s.index()] = true;
        queue.push(s);
      }
  }
  const bool filter = ignore_constant_edges && !g.Inputs().empty();
  std::vector<std::vector<NodeId>> preds(n);
  for (size_t v = 0; v < n; ++v)
    for (NodeId p : g.predecessors(NodeId(v)))
      if (!filter || reached[p.index()] || !reached[v]) preds[v].push_back(p);
  return preds;
}

// reach[b] when b is reachable from the virtual root without passing `removed`. `preds` defines the
// flow; roots are nodes without predecessors.
std::vector<bool> ReachWithout(const std::vector<std::vector<NodeId>>& preds, size_t removed) {
  const size_t n = preds.size();
  std::vector<std::vector<size_t>> succ(n);
  for (size_t v = 0; v < n; ++v)
    for (NodeId p : preds[v]) succ[p.index()].push_back(v);
  std::vector<bool> reach(n, false);
  std::queue<size_t> queue;
  for (size_t v = 0; v < n; ++v)
    if (preds[v].empty() && v != removed) {
      reach[v] = true;
      queue.push(v);
    }
  while (!queue.empty()) {
    size_t v = queue.front();
    queue.pop();
    for (size_t s : succ[v])
      if (s != removed && !reach[s]) {
        reach[s] = true;
        queue.push(s);
      }
  }
  return reach;
}

void ExpectMatchesDefinition(const Graph& g, const DominatorTree& tree,
                             const std::vector<std::vector<NodeId>>& preds,
                             const std::string& what) {
  const size_t n = g.num_nodes();
  ASSERT_EQ(tree.idom.size(), n);
  for (size_t a = 0; a < n; ++a) {
    std::vector<bool> reach = ReachWithout(preds, a);
    for (size_t b = 0; b < n; ++b) {
      const bool expected = (a == b) || !reach[b];
      ASSERT_EQ(tree.Dominates(NodeId(a), NodeId(b)), expected)
          << what << " " << g.name() << ": " << g.node(NodeId(a)).name << " dominates "
          << g.node(NodeId(b)).name;
    }
  }
}

// Random DAG with several inputs, weights, weight-only subexpressions and several outputs.
Graph MakeMessyDag(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Graph g("messy" + std::to_string(seed));
  std::vector<TensorId> pool;
  const int inputs = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < inputs; ++i)
    pool.push_back(g.node(g.AddInput("in" + std::to_string(i), DType::kF32, {2})).outputs[0]);
  std::vector<int> uses;
  for (int i = 0; i < n; ++i) {
    if (rng() % 4 == 0) {
      pool.push_back(g.node(g.AddWeight("w" + std::to_string(i), DType::kF32, {2})).outputs[0]);
      continue;
    }
    std::vector<TensorId> ins;
    const int fan_in = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < fan_in; ++k) {
      size_t lo = pool.size() > 8 ? pool.size() - 8 : 0;
      TensorId t = pool[lo + rng() % (pool.size() - lo)];
      if (std::find(ins.begin(), ins.end(), t) == ins.end()) ins.push_back(t);
    }
    const std::string name = "op" + std::to_string(i);
    pool.push_back(
        g.node(g.AddOpWithOutputs("Add", name, ins, {{name + ".y", DType::kF32, {2}}})).outputs[0]);
  }
  for (TensorId t : pool)
    if (g.tensor(t).consumers.empty() && rng() % 3 != 0) g.AddOutput(t);
  return g;
}

TEST(DominatorsTest, MatchBruteForceOnRandomDags) {
  std::vector<Graph> graphs;
  for (uint64_t seed = 1; seed <= 12; ++seed) graphs.push_back(testing::MakeRandomDag(18, seed));
  for (uint64_t seed = 1; seed <= 25; ++seed) graphs.push_back(MakeMessyDag(30, seed));
  for (const Graph& g : graphs) {
    ASSERT_TRUE(g.Validate().ok()) << g.Validate().ToString();
    for (bool ignore : {true, false}) {
      DominatorOptions options;
      options.ignore_constant_edges = ignore;
      auto dom = Dominators(g, options);
      ASSERT_TRUE(dom.ok());
      ExpectMatchesDefinition(g, *dom, FlowPredecessors(g, ignore),
                              ignore ? "dominators" : "dominators(all edges)");
    }
    // Post-dominators: the definition on the reversed graph.
    std::vector<std::vector<NodeId>> succs(g.num_nodes());
    for (size_t v = 0; v < g.num_nodes(); ++v) succs[v] = g.successors(NodeId(v));
    auto post = PostDominators(g);
    ASSERT_TRUE(post.ok());
    ExpectMatchesDefinition(g, *post, succs, "post-dominators");

    // The sink's dominators: the nodes whose removal cuts every output from the virtual source.
    auto parts = SinkDominators(g);
    ASSERT_TRUE(parts.ok());
    std::vector<NodeId> sinks = g.Outputs();
    if (sinks.empty()) {
      for (NodeId v : g.NodeIds())
        if (g.successors(v).empty()) sinks.push_back(v);
    }
    const auto preds = FlowPredecessors(g, true);
    std::vector<NodeId> expected;
    auto order = TopologicalOrder(g);
    ASSERT_TRUE(order.ok());
    for (NodeId a : *order) {
      std::vector<bool> reach = ReachWithout(preds, a.index());
      bool cuts = true;
      for (NodeId s : sinks) cuts = cuts && (s == a || !reach[s.index()]);
      if (cuts) expected.push_back(a);
    }
    EXPECT_EQ(Names(g, *parts), Names(g, expected)) << g.name();
  }
}

TEST(DominatorsTest, PipeDreamProfiles) {
  const std::string root = testing::SharedDataDir() + "/placement/pipedream";
  // name -> {layers, edges} from PROVENANCE.md.
  const std::map<std::string, std::pair<size_t, size_t>> counts = {{"alexnet", {23, 23}},
                                                                   {"vgg16", {41, 41}},
                                                                   {"squeezenet1_0", {68, 76}},
                                                                   {"resnet18", {71, 79}},
                                                                   {"resnet50", {177, 193}},
                                                                   {"resnext50", {177, 193}},
                                                                   {"inception_v3", {326, 362}},
                                                                   {"resnet101", {347, 380}},
                                                                   {"resnext101", {347, 380}},
                                                                   {"densenet121", {429, 487}},
                                                                   {"nasnetamobile", {921, 1078}},
                                                                   {"nasnetalarge", {1251, 1468}},
                                                                   {"gnmt", {48, 58}},
                                                                   {"gnmt_large", {96, 122}}};
  size_t seen = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().filename() != "graph.txt") continue;
    const std::string model = entry.path().parent_path().filename();
    auto profile = ReadPipeDreamGraphFile(entry.path().string());
    ASSERT_TRUE(profile.ok()) << profile.status().ToString();
    const Graph& g = profile->graph;
    ASSERT_TRUE(counts.count(model)) << model;
    EXPECT_EQ(profile->layers.size(), counts.at(model).first) << model;
    EXPECT_EQ(profile->edges.size(), counts.at(model).second) << model;
    ++seen;

    auto dom = Dominators(g);
    ASSERT_TRUE(dom.ok());
    auto post = PostDominators(g);
    ASSERT_TRUE(post.ok());
    auto parts = SinkDominators(g);
    ASSERT_TRUE(parts.ok());
    // Each partition point cuts the graph: every op lies before or after it, and every edge that
    // crosses it leaves from the point itself (a single-tensor hand-over, as SortingHat needs).
    auto order = TopologicalOrder(g);
    std::vector<size_t> pos(g.num_nodes());
    for (size_t i = 0; i < order->size(); ++i) pos[(*order)[i].index()] = i;
    for (NodeId p : *parts) {
      for (const Edge& e : g.Edges()) {
        if (pos[e.src.index()] < pos[p.index()] && pos[e.dst.index()] > pos[p.index()]) {
          ADD_FAILURE() << model << ": edge " << g.node(e.src).name << " -> " << g.node(e.dst).name
                        << " bypasses partition point " << g.node(p).name;
        }
      }
    }
    if (model == "vgg16" || model == "alexnet") {
      // Chains, except that the flatten reads the pooled tensor twice (Size -> View, and directly):
      // every layer and the output node is a partition point but the Size layer.
      std::vector<std::string> expected;
      for (NodeId v : *order)
        if (g.node(v).op_type != "Size") expected.push_back(g.node(v).name);
      EXPECT_EQ(Names(g, *parts), expected) << model;
      EXPECT_EQ(g.node(parts->front()).kind, NodeKind::kInput);
    }
    if (model == "resnet50") {
      // One point per residual block join at least (16 bottleneck blocks) and far fewer than the
      // layers; the brute-force check on the whole graph agrees.
      EXPECT_GE(parts->size(), 16u);
      EXPECT_LT(parts->size(), 177u / 2);
      ExpectMatchesDefinition(g, *dom, FlowPredecessors(g, true), "resnet50");
    }
  }
  EXPECT_EQ(seen, counts.size());
}

TEST(DominatorsTest, PipeDreamReaderRejectsBadInput) {
  auto bad = [](const std::string& text) {
    auto r = ReadPipeDreamGraph(text, "g.txt");
    EXPECT_FALSE(r.ok()) << text;
    return r.ok() ? std::string() : r.status().message();
  };
  const std::string ok_line =
      "node1 -- Input0 -- forward_compute_time=0.0, backward_compute_time=0.0, "
      "activation_size=4.0, parameter_size=0.0\n";
  EXPECT_NE(bad(ok_line + "node2 -- Conv2d(1) -- forward_compute_time=-1, "
                          "backward_compute_time=0, activation_size=1, parameter_size=0\n")
                .find("g.txt:2: forward_compute_time"),
            std::string::npos);
  EXPECT_NE(bad(ok_line + "\tnode1 -- node9\n").find("g.txt:2: edge to unknown layer 'node9'"),
            std::string::npos);
  EXPECT_NE(bad(ok_line + "node2 -- Relu\n").find("g.txt:2:"), std::string::npos);
  EXPECT_NE(bad(ok_line + ok_line).find("duplicate layer"), std::string::npos);
}

}  // namespace
}  // namespace hx::graph
