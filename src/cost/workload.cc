#include "hexplan/cost/workload.h"

#include <string>

#include "hexplan/core/file_util.h"
#include "hexplan/graph/efficientmip_io.h"
#include "hexplan/graph/pipedream_io.h"

namespace hx::cost {
namespace {

constexpr double kMsToS = 1e-3;
// EfficientMIP's edge costs are size / 2 GiB/s (PROVENANCE.md): its accelerators hang off host
// memory by this link.
constexpr double kEfficientMipLinkBytesPerS = 2147483648.0;
// CPU cores share host DRAM (EfficientMIP moves nothing between them): a memory bus so fast that
// CPU<->CPU transfers round to zero.
constexpr double kSharedDramBytesPerS = 1e15;

std::string Stem(const std::string& path) {
  std::string stem = path.substr(path.find_last_of('/') + 1);
  if (auto dot = stem.rfind('.'); dot != std::string::npos && dot > 0) stem.resize(dot);
  return stem;
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

std::string FirstNonBlankLine(const std::string& text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) return line;
    pos = end + 1;
  }
  return "";
}

enum class Format { kUnknown, kMoirai, kEfficientMip, kPipeDream };

Format DetectFormat(const std::string& path, const std::string& text) {
  std::string first = FirstNonBlankLine(text);
  if (first.size() >= 3 && static_cast<unsigned char>(first[0]) == 0xEF) first = first.substr(3);
  if (StartsWith(first, "task,c_task,")) return Format::kMoirai;
  if (graph::LooksLikeEfficientMipJson(text)) return Format::kEfficientMip;
  if (StartsWith(first, "node") && first.find(" -- ") != std::string::npos &&
      first.find("forward_compute_time=") != std::string::npos) {
    return Format::kPipeDream;
  }
  return Format::kUnknown;
}

}  // namespace

// Defined in moirai_workload.cc.
StatusOr<Workload> ParseMoiraiCsv(const std::string& text, const std::string& source_name);

bool IsWorkloadFile(const std::string& path) {
  std::string ext = FileExtension(path);
  if (ext != "csv" && ext != "json" && ext != "txt") return false;
  auto text = ReadFileToString(path);
  if (!text.ok()) return false;
  return DetectFormat(path, *text) != Format::kUnknown;
}

StatusOr<Workload> ReadWorkloadFile(const std::string& path) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  switch (DetectFormat(path, text)) {
    case Format::kMoirai:
      return ParseMoiraiCsv(text, path);
    case Format::kEfficientMip:
      return ReadEfficientMipWorkload(path);
    case Format::kPipeDream:
      return ReadPipeDreamGraph(path);
    case Format::kUnknown:
      break;
  }
  return InvalidArgument(path +
                         ": not a workload file (expected a MOIRAI CSV with header "
                         "\"task,c_task,...\", EfficientMIP JSON with \"maxSizePerFPGA\"/"
                         "\"fpgaLatency\", or a PipeDream graph.txt)");
}

StatusOr<Workload> ReadMoiraiCsv(const std::string& path) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseMoiraiCsv(text, path);
}

StatusOr<Workload> ReadEfficientMipWorkload(const std::string& path) {
  HX_ASSIGN_OR_RETURN(graph::EfficientMipWorkload mip, graph::ReadEfficientMipFile(path));
  Workload w;
  w.format = "efficientmip";
  w.name = mip.graph.name().empty() ? Stem(path) : mip.graph.name();
  const std::string kAccModel = "efficientmip-accelerator";
  const std::string kCpuModel = "efficientmip-cpu";
  for (const graph::EfficientMipNode& n : mip.nodes) {
    const std::string& name = mip.graph.node(n.node).name;
    if (n.supported_on_accelerator) {
      w.profile.SetNodeTime(name, kAccModel, n.accelerator_latency_ms * kMsToS);
    } else {
      w.profile.SetNodeUnsupported(name, kAccModel);
    }
    w.profile.SetNodeTime(name, kCpuModel, n.cpu_latency_ms * kMsToS);
    w.profile.SetNodeMemory(name, n.size_bytes);
  }

  // The implicit cluster: k accelerators and maxCPUs CPUs around one host memory.
  hw::Cluster cluster(w.name + "-efficientmip");
  const std::string node = "host";
  PlaceId host = cluster.AddHostMemory(node);
  // Anonymous parts: every op is profiled, so the roofline figures are never consulted; the hw
  // layer needs a positive peak, so it gets a placeholder of 1 FLOP/s (memory bandwidth 0 =
  // unknown).
  hw::DeviceSpec acc_spec;
  acc_spec.model = kAccModel;
  acc_spec.peak_flops_fp32 = 1.0;
  acc_spec.memory_bytes = mip.max_size_per_accelerator_bytes;
  hw::DeviceSpec cpu_spec;
  cpu_spec.model = kCpuModel;
  cpu_spec.peak_flops_fp32 = 1.0;
  std::vector<DeviceId> accelerators;
  for (int64_t i = 0; i < mip.max_accelerators; ++i) {
    std::string name = "acc" + std::to_string(i);
    DeviceId d = cluster.AddDevice(name, hw::DeviceKind::kGpu, node, acc_spec);
    cluster.AddLink("pcie:" + name, hw::LinkKind::kPcie, host, cluster.PlaceOf(d),
                    kEfficientMipLinkBytesPerS, 0.0);
    accelerators.push_back(d);
  }
  for (size_t i = 0; i < accelerators.size(); ++i) {
    for (size_t j = i + 1; j < accelerators.size(); ++j) {
      cluster.SetPeerToPeer(accelerators[i], accelerators[j], false);
    }
  }
  for (int64_t i = 0; i < mip.max_cpus; ++i) {
    std::string name = "cpu" + std::to_string(i);
    DeviceId d = cluster.AddDevice(name, hw::DeviceKind::kCpu, node, cpu_spec);
    cluster.AddLink("dram:" + name, hw::LinkKind::kMemoryBus, host, cluster.PlaceOf(d),
                    kSharedDramBytesPerS, 0.0);
  }
  Status finalized = cluster.Finalize();
  if (!finalized.ok()) return finalized.WithContext(path + ": implicit cluster");
  w.cluster = std::move(cluster);
  w.graph = std::move(mip.graph);
  return w;
}

StatusOr<Workload> ReadPipeDreamGraph(const std::string& path) {
  HX_ASSIGN_OR_RETURN(graph::PipeDreamProfile pd, graph::ReadPipeDreamGraphFile(path));
  Workload w;
  w.format = "pipedream";
  w.name = pd.graph.name().empty() ? Stem(path) : pd.graph.name();
  for (const graph::PipeDreamLayer& layer : pd.layers) {
    if (!pd.graph.node(layer.node).is_op()) continue;
    // Measured on one GPU the repository does not name: the times apply to any GPU.
    const std::string& name = pd.graph.node(layer.node).name;
    w.profile.SetNodeTime(name, "gpu", layer.forward_ms * kMsToS);
    w.profile.SetNodeMemory(name, layer.activation_bytes + layer.parameter_bytes);
  }
  w.graph = std::move(pd.graph);
  return w;
}

}  // namespace hx::cost
