#include "hexplan/tp/llm_tp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace hx::tp {
namespace {

LlmShape Gpt3() {
  LlmShape s;
  s.name = "gpt3-175b";
  s.layers = 96;
  s.hidden = 12288;
  s.heads = 96;
  s.ffn_hidden = 4 * 12288;
  s.vocab = 50257;
  return s;
}

LlmShape Small() {
  LlmShape s;
  s.name = "small";
  s.layers = 2;
  s.hidden = 1024;
  s.heads = 16;
  s.ffn_hidden = 4096;
  s.vocab = 1000;
  return s;
}

// Table 1: S<x> has x two-GPU nodes and 16-x one-GPU nodes.
TpSystem TableOneSystem(int two_gpu_nodes) {
  std::vector<int> gpus(16, 1);
  for (int i = 0; i < two_gpu_nodes; ++i) gpus[i] = 2;
  return MakeUniformSystem(gpus, A100Sxm80Spec(), "fp16");
}

TpOptions Options(TpMethod m) {
  TpOptions o;
  o.method = m;
  o.check_memory = false;
  return o;
}

TEST(LlmTpTest, ParameterCountMatchesGpt3) {
  EXPECT_NEAR(Gpt3().ParameterCount() / 1e9, 174.6, 0.5);
  EXPECT_NEAR(Gpt3().KvBytesPerToken(), 96 * 2 * 12288 * 2, 1e-6);
}

TEST(LlmTpTest, VolumeOrderingOverNodeCounts) {
  // Fig. 8 (one GPU per node): AsymGroup <= AutoDDL <= Megatron, ideal <= AsymGroup-ish.
  double sum_red_meg = 0, sum_red_auto = 0;
  int count = 0;
  for (int n = 2; n <= 64; n += (n < 16 ? 1 : 5)) {
    std::vector<double> caps(n, 1.0);
    double meg = *CommVolumeFraction(TpMethod::kMegatron, caps, n);
    double aut = *CommVolumeFraction(TpMethod::kAutoDdl, caps, n);
    double asy = *CommVolumeFraction(TpMethod::kAsymGroup, caps, n);
    double ide = *CommVolumeFraction(TpMethod::kIdeal, caps, n);
    EXPECT_LE(asy, aut + 1e-12) << n;
    EXPECT_LE(aut, meg + 1e-12) << n;  // per linear: 2D AG+RS vs half a 1D all-reduce (eq. 1)
    EXPECT_LE(ide, asy + 1e-9) << n;
    sum_red_meg += 1 - asy / meg;
    sum_red_auto += 1 - asy / aut;
    ++count;
  }
  EXPECT_GT(sum_red_meg / count, 0.4);
  EXPECT_GT(sum_red_auto / count, 0.05);
  EXPECT_EQ(AutoDdlGridRows(38), 2);
  EXPECT_EQ(AutoDdlGridRows(16), 4);
  EXPECT_EQ(AutoDdlGridRows(37), 1);
}

TEST(LlmTpTest, SymmetricClusterAsymGroupMatchesAutoDdlVolume) {
  TpSystem sys = TableOneSystem(16);  // S16: every node has two GPUs
  LlmWorkload wl;
  TpOptions paper = Options(TpMethod::kAsymGroup);
  paper.best_of_layouts = false;  // the paper's layout (the default may reduce to a baseline's)
  auto a = PlanTensorParallel(sys, Gpt3(), wl, paper);
  auto d = PlanTensorParallel(sys, Gpt3(), wl, Options(TpMethod::kAutoDdl));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->k, 4);
  EXPECT_LE(a->comm_volume_bytes, d->comm_volume_bytes * (1 + 1e-9));
  // Equal nodes: same work per GPU, so compute time is equal.
  EXPECT_NEAR(a->decode_compute_s, d->decode_compute_s, 1e-9 * d->decode_compute_s);
}

