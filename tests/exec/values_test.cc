#include "hexplan/exec/values.h"

#include <gtest/gtest.h>

#include "hexplan/graph/graph.h"

namespace hx::exec {
namespace {

// Two graph inputs, "a" [2,3] and "b" [4], added into one output.
graph::Graph TwoInputs() {
  graph::Graph g("two-inputs");
  TensorId a = g.node(g.AddInput("a", graph::DType::kF32, {2, 3})).outputs[0];
  TensorId b = g.node(g.AddInput("b", graph::DType::kF32, {4})).outputs[0];
  NodeId op = g.AddOpWithOutputs("Concat", "cat", {a, b}, {{"y", graph::DType::kF32, {10}}});
  g.AddOutput(g.node(op).outputs[0]);
  return g;
}

TEST(DiagnoseInputsTest, RandomInputsAreComplete) {
  const graph::Graph g = TwoInputs();
  const InputCheck check = DiagnoseInputs(g, RandomInputs(g, 1));
  EXPECT_EQ(check.problem, InputProblem::kNone);
  EXPECT_TRUE(check.status.ok());
  EXPECT_TRUE(CheckInputs(g, RandomInputs(g, 1)).ok());
}

TEST(DiagnoseInputsTest, SaysWhichKindOfProblemComesFirst) {
  const graph::Graph g = TwoInputs();
  std::map<std::string, HostTensor> inputs = RandomInputs(g, 1);
  inputs.erase("b");
  InputCheck check = DiagnoseInputs(g, inputs);
  EXPECT_EQ(check.problem, InputProblem::kMissing);
  EXPECT_EQ(check.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(check.status.message().find("'b'"), std::string::npos) << check.status.message();

  // In graph.Inputs() order: "a" of the wrong shape comes before the missing "b".
  inputs["a"] = HostTensor(graph::DType::kF32, {3, 2});
  check = DiagnoseInputs(g, inputs);
  EXPECT_EQ(check.problem, InputProblem::kWrongType);
  EXPECT_NE(check.status.message().find("'a'"), std::string::npos) << check.status.message();

  inputs = RandomInputs(g, 1);
  inputs["c"] = HostTensor(graph::DType::kF32, {1});
  check = DiagnoseInputs(g, inputs);
  EXPECT_EQ(check.problem, InputProblem::kNotAnInput);
  EXPECT_NE(check.status.message().find("'c'"), std::string::npos) << check.status.message();
  // CheckGraphInputsGiven does not look at extra names; CheckInputs does.
  EXPECT_TRUE(CheckGraphInputsGiven(g, inputs).ok());
  EXPECT_EQ(CheckInputs(g, inputs).message(), check.status.message());
}

}  // namespace
}  // namespace hx::exec
