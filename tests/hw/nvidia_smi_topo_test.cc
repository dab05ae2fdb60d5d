// Import of `nvidia-smi topo -m` captures (tests/hw/fixtures).

#include "hexplan/hw/nvidia_smi_topo.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "hexplan/core/file_util.h"
#include "hexplan/hw/presets.h"
#include "testing/test_paths.h"

namespace hx::hw {
namespace {

using ::testing::HasSubstr;

std::string Fixture(const std::string& name) {
  auto text = ReadFileToString(testing::SourceDir() + "/tests/hw/fixtures/" + name);
  EXPECT_TRUE(text.ok()) << name;
  return text.ok() ? *text : "";
}

Cluster Import(const std::string& topo, const std::string& names) {
  NvidiaSmiImportOptions options;
  if (!names.empty()) options.gpu_names_csv = Fixture(names);
  auto c = ImportNvidiaSmiTopo(Fixture(topo), topo, options);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? std::move(c).value() : Cluster();
}

std::string BusOf(const Cluster& c, DeviceId d) {
  for (const RouteHop& h : c.HostToDevice(d).hops) {
    const Link& l = c.link(h.link);
    if (l.name.rfind("pcie-bus", 0) == 0) return l.name;
  }
  return "";
}

std::string RootOf(const Cluster& c, DeviceId d) {
  for (const RouteHop& h : c.HostToDevice(d).hops) {
    const Link& l = c.link(h.link);
    if (l.kind == LinkKind::kMemoryBus) return c.place(l.b).name;
  }
  return "";
}

TEST(NvidiaSmiTopo, Dgx1HybridCubeMesh) {
  Cluster c = Import("dgx1_v100_topo.txt", "dgx1_v100_gpu_names.csv");
  ASSERT_EQ(c.num_devices(), 8u);
  EXPECT_EQ(c.device(DeviceId(0)).spec.model, "V100-SXM2-16GB");
  // Every V100 uses all six of its NVLink bricks; 16 NVLink pairs in the hybrid cube mesh.
  std::map<std::string, int> bricks;
  int pairs = 0;
  for (size_t i = 0; i < c.num_links(); ++i) {
    const Link& l = c.link(LinkId(i));
    if (l.kind != LinkKind::kNvlink) continue;
    ++pairs;
    bricks[c.place(l.a).name] += l.count;
    bricks[c.place(l.b).name] += l.count;
    EXPECT_DOUBLE_EQ(l.bandwidth_bytes_per_s, l.count * 25e9);
  }
  EXPECT_EQ(pairs, 16);
  for (const auto& [gpu, n] : bricks) EXPECT_EQ(n, 6) << gpu;
  EXPECT_DOUBLE_EQ(c.DeviceRoute(DeviceId(0), DeviceId(3)).bottleneck_bytes_per_s, 50e9);  // NV2
  EXPECT_DOUBLE_EQ(c.DeviceRoute(DeviceId(0), DeviceId(1)).bottleneck_bytes_per_s, 25e9);  // NV1
  // GPU pairs behind one PCIe switch (PIX to the same HCA), two sockets by CPU affinity.
  EXPECT_EQ(BusOf(c, DeviceId(0)), BusOf(c, DeviceId(1)));
  EXPECT_EQ(BusOf(c, DeviceId(2)), BusOf(c, DeviceId(3)));
  EXPECT_NE(BusOf(c, DeviceId(0)), BusOf(c, DeviceId(2)));
  EXPECT_EQ(RootOf(c, DeviceId(0)), RootOf(c, DeviceId(3)));
  EXPECT_NE(RootOf(c, DeviceId(0)), RootOf(c, DeviceId(4)));
  EXPECT_NEAR(c.HostToDevice(DeviceId(5)).bottleneck_bytes_per_s, 15.75e9, 1e6);
  // GPU0 -> GPU5 has no NVLink: PCIe across sockets, staged through host memory.
  EXPECT_NEAR(c.DeviceRoute(DeviceId(0), DeviceId(5)).bottleneck_bytes_per_s, 15.75e9, 1e6);
  EXPECT_TRUE(c.DeviceRoute(DeviceId(0), DeviceId(5)).via_host);
}

TEST(NvidiaSmiTopo, DgxA100Nv12IsAnNvswitch) {
  Cluster c = Import("dgx_a100_topo.txt", "dgx_a100_gpu_names.csv");
  ASSERT_EQ(c.num_devices(), 8u);
  EXPECT_EQ(c.device(DeviceId(7)).spec.model, "A100-SXM4-40GB");
  ASSERT_TRUE(c.FindPlace("nvswitch").has_value());
  EXPECT_EQ(c.LinksAt(*c.FindPlace("nvswitch")).size(), 8u);
  for (DeviceId a : c.DeviceIds()) {
    for (DeviceId b : c.DeviceIds()) {
      if (a == b) continue;
      EXPECT_DOUBLE_EQ(c.DeviceRoute(a, b).bottleneck_bytes_per_s, 300e9);
      EXPECT_EQ(c.DeviceRoute(a, b).hops.size(), 2u);
    }
  }
  // Four PCIe switches with two GPUs each (PXB through the shared HCAs); four NUMA roots.
  std::map<std::string, int> per_bus, per_root;
  for (DeviceId d : c.DeviceIds()) {
    per_bus[BusOf(c, d)]++;
    per_root[RootOf(c, d)]++;
  }
  EXPECT_EQ(per_bus.size(), 4u);
  EXPECT_EQ(per_root.size(), 4u);
  EXPECT_NEAR(c.HostToDevice(DeviceId(0)).bottleneck_bytes_per_s, 31.5e9, 1e6);
}

TEST(NvidiaSmiTopo, PcieBoxWithPixPhbSys) {
  Cluster c = Import("pcie_4gpu_topo.txt", "pcie_4gpu_gpu_names.csv");
  ASSERT_EQ(c.num_devices(), 4u);
  EXPECT_EQ(c.device(DeviceId(0)).spec.model, "RTX-2080-Ti");
  EXPECT_FALSE(c.FindPlace("nvswitch").has_value());
  // PIX: GPU0 and GPU1 share a switch and its bus; PHB: GPU2 and GPU3 have their own buses.
  EXPECT_EQ(BusOf(c, DeviceId(0)), BusOf(c, DeviceId(1)));
  EXPECT_NE(BusOf(c, DeviceId(2)), BusOf(c, DeviceId(3)));
  EXPECT_EQ(RootOf(c, DeviceId(2)), RootOf(c, DeviceId(3)));
  EXPECT_NE(RootOf(c, DeviceId(0)), RootOf(c, DeviceId(2)));
  EXPECT_EQ(c.DeviceRoute(DeviceId(0), DeviceId(1)).hops.size(), 2u);  // below the switch
  EXPECT_FALSE(c.DeviceRoute(DeviceId(2), DeviceId(3)).via_host);      // through the root
  EXPECT_TRUE(c.DeviceRoute(DeviceId(1), DeviceId(2)).via_host);       // SYS: across sockets
}

TEST(NvidiaSmiTopo, WithoutNamesUsesTheDefaultModel) {
  Cluster c = Import("pcie_4gpu_topo.txt", "");
  EXPECT_EQ(c.device(DeviceId(0)).spec.model, "A100-SXM4-80GB");
}

TEST(NvidiaSmiTopo, LoadClusterRecognisesCaptures) {
  auto c = LoadCluster(testing::SourceDir() + "/tests/hw/fixtures/dgx1_v100_topo.txt");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->num_devices(), 8u);
}

TEST(NvidiaSmiTopo, BadInputs) {
  NvidiaSmiImportOptions options;
  EXPECT_THAT(ImportNvidiaSmiTopo("hello\n", "t.txt", options).status().message(),
              HasSubstr("no header row"));
  std::string bad_cell = "\tGPU0\tGPU1\nGPU0\t X \tNVX\nGPU1\tNVX\t X \n";
  EXPECT_THAT(ImportNvidiaSmiTopo(bad_cell, "t.txt", options).status().message(),
              HasSubstr("t.txt:2: unknown connection 'NVX'"));
  // An NVLink count too long for an int threw out of the reader (found by fuzz_nvidia_smi_topo).
  std::string huge_nv = "\tGPU0\tGPU1\nGPU0\t X \tNV21111111111\nGPU1\tNV2\t X \n";
  EXPECT_THAT(ImportNvidiaSmiTopo(huge_nv, "t.txt", options).status().message(),
              HasSubstr("t.txt:2: bad NVLink count 'NV21111111111'"));
  std::string short_row = "\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPIX\n";
  EXPECT_THAT(ImportNvidiaSmiTopo(short_row, "t.txt", options).status().message(),
              HasSubstr("t.txt:3: row 'GPU1' has 1 cells, expected 2"));
  std::string asym = "\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tSYS\t X \n";
  EXPECT_THAT(ImportNvidiaSmiTopo(asym, "t.txt", options).status().message(),
              HasSubstr("not symmetric"));
  options.gpu_names_csv = "name\nTesla V100-SXM2-16GB\n";
  std::string ok = "\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV2\t X \n";
  EXPECT_THAT(ImportNvidiaSmiTopo(ok, "t.txt", options).status().message(),
              HasSubstr("1 GPU names for the 2 GPUs"));
  options.gpu_names_csv = "name\nVoodoo 5\nVoodoo 5\n";
  EXPECT_THAT(ImportNvidiaSmiTopo(ok, "t.txt", options).status().message(),
              HasSubstr("'Voodoo 5' is not in the device table"));
}

TEST(NvidiaSmiTopo, DuplicateGpusAreNamedAsDuplicates) {
  NvidiaSmiImportOptions options;
  // A column twice in the header (was: "row 'GPU1' out of order").
  std::string header = "\tGPU0\tGPU1\tGPU1\nGPU0\t X \tNV2\tNV2\nGPU1\tNV2\t X \tNV2\n";
  EXPECT_THAT(ImportNvidiaSmiTopo(header, "t.txt", options).status().message(),
              HasSubstr("t.txt:1: duplicate column 'GPU1' in the header (columns 2 and 3)"));
  // A row twice: both lines named.
  std::string rows = "\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU0\t X \tNV2\nGPU1\tNV2\t X \n";
  auto c = ImportNvidiaSmiTopo(rows, "t.txt", options);
  EXPECT_EQ(c.status().ExitCode(), 2);
  EXPECT_THAT(c.status().message(), HasSubstr("t.txt:3: duplicate row 'GPU0' (first at line 2)"));
}

TEST(NvidiaSmiTopo, InvalidUtf8IsAnErrorNamingFileLineAndByte) {
  NvidiaSmiImportOptions options;
  std::string topo = "\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV2\t X \n\nLegend: \xE2\x82\n";
  auto c = ImportNvidiaSmiTopo(topo, "t.txt", options);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().ExitCode(), 2);
  EXPECT_THAT(c.status().message(),
              HasSubstr("t.txt:5:9: invalid UTF-8 at byte " + std::to_string(topo.find('\xE2'))));
  auto names = ParseGpuNamesCsv("name\nTesla V100\xFF\n", "n.csv");
  ASSERT_FALSE(names.ok());
  EXPECT_EQ(names.status().ExitCode(), 2);
  EXPECT_THAT(names.status().message(), HasSubstr("n.csv:2:11: invalid UTF-8 at byte 15"));
  // Through the import options too: the CSV is named by its own source.
  options.gpu_names_csv = "name\nTesla V100\xFF\n";
  options.gpu_names_source = "names.csv";
  topo = "\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV2\t X \n";
  EXPECT_THAT(ImportNvidiaSmiTopo(topo, "t.txt", options).status().message(),
              HasSubstr("names.csv:2:11: invalid UTF-8"));
}

TEST(NvidiaSmiTopo, GpuNameCsv) {
  auto names = ParseGpuNamesCsv("index, name\n0, NVIDIA H100 80GB HBM3\n1, NVIDIA H100 80GB HBM3\n",
                                "n.csv");
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->size(), 2u);
  EXPECT_EQ((*names)[1], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(MatchGpuName("NVIDIA H100 80GB HBM3")->model, "H100-SXM5-80GB");
  EXPECT_EQ(MatchGpuName("Tesla V100-PCIE-32GB")->model, "V100-PCIe-32GB");
  EXPECT_EQ(MatchGpuName("NVIDIA A100-SXM4-80GB")->model, "A100-SXM4-80GB");
  EXPECT_EQ(MatchGpuName("Tesla T4")->model, "T4");
  EXPECT_EQ(MatchGpuName("NVIDIA GeForce RTX 3060 Ti")->model, "RTX-3060-Ti");
  EXPECT_FALSE(MatchGpuName("Matrox G200").has_value());
}

}  // namespace
}  // namespace hx::hw