TEST(LlmTpTest, AsymmetricClusterFavoursAsymGroup) {
  TpSystem sys = TableOneSystem(8);  // S8
  LlmWorkload wl;
  TpOptions paper = Options(TpMethod::kAsymGroup);
  paper.best_of_layouts = false;  // the paper's layout (the default may reduce to a baseline's)
  auto a = PlanTensorParallel(sys, Gpt3(), wl, paper);
  auto d = PlanTensorParallel(sys, Gpt3(), wl, Options(TpMethod::kAutoDdl));
  auto m = PlanTensorParallel(sys, Gpt3(), wl, Options(TpMethod::kMegatron));
  ASSERT_TRUE(a.ok() && d.ok() && m.ok());
  // AutoDDL gives a 1-GPU node the same work as a 2-GPU node: its compute is bound by 1/16 of the
  // work on one GPU; AsymGroup gives each GPU 1/24.
  EXPECT_NEAR(d->decode_compute_s / a->decode_compute_s, 24.0 / 16.0, 0.1);
  EXPECT_LT(a->total_s(), d->total_s());
  EXPECT_GT(a->per_token_s, 0.0);
  EXPECT_NEAR(a->per_token_s * wl.output_len, a->decode_s, 1e-12);
  EXPECT_LT(a->comm_volume_bytes, m->comm_volume_bytes);
}

TEST(LlmTpTest, DecodeLatencyGrowsWithOutputLength) {
  TpSystem sys = TableOneSystem(4);
  LlmWorkload w128, w2048;
  w2048.output_len = 2048;
  auto a = PlanTensorParallel(sys, Gpt3(), w128, Options(TpMethod::kAsymGroup));
  auto b = PlanTensorParallel(sys, Gpt3(), w2048, Options(TpMethod::kAsymGroup));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT(b->per_token_s, a->per_token_s);       // longer KV cache per step
  EXPECT_NEAR(b->prefill_s, a->prefill_s, 1e-12);  // same prompt
  EXPECT_NEAR(b->comm_volume_bytes, a->comm_volume_bytes, 1e-6);
}

TEST(LlmTpTest, PlanCoversEveryWeightOnceAndMatchesVolume) {
  std::vector<int> gpus = {1, 1, 2, 3, 3};
  TpSystem sys = MakeUniformSystem(gpus, A100Sxm80Spec(), "fp16");
  LlmShape s = Small();
  LlmWorkload wl;
  wl.batch = 20;
  TpOptions o = Options(TpMethod::kAsymGroup);
  o.groups = 2;
  auto r = PlanTensorParallel(sys, s, wl, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->plan.nodes.size(), 5u);
  // Batch slices partition [0, 20) proportionally to capability: 2,2,4,6,6.
  EXPECT_EQ(r->plan.nodes[2].batch_end - r->plan.nodes[2].batch_begin, 4);
  EXPECT_EQ(r->plan.nodes[4].batch_end - r->plan.nodes[4].batch_begin, 6);
  for (const auto& lin : DecoderLinears(s)) {
    int64_t area = 0;
    for (const auto& np : r->plan.nodes)
      for (const auto& b : np.blocks)
        if (b.layer == lin.name) area += (b.row_end - b.row_begin) * (b.col_end - b.col_begin);
    EXPECT_EQ(area, lin.in * lin.out) << lin.name;
    // GPU blocks tile each node's block.
    for (const auto& np : r->plan.nodes) {
      int64_t node_area = 0, gpu_area = 0;
      for (const auto& b : np.blocks)
        if (b.layer == lin.name) node_area += (b.row_end - b.row_begin) * (b.col_end - b.col_begin);
      for (const auto& g : np.gpus)
        for (const auto& b : g.blocks)
          if (b.layer == lin.name)
            gpu_area += (b.row_end - b.row_begin) * (b.col_end - b.col_begin);
      EXPECT_EQ(node_area, gpu_area);
    }
  }
  // The plan's reduce-scatter bytes of the busiest node match eq. 4 for fc1 (batch x out).
  int64_t max_rs = 0;
  for (const auto& np : r->plan.nodes) {
    int64_t rs = 0;
    for (const auto& snd : np.sends) {
      EXPECT_NE(snd.peer, np.node);
      if (snd.layer == "fc1" && snd.collective == "reduce-scatter") rs += snd.bytes;
      if (snd.collective == "reduce-scatter") {
        EXPECT_EQ(r->plan.nodes[snd.peer].group, np.group);  // intragroup only
      }
      if (snd.collective == "all-gather") {
        EXPECT_EQ(r->plan.nodes[snd.peer].group, (np.group + 1) % 2);  // ring neighbour
      }
    }
    max_rs = std::max(max_rs, rs);
  }
  AsymCost c = EvaluateAsymCost(r->capabilities, r->grouping, 1.0);
  EXPECT_NEAR(max_rs, c.reduce_scatter * wl.batch * s.ffn_hidden * 2, 2 * wl.batch * 2);
}

