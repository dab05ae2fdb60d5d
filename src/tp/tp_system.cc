#include "hexplan/tp/tp_system.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hx::tp {
namespace {

const cost::DeviceCalibration* BuiltinFor(const std::string& model) {
  const auto& all = cost::BuiltinCalibrations();
  auto it = all.find(model);
  return it == all.end() ? nullptr : &it->second;
}

}  // namespace

int64_t TpNode::memory_bytes() const {
  int64_t total = 0;
  for (const auto& g : gpus) total += g.memory_bytes;
  return total;
}

std::vector<double> TpSystem::Capabilities() const {
  std::vector<double> out;
  for (const auto& n : nodes) out.push_back(n.capability);
  return out;
}

int TpSystem::NumGpus() const {
  int total = 0;
  for (const auto& n : nodes) total += static_cast<int>(n.gpus.size());
  return total;
}

int64_t TpSystem::MemoryBytes() const {
  int64_t total = 0;
  for (const auto& n : nodes) total += n.memory_bytes();
  return total;
}

void TpSystem::NormalizeCapabilities() {
  double slowest = std::numeric_limits<double>::infinity();
  for (const auto& n : nodes)
    for (const auto& g : n.gpus)
      if (g.peak_flops > 0) slowest = std::min(slowest, g.peak_flops);
  for (auto& n : nodes) {
    n.capability = 0;
    for (auto& g : n.gpus) {
      g.capability = std::isfinite(slowest) && g.peak_flops > 0 ? g.peak_flops / slowest : 0.0;
      n.capability += g.capability;
    }
  }
}

Status TpSystem::Validate() const {
  if (nodes.empty()) return InvalidArgument("cluster '" + name + "' has no GPU nodes");
  for (const auto& n : nodes) {
    if (n.gpus.empty())
      return InvalidArgument("cluster '" + name + "': node '" + n.name + "' has no GPU");
    for (const auto& g : n.gpus) {
      if (!(g.peak_flops > 0) || !(g.capability > 0))
        return InvalidArgument("cluster '" + name + "': node '" + n.name + "' GPU '" + g.name +
                               "' has zero capability (peak FLOP/s must be > 0)");
      if (!(g.memory_bandwidth > 0))
        return InvalidArgument("cluster '" + name + "': node '" + n.name + "' GPU '" + g.name +
                               "' has no memory bandwidth");
    }
    if (n.gpus.size() > 1 && !(n.intra_bandwidth > 0))
      return InvalidArgument("cluster '" + name + "': node '" + n.name +
                             "' has no link between its GPUs");
    if (nodes.size() > 1 && !(n.inter_bandwidth > 0))
      return InvalidArgument("cluster '" + name + "': node '" + n.name +
                             "' has no route to the other nodes");
  }
  return Status::Ok();
}

