#include "hexplan/tp/serving.h"

#include <gtest/gtest.h>

#include "hexplan/graph/zoo.h"
#include "hexplan/hw/presets.h"

namespace hx::tp {
namespace {

struct Server {
  TpSystem sys = MakeUniformSystem({4}, A100Sxm80Spec(), "fp16");
  LlmShape shape = ShapeFromConfig("gpt3-6.7b", *graph::ZooTransformerConfig("gpt3-6.7b"), 2);
  LlmWorkload wl;
  TpOptions options;
  Server() {
    wl.batch = 16;
    wl.input_len = 128;
    wl.output_len = 16;
    options.method = TpMethod::kMegatron;
  }
};

void AnIdleServerServesEachRequestAlone() {
  Server s;
  ServingOptions o;
  o.rate = 0.01;  // one request every 100 s: no request ever waits or shares a batch
  o.requests = 20;
  auto r = SimulateServing(s.sys, s.shape, s.wl, s.options, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  LlmWorkload one = s.wl;
  one.batch = 1;
  one.kv_batch = 16;
  auto alone = PlanTensorParallel(s.sys, s.shape, one, s.options);
  ASSERT_TRUE(alone.ok());
  EXPECT_NEAR(r->ttft_s.p50, alone->prefill_s, 1e-9);
  EXPECT_NEAR(r->ttft_s.p99, alone->prefill_s, 1e-9);
  EXPECT_NEAR(r->tpot_s.p50, alone->per_token_s, 1e-9);
  EXPECT_NEAR(r->latency_s.p50, alone->prefill_s + 15 * alone->per_token_s, 1e-9);
  EXPECT_DOUBLE_EQ(r->mean_running, 1.0);
}

void LoadBatchesRequestsAndRaisesTheTail() {
  Server s;
  ServingOptions low, high;
  low.rate = 0.01;
  high.rate = 500;  // far beyond what one batch of 16 drains: a queue builds
  low.requests = high.requests = 100;
  auto a = SimulateServing(s.sys, s.shape, s.wl, s.options, low);
  auto b = SimulateServing(s.sys, s.shape, s.wl, s.options, high);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT(b->mean_running, 4.0);
  EXPECT_LE(b->mean_running, 16.0);
  EXPECT_GT(b->ttft_s.p99, 5 * a->ttft_s.p99);
  EXPECT_GE(b->ttft_s.p99, b->ttft_s.p50);
  EXPECT_GE(b->latency_s.p99, b->latency_s.p50);
  ServingOptions bad;
  bad.rate = -1;
  EXPECT_FALSE(SimulateServing(s.sys, s.shape, s.wl, s.options, bad).ok());
}

// The server runs the layout planned for the batch limit at every running batch: an AsymGroup
// plan that reduced to Megatron's ring serves exactly as Megatron (replanning each batch size
// picked other groupings and served faster than the plan shown), and a planned layout timed at
// the planned batch is the plan's own times.
void ServingRunsThePlannedLayout() {
  TpSystem sys = *TpSystemFromCluster(*hw::LoadCluster("asym:S8"), "fp16");
  LlmShape shape = ShapeFromConfig("gpt3-175b", *graph::ZooTransformerConfig("gpt3-175b"), 2);
  LlmWorkload wl;
  wl.batch = 200;
  wl.input_len = 128;
  wl.output_len = 128;
  TpOptions megatron, asym;
  megatron.method = TpMethod::kMegatron;
  asym.method = TpMethod::kAsymGroup;
  auto planned = PlanTensorParallel(sys, shape, wl, asym);
  ASSERT_TRUE(planned.ok()) << planned.status().ToString();
  ASSERT_TRUE(planned->reduced());
  ASSERT_EQ(planned->layout, TpMethod::kMegatron);
  ServingOptions o;
  o.rate = 1;
  auto a = SimulateServing(sys, shape, wl, asym, o);
  auto m = SimulateServing(sys, shape, wl, megatron, o);
  ASSERT_TRUE(a.ok() && m.ok());
  EXPECT_DOUBLE_EQ(a->latency_s.p50, m->latency_s.p50);
  EXPECT_DOUBLE_EQ(a->ttft_s.p99, m->ttft_s.p99);
  auto layout = PlannedLayout::Plan(sys, shape, wl, asym);
  ASSERT_TRUE(layout.ok());
  auto at_plan = layout->At(wl.batch);
  ASSERT_TRUE(at_plan.ok());
  EXPECT_DOUBLE_EQ(at_plan->total_s(), planned->total_s());
  TpOptions ideal;
  ideal.method = TpMethod::kIdeal;
  EXPECT_FALSE(PlannedLayout::Plan(sys, shape, wl, ideal).ok());
}

TEST(ServingTest, IdleAndLoaded) {
  AnIdleServerServesEachRequestAlone();
  LoadBatchesRequestsAndRaisesTheTail();
  ServingRunsThePlannedLayout();
}

}  // namespace
}  // namespace hx::tp
