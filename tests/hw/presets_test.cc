// Presets: every one loads and finalizes, and carries the numbers the papers state.

#include "hexplan/hw/presets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

namespace hx::hw {
namespace {

using ::testing::HasSubstr;

Cluster Load(const std::string& name) {
  auto c = LoadCluster(name);
  EXPECT_TRUE(c.ok()) << name << ": " << c.status().message();
  return c.ok() ? std::move(c).value() : Cluster();
}

DeviceId Dev(const Cluster& c, const std::string& name) {
  auto id = c.FindDevice(name);
  EXPECT_TRUE(id.has_value()) << name;
  return id.value_or(DeviceId(0));
}

// The first link of a route that is a PCIe bus shared with other GPUs, by name.
std::string PresetBusOf(const Cluster& c, DeviceId d) {
  for (const RouteHop& h : c.HostToDevice(d).hops) {
    const Link& l = c.link(h.link);
    if (l.name.rfind("pcie-bus", 0) == 0) return l.name;
  }
  return "";
}

TEST(Presets, EveryPresetLoadsAndFinalizes) {
  for (const PresetInfo& p : ClusterPresets()) {
    SCOPED_TRACE(p.name);
    EXPECT_FALSE(p.description.empty());
    EXPECT_FALSE(p.source.empty());
    Cluster c = Load(p.name);
    EXPECT_TRUE(c.finalized());
    EXPECT_GT(c.num_devices(), 0u);
    for (DeviceId a : c.DeviceIds()) {
      EXPECT_TRUE(c.HostToDevice(a).reachable);
      EXPECT_GT(c.device(a).spec.peak_flops_fp32, 0.0);
      for (DeviceId b : c.DeviceIds()) {
        EXPECT_TRUE(c.DeviceRoute(a, b).reachable);
      }
    }
  }
}

TEST(Presets, SortingHatV100BusSharingAndNvlinkCounts) {
  Cluster c = Load("sortinghat-v100");
  ASSERT_EQ(c.num_devices(), 4u);
  std::vector<DeviceId> g;
  for (int i = 0; i < 4; ++i) g.push_back(Dev(c, "gpu" + std::to_string(i)));
  for (DeviceId d : g) {
    EXPECT_EQ(c.device(d).spec.model, "V100-SXM2-32GB");
    EXPECT_EQ(c.device(d).memory_bytes(), int64_t{32} << 30);
  }
  // Two PCIe gen3 buses, each shared by two GPUs: GPU1+GPU2 and GPU3+GPU4 (paper numbering).
  EXPECT_EQ(PresetBusOf(c, g[0]), "pcie-bus0");
  EXPECT_EQ(PresetBusOf(c, g[1]), "pcie-bus0");
  EXPECT_EQ(PresetBusOf(c, g[2]), "pcie-bus1");
  EXPECT_EQ(PresetBusOf(c, g[3]), "pcie-bus1");
  EXPECT_NEAR(c.HostToDevice(g[0]).bottleneck_bytes_per_s, 15.75e9, 1e6);
  // NVLink: 2-way GPU1-GPU4 and GPU2-GPU3, 1-way the other four pairs.
  std::map<std::pair<int, int>, int> counts;
  int nvlinks = 0;
  for (size_t i = 0; i < c.num_links(); ++i) {
    const Link& l = c.link(LinkId(i));
    if (l.kind != LinkKind::kNvlink) continue;
    ++nvlinks;
    int a = c.place(l.a).name.back() - '0', b = c.place(l.b).name.back() - '0';
    counts[{std::min(a, b), std::max(a, b)}] = l.count;
    EXPECT_DOUBLE_EQ(l.bandwidth_bytes_per_s, l.count * 25e9);
  }
  EXPECT_EQ(nvlinks, 6);
  EXPECT_EQ((counts[{0, 3}]), 2);
  EXPECT_EQ((counts[{1, 2}]), 2);
  EXPECT_EQ((counts[{0, 1}]), 1);
  EXPECT_EQ((counts[{0, 2}]), 1);
  EXPECT_EQ((counts[{1, 3}]), 1);
  EXPECT_EQ((counts[{2, 3}]), 1);
  // Fig. 2: GPU1+GPU4 (2-way NVLink) is 2x GPU1+GPU3 (1-way).
  EXPECT_DOUBLE_EQ(c.DeviceRoute(g[0], g[3]).bottleneck_bytes_per_s,
                   2 * c.DeviceRoute(g[0], g[2]).bottleneck_bytes_per_s);
  for (DeviceId d : g) EXPECT_EQ(c.device(d).clock_scale, 1.0);
}

TEST(Presets, SortingHatV100HeteroClocks) {
  Cluster c = Load("sortinghat-v100-hetero");
  EXPECT_DOUBLE_EQ(c.device(Dev(c, "gpu0")).clock_scale, 1.0);
  EXPECT_DOUBLE_EQ(c.device(Dev(c, "gpu1")).clock_scale, 135.0 / 1500.0);
  EXPECT_DOUBLE_EQ(c.device(Dev(c, "gpu2")).clock_scale, 135.0 / 1500.0);
  EXPECT_DOUBLE_EQ(c.device(Dev(c, "gpu3")).clock_scale, 1.0);
  EXPECT_EQ(c.num_links(), Load("sortinghat-v100").num_links());
}

TEST(Presets, SortingHatA6000) {
  Cluster c = Load("sortinghat-a6000");
  ASSERT_EQ(c.num_devices(), 3u);
  EXPECT_EQ(c.device(Dev(c, "gpu0")).spec.model, "RTX-A6000");
  int nvlinks = 0;
  for (size_t i = 0; i < c.num_links(); ++i) {
    const Link& l = c.link(LinkId(i));
    if (l.kind == LinkKind::kNvlink) {
      ++nvlinks;
      EXPECT_EQ(l.count, 4);
      EXPECT_EQ(c.place(l.a).name, "gpu1");
      EXPECT_EQ(c.place(l.b).name, "gpu2");
    }
  }
  EXPECT_EQ(nvlinks, 1);
  EXPECT_NEAR(c.HostToDevice(Dev(c, "gpu0")).bottleneck_bytes_per_s, 31.5e9, 1e6);
  // GPU1 <-> GPU3 crosses PCIe (both buses); GPU2 <-> GPU3 uses the bridge.
  EXPECT_NEAR(c.DeviceRoute(Dev(c, "gpu0"), Dev(c, "gpu2")).bottleneck_bytes_per_s, 31.5e9, 1e6);
  EXPECT_NEAR(c.DeviceRoute(Dev(c, "gpu1"), Dev(c, "gpu2")).bottleneck_bytes_per_s, 56.25e9, 1e6);
}

TEST(Presets, EightGpuNvswitchBoxes) {
  for (const char* name : {"p4d-24xlarge", "p4de-24xlarge", "dgx-a100", "dgx-h100"}) {
    SCOPED_TRACE(name);
    Cluster c = Load(name);
    ASSERT_EQ(c.num_devices(), 8u);
    std::map<std::string, int> per_bus;
    for (DeviceId d : c.DeviceIds()) per_bus[PresetBusOf(c, d)]++;
    EXPECT_EQ(per_bus.size(), 4u);  // four PCIe buses, two GPUs each
    for (const auto& [bus, n] : per_bus) EXPECT_EQ(n, 2) << bus;
  }
  Cluster p4d = Load("p4d-24xlarge");
  EXPECT_EQ(p4d.device(Dev(p4d, "gpu0")).memory_bytes(), int64_t{40} << 30);
  EXPECT_DOUBLE_EQ(p4d.DeviceRoute(Dev(p4d, "gpu0"), Dev(p4d, "gpu7")).bottleneck_bytes_per_s,
                   300e9);
  Cluster p4de = Load("p4de-24xlarge");
  EXPECT_EQ(p4de.device(Dev(p4de, "gpu3")).memory_bytes(), int64_t{80} << 30);
  Cluster h100 = Load("dgx-h100");
  EXPECT_DOUBLE_EQ(h100.DeviceRoute(Dev(h100, "gpu1"), Dev(h100, "gpu6")).bottleneck_bytes_per_s,
                   450e9);
}

// MOIRAI Table III, Gbit/s, row = sender.
const double kInter[4][4] = {{0, 44.26, 32.92, 44.28},
                             {42.39, 0, 35.32, 44.51},
                             {33.2, 35.31, 0, 32.95},
                             {42.08, 43.22, 33.28, 0}};
const double kIntra[4][4] = {{0, 1170.04, 626.10, 610.56},
                             {1148.16, 0, 618.98, 581.09},
                             {630.43, 609.82, 0, 571.96},
                             {622.67, 575.08, 581.35, 0}};

void ExpectMatrix(const Cluster& c, const double (&gbit)[4][4]) {
  const char* names[4] = {"gpuA", "gpuB", "gpuC", "gpuD"};
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      if (i == j) continue;
      const Route& r = c.DeviceRoute(Dev(c, names[i]), Dev(c, names[j]));
      EXPECT_NEAR(r.bottleneck_bytes_per_s * 8 / 1e9, gbit[i][j], 1e-9) << names[i] << names[j];
      EXPECT_EQ(r.hops.size(), 1u);
    }
  }
}

