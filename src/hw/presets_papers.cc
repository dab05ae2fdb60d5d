// The testbeds of the papers, built from their text and tables (docs/hardware.md lists the
// sources).

#include <string>
#include <vector>

#include "hw/link_rates.h"
#include "hw/preset_builders.h"

namespace hx::hw {
namespace {

constexpr int64_t kPaperGiB = int64_t{1} << 30;

DeviceSpec Spec(const std::string& model) {
  auto spec = FindDeviceSpec(model);
  HX_CHECK_MSG(spec.has_value(), "preset uses a model missing from the spec table: " + model);
  return *spec;
}

// host memory <-> root complex "<node>.cpu" (the CPU's memory bandwidth).
PlaceId AddRootComplex(Cluster& c, const std::string& node, double memory_bandwidth) {
  PlaceId host = c.AddHostMemory(node);
  PlaceId root = c.AddSwitch(node + ".cpu", node);
  c.AddLink(node + ".membus", LinkKind::kMemoryBus, host, root, memory_bandwidth,
            kMemoryBusLatency);
  return root;
}

void AddNvlink(Cluster& c, DeviceId a, DeviceId b, int count, double per_link) {
  const std::string& na = c.device(a).name;
  const std::string& nb = c.device(b).name;
  c.AddLink("nvlink:" + na + "-" + nb, LinkKind::kNvlink, c.PlaceOf(a), c.PlaceOf(b),
            count * per_link, kNvlinkLatency, true, count);
}

// Eight GPUs on one NVSwitch fabric, two per PCIe switch behind four PCIe buses (HGX A100/H100).
Cluster HgxEight(const std::string& name, const std::string& model, int links_per_gpu,
                 double pcie_rate, double cpu_memory_bandwidth, int gpus = 8) {
  Cluster c(name);
  const std::string node = "node0";
  PlaceId root = AddRootComplex(c, node, cpu_memory_bandwidth);
  PlaceId nvswitch = c.AddSwitch("nvswitch", node);
  for (int bus = 0; bus < (gpus + 1) / 2; ++bus) {
    std::string sw = "pcie-switch" + std::to_string(bus);
    PlaceId sw_place = c.AddSwitch(sw, node);
    c.AddLink("pcie-bus" + std::to_string(bus), LinkKind::kPcie, root, sw_place, pcie_rate,
              kPcieHopLatency);
    for (int k = 0; k < 2 && bus * 2 + k < gpus; ++k) {
      int g = bus * 2 + k;
      std::string gpu = "gpu" + std::to_string(g);
      DeviceId d = c.AddDevice(gpu, DeviceKind::kGpu, node, Spec(model));
      c.AddLink("pcie:" + gpu, LinkKind::kPcie, sw_place, c.PlaceOf(d), pcie_rate, kPcieHopLatency);
      c.AddLink("nvswitch:" + gpu, LinkKind::kNvswitch, c.PlaceOf(d), nvswitch,
                links_per_gpu * kNvlinkPerLink, kNvlinkLatency / 2, true, links_per_gpu);
    }
  }
  return c;
}

// MOIRAI Table III, average network bandwidth in Gbit/s; row = sender, column = receiver.
constexpr double kMoiraiInter[4][4] = {{0, 44.26, 32.92, 44.28},
                                       {42.39, 0, 35.32, 44.51},
                                       {33.2, 35.31, 0, 32.95},
                                       {42.08, 43.22, 33.28, 0}};
constexpr double kMoiraiIntra[4][4] = {{0, 1170.04, 626.10, 610.56},
                                       {1148.16, 0, 618.98, 581.09},
                                       {630.43, 609.82, 0, 571.96},
                                       {622.67, 575.08, 581.35, 0}};

void AddPairwiseMatrix(Cluster& c, const std::vector<DeviceId>& devices, const double (&gbit)[4][4],
                       LinkKind kind, double latency) {
  for (size_t i = 0; i < 4; ++i) {
    for (size_t j = 0; j < 4; ++j) {
      if (i == j) continue;
      const std::string& a = c.device(devices[i]).name;
      const std::string& b = c.device(devices[j]).name;
      LinkId l =
          c.AddLink(std::string(LinkKindName(kind)) + ":" + a + "->" + b, kind,
                    c.PlaceOf(devices[i]), c.PlaceOf(devices[j]), gbit[i][j] * 1e9 / 8, latency);
      c.mutable_link(l).one_way = true;
      c.mutable_link(l).pair_only = true;
    }
  }
}

}  // namespace

Cluster BuildSortingHatV100(bool hetero) {
  // SortingHat Table 2 / Fig. 8(a,b): DGX-Station-style, Xeon E5-2698 v4, 4 x V100 DGXS 32GB.
  // GPU1..GPU4 of the paper are gpu0..gpu3. Two PCIe gen3 buses, each shared by two GPUs
  // (GPU1+GPU2, GPU3+GPU4: §2 "GPU1 and GPU2 share the same PCIe bus ... GPU1 and GPU3 utilize
  // separate PCIe buses"). NVLink: 2-way GPU1-GPU4 and GPU2-GPU3, 1-way the other four pairs.
  Cluster c(hetero ? "sortinghat-v100-hetero" : "sortinghat-v100");
  const std::string node = "node0";
  PlaceId root = AddRootComplex(c, node, Spec("Xeon E5-2698 v4").memory_bandwidth_bytes_per_s);
  std::vector<DeviceId> gpus;
  for (int bus = 0; bus < 2; ++bus) {
    PlaceId sw = c.AddSwitch("pcie-switch" + std::to_string(bus), node);
    c.AddLink("pcie-bus" + std::to_string(bus), LinkKind::kPcie, root, sw, kPcieGen3x16,
              kPcieHopLatency);
    for (int k = 0; k < 2; ++k) {
      std::string gpu = "gpu" + std::to_string(bus * 2 + k);
      DeviceId d = c.AddDevice(gpu, DeviceKind::kGpu, node, Spec("V100-SXM2-32GB"));
      c.AddLink("pcie:" + gpu, LinkKind::kPcie, sw, c.PlaceOf(d), kPcieGen3x16, kPcieHopLatency);
      gpus.push_back(d);
    }
  }
  AddNvlink(c, gpus[0], gpus[3], 2, kNvlinkPerLink);
  AddNvlink(c, gpus[1], gpus[2], 2, kNvlinkPerLink);
  AddNvlink(c, gpus[0], gpus[1], 1, kNvlinkPerLink);
  AddNvlink(c, gpus[0], gpus[2], 1, kNvlinkPerLink);
  AddNvlink(c, gpus[1], gpus[3], 1, kNvlinkPerLink);
  AddNvlink(c, gpus[2], gpus[3], 1, kNvlinkPerLink);
  if (hetero) {
    // §5: GPU1 and GPU4 at 1500 MHz, GPU2 and GPU3 at 135 MHz.
    c.mutable_device(gpus[1]).clock_scale = 135.0 / 1500.0;
    c.mutable_device(gpus[2]).clock_scale = 135.0 / 1500.0;
  }
  return c;
}

Cluster BuildSortingHatA6000() {
  // SortingHat Table 2 / Fig. 8(c): AMD EPYC 7262, 3 x RTX A6000 on PCIe gen4 (one x16 bus per
  // GPU from the CPU), one 4-way NVLink bridge between GPU2 and GPU3 (gpu1 and gpu2 here).
  Cluster c("sortinghat-a6000");
  const std::string node = "node0";
  PlaceId root = AddRootComplex(c, node, Spec("EPYC 7262").memory_bandwidth_bytes_per_s);
  std::vector<DeviceId> gpus;
  for (int g = 0; g < 3; ++g) {
    std::string gpu = "gpu" + std::to_string(g);
    DeviceId d = c.AddDevice(gpu, DeviceKind::kGpu, node, Spec("RTX-A6000"));
    c.AddLink("pcie-bus" + std::to_string(g), LinkKind::kPcie, root, c.PlaceOf(d), kPcieGen4x16,
              kPcieHopLatency);
    gpus.push_back(d);
  }
  AddNvlink(c, gpus[1], gpus[2], 4, kA6000BridgePerLink);
  return c;
}

Cluster BuildP4d(bool eighty_gb) {
  // SortingHat §6: "p4d.24xlarge ... eight A100 GPUs fully connected by NVSwitch, and four PCIe
  // buses connected to DRAM"; ParvaGPU §5 uses p4de.24xlarge (A100 80GB). AWS instance pages.
  return HgxEight(eighty_gb ? "p4de-24xlarge" : "p4d-24xlarge",
                  eighty_gb ? "A100-SXM4-80GB" : "A100-SXM4-40GB", 12, kPcieGen4x16, 204.8 * kGBps);
}

Cluster BuildDgxA100(int gpus) {
  // NVIDIA DGX A100 user guide: 8 x A100 80GB, 6 NVSwitches (12 NVLinks per GPU), four PCIe gen4
  // switches with two GPUs each, 2 x AMD EPYC 7742 (8 channels DDR4-3200 each).
  return HgxEight(gpus == 8 ? "dgx-a100" : "dgx-a100:gpus=" + std::to_string(gpus),
                  "A100-SXM4-80GB", 12, kPcieGen4x16, 2 * 204.8 * kGBps, gpus);
}

Cluster BuildDgxH100(int gpus) {
  // NVIDIA DGX H100 user guide: 8 x H100 SXM5, 4 NVSwitches (18 NVLinks per GPU, 900 GB/s
  // bidirectional), PCIe gen5, 2 x Xeon Platinum 8480C (8 channels DDR5-4800 each).
  return HgxEight(gpus == 8 ? "dgx-h100" : "dgx-h100:gpus=" + std::to_string(gpus),
                  "H100-SXM5-80GB", 18, kPcieGen5x16, 2 * 307.2 * kGBps, gpus);
}

Cluster BuildMoiraiInter() {
  // MOIRAI Table III, inter-server: four single-GPU servers over 100 Gbps InfiniBand; the measured
  // average bandwidth of every ordered pair is its own one-way channel.
  Cluster c("moirai-inter");
  const char* models[4] = {"RTX-2080-Ti", "T4", "P4", "RTX-3060-Ti"};
  const double pcie[4] = {kPcieGen3x16, kPcieGen3x16, kPcieGen3x16, kPcieGen4x16};
  std::vector<DeviceId> gpus;
  for (int i = 0; i < 4; ++i) {
    std::string letter(1, static_cast<char>('A' + i));
    std::string node = "server" + letter;
    DeviceId d = c.AddDevice("gpu" + letter, DeviceKind::kGpu, node, Spec(models[i]));
    c.AddLink(node + ".pcie", LinkKind::kPcie, c.HostOf(d), c.PlaceOf(d), pcie[i], kPcieHopLatency);
    gpus.push_back(d);
  }
  AddPairwiseMatrix(c, gpus, kMoiraiInter, LinkKind::kInfiniband, kInfinibandLatency);
  return c;
}

Cluster BuildMoiraiIntra() {
  // MOIRAI Table III, intra-server: 2 x V100 32GB + 2 x P100 16GB, NVLink + NVSwitch, measured
  // pairwise bandwidth (row = sender).
  Cluster c("moirai-intra");
  const std::string node = "node0";
  PlaceId root = AddRootComplex(c, node, 76.8 * kGBps);
  const char* models[4] = {"V100-SXM2-32GB", "V100-SXM2-32GB", "P100-SXM2-16GB", "P100-SXM2-16GB"};
  std::vector<DeviceId> gpus;
  for (int i = 0; i < 4; ++i) {
    std::string gpu = std::string("gpu") + static_cast<char>('A' + i);
    DeviceId d = c.AddDevice(gpu, DeviceKind::kGpu, node, Spec(models[i]));
    c.AddLink("pcie:" + gpu, LinkKind::kPcie, root, c.PlaceOf(d), kPcieGen3x16, kPcieHopLatency);
    gpus.push_back(d);
  }
  AddPairwiseMatrix(c, gpus, kMoiraiIntra, LinkKind::kNvswitch, kNvlinkLatency);
  return c;
}

Cluster BuildChrion1080Ti() {
  // Chrion Table 4: Intel Xeon E5-2685 v3 (12 physical cores, 128 GB) + GTX 1080 Ti.
  Cluster c("chrion-1080ti");
  const std::string node = "node0";
  DeviceSpec cpu = Spec("Xeon E5-2685 v3");
  cpu.memory_bytes = 128 * kPaperGiB;
  DeviceId gpu = c.AddDevice("gpu0", DeviceKind::kGpu, node, Spec("GTX-1080-Ti"));
  DeviceId cpu0 = c.AddDevice("cpu0", DeviceKind::kCpu, node, cpu);
  PlaceId host = c.HostOf(gpu);
  c.AddLink("pcie:gpu0", LinkKind::kPcie, host, c.PlaceOf(gpu), kPcieGen3x16, kPcieHopLatency);
  c.AddLink("membus:cpu0", LinkKind::kMemoryBus, host, c.PlaceOf(cpu0),
            cpu.memory_bandwidth_bytes_per_s, kMemoryBusLatency);
  return c;
}

}  // namespace hx::hw
