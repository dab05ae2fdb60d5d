// The cluster file format: a full example, JSON, and bad files with the line of the error.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "hexplan/hw/presets.h"
#include "hexplan/hw/quantity.h"
#include "testing/cli_runner.h"
#include "testing/test_paths.h"

namespace hx::hw {
namespace {

using ::testing::HasSubstr;

constexpr const char* kServer = R"(# A 4-GPU server with two PCIe switches and one NVLink pair.
name: my-server
nodes:
  - name: box
    devices:
      - {name: gpu0, model: V100-SXM2-32GB}
      - {name: gpu1, model: V100-SXM2-32GB, clock_scale: 0.5}
      - name: gpu2
        model: T4
      - name: gpu3
        fp32: 14 TFLOPS
        fp16: 112 TFLOPS
        memory: 16GB
        memory_bandwidth: 900 GB/s
        launch_overhead: 4us
      - {name: cpu0, kind: cpu, model: Xeon E5-2698 v4, cores: 10, memory: 128GB}
      - {name: mig0, kind: mig, model: A100-80GB, mig: 3g.40gb}
    switches: [root, sw0, sw1]
links:
  - {name: membus, kind: memory, a: host, b: root, bandwidth: 76.8GB/s, latency: 100ns}
  - {name: bus0, a: root, b: sw0, bandwidth: 16GB/s, latency: 0.5us}
  - {name: bus1, a: root, b: sw1, bandwidth: 16GB/s, latency: 0.5us}
  - {a: sw0, b: gpu0, bandwidth: 16GB/s}
  - {a: sw0, b: gpu1, bandwidth: 16GB/s}
  - {a: sw1, b: gpu2, bandwidth: 16GB/s}
  - {a: sw1, b: gpu3, bandwidth: 16GB/s}
  - {a: root, b: mig0, bandwidth: 32GB/s}
  - {kind: nvlink, a: gpu0, b: gpu1, count: 2, bandwidth: 50GB/s, latency: 200ns}
  - {kind: memory, a: box.host, b: cpu0, bandwidth: 76.8 GB/s, duplex: half}
p2p:
  disable: [[gpu1, gpu2]]
)";

TEST(ClusterYaml, ReadsTheFullExample) {
  auto c = ReadClusterYaml(kServer, "server.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->name(), "my-server");
  EXPECT_EQ(c->num_devices(), 6u);
  DeviceId g0 = *c->FindDevice("gpu0"), g1 = *c->FindDevice("gpu1"), g2 = *c->FindDevice("gpu2"),
           g3 = *c->FindDevice("gpu3"), cpu = *c->FindDevice("cpu0"), mig = *c->FindDevice("mig0");
  EXPECT_DOUBLE_EQ(c->device(g1).clock_scale, 0.5);
  EXPECT_EQ(c->device(g2).spec.model, "T4");
  EXPECT_DOUBLE_EQ(c->device(g3).spec.peak_flops_fp32, 14e12);
  EXPECT_DOUBLE_EQ(c->device(g3).spec.memory_bandwidth_bytes_per_s, 900e9);
  EXPECT_EQ(c->device(g3).memory_bytes(), int64_t{16} << 30);
  EXPECT_DOUBLE_EQ(c->device(g3).spec.launch_overhead_s, 4e-6);
  EXPECT_EQ(c->device(cpu).kind, DeviceKind::kCpu);
  EXPECT_EQ(c->device(cpu).spec.cores, 10);
  EXPECT_NEAR(c->device(cpu).spec.peak_flops_fp32, 10 * 2.2e9 * 32, 1);
  EXPECT_EQ(c->device(cpu).memory_bytes(), int64_t{128} << 30);
  EXPECT_EQ(c->device(mig).kind, DeviceKind::kMig);
  EXPECT_EQ(c->device(mig).memory_bytes(), int64_t{40} << 30);
  EXPECT_NEAR(c->device(mig).spec.peak_flops_fp16, 312e12 * 3 / 7, 1e3);
  // Links: default names, bandwidth strings, latencies, duplex, count.
  ASSERT_TRUE(c->FindLink("pcie:sw0-gpu0").has_value());
  ASSERT_TRUE(c->FindLink("nvlink:gpu0-gpu1").has_value());
  const Link& nv = c->link(*c->FindLink("nvlink:gpu0-gpu1"));
  EXPECT_EQ(nv.count, 2);
  EXPECT_DOUBLE_EQ(nv.bandwidth_bytes_per_s, 50e9);
  EXPECT_NEAR(nv.latency_s, 200e-9, 1e-18);
  EXPECT_EQ(nv.line, 28);
  EXPECT_FALSE(c->link(*c->FindLink("memory:box.host-cpu0")).full_duplex);
  // Routes: gpu0/gpu1 share bus0; NVLink pair; no P2P between gpu1 and gpu2.
  EXPECT_DOUBLE_EQ(c->DeviceRoute(g0, g1).bottleneck_bytes_per_s, 50e9);
  EXPECT_TRUE(c->DeviceRoute(g1, g2).via_host);
  EXPECT_FALSE(c->DeviceRoute(g0, g2).via_host);
  EXPECT_EQ(c->link(c->HostToDevice(g0).hops[1].link).name, "bus0");
  EXPECT_EQ(c->link(c->HostToDevice(g1).hops[1].link).name, "bus0");
  EXPECT_EQ(c->link(c->HostToDevice(g2).hops[1].link).name, "bus1");
}

TEST(ClusterYaml, AcceptsJson) {
  const char* json = R"({
    "nodes": [{"name": "n0", "devices": [{"name": "gpu0", "model": "a100-80gb"},
                                         {"name": "gpu1", "model": "A100-SXM4-80GB"}]}],
    "links": [{"a": "n0.host", "b": "gpu0", "bandwidth": "31.5GB/s", "latency": "1us"},
              {"a": "n0.host", "b": "gpu1", "bandwidth": 31.5e9},
              {"kind": "nvlink", "a": "gpu0", "b": "gpu1", "bandwidth": "300 GB/s", "count": 12}]
  })";
  auto c = ReadClusterYaml(json, "box.json");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->num_devices(), 2u);
  EXPECT_DOUBLE_EQ(c->DeviceRoute(DeviceId(0), DeviceId(1)).bottleneck_bytes_per_s, 300e9);
}