TEST(Presets, MoiraiBandwidthMatrices) {
  Cluster inter = Load("moirai-inter");
  ExpectMatrix(inter, kInter);
  EXPECT_EQ(inter.device(Dev(inter, "gpuA")).spec.model, "RTX-2080-Ti");
  EXPECT_EQ(inter.device(Dev(inter, "gpuB")).spec.model, "T4");
  EXPECT_EQ(inter.device(Dev(inter, "gpuC")).spec.model, "P4");
  EXPECT_EQ(inter.device(Dev(inter, "gpuD")).spec.model, "RTX-3060-Ti");
  EXPECT_EQ(inter.NodeNames().size(), 4u);
  // Table III memory column: 11, 16, 8, 8 GB.
  EXPECT_EQ(inter.device(Dev(inter, "gpuA")).memory_bytes(), int64_t{11} << 30);
  EXPECT_EQ(inter.device(Dev(inter, "gpuB")).memory_bytes(), int64_t{16} << 30);
  EXPECT_EQ(inter.device(Dev(inter, "gpuC")).memory_bytes(), int64_t{8} << 30);
  EXPECT_EQ(inter.device(Dev(inter, "gpuD")).memory_bytes(), int64_t{8} << 30);
  Cluster intra = Load("moirai-intra");
  ExpectMatrix(intra, kIntra);
  EXPECT_EQ(intra.device(Dev(intra, "gpuA")).memory_bytes(), int64_t{32} << 30);
  EXPECT_EQ(intra.device(Dev(intra, "gpuC")).memory_bytes(), int64_t{16} << 30);
  EXPECT_EQ(intra.NodeNames().size(), 1u);
}

