#include "hexplan/share/mig.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

namespace hx::share {
namespace {

GpuModel A100() { return *GetGpuModel("a100-80gb"); }

TEST(MigTest, EveryGpuModelHasFiveProfilesAndSharesTheGeometry) {
  for (const auto& name : GpuModelNames()) {
    auto gpu = GetGpuModel(name);
    ASSERT_TRUE(gpu.ok()) << name;
    ASSERT_EQ(gpu->profiles.size(), 5u);
    EXPECT_EQ(gpu->Find(7)->memory_gb, gpu->memory_gb) << name;
    EXPECT_EQ(gpu->Find(3)->starts, (std::vector<int>{0, 4}));
    EXPECT_EQ(gpu->Find(2)->starts, (std::vector<int>{0, 2, 4}));
    EXPECT_EQ(EnumerateLayouts(*gpu, true).size(), 19u) << name;
  }
  EXPECT_EQ(GetGpuModel("a100-40gb")->Find(1)->name, "1g.5gb");
  EXPECT_EQ(GetGpuModel("h200-141gb")->Find(3)->name, "3g.71gb");
  EXPECT_FALSE(GetGpuModel("v100").ok());
}

// The 19 configurations of ParvaGPU's Fig. 1 (instance sizes in slot order). The NVIDIA placement
// rules give "2-2-1-1-1" where the paper's extracted text reads "1-1-1-1-1-2" for row 18 (a 2g
// cannot start at memory slice 5); see docs/sharing.md.
TEST(MigTest, A100HasExactlyTheNineteenMaximalConfigurationsOfFig1) {
  const std::set<std::string> fig1 = {"7",           "4-3",       "4-2-1",        "4-1-1-1",
                                      "3-3",         "3-2-1",     "3-1-1-1",      "2-2-3",
                                      "2-1-1-3",     "1-1-2-3",   "1-1-1-1-3",    "2-2-2-1",
                                      "2-1-1-2-1",   "1-1-2-2-1", "2-1-1-1-1-1",  "1-1-2-1-1-1",
                                      "1-1-1-1-2-1", "2-2-1-1-1", "1-1-1-1-1-1-1"};
  std::set<std::string> got;
  for (const auto& l : EnumerateLayouts(A100(), true)) got.insert(LayoutString(l));
  EXPECT_EQ(got, fig1);
  // Every layout is a subset of a maximal one, and all are valid.
  const auto all = EnumerateLayouts(A100(), false);
  EXPECT_GT(all.size(), 19u);
  for (const auto& l : all) EXPECT_TRUE(ValidateLayout(A100(), l).ok()) << LayoutString(l);
}

TEST(MigTest, ValidateLayoutRejectsBadStartsOverlapsAndSizes) {
  const GpuModel g = A100();
  EXPECT_TRUE(ValidateLayout(g, {{4, 0}, {3, 4}}).ok());
  EXPECT_TRUE(ValidateLayout(g, {{3, 0}, {3, 4}}).ok());
  Status s = ValidateLayout(g, {{3, 2}});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("may only start at memory slice 0,4"), std::string::npos);
  EXPECT_FALSE(ValidateLayout(g, {{2, 1}}).ok());
  EXPECT_FALSE(ValidateLayout(g, {{4, 4}}).ok());
  EXPECT_FALSE(ValidateLayout(g, {{1, 7}}).ok());
  EXPECT_FALSE(ValidateLayout(g, {{5, 0}}).ok());
  // A 3g at slot 0 takes memory slices 0-3: no 1g fits at slot 3.
  s = ValidateLayout(g, {{3, 0}, {1, 3}});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("memory slice 3"), std::string::npos);
  EXPECT_FALSE(ValidateLayout(g, {{7, 0}, {1, 0}}).ok());
}

// Brute force: fewest GPUs for a multiset by trying every maximal configuration per GPU.
int BruteForceMinGpus(const SizeCounts& c, const std::vector<Layout>& maximal) {
  int best = c.Total();
  std::function<void(SizeCounts, int)> rec = [&](SizeCounts left, int used) {
    if (used + (left.Gpcs() + 6) / 7 >= best) return;
    if (left.Total() == 0) {
      best = used;
      return;
    }
    for (const auto& l : maximal) {
      SizeCounts next = left;
      bool progress = false;
      for (const auto& inst : l) {
        int& k = next.n[SizeIndex(inst.gpcs)];
        if (k > 0) {
          --k;
          progress = true;
        }
      }
      if (progress) rec(next, used + 1);
    }
  };
  rec(c, 0);
  return best;
}

TEST(MigTest, ExactPackerMatchesBruteForceOnSmallMultisets) {
  const GpuModel g = A100();
  const auto maximal = EnumerateLayouts(g, true);
  int checked = 0;
  for (int n1 = 0; n1 <= 4; ++n1)
    for (int n2 = 0; n2 <= 3; ++n2)
      for (int n3 = 0; n3 <= 3; ++n3)
        for (int n4 = 0; n4 <= 2; ++n4)
          for (int n7 = 0; n7 <= 1; ++n7) {
            SizeCounts c;
            c.n[0] = n1, c.n[1] = n2, c.n[2] = n3, c.n[3] = n4, c.n[4] = n7;
            if (c.Total() == 0) continue;
            const int want = BruteForceMinGpus(c, maximal);
            ASSERT_EQ(MinGpus(c), want) << n1 << " " << n2 << " " << n3 << " " << n4 << " " << n7;
            const auto layouts = PackExact(c);
            ASSERT_EQ(static_cast<int>(layouts.size()), want);
            SizeCounts packed;
            for (const auto& l : layouts) {
              EXPECT_TRUE(ValidateLayout(g, l).ok()) << LayoutString(l);
              for (const auto& inst : l) packed.n[SizeIndex(inst.gpcs)]++;
            }
            for (int i = 0; i < kNumInstanceSizes; ++i) EXPECT_EQ(packed.n[i], c.n[i]);
            ++checked;
          }
  EXPECT_EQ(checked, 5 * 4 * 4 * 3 * 2 - 1);
}

}  // namespace
}  // namespace hx::share
