// Routes and validation on hand-built topologies.

#include "hexplan/hw/cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hexplan/hw/device_spec.h"

namespace hx::hw {
namespace {

using ::testing::HasSubstr;

constexpr double kGB = 1e9;

DeviceSpec Gpu() { return *FindDeviceSpec("V100-SXM2-32GB"); }

std::vector<std::string> HopNames(const Cluster& c, const Route& r) {
  std::vector<std::string> names;
  for (const RouteHop& h : r.hops) names.push_back(c.link(h.link).name);
  return names;
}

// host -- root --bus(16)-- sw -- gpu0, gpu1 (x16 each); root --bus1(16)-- gpu2.
struct SharedBus {
  Cluster c{"shared-bus"};
  DeviceId g0, g1, g2;
  SharedBus() {
    PlaceId host = c.AddHostMemory("n");
    PlaceId root = c.AddSwitch("root", "n");
    PlaceId sw = c.AddSwitch("sw", "n");
    c.AddLink("membus", LinkKind::kMemoryBus, host, root, 80 * kGB, 0.1e-6);
    c.AddLink("bus0", LinkKind::kPcie, root, sw, 16 * kGB, 1e-6);
    g0 = c.AddDevice("gpu0", DeviceKind::kGpu, "n", Gpu());
    g1 = c.AddDevice("gpu1", DeviceKind::kGpu, "n", Gpu());
    g2 = c.AddDevice("gpu2", DeviceKind::kGpu, "n", Gpu());
    c.AddLink("x16:gpu0", LinkKind::kPcie, sw, c.PlaceOf(g0), 16 * kGB, 1e-6);
    c.AddLink("x16:gpu1", LinkKind::kPcie, sw, c.PlaceOf(g1), 16 * kGB, 1e-6);
    c.AddLink("bus1", LinkKind::kPcie, root, c.PlaceOf(g2), 16 * kGB, 1e-6);
  }
};

TEST(ClusterRoutes, SharedBusHostToDeviceCrossesTheBusLink) {
  SharedBus t;
  ASSERT_TRUE(t.c.Finalize().ok());
  const Route& r0 = t.c.HostToDevice(t.g0);
  const Route& r1 = t.c.HostToDevice(t.g1);
  EXPECT_THAT(HopNames(t.c, r0), ::testing::ElementsAre("membus", "bus0", "x16:gpu0"));
  EXPECT_THAT(HopNames(t.c, r1), ::testing::ElementsAre("membus", "bus0", "x16:gpu1"));
  EXPECT_DOUBLE_EQ(r0.bottleneck_bytes_per_s, 16 * kGB);
  EXPECT_NEAR(r0.latency_s, 2.1e-6, 1e-12);
  EXPECT_TRUE(r0.hops[1].forward);
  // gpu2 has its own bus.
  EXPECT_THAT(HopNames(t.c, t.c.HostToDevice(t.g2)), ::testing::ElementsAre("membus", "bus1"));
  // Peer to peer under one switch stays below the bus.
  EXPECT_THAT(HopNames(t.c, t.c.DeviceRoute(t.g0, t.g1)),
              ::testing::ElementsAre("x16:gpu0", "x16:gpu1"));
  EXPECT_FALSE(t.c.DeviceRoute(t.g0, t.g1).via_host);
  // Reverse direction hops are marked backward.
  const Route& back = t.c.GetRoute(t.c.PlaceOf(t.g0), t.c.HostOf(t.g0));
  ASSERT_EQ(back.hops.size(), 3u);
  EXPECT_FALSE(back.hops[0].forward);
  EXPECT_NEAR(back.TransferSeconds(16'000'000'000), 1.0 + 2.1e-6, 1e-9);
}

TEST(ClusterRoutes, NoPeerToPeerGoesThroughHostMemory) {
  SharedBus t;
  t.c.SetPeerToPeer(t.g0, t.g2, false);
  ASSERT_TRUE(t.c.Finalize().ok());
  EXPECT_FALSE(t.c.PeerToPeerAllowed(t.g2, t.g0));
  const Route& r = t.c.DeviceRoute(t.g0, t.g2);
  EXPECT_TRUE(r.via_host);
  EXPECT_THAT(HopNames(t.c, r),
              ::testing::ElementsAre("x16:gpu0", "bus0", "membus", "membus", "bus1"));
  EXPECT_DOUBLE_EQ(r.bottleneck_bytes_per_s, 16 * kGB);
  EXPECT_TRUE(t.c.DeviceRoute(t.g2, t.g0).via_host);
  // Allowed pairs keep the direct PCIe path through the root complex.
  const Route& p2p = t.c.DeviceRoute(t.g1, t.g2);
  EXPECT_FALSE(p2p.via_host);
  EXPECT_THAT(HopNames(t.c, p2p), ::testing::ElementsAre("x16:gpu1", "bus0", "bus1"));
  // Allowing it again restores the direct route.
  t.c.SetPeerToPeer(t.g2, t.g0, true);
  ASSERT_TRUE(t.c.Finalize().ok());
  EXPECT_FALSE(t.c.DeviceRoute(t.g0, t.g2).via_host);
  EXPECT_EQ(t.c.DeviceRoute(t.g0, t.g2).hops.size(), 3u);
}

TEST(ClusterRoutes, WidestPathBeatsShorterNarrowPath) {
  // a -- s1 (10) -- b directly, or a -- s2 (40) -- s3 (30) -- b.
  Cluster c("multi-hop");
  DeviceId a = c.AddDevice("a", DeviceKind::kGpu, "n", Gpu());
  DeviceId b = c.AddDevice("b", DeviceKind::kGpu, "n", Gpu());
  PlaceId host = c.AddHostMemory("n");
  PlaceId s1 = c.AddSwitch("s1", "n"), s2 = c.AddSwitch("s2", "n"), s3 = c.AddSwitch("s3", "n");
  c.AddLink("a-s1", LinkKind::kEthernet, c.PlaceOf(a), s1, 10 * kGB, 1e-6);
  c.AddLink("s1-b", LinkKind::kEthernet, s1, c.PlaceOf(b), 10 * kGB, 1e-6);
  c.AddLink("a-s2", LinkKind::kInfiniband, c.PlaceOf(a), s2, 40 * kGB, 1e-6);
  c.AddLink("s2-s3", LinkKind::kInfiniband, s2, s3, 30 * kGB, 1e-6);
  c.AddLink("s3-b", LinkKind::kInfiniband, s3, c.PlaceOf(b), 50 * kGB, 1e-6);
  c.AddLink("host-s1", LinkKind::kPcie, host, s1, 16 * kGB, 1e-6);
  ASSERT_TRUE(c.Finalize().ok());
  const Route& r = c.DeviceRoute(a, b);
  // MOIRAI's rule: the bottleneck of the multi-hop path governs (30, not 40 or 50).
  EXPECT_DOUBLE_EQ(r.bottleneck_bytes_per_s, 30 * kGB);
  EXPECT_THAT(HopNames(c, r), ::testing::ElementsAre("a-s2", "s2-s3", "s3-b"));
  EXPECT_NEAR(r.latency_s, 3e-6, 1e-12);
  EXPECT_NEAR(r.TransferSeconds(300'000'000), 3e-6 + 0.01, 1e-9);
  // Host to a: host-s1 (16) then a-s1 (10) = 10, or s1-b... b never relays.
  const Route& h = c.HostToDevice(a);
  EXPECT_DOUBLE_EQ(h.bottleneck_bytes_per_s, 10 * kGB);
  EXPECT_THAT(HopNames(c, h), ::testing::ElementsAre("host-s1", "a-s1"));
}

TEST(ClusterRoutes, TiesPreferFewerHopsThenLowerLatency) {
  Cluster c("ties");
  DeviceId a = c.AddDevice("a", DeviceKind::kGpu, "n", Gpu());
  DeviceId b = c.AddDevice("b", DeviceKind::kGpu, "n", Gpu());
  PlaceId host = c.AddHostMemory("n");
  PlaceId s1 = c.AddSwitch("s1", "n"), s2 = c.AddSwitch("s2", "n"), s3 = c.AddSwitch("s3", "n"),
          s4 = c.AddSwitch("s4", "n");
  // Three equally wide paths: 3 hops (low latency), 2 hops slow, 2 hops fast.
  c.AddLink("a-s1", LinkKind::kPcie, c.PlaceOf(a), s1, 20 * kGB, 0.1e-6);
  c.AddLink("s1-s2", LinkKind::kPcie, s1, s2, 20 * kGB, 0.1e-6);
  c.AddLink("s2-b", LinkKind::kPcie, s2, c.PlaceOf(b), 20 * kGB, 0.1e-6);
  c.AddLink("a-s3", LinkKind::kPcie, c.PlaceOf(a), s3, 20 * kGB, 5e-6);
  c.AddLink("s3-b", LinkKind::kPcie, s3, c.PlaceOf(b), 20 * kGB, 5e-6);
  c.AddLink("a-s4", LinkKind::kPcie, c.PlaceOf(a), s4, 20 * kGB, 1e-6);
  c.AddLink("s4-b", LinkKind::kPcie, s4, c.PlaceOf(b), 20 * kGB, 1e-6);
  c.AddLink("host", LinkKind::kPcie, host, s1, 20 * kGB, 1e-6);
  ASSERT_TRUE(c.Finalize().ok());
  EXPECT_THAT(HopNames(c, c.DeviceRoute(a, b)), ::testing::ElementsAre("a-s4", "s4-b"));
  // A wide-then-narrow label must not hide a narrower but shorter route to a farther place:
  // from a, s2 is reached via s1 (2 hops, 20) while b's best is still a 2-hop route.
  EXPECT_EQ(c.GetRoute(c.PlaceOf(a), s2).hops.size(), 2u);
}

TEST(ClusterRoutes, DevicesNeverRelayTraffic) {
  // gpu1 sits between gpu0 and gpu2 with NVLinks; gpu0 -> gpu2 must not go through gpu1.
  Cluster c("no-relay");
  PlaceId host = c.AddHostMemory("n");
  std::vector<DeviceId> g;
  for (int i = 0; i < 3; ++i) {
    g.push_back(c.AddDevice("gpu" + std::to_string(i), DeviceKind::kGpu, "n", Gpu()));
    c.AddLink("pcie" + std::to_string(i), LinkKind::kPcie, host, c.PlaceOf(g.back()), 16 * kGB,
              1e-6);
  }
  c.AddLink("nv01", LinkKind::kNvlink, c.PlaceOf(g[0]), c.PlaceOf(g[1]), 50 * kGB, 1e-6, true, 2);
  c.AddLink("nv12", LinkKind::kNvlink, c.PlaceOf(g[1]), c.PlaceOf(g[2]), 50 * kGB, 1e-6, true, 2);
  ASSERT_TRUE(c.Finalize().ok());
  EXPECT_THAT(HopNames(c, c.DeviceRoute(g[0], g[2])), ::testing::ElementsAre("pcie0", "pcie2"));
  // Host memory relays: a GPU-to-GPU route through it is marked via_host.
  EXPECT_TRUE(c.DeviceRoute(g[0], g[2]).via_host);
  EXPECT_FALSE(c.DeviceRoute(g[0], g[1]).via_host);
  EXPECT_DOUBLE_EQ(c.DeviceRoute(g[0], g[1]).bottleneck_bytes_per_s, 50 * kGB);
}

TEST(ClusterRoutes, OneWayAndPairOnlyLinks) {
  Cluster c("measured");
  std::vector<DeviceId> g;
  for (int i = 0; i < 3; ++i) {
    std::string node = "s" + std::to_string(i);
    g.push_back(c.AddDevice("gpu" + std::to_string(i), DeviceKind::kGpu, node, Gpu()));
    c.AddLink("pcie" + std::to_string(i), LinkKind::kPcie, c.HostOf(g.back()), c.PlaceOf(g.back()),
              16 * kGB, 1e-6);
  }
  auto measured = [&](int i, int j, double gbps) {
    LinkId l = c.AddLink("ib" + std::to_string(i) + std::to_string(j), LinkKind::kInfiniband,
                         c.PlaceOf(g[i]), c.PlaceOf(g[j]), gbps * 1e9 / 8, 2e-6);
    c.mutable_link(l).one_way = true;
    c.mutable_link(l).pair_only = true;
  };
  // 2 -> 0 is slower than 2 -> 1 -> 0 would be; pair_only keeps the measured figure.
  measured(0, 1, 40);
  measured(1, 0, 42);
  measured(0, 2, 30);
  measured(2, 0, 20);
  measured(1, 2, 35);
  measured(2, 1, 36);
  ASSERT_TRUE(c.Finalize().ok());
  EXPECT_DOUBLE_EQ(c.DeviceRoute(g[2], g[0]).bottleneck_bytes_per_s, 20e9 / 8);
  EXPECT_DOUBLE_EQ(c.DeviceRoute(g[0], g[2]).bottleneck_bytes_per_s, 30e9 / 8);
  EXPECT_EQ(c.DeviceRoute(g[2], g[0]).hops.size(), 1u);
  EXPECT_TRUE(c.DeviceRoute(g[2], g[0]).hops[0].forward);
  // Host memory of s0 cannot reach gpu1: measured channels do not relay.
  EXPECT_FALSE(c.GetRoute(c.HostOf(g[0]), c.PlaceOf(g[1])).reachable);
  EXPECT_TRUE(std::isinf(c.GetRoute(c.HostOf(g[0]), c.PlaceOf(g[1])).TransferSeconds(1)));
}

TEST(ClusterRoutes, SamePlaceRouteIsFree) {
  SharedBus t;
  ASSERT_TRUE(t.c.Finalize().ok());
  const Route& r = t.c.DeviceRoute(t.g1, t.g1);
  EXPECT_TRUE(r.hops.empty());
  EXPECT_EQ(r.TransferSeconds(1 << 30), 0.0);
}

TEST(ClusterValidation, RejectsBadLinks) {
  {
    SharedBus t;
    t.c.AddLink("neg", LinkKind::kPcie, t.c.PlaceOf(t.g0), t.c.PlaceOf(t.g2), -5 * kGB, 0);
    Status s = t.c.Finalize();
    EXPECT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("link 'neg'"));
    EXPECT_THAT(s.message(), HasSubstr("bandwidth must be a positive"));
  }
  {
    SharedBus t;
    t.c.AddLink("zero", LinkKind::kPcie, t.c.PlaceOf(t.g0), t.c.PlaceOf(t.g2), 0, 0);
    EXPECT_THAT(t.c.Finalize().message(), HasSubstr("bandwidth"));
  }
  {
    SharedBus t;
    LinkId l =
        t.c.AddLink("late", LinkKind::kPcie, t.c.PlaceOf(t.g0), t.c.PlaceOf(t.g2), kGB, -1e-6);
    t.c.mutable_link(l).line = 17;
    t.c.set_source("box.yaml");
    Status s = t.c.Finalize();
    EXPECT_THAT(s.message(), HasSubstr("box.yaml:17: link 'late': latency must be >= 0"));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  }
  {
    SharedBus t;
    t.c.AddLink("dangling", LinkKind::kPcie, t.c.PlaceOf(t.g0), PlaceId(999), kGB, 0);
    EXPECT_THAT(t.c.Finalize().message(), HasSubstr("link 'dangling' connects an unknown place"));
  }
}

TEST(ClusterValidation, RejectsDuplicateNames) {
  SharedBus t;
  t.c.AddDevice("gpu1", DeviceKind::kGpu, "n", Gpu());
  Status s = t.c.Finalize();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("duplicate name 'gpu1'"));
  SharedBus u;
  u.c.AddLink("bus0", LinkKind::kPcie, u.c.PlaceOf(u.g0), u.c.PlaceOf(u.g2), kGB, 0);
  EXPECT_THAT(u.c.Finalize().message(), HasSubstr("duplicate link name 'bus0'"));
}

TEST(ClusterValidation, RejectsUnreachableDevice) {
  SharedBus t;
  DeviceId lonely = t.c.AddDevice("lonely", DeviceKind::kGpu, "n", Gpu());
  t.c.mutable_place(t.c.PlaceOf(lonely)).line = 9;
  Status s = t.c.Finalize();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("9: device 'lonely' is not reachable"));
  EXPECT_FALSE(t.c.finalized());
}

TEST(ClusterValidation, RejectsEmptyCluster) {
  Cluster c("empty");
  EXPECT_THAT(c.Finalize().message(), HasSubstr("no devices"));
}

TEST(ClusterAccess, LookupsAndKinds) {
  SharedBus t;
  ASSERT_TRUE(t.c.Finalize().ok());
  EXPECT_EQ(t.c.num_devices(), 3u);
  EXPECT_EQ(t.c.FindDevice("gpu2"), t.g2);
  EXPECT_FALSE(t.c.FindDevice("gpu9").has_value());
  EXPECT_TRUE(t.c.FindPlace("n.host").has_value());
  EXPECT_TRUE(t.c.FindLink("bus0").has_value());
  EXPECT_EQ(t.c.DevicesOfKind(DeviceKind::kGpu).size(), 3u);
  EXPECT_TRUE(t.c.DevicesOfKind(DeviceKind::kCpu).empty());
  EXPECT_EQ(t.c.NodeNames(), std::vector<std::string>{"n"});
  EXPECT_EQ(t.c.LinksAt(*t.c.FindPlace("sw")).size(), 3u);
  EXPECT_EQ(t.c.device(t.g0).memory_bytes(), int64_t{32} << 30);
  EXPECT_STREQ(DeviceKindName(DeviceKind::kMig), "mig");
  EXPECT_STREQ(LinkKindName(LinkKind::kNvswitch), "nvswitch");
}

}  // namespace
}  // namespace hx::hw
