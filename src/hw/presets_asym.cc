// AsymGroup's simulated A100 clusters (AsymGroup §5 and Table 1): NVLink 600 GB/s bidirectional and
// 50 ns inside a node, 200 GB/s bidirectional and 200 ns between nodes.
//
// Model: inside a node every GPU joins the node's fabric place "<node>.fabric" with a 300 GB/s per
// direction, 25 ns link (GPU to GPU: 300 GB/s, 50 ns). Each node's fabric joins the network switch
// "net" with a 100 GB/s per direction, 75 ns link, so GPU to GPU across nodes is 100 GB/s per
// direction and 25 + 75 + 75 + 25 = 200 ns; the GPUs of a node share its network link. Host memory
// reaches each GPU over PCIe gen4 x16.

#include <cstdlib>
#include <string>
#include <vector>

#include "hw/link_rates.h"
#include "hw/preset_builders.h"

namespace hx::hw {
namespace {

constexpr double kIntraBandwidth = 600e9 / 2;
constexpr double kIntraLatency = 50e-9;
constexpr double kInterBandwidth = 200e9 / 2;
constexpr double kInterLatency = 200e-9;
constexpr int kTable1Nodes = 16;
constexpr int kMaxNodes = 128;
constexpr int kMaxGpus = 256;
constexpr int kMaxGpusPerNode = 16;

StatusOr<int> ParseCount(const std::string& text, const std::string& what, int lo, int hi) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end == nullptr || *end != '\0' || v < lo || v > hi) {
    return InvalidArgument("asym preset: " + what + " must be an integer in [" +
                           std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + text +
                           "'");
  }
  return static_cast<int>(v);
}

}  // namespace

StatusOr<Cluster> BuildAsymCluster(const std::string& name, const std::vector<int>& gpus_per_node) {
  if (gpus_per_node.empty()) return InvalidArgument(name + ": needs at least one node");
  auto spec = FindDeviceSpec("A100-SXM4-40GB");
  HX_CHECK(spec.has_value());
  Cluster c(name);
  PlaceId net;
  if (gpus_per_node.size() > 1) net = c.AddSwitch("net");
  for (size_t n = 0; n < gpus_per_node.size(); ++n) {
    std::string node = "node" + std::to_string(n);
    PlaceId host = c.AddHostMemory(node);
    PlaceId fabric = c.AddSwitch(node + ".fabric", node);
    for (int g = 0; g < gpus_per_node[n]; ++g) {
      std::string gpu = node + ".gpu" + std::to_string(g);
      DeviceId d = c.AddDevice(gpu, DeviceKind::kGpu, node, *spec);
      c.AddLink("nvlink:" + gpu, LinkKind::kNvlink, c.PlaceOf(d), fabric, kIntraBandwidth,
                kIntraLatency / 2, true, 12);
      c.AddLink("pcie:" + gpu, LinkKind::kPcie, host, c.PlaceOf(d), kPcieGen4x16, kPcieHopLatency);
    }
    if (net.valid()) {
      c.AddLink("net:" + node, LinkKind::kInfiniband, fabric, net, kInterBandwidth,
                (kInterLatency - kIntraLatency) / 2);
    }
  }
  return c;
}

StatusOr<Cluster> BuildAsymPreset(const std::string& args) {
  std::vector<int> gpus;
  if (!args.empty() && (args[0] == 'S' || args[0] == 's')) {
    // Table 1: S<k> = k nodes with 2 GPUs and 16 - k nodes with 1 GPU (the table lists even k).
    HX_ASSIGN_OR_RETURN(int k, ParseCount(args.substr(1), "S<k>: k", 0, kTable1Nodes));
    gpus.assign(k, 2);
    gpus.resize(kTable1Nodes, 1);
  } else if (args.rfind("nodes=", 0) == 0) {
    HX_ASSIGN_OR_RETURN(int n, ParseCount(args.substr(6), "nodes", 1, kMaxNodes));
    gpus.assign(n, 1);
  } else if (args.rfind("gpus=", 0) == 0) {
    std::string list = args.substr(5);
    size_t start = 0;
    while (true) {
      size_t comma = list.find(',', start);
      std::string item =
          list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      HX_ASSIGN_OR_RETURN(int g, ParseCount(item, "GPUs per node", 1, kMaxGpusPerNode));
      gpus.push_back(g);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (gpus.size() > kMaxNodes) {
      return InvalidArgument("asym preset: at most " + std::to_string(kMaxNodes) + " nodes");
    }
  } else {
    return InvalidArgument(
        "unknown asym preset 'asym:" + args +
        "': expected asym:S<k> (k = 0..16), asym:nodes=N or asym:gpus=1,1,2,...");
  }
  int total = 0;
  for (int g : gpus) total += g;
  if (total > kMaxGpus) {
    return InvalidArgument("asym preset: at most " + std::to_string(kMaxGpus) + " GPUs, got " +
                           std::to_string(total));
  }
  return BuildAsymCluster("asym:" + args, gpus);
}

}  // namespace hx::hw