TEST(LlmTpTest, MegatronPlanSplitsEvenly) {
  TpSystem sys = MakeUniformSystem({2, 2}, A100Sxm80Spec(), "fp16");
  LlmWorkload wl;
  auto r = PlanTensorParallel(sys, Small(), wl, Options(TpMethod::kMegatron));
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->plan.nodes[0].gpus.size(), 2u);
  const auto& b = r->plan.nodes[1].gpus[1].blocks[0];  // 4th GPU's qkv block
  EXPECT_EQ(b.layer, "qkv");
  EXPECT_EQ(b.col_begin, 3 * 1024 * 3 / 4);
  EXPECT_EQ(b.col_end, 3 * 1024);
  EXPECT_EQ(b.row_end - b.row_begin, 1024);
  EXPECT_EQ(r->plan.nodes[0].blocks[0].col_end, 3 * 1024 / 2);  // node 0: its two GPUs' columns
  EXPECT_NEAR(r->comm_volume_bytes, 2 * 2 * 2 * 0.75 * 200 * 1024 * 2, 1);
  // Equal links (one GPU per node): equal shares, each GPU sends 2(G-1)/G of the activation per
  // all-reduce to its ring successor.
  TpSystem flat = MakeUniformSystem({1, 1, 1, 1}, A100Sxm80Spec(), "fp16");
  auto f = PlanTensorParallel(flat, Small(), wl, Options(TpMethod::kMegatron));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->plan.nodes[0].bytes_sent_per_layer, 2 * (200 * 1024 * 2 * 6 / 4));
  ASSERT_EQ(f->plan.nodes[0].sends.size(), 2u);
  EXPECT_EQ(f->plan.nodes[0].sends[0].peer, 1);
  EXPECT_EQ(f->plan.nodes[3].sends[0].peer, 0);
}

TEST(LlmTpTest, TimeModelUsesCalibratedLatency) {
  TpSystem sys = TableOneSystem(0);
  LlmWorkload wl;
  TpOptions paper = Options(TpMethod::kMegatron), nccl = paper;
  nccl.time = *TimePreset("nccl");
  auto a = PlanTensorParallel(sys, Gpt3(), wl, paper);
  auto b = PlanTensorParallel(sys, Gpt3(), wl, nccl);
  ASSERT_TRUE(a.ok() && b.ok());
  // 2 all-reduces x 30 ring steps x 14 us + 2 x 8.4 us extra per layer and token.
  double extra = 96 * (2 * (30 * 14e-6 + 8.4e-6));
  EXPECT_NEAR(b->per_token_s - a->per_token_s, extra, 1e-9);
  EXPECT_FALSE(TimePreset("bogus").ok());
}