struct BadCase {
  const char* what;
  std::string text;
  std::string expected;  // substring of the message, including the line
};

std::string Minimal(const std::string& extra_devices, const std::string& links) {
  return "nodes:\n"
         "  - name: n\n"
         "    devices:\n"
         "      - {name: gpu0, model: T4}\n" +
         extra_devices +
         "links:\n"
         "  - {a: host, b: gpu0, bandwidth: 16GB/s}\n" +
         links;
}

TEST(ClusterYaml, BadFilesNameTheLine) {
  std::vector<BadCase> cases = {
      {"unknown link end", Minimal("", "  - {a: gpu0, b: gpu9, bandwidth: 1GB/s}\n"),
       "bad.yaml:7: link 2 end b 'gpu9' is not a device"},
      {"negative bandwidth", Minimal("", "  - {name: x, a: host, b: gpu0, bandwidth: -3GB/s}\n"),
       "bad.yaml:7: link 'x': bandwidth must be a positive"},
      {"zero bandwidth", Minimal("", "  - {name: z, a: host, b: gpu0, bandwidth: 0}\n"),
       "bad.yaml:7: link 'z': bandwidth must be a positive"},
      {"negative latency",
       Minimal("", "  - {name: y, a: host, b: gpu0, bandwidth: 1GB/s, latency: -1us}\n"),
       "bad.yaml:7: link 'y': latency must be >= 0"},
      {"duplicate device", Minimal("      - {name: gpu0, model: P4}\n", ""),
       "bad.yaml:5: duplicate name 'gpu0' (first defined at line 4)"},
      {"duplicate node name",
       "nodes:\n  - name: n\n    devices:\n      - {name: gpu0, model: T4}\n  - name: n\n",
       "bad.yaml:5: duplicate node name 'n' (first defined at line 2)"},
      {"unreachable device", Minimal("      - {name: gpu1, model: P4}\n", ""),
       "bad.yaml:5: device 'gpu1' is not reachable"},
      {"unknown model", Minimal("      - {name: gpu1, model: V1000}\n", ""),
       "bad.yaml:5: device 'gpu1': unknown model 'V1000'"},
      {"bad unit", Minimal("", "  - {a: host, b: gpu0, bandwidth: 16 furlongs}\n"),
       "bad.yaml:7: link 2 bandwidth: unknown unit 'furlongs'"},
      {"unknown key", Minimal("", "  - {a: host, b: gpu0, bandwith: 16GB/s}\n"),
       "bad.yaml:7: unknown key 'bandwith' in a link"},
      {"bad kind", Minimal("", "  - {a: host, b: gpu0, bandwidth: 1GB/s, kind: pci}\n"),
       "bad.yaml:7: link 2: kind must be pcie"},
      {"syntax", "nodes:\n  - name: [unclosed\n", "bad.yaml:"},
      {"no nodes", "name: x\n", "bad.yaml:1: 'nodes' must be a non-empty list"},
      {"bad p2p", Minimal("", "p2p:\n  disable: [[gpu0, gpu7]]\n"),
       "bad.yaml:8: p2p.disable: unknown device 'gpu7'"},
  };
  for (const BadCase& bad : cases) {
    SCOPED_TRACE(bad.what);
    auto c = ReadClusterYaml(bad.text, "bad.yaml");
    ASSERT_FALSE(c.ok());
    EXPECT_THAT(c.status().message(), HasSubstr(bad.expected));
    EXPECT_EQ(c.status().ExitCode(), 2);
  }
}

