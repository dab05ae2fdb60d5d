#include "hexplan/exec/tp_runner.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "hexplan/exec/thread_communicator.h"
#include "hexplan/tp/tp_system.h"

namespace hx::exec {
namespace {

// A small GPT from the zoo's config type: 2 layers, d = 64, 4 heads, FFN 256.
graph::TransformerConfig TpTestConfig() {
  graph::TransformerConfig c;
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.ffn_hidden = 256;
  c.vocab = 256;
  return c;
}

constexpr int64_t kTpTestBatch = 4, kTpTestSeq = 8;

// `hexplan tp`'s planner on 4 one-node ranks; `gpus` sets their capabilities (AsymGroup splits
// the batch and the weights by them).
tp::TpResult TpTestPlan(const TpGptModel& model, tp::TpMethod method, std::vector<int> gpus,
                        int groups) {
  tp::TpSystem system = tp::MakeUniformSystem(gpus, tp::A100Sxm80Spec(), "fp32");
  tp::TpOptions options;
  options.method = method;
  options.groups = groups;
  options.best_of_layouts = false;  // keep the method's own layout
  tp::LlmWorkload workload;
  workload.batch = kTpTestBatch;
  workload.input_len = kTpTestSeq;
  workload.output_len = 1;
  auto plan = tp::PlanTensorParallel(system, model.Shape(), workload, options);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return *plan;
}

// Runs `plan` on a thread world of its node count; every rank's output.
std::vector<std::vector<float>> TpTestRun(const TpGptModel& model, const tp::TpResult& plan,
                                          const std::vector<float>& input, Status* status) {
  const int ranks = static_cast<int>(plan.plan.nodes.size());
  ThreadWorld world(ranks);
  std::vector<std::vector<float>> outputs(static_cast<size_t>(ranks));
  TpRunRequest request{&model, &plan, &input, kTpTestBatch, kTpTestSeq};
  *status = world.Run([&](Communicator& comm) -> Status {
    HX_ASSIGN_OR_RETURN(outputs[static_cast<size_t>(comm.rank())],
                        RunTensorParallel(request, comm));
    return Status::Ok();
  });
  return outputs;
}

struct TpLayoutCase {
  std::string name;
  tp::TpMethod method;
  std::vector<int> gpus;
  int groups;
};

void PrintTo(const TpLayoutCase& c, std::ostream* os) { *os << c.name; }

class TpRunnerTest : public ::testing::TestWithParam<TpLayoutCase> {};

TEST_P(TpRunnerTest, MatchesTheOneProcessForward) {
  const TpLayoutCase& c = GetParam();
  auto model = MakeSeededGpt(TpTestConfig(), 7);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const std::vector<float> input = SeededHiddenStates(kTpTestBatch, kTpTestSeq, 64, 11);
  auto reference = ReferenceGptForward(*model, input, kTpTestBatch, kTpTestSeq);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  const tp::TpResult plan = TpTestPlan(*model, c.method, c.gpus, c.groups);
  ASSERT_EQ(plan.layout, c.method);
  Status status;
  auto outputs = TpTestRun(*model, plan, input, &status);
  ASSERT_TRUE(status.ok()) << status.ToString();
  for (size_t r = 0; r < outputs.size(); ++r)
    EXPECT_LE(TpRelativeError(outputs[r], *reference), 1e-5) << "rank " << r;
  // A wrong weight block would not pass: the check above is not vacuous.
  std::vector<float> off = *reference;
  off[5] += 0.01f;
  EXPECT_GT(TpRelativeError(off, *reference), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, TpRunnerTest,
    ::testing::Values(
        TpLayoutCase{"megatron", tp::TpMethod::kMegatron, {1, 1, 1, 1}, 0},
        TpLayoutCase{"autoddl", tp::TpMethod::kAutoDdl, {1, 1, 1, 1}, 0},
        // Uneven nodes, two groups: uneven batch slices, row blocks and column pieces.
        TpLayoutCase{"asymgroup", tp::TpMethod::kAsymGroup, {1, 1, 2, 3}, 2}),
    [](const ::testing::TestParamInfo<TpLayoutCase>& info) { return info.param.name; });

TEST(TpRunnerPlanTest, TheLayoutsUseTheirGroupsAndSlices) {
  auto model = MakeSeededGpt(TpTestConfig(), 7);
  ASSERT_TRUE(model.ok());
  const tp::TpResult autoddl = TpTestPlan(*model, tp::TpMethod::kAutoDdl, {1, 1, 1, 1}, 0);
  EXPECT_EQ(autoddl.grouping.k(), 2);  // a 2 x 2 grid
  const tp::TpResult asym = TpTestPlan(*model, tp::TpMethod::kAsymGroup, {1, 1, 2, 3}, 2);
  EXPECT_EQ(asym.grouping.k(), 2);
  EXPECT_NE(asym.plan.nodes[0].batch_end - asym.plan.nodes[0].batch_begin,
            asym.plan.nodes[3].batch_end - asym.plan.nodes[3].batch_begin);
}

TEST(TpRunnerPlanTest, RefusesPlansThatDoNotFitTheRun) {
  auto model = MakeSeededGpt(TpTestConfig(), 7);
  ASSERT_TRUE(model.ok());
  const std::vector<float> input = SeededHiddenStates(kTpTestBatch, kTpTestSeq, 64, 11);
  tp::TpResult plan = TpTestPlan(*model, tp::TpMethod::kAutoDdl, {1, 1, 1, 1}, 0);
  TpRunRequest request{&*model, &plan, &input, kTpTestBatch, kTpTestSeq};
  Status s = ValidateTpRun(request, 3);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("3 ranks"), std::string::npos) << s.message();

  tp::TpResult broken = plan;
  broken.plan.nodes[1].blocks[0].row_end -= 1;  // qkv rows no longer tile the group's share
  request.plan = &broken;
  s = ValidateTpRun(request, 4);
  EXPECT_NE(s.message().find("qkv"), std::string::npos) << s.message();

  // Megatron over 3 ranks cannot split 4 heads into whole heads.
  tp::TpResult three = TpTestPlan(*model, tp::TpMethod::kMegatron, {1, 1, 1}, 0);
  request.plan = &three;
  s = ValidateTpRun(request, 3);
  EXPECT_NE(s.message().find("whole heads"), std::string::npos) << s.message();

  // An error on every rank ends the run with it; no rank hangs.
  request.plan = &broken;
  ThreadWorld world(4);
  s = world.Run([&](Communicator& comm) { return RunTensorParallel(request, comm).status(); });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hx::exec
