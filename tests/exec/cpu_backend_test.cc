// The CPU backend's thread binding: device threads run on their core group, copy threads on the
// cores of the devices they copy to (where the consumer waits), and an unpinned backend leaves
// threads where they are.
#include "hexplan/exec/cpu_backend.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <set>
#include <thread>

#include "hexplan/hw/presets.h"

namespace hx::exec {
namespace {

std::set<int> AffinityOfThisThread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  HX_CHECK(pthread_getaffinity_np(pthread_self(), sizeof(set), &set) == 0);
  std::set<int> cores;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cores.insert(c);
  return cores;
}

// Runs `body` in a fresh thread (so the test thread's own affinity is untouched) and returns the
// cores that thread may run on afterwards.
template <typename Body>
std::set<int> CoresAfter(Body body) {
  std::set<int> cores;
  std::thread t([&] {
    body();
    cores = AffinityOfThisThread();
  });
  t.join();
  return cores;
}

class CpuBackendBindingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || AffinityOfThisThread().size() < 2)
      GTEST_SKIP() << "needs two cores to pin threads apart";
    auto c = hw::LoadCluster("local-cpu:groups=2,cores=2");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    cluster_ = std::move(c).value();
  }
  hw::Cluster cluster_{"unset"};
};

TEST_F(CpuBackendBindingTest, DeviceThreadsRunOnTheirCoreGroup) {
  auto backend = CpuBackend::Create(cluster_);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ(CoresAfter([&] { ASSERT_TRUE((*backend)->BindThread(0).ok()); }), std::set<int>{0});
  EXPECT_EQ(CoresAfter([&] { ASSERT_TRUE((*backend)->BindThread(1).ok()); }), std::set<int>{1});
  EXPECT_FALSE((*backend)->BindThread(2).ok());
}

TEST_F(CpuBackendBindingTest, CopyThreadsRunOnTheCoresOfTheirDestinations) {
  auto backend = CpuBackend::Create(cluster_);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ(CoresAfter([&] { ASSERT_TRUE((*backend)->BindCopyThread({1}).ok()); }),
            std::set<int>{1});
  EXPECT_EQ(CoresAfter([&] {
              ASSERT_TRUE((*backend)->BindCopyThread({0, 1}).ok());
            }),
            (std::set<int>{0, 1}));
  auto bad = (*backend)->BindCopyThread({0, 7});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("no device 7"), std::string::npos) << bad.message();
}

TEST_F(CpuBackendBindingTest, UnpinnedBackendLeavesThreadsFree) {
  CpuBackendOptions options;
  options.pin_threads = false;
  auto backend = CpuBackend::Create(cluster_, options);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  const std::set<int> free = CoresAfter([] {});
  EXPECT_EQ(CoresAfter([&] { ASSERT_TRUE((*backend)->BindThread(0).ok()); }), free);
  EXPECT_EQ(CoresAfter([&] { ASSERT_TRUE((*backend)->BindCopyThread({1}).ok()); }), free);
}

// Freed buffers of every size are kept for the next allocation of that size on the device, and
// the device's accounting counts them as free.
TEST(CpuBackendTest, FreedBuffersAreReusedBySize) {
  auto cluster = hw::LoadCluster("local-cpu:groups=1");
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  auto backend = CpuBackend::Create(*cluster);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  for (int64_t bytes : {int64_t{256}, int64_t{1} << 20}) {
    auto a = (*backend)->Allocate(0, bytes);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ((*backend)->MemoryInUse(0), bytes);
    (*backend)->Free(0, *a);
    EXPECT_EQ((*backend)->MemoryInUse(0), 0);
    auto other = (*backend)->Allocate(0, bytes + 64);
    auto again = (*backend)->Allocate(0, bytes);
    ASSERT_TRUE(other.ok() && again.ok());
    EXPECT_EQ(again->ptr, a->ptr) << bytes;
    EXPECT_NE(other->ptr, a->ptr) << bytes;
    EXPECT_EQ((*backend)->MemoryInUse(0), 2 * bytes + 64);
    (*backend)->Free(0, *other);
    (*backend)->Free(0, *again);
    EXPECT_EQ((*backend)->MemoryInUse(0), 0);
  }
}

}  // namespace
}  // namespace hx::exec