TEST(ClusterYaml, InvalidUtf8IsAnErrorNamingFileLineAndByte) {
  // "gpu\xFF" would pass yaml-cpp and make the JSON writers throw; it stops at the reader.
  std::string text = Minimal("      - {name: \"gpu\xFF\", model: T4}\n", "");
  auto c = ReadClusterYaml(text, "bad.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().ExitCode(), 2);
  const size_t at = text.find('\xFF');
  EXPECT_EQ(c.status().message(), "bad.yaml:5:20: invalid UTF-8 at byte " + std::to_string(at) +
                                      " (text files must be UTF-8)");
  // Ill-formed anywhere counts, a comment included; well-formed multibyte names are fine.
  EXPECT_FALSE(ReadClusterYaml("# \xC0\xAF\n" + Minimal("", ""), "bad.yaml").ok());
  auto ok = ReadClusterYaml(Minimal("", "") + "name: \"caf\xC3\xA9\"\n", "ok.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->name(), "caf\xC3\xA9");
}

TEST(ClusterYaml, LoadClusterReadsFiles) {
  std::string dir = testing::MakeTempDir();
  std::string path = dir + "/server.yaml";
  std::ofstream(path) << kServer;
  auto c = LoadCluster(path);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->num_devices(), 6u);
  std::string bad = dir + "/bad.yaml";
  std::ofstream(bad) << Minimal("", "  - {a: gpu0, b: nowhere, bandwidth: 1GB/s}\n");
  auto b = LoadCluster(bad);
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr(bad + ":7:"));
}

TEST(ClusterYaml, DocumentedExampleLoads) {
  // The first ```yaml block of docs/formats.md's "## Cluster YAML" section must load.
  std::ifstream in(testing::SourceDir() + "/docs/formats.md");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  size_t section = doc.find("## Cluster YAML");
  ASSERT_NE(section, std::string::npos);
  size_t begin = doc.find("```yaml\n", section);
  ASSERT_NE(begin, std::string::npos);
  begin += 8;
  size_t end = doc.find("```", begin);
  auto c = ReadClusterYaml(doc.substr(begin, end - begin), "docs/formats.md");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->num_devices(), 5u);
  EXPECT_EQ(c->NodeNames().size(), 1u);
}

TEST(Quantity, ParsesUnits) {
  EXPECT_DOUBLE_EQ(*ParseBandwidth("16GB/s"), 16e9);
  EXPECT_DOUBLE_EQ(*ParseBandwidth("900 GB/s"), 900e9);
  EXPECT_DOUBLE_EQ(*ParseBandwidth("100Gbps"), 12.5e9);
  EXPECT_DOUBLE_EQ(*ParseBandwidth("200 Gb/s"), 25e9);
  EXPECT_DOUBLE_EQ(*ParseBandwidth("1 GiB/s"), 1073741824.0);
  EXPECT_DOUBLE_EQ(*ParseBandwidth("5e9"), 5e9);
  EXPECT_DOUBLE_EQ(*ParseSeconds("5us"), 5e-6);
  EXPECT_DOUBLE_EQ(*ParseSeconds("50 ns"), 50e-9);
  EXPECT_DOUBLE_EQ(*ParseSeconds("2ms"), 2e-3);
  EXPECT_EQ(*ParseBytes("32GB"), int64_t{32} << 30);
  EXPECT_EQ(*ParseBytes("512 MiB"), int64_t{512} << 20);
  EXPECT_DOUBLE_EQ(*ParseFlops("15.7 TFLOPS"), 15.7e12);
  EXPECT_FALSE(ParseBandwidth("fast").ok());
  EXPECT_FALSE(ParseSeconds("5 parsecs").ok());
  EXPECT_EQ(FormatBandwidth(15.75e9), "15.75 GB/s");
  EXPECT_EQ(FormatSeconds(5e-6), "5 us");
  EXPECT_EQ(FormatBytes(int64_t{32} << 30), "32 GiB");
}

}  // namespace
}  // namespace hx::hw