TEST(Presets, Chrion) {
  Cluster c = Load("chrion-1080ti");
  ASSERT_EQ(c.num_devices(), 2u);
  DeviceId cpu = Dev(c, "cpu0");
  EXPECT_EQ(c.device(cpu).kind, DeviceKind::kCpu);
  EXPECT_EQ(c.device(cpu).spec.cores, 12);
  EXPECT_EQ(c.device(cpu).memory_bytes(), int64_t{128} << 30);
  EXPECT_EQ(c.device(Dev(c, "gpu0")).spec.model, "GTX-1080-Ti");
  EXPECT_FALSE(c.DeviceRoute(cpu, Dev(c, "gpu0")).via_host);  // only GPU pairs are "via host"
}

int CountGpusWith(const Cluster& c, size_t per_node) {
  int nodes = 0;
  for (const std::string& n : c.NodeNames()) nodes += c.DevicesOfNode(n).size() == per_node;
  return nodes;
}

TEST(Presets, AsymGroupTable1) {
  // Table 1: S<k> has k 2-GPU nodes and 16-k 1-GPU nodes, 16 + k GPUs.
  for (int k = 0; k <= 16; k += 2) {
    SCOPED_TRACE(k);
    Cluster c = Load("asym:S" + std::to_string(k));
    EXPECT_EQ(c.NodeNames().size(), 16u);
    EXPECT_EQ(c.num_devices(), 16u + k);
    EXPECT_EQ(CountGpusWith(c, 2), k);
    EXPECT_EQ(CountGpusWith(c, 1), 16 - k);
  }
}