TEST(LlmTpTest, BadInputIsRejected) {
  TpSystem sys = TableOneSystem(0);
  LlmWorkload wl;
  TpOptions o = Options(TpMethod::kAsymGroup);
  o.groups = 17;
  auto r = PlanTensorParallel(sys, Gpt3(), wl, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("larger than the number of nodes"), std::string::npos);
  // Memory: 175B in FP16 (350 GB) plus 2 TB of KV cache does not fit 16 x 80 GB.
  TpOptions mem = Options(TpMethod::kAsymGroup);
  mem.check_memory = true;
  LlmWorkload big;
  big.output_len = 2048;
  auto m = PlanTensorParallel(sys, Gpt3(), big, mem);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kResourceExhausted);
  // A zero-capability GPU.
  TpSystem zero = sys;
  zero.nodes[3].gpus[0].peak_flops = 0;
  zero.NormalizeCapabilities();
  auto z = PlanTensorParallel(zero, Small(), wl, Options(TpMethod::kAsymGroup));
  ASSERT_FALSE(z.ok());
  EXPECT_NE(z.status().message().find("node3"), std::string::npos);
  auto ideal = PlanTensorParallel(sys, Small(), wl, Options(TpMethod::kIdeal));
  ASSERT_TRUE(ideal.ok());
  EXPECT_TRUE(ideal->volume_only);  // a volume bound: no plan, no times
  LlmWorkload neg;
  neg.batch = 0;
  EXPECT_FALSE(PlanTensorParallel(sys, Small(), neg, Options(TpMethod::kAsymGroup)).ok());
  TpOptions bad_auto = Options(TpMethod::kAutoDdl);
  bad_auto.groups = 3;  // does not divide 16
  EXPECT_FALSE(PlanTensorParallel(sys, Small(), wl, bad_auto).ok());
  EXPECT_FALSE(ParseTpMethod("tesseract").ok());
}

TEST(TpMethodRegistryTest, EveryNameResolvesAndPlansOrBoundsTheVolume) {
  std::vector<std::string> listed;
  for (const TpMethodEntry& m : TpMethods()) listed.push_back(m.name);
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(TpMethodRegistry().Names(), listed);
  TpSystem sys = MakeUniformSystem({1, 1, 2, 2}, A100Sxm80Spec(), "fp16");
  LlmWorkload wl;
  for (const std::string& name : TpMethodRegistry().Names()) {
    auto method = ParseTpMethod(name);
    ASSERT_TRUE(method.ok()) << name << ": " << method.status().message();
    EXPECT_EQ(TpMethodName(*method), name);
    EXPECT_TRUE(CommVolumeFraction(*method, sys.Capabilities(), sys.NumGpus()).ok()) << name;
    auto r = PlanTensorParallel(sys, Small(), wl, Options(*method));
    if (*method == TpMethod::kIdeal) {
      ASSERT_TRUE(r.ok());  // a volume bound: no plan, no times
      EXPECT_TRUE(r->volume_only);
      EXPECT_GT(r->comm_volume_bytes, 0);
    } else {
      ASSERT_TRUE(r.ok()) << name << ": " << r.status().message();
      EXPECT_EQ(r->method, *method);
      EXPECT_GT(r->total_s(), 0) << name;
    }
  }
  for (TpMethod m :
       {TpMethod::kAsymGroup, TpMethod::kMegatron, TpMethod::kAutoDdl, TpMethod::kIdeal}) {
    EXPECT_TRUE(TpMethodRegistry().Find(TpMethodName(m)).ok()) << TpMethodName(m);
  }
}

TEST(TpMethodRegistryTest, UnknownNameIsNotFoundListingTheKnownNames) {
  auto m = ParseTpMethod("tesseract");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_NE(m.status().message().find("--algo"), std::string::npos) << m.status().message();
  EXPECT_NE(m.status().message().find("'tesseract'"), std::string::npos);
  EXPECT_NE(m.status().message().find("asymgroup, autoddl, ideal, megatron"), std::string::npos)
      << m.status().message();
}

}  // namespace
}  // namespace hx::tp
