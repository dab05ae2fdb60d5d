#include "testing/graph_builders.h"

#include <algorithm>
#include <random>

#include "hexplan/core/status.h"
#include "hexplan/graph/zoo.h"

namespace hx::testing {
namespace {
using graph::DType;
using graph::Graph;

TensorId MatMulLayer(Graph& g, TensorId in, const std::string& name, int64_t rows, int64_t width) {
  NodeId w = g.AddWeight(name + ".weight", DType::kF32, {width, width});
  NodeId op = g.AddOpWithOutputs("MatMul", name, {in, g.node(w).outputs[0]},
                                 {{name + ".out", DType::kF32, {rows, width}}});
  return g.node(op).outputs[0];
}
}  // namespace

graph::Graph MakeChain(int n, int64_t width, int64_t rows) {
  Graph g("chain" + std::to_string(n));
  TensorId t = g.node(g.AddInput("x", DType::kF32, {rows, width})).outputs[0];
  for (int i = 0; i < n; ++i) t = MatMulLayer(g, t, "op" + std::to_string(i), rows, width);
  g.AddOutput(t);
  return g;
}

graph::Graph MakeDiamond(int64_t width) {
  Graph g("diamond");
  const int64_t rows = 8;
  TensorId x = g.node(g.AddInput("x", DType::kF32, {rows, width})).outputs[0];
  TensorId a = MatMulLayer(g, x, "a", rows, width);
  TensorId b = MatMulLayer(g, a, "b", rows, width);
  TensorId c = MatMulLayer(g, a, "c", rows, width);
  NodeId d = g.AddOpWithOutputs("Add", "d", {b, c}, {{"d.out", DType::kF32, {rows, width}}});
  g.AddOutput(g.node(d).outputs[0]);
  return g;
}

graph::Graph MakeForkJoin(int branches, int depth, int64_t width) {
  Graph g("forkjoin");
  const int64_t rows = 8;
  TensorId x = g.node(g.AddInput("x", DType::kF32, {rows, width})).outputs[0];
  TensorId fork = MatMulLayer(g, x, "fork", rows, width);
  std::vector<TensorId> ends;
  for (int b = 0; b < branches; ++b) {
    TensorId t = fork;
    for (int d = 0; d < depth; ++d)
      t = MatMulLayer(g, t, "b" + std::to_string(b) + "_" + std::to_string(d), rows, width);
    ends.push_back(t);
  }
  NodeId join = g.AddOpWithOutputs("Sum", "join", ends, {{"join.out", DType::kF32, {rows, width}}});
  g.AddOutput(g.node(join).outputs[0]);
  return g;
}

graph::Graph MakeRandomDag(int n, uint64_t seed, int64_t width) {
  Graph g("random" + std::to_string(n) + "_" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t rows = 4;
  std::vector<TensorId> produced;
  produced.push_back(g.node(g.AddInput("x", DType::kF32, {rows, width})).outputs[0]);
  std::vector<int> uses(1, 0);
  for (int i = 0; i < n; ++i) {
    std::string name = "n" + std::to_string(i);
    int fan_in = 1 + static_cast<int>(rng() % 3);
    std::vector<TensorId> ins;
    for (int k = 0; k < fan_in; ++k) {
      // Prefer recent tensors so the DAG has depth.
      size_t lo = produced.size() > 6 ? produced.size() - 6 : 0;
      size_t pick = lo + rng() % (produced.size() - lo);
      if (std::find(ins.begin(), ins.end(), produced[pick]) == ins.end()) {
        ins.push_back(produced[pick]);
        uses[pick]++;
      }
    }
    TensorId out;
    if (ins.size() == 1 || rng() % 2 == 0) {
      out = MatMulLayer(g, ins[0], name, rows, width);
      if (ins.size() > 1) {
        ins[0] = out;
        NodeId add = g.AddOpWithOutputs("Sum", name + ".sum", ins,
                                        {{name + ".sum.out", DType::kF32, {rows, width}}});
        out = g.node(add).outputs[0];
      }
    } else {
      NodeId add =
          g.AddOpWithOutputs("Sum", name, ins, {{name + ".out", DType::kF32, {rows, width}}});
      out = g.node(add).outputs[0];
    }
    produced.push_back(out);
    uses.push_back(0);
  }
  // Every tensor nobody reads becomes an output, so there are no dead ends.
  for (size_t i = 1; i < produced.size(); ++i)
    if (uses[i] == 0) g.AddOutput(produced[i]);
  return g;
}

TensorId AddVectorOp(graph::Graph& g, const std::string& type, const std::string& name,
                     std::vector<TensorId> inputs) {
  return g
      .node(g.AddOpWithOutputs(type, name, std::move(inputs),
                               {{name + ".y", graph::DType::kF32, {4}}}))
      .outputs[0];
}

graph::Graph MakeZooLstm(int64_t layers, int64_t seq, int64_t batch) {
  graph::ZooOptions zoo;
  zoo.lstm_layers = layers;
  zoo.seq = seq;
  zoo.batch = batch;
  auto g = graph::BuildZooModel("lstm", zoo);
  HX_CHECK(g.ok());
  return std::move(g).value();
}

graph::Graph MakeSortingHatFig6() {
  graph::Graph g("fig6");
  TensorId a = g.node(g.AddInput("A", graph::DType::kF32, {4})).outputs[0];
  auto op = [&](const std::string& name, std::vector<TensorId> ins) {
    return AddVectorOp(g, "Relu", name, std::move(ins));
  };
  TensorId b = op("B", {a});
  TensorId c = op("C", {a});
  TensorId d = op("D", {b, c});
  TensorId e = op("E", {d});
  TensorId f = op("F", {d});
  g.AddOutput(op("G", {e, f}));
  return g;
}

}  // namespace hx::testing