StatusOr<TpSystem> TpSystemFromCluster(const hw::Cluster& cluster, const std::string& dtype) {
  if (!cluster.finalized())
    return InvalidArgument("cluster '" + cluster.name() + "' is not finalized");
  TpSystem sys;
  sys.name = cluster.name();
  std::vector<std::vector<DeviceId>> node_devices;
  for (const std::string& node : cluster.NodeNames()) {
    std::vector<DeviceId> gpus;
    for (DeviceId id : cluster.DeviceIds()) {
      const hw::Device& d = cluster.device(id);
      if (d.node == node && (d.kind == hw::DeviceKind::kGpu || d.kind == hw::DeviceKind::kMig))
        gpus.push_back(id);
    }
    if (gpus.empty()) continue;  // CPU-only nodes take no part in tensor parallelism
    TpNode n;
    n.name = node;
    for (DeviceId id : gpus) {
      const hw::Device& d = cluster.device(id);
      TpGpu g;
      g.name = d.name;
      g.peak_flops = PeakFlopsFor(d.spec, dtype) * d.clock_scale;
      g.memory_bandwidth = d.spec.memory_bandwidth_bytes_per_s;
      g.memory_bytes = d.spec.memory_bytes;
      g.launch_overhead_s = d.spec.launch_overhead_s;
      g.calibration = BuiltinFor(d.spec.model);
      n.gpus.push_back(g);
    }
    // Intra-node: the slowest route between two of its GPUs.
    double bw = std::numeric_limits<double>::infinity(), lat = 0.0;
    for (size_t a = 0; a < gpus.size(); ++a)
      for (size_t b = 0; b < gpus.size(); ++b) {
        if (a == b) continue;
        const hw::Route& r = cluster.DeviceRoute(gpus[a], gpus[b]);
        if (r.bottleneck_bytes_per_s < bw) bw = r.bottleneck_bytes_per_s, lat = r.latency_s;
      }
    n.intra_bandwidth = std::isfinite(bw) ? bw : 0.0;
    n.intra_latency_s = lat;
    sys.nodes.push_back(std::move(n));
    node_devices.push_back(gpus);
  }
  // Inter-node: from the node's first GPU to the best-connected GPU of any other node.
  for (size_t i = 0; i < sys.nodes.size(); ++i) {
    double bw = 0.0, lat = 0.0;
    for (size_t j = 0; j < sys.nodes.size(); ++j) {
      if (i == j) continue;
      const hw::Route& r = cluster.DeviceRoute(node_devices[i][0], node_devices[j][0]);
      if (r.bottleneck_bytes_per_s > bw) bw = r.bottleneck_bytes_per_s, lat = r.latency_s;
    }
    sys.nodes[i].inter_bandwidth = bw;
    sys.nodes[i].inter_latency_s = lat;
  }
  sys.NormalizeCapabilities();
  HX_RETURN_IF_ERROR(sys.Validate());
  return sys;
}

TpSystem MakeUniformSystem(const std::vector<int>& gpus_per_node, const hw::DeviceSpec& spec,
                           const std::string& dtype, const UniformSystemOptions& options) {
  TpSystem sys;
  sys.name = "uniform";
  for (size_t n = 0; n < gpus_per_node.size(); ++n) {
    TpNode node;
    node.name = "node" + std::to_string(n);
    for (int g = 0; g < gpus_per_node[n]; ++g) {
      TpGpu gpu;
      gpu.name = node.name + "-gpu" + std::to_string(g);
      gpu.peak_flops = PeakFlopsFor(spec, dtype);
      gpu.memory_bandwidth = spec.memory_bandwidth_bytes_per_s;
      gpu.memory_bytes = spec.memory_bytes;
      gpu.launch_overhead_s = spec.launch_overhead_s;
      gpu.calibration = BuiltinFor(spec.model);
      node.gpus.push_back(gpu);
    }
    node.intra_bandwidth = options.intra_bandwidth;
    node.intra_latency_s = options.intra_latency_s;
    node.inter_bandwidth = options.inter_bandwidth;
    node.inter_latency_s = options.inter_latency_s;
    sys.nodes.push_back(std::move(node));
  }
  sys.NormalizeCapabilities();
  return sys;
}

double PeakFlopsFor(const hw::DeviceSpec& spec, const std::string& dtype) {
  double v = 0.0;
  if (dtype == "fp16") v = spec.peak_flops_fp16;
  if (dtype == "bf16") v = spec.peak_flops_bf16;
  return v > 0.0 ? v : spec.peak_flops_fp32;
}

hw::DeviceSpec A100Sxm80Spec() {
  hw::DeviceSpec s;
  s.model = "A100-SXM4-80GB";
  s.peak_flops_fp32 = 19.5e12;
  s.peak_flops_fp16 = 312e12;
  s.peak_flops_bf16 = 312e12;
  s.memory_bandwidth_bytes_per_s = 2039e9;
  s.memory_bytes = 80LL * 1000 * 1000 * 1000;
  s.launch_overhead_s = 0.0;
  s.cores = 108;
  return s;
}

}  // namespace hx::tp