TEST(Presets, AsymGroupLinkFigures) {
  Cluster c = Load("asym:gpus=1,1,2,3,3");
  EXPECT_EQ(c.num_devices(), 10u);
  std::vector<size_t> per_node;
  for (const std::string& n : c.NodeNames()) per_node.push_back(c.DevicesOfNode(n).size());
  EXPECT_EQ(per_node, (std::vector<size_t>{1, 1, 2, 3, 3}));
  DeviceId a = Dev(c, "node3.gpu0"), b = Dev(c, "node3.gpu2"), far = Dev(c, "node0.gpu0");
  // In a node: 600 GB/s bidirectional = 300 per direction, 50 ns.
  EXPECT_DOUBLE_EQ(c.DeviceRoute(a, b).bottleneck_bytes_per_s, 300e9);
  EXPECT_NEAR(c.DeviceRoute(a, b).latency_s, 50e-9, 1e-15);
  // Between nodes: 200 GB/s bidirectional = 100 per direction, 200 ns.
  EXPECT_DOUBLE_EQ(c.DeviceRoute(a, far).bottleneck_bytes_per_s, 100e9);
  EXPECT_NEAR(c.DeviceRoute(a, far).latency_s, 200e-9, 1e-15);
  EXPECT_EQ(c.device(a).spec.model, "A100-SXM4-40GB");

  Cluster n8 = Load("asym:nodes=8");
  EXPECT_EQ(n8.num_devices(), 8u);
  EXPECT_EQ(CountGpusWith(n8, 1), 8);
  Cluster big = Load("asym:nodes=64");
  EXPECT_EQ(big.num_devices(), 64u);
}

TEST(Presets, LocalCpuGroups) {
  Cluster c = Load("local-cpu:cores=8,groups=3");
  ASSERT_EQ(c.num_devices(), 3u);
  EXPECT_TRUE(c.FindDevice("cpu:0-2").has_value());
  EXPECT_TRUE(c.FindDevice("cpu:3-5").has_value());
  EXPECT_TRUE(c.FindDevice("cpu:6-7").has_value());
  int cores = 0;
  for (DeviceId d : c.DeviceIds()) {
    EXPECT_EQ(c.device(d).kind, DeviceKind::kCpu);
    cores += c.device(d).spec.cores;
  }
  EXPECT_EQ(cores, 8);
  Cluster detected = Load("local-cpu");
  EXPECT_EQ(detected.num_devices(), 1u);
  EXPECT_GE(detected.device(DeviceId(0)).spec.cores, 1);
  EXPECT_EQ(Load("local-cpu:groups=1").num_devices(), 1u);
}

TEST(Presets, BadNamesGiveClearErrors) {
  auto unknown = LoadCluster("sortinghat-v900");
  EXPECT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("unknown cluster 'sortinghat-v900'"));
  EXPECT_THAT(unknown.status().message(), HasSubstr("sortinghat-v100"));
  EXPECT_EQ(unknown.status().ExitCode(), 2);
  EXPECT_THAT(LoadCluster("asym:S17").status().message(), HasSubstr("[0, 16]"));
  EXPECT_THAT(LoadCluster("asym:gpus=1,x").status().message(), HasSubstr("'x'"));
  EXPECT_THAT(LoadCluster("asym:foo").status().message(), HasSubstr("unknown asym preset"));
  EXPECT_THAT(LoadCluster("local-cpu:cores=2,groups=3").status().message(), HasSubstr("exceeds"));
  EXPECT_THAT(LoadCluster("local-cpu:threads=2").status().message(), HasSubstr("unknown option"));
  EXPECT_EQ(LoadCluster("no/such/file.yaml").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace hx::hw

namespace hx::hw {
namespace {

// dgx-a100:gpus=N / dgx-h100:gpus=N (issue 24: tensor-parallel groups of 1-8 GPUs of one box).
TEST(Presets, DgxFirstNGpus) {
  for (const char* box : {"dgx-a100", "dgx-h100"})
    for (int n : {1, 2, 4, 7}) {
      std::string name = std::string(box) + ":gpus=" + std::to_string(n);
      Cluster c = Load(name);
      ASSERT_EQ(c.num_devices(), static_cast<size_t>(n)) << name;
      EXPECT_EQ(c.device(Dev(c, "gpu0")).spec.model,
                box[4] == 'a' ? "A100-SXM4-80GB" : "H100-SXM5-80GB")
          << name;
    }
  for (const char* bad :
       {"dgx-a100:gpus=0", "dgx-a100:gpus=9", "dgx-h100:gpus=x", "dgx-a100:gpus=2x"}) {
    auto c = LoadCluster(bad);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(c.status().message(), HasSubstr("gpus must be an integer 1..8")) << bad;
  }
}

}  // namespace
}  // namespace hx::hw
