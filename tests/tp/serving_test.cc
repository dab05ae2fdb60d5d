#include "hexplan/tp/serving.h"

#include <gtest/gtest.h>

#include "hexplan/graph/zoo.h"

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

TEST(ServingTest, IdleAndLoaded) {
  AnIdleServerServesEachRequestAlone();
  LoadBatchesRequestsAndRaisesTheTail();
}

}  // namespace
}  // namespace hx::tp
