#include "hexplan/cost/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "hexplan/cost/op_class.h"

namespace hx::cost {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool IsGpuLike(hw::DeviceKind kind) {
  return kind == hw::DeviceKind::kGpu || kind == hw::DeviceKind::kMig;
}

Status CheckFraction(double v, const char* name) {
  if (!(v > 0.0) || !std::isfinite(v)) {
    return InvalidArgument(std::string("cost model option ") + name +
                           ": expected a positive efficiency, got " + std::to_string(v));
  }
  return Status::Ok();
}

double ClockScale(const hw::Device& device) {
  return device.clock_scale > 0.0 ? device.clock_scale : 1.0;
}

// (x + half) / (peak * max): the time of work x on a curve that reaches max * x / (x + half) of
// peak; 0 for no work, infinite without a peak.
double CurveTime(double x, double half, double peak, double max_fraction) {
  if (!(x > 0.0)) return 0.0;
  return peak > 0.0 ? (x + half) / (peak * max_fraction) : kInf;
}

}  // namespace

const char* CostModelKindName(CostModelKind kind) {
  return kind == CostModelKind::kRoofline ? "roofline" : "calibrated";
}

std::optional<CostModelKind> ParseCostModelKind(const std::string& name) {
  if (name == "calibrated") return CostModelKind::kCalibrated;
  if (name == "roofline") return CostModelKind::kRoofline;
  return std::nullopt;
}

Status CostModelOptions::Validate() const {
  HX_RETURN_IF_ERROR(CheckFraction(gpu_compute_efficiency, "gpu_compute_efficiency"));
  HX_RETURN_IF_ERROR(CheckFraction(gpu_memory_efficiency, "gpu_memory_efficiency"));
  HX_RETURN_IF_ERROR(CheckFraction(cpu_compute_efficiency, "cpu_compute_efficiency"));
  HX_RETURN_IF_ERROR(CheckFraction(cpu_memory_efficiency, "cpu_memory_efficiency"));
  for (const auto& [model, eff] : model_efficiency) {
    std::string prefix = "model_efficiency[" + model + "].";
    HX_RETURN_IF_ERROR(CheckFraction(eff.compute, (prefix + "compute").c_str()));
    HX_RETURN_IF_ERROR(CheckFraction(eff.memory, (prefix + "memory").c_str()));
  }
  if (!(resident_weight_fraction >= 0.0 && resident_weight_fraction <= 1.0))
    return InvalidArgument(
        "cost model option resident_weight_fraction: expected a fraction in "
        "[0, 1], got " +
        std::to_string(resident_weight_fraction));
  for (const auto& [model, calibration] : calibrations) {
    if (calibration.model != model)
      return InvalidArgument("cost model option calibrations[" + model +
                             "]: the calibration is for '" + calibration.model + "'");
    HX_RETURN_IF_ERROR(calibration.Validate());
  }
  return Status::Ok();
}

CostModel::CostModel(const graph::Graph& graph, const hw::Cluster& cluster,
                     CostModelOptions options, const Profile* profile)
    : graph_(&graph), cluster_(&cluster), options_(std::move(options)), profile_(profile) {
  op_costs_.reserve(graph.num_nodes());
  dtype_of_op_.reserve(graph.num_nodes());
  for (NodeId id : graph.NodeIds()) {
    op_costs_.push_back(graph.node(id).is_op() ? graph::ComputeOpCost(graph, id) : graph::OpCost{});
    dtype_of_op_.push_back(graph::DTypeName(OpComputeDType(graph, id)));
  }
  host_bus_sharing_.assign(cluster.num_devices(), 1);
  std::vector<DeviceId> devices = cluster.DeviceIds();
  for (DeviceId d : devices) {
    if (IsGpuLike(cluster.device(d).kind)) ++num_gpus_;
  }
  if (cluster.finalized()) {
    // PCIe links on each GPU's host route, then for each device the busiest of its route's links.
    std::vector<std::set<size_t>> route_links(cluster.num_devices());
    for (DeviceId d : devices) {
      for (const hw::RouteHop& hop : cluster.HostToDevice(d).hops) {
        // The PCIe bus is what DHA contends for; the host memory bus is shared by everyone.
        if (cluster.link(hop.link).kind == hw::LinkKind::kPcie) {
          route_links[d.index()].insert(hop.link.index());
        }
      }
    }
    for (DeviceId d : devices) {
      int best = 1;
      for (size_t link : route_links[d.index()]) {
        int sharing = 0;
        for (DeviceId g : devices) {
          if (IsGpuLike(cluster.device(g).kind) && route_links[g.index()].count(link)) ++sharing;
        }
        best = std::max(best, sharing);
      }
      host_bus_sharing_[d.index()] = best;
    }
  }
  SetupCalibrations();
}

void CostModel::SetupCalibrations() {
  op_class_.reserve(graph_->num_nodes());
  for (NodeId id : graph_->NodeIds()) op_class_.push_back(ClassifyOp(*graph_, id));
  calibration_.assign(cluster_->num_devices(), nullptr);
  shared_bus_efficiency_.assign(cluster_->num_links(), 1.0);
  if (options_.kind == CostModelKind::kRoofline) return;
  user_calibrations_ =
      std::make_shared<const std::map<std::string, DeviceCalibration>>(options_.calibrations);
  for (DeviceId d : cluster_->DeviceIds()) {
    const hw::Device& dev = cluster_->device(d);
    // GPUs and CPUs (a CPU calibration sets its per-op dispatch and small-kernel rates; its copies
    // are the GPU's at the other end).
    const bool calibratable = IsGpuLike(dev.kind) || dev.kind == hw::DeviceKind::kCpu;
    if (!calibratable || options_.model_efficiency.count(dev.spec.model)) continue;
    auto user = user_calibrations_->find(dev.spec.model);
    if (user != user_calibrations_->end()) {
      calibration_[d.index()] = &user->second;
      continue;
    }
    auto builtin = BuiltinCalibrations().find(dev.spec.model);
    if (builtin != BuiltinCalibrations().end()) calibration_[d.index()] = &builtin->second;
  }
  if (!cluster_->finalized()) return;
  for (DeviceId d : cluster_->DeviceIds()) {
    const DeviceCalibration* c = calibration_[d.index()];
    if (c == nullptr || !IsGpuLike(cluster_->device(d).kind)) continue;
    for (const hw::RouteHop& hop : cluster_->HostToDevice(d).hops) {
      // The PCIe links copies contend for (as HostBusSharing counts them), not the memory bus.
      if (cluster_->link(hop.link).kind != hw::LinkKind::kPcie) continue;
      double& e = shared_bus_efficiency_[hop.link.index()];
      e = std::min(e, c->copy.shared_bus_efficiency);
    }
  }
}

double CostModel::LaunchCost(DeviceId device) const {
  const DeviceCalibration* c = calibration_[device.index()];
  return c != nullptr ? c->kernel_launch_s : cluster_->device(device).spec.launch_overhead_s;
}

double CostModel::CalibratedFlops(const DeviceCalibration& c, NodeId op) const {
  const double flops = op_costs_[op.index()].flops;
  // Winograd's count, where the file has a curve fitted to it (else the parent's direct count).
  if (op_class_[op.index()] == OpClass::kWinogradConvolution &&
      c.classes.count(OpClass::kWinogradConvolution))
    return flops / kWinogradFlopDivisor;
  return flops;
}

double CostModel::ModelTime(NodeId op, DeviceId device) const {
  const DeviceCalibration* c = calibration_[device.index()];
  if (c == nullptr) return RooflineTime(op, device);
  if (!graph_->node(op).is_op()) return 0.0;
  const hw::Device& dev = cluster_->device(device);
  const graph::OpCost& cost = op_costs_[op.index()];
  const ClassFit& fit = c->Fit(op_class_[op.index()]);
  double compute = CurveTime(CalibratedFlops(*c, op), fit.compute_half_flops,
                             PeakFlopsFor(op, device), fit.compute_max);
  const double bytes = static_cast<double>(cost.bytes_moved()) + LayerNormExtraBytes(*graph_, op);
  double memory = CurveTime(bytes, fit.memory_half_bytes, dev.spec.memory_bandwidth_bytes_per_s,
                            fit.memory_max);
  // The class's floor (ClassFit::min_s) bounds the kernel's own time, not the launch added to it;
  // it is the kernel's shortest run on the device, so it scales with the clock as the curve does.
  return std::max(fit.min_s / ClockScale(dev),
                  fit.fixed_s + std::max(compute, memory) / ClockScale(dev)) +
         c->kernel_launch_s;
}

CopyCost CostModel::CopyCostFor(PlaceId src, PlaceId dst, HostMemory memory) const {
  auto calibration_at = [this](PlaceId p) -> const DeviceCalibration* {
    // Copies are the GPU's: a CPU device's end reads host memory.
    const hw::Place& place = cluster_->place(p);
    if (place.kind != hw::PlaceKind::kDevice || !IsGpuLike(cluster_->device(place.device).kind))
      return nullptr;
    return calibration_[place.device.index()];
  };
  const DeviceCalibration* a = calibration_at(src);
  const DeviceCalibration* b = calibration_at(dst);
  auto is_gpu = [this](PlaceId p) {
    const hw::Place& place = cluster_->place(p);
    return place.kind == hw::PlaceKind::kDevice && IsGpuLike(cluster_->device(place.device).kind);
  };
  if (is_gpu(src) && is_gpu(dst) && (a != nullptr || b != nullptr)) {
    if (cluster_->GetRoute(src, dst).via_host) {
      // Staged through host memory: down from `src`, then up to `dst`.
      const CopyFit& down = (a ? a : b)->copy.d2h_pinned;
      const CopyFit& up = (b ? b : a)->copy.h2d_pinned;
      return {std::min(down.fraction, up.fraction), down.fixed_s + up.fixed_s};
    }
    const CopyFit& peer = (a ? a : b)->copy.peer;
    return {peer.fraction, peer.fixed_s};
  }
  if (b != nullptr) {
    const CopyFit& f = b->copy.For(CopyDirection::kHostToDevice, memory);
    return {f.fraction, f.fixed_s};
  }
  if (a != nullptr) {
    const CopyFit& f = a->copy.For(CopyDirection::kDeviceToHost, memory);
    return {f.fraction, f.fixed_s};
  }
  return {};
}

double CostModel::CopyTime(int64_t bytes, PlaceId src, PlaceId dst, HostMemory memory) const {
  const hw::Route& route = cluster_->GetRoute(src, dst);
  if (!route.reachable) return kInf;
  if (route.hops.empty()) return 0.0;
  CopyCost copy = CopyCostFor(src, dst, memory);
  if (copy.fraction == 1.0 && copy.fixed_s == 0.0) return route.TransferSeconds(bytes);
  return route.latency_s + copy.fixed_s +
         static_cast<double>(bytes) / (route.bottleneck_bytes_per_s * copy.fraction);
}

Efficiency CostModel::EfficiencyFor(DeviceId device) const {
  const hw::Device& dev = cluster_->device(device);
  auto it = options_.model_efficiency.find(dev.spec.model);
  if (it != options_.model_efficiency.end()) return it->second;
  if (dev.kind == hw::DeviceKind::kCpu) {
    return {options_.cpu_compute_efficiency, options_.cpu_memory_efficiency};
  }
  return {options_.gpu_compute_efficiency, options_.gpu_memory_efficiency};
}

double CostModel::PeakFlopsFor(NodeId op, DeviceId device) const {
  const hw::DeviceSpec& spec = cluster_->device(device).spec;
  double peak = spec.PeakFlops(dtype_of_op_[op.index()]);
  if (!(peak > 0.0)) peak = spec.peak_flops_fp32;
  return peak;
}

double CostModel::RooflineTime(NodeId op, DeviceId device) const {
  if (!graph_->node(op).is_op()) return 0.0;
  const hw::Device& dev = cluster_->device(device);
  const graph::OpCost& cost = op_costs_[op.index()];
  Efficiency eff = EfficiencyFor(device);
  double compute = 0.0;
  if (cost.flops > 0.0) {
    double peak = PeakFlopsFor(op, device);
    compute = peak > 0.0 ? cost.flops / (peak * eff.compute) : kInf;
  }
  double memory = 0.0;
  int64_t bytes = cost.bytes_moved();
  if (bytes > 0) {
    double bw = dev.spec.memory_bandwidth_bytes_per_s;
    memory = bw > 0.0 ? static_cast<double>(bytes) / (bw * eff.memory) : kInf;
  }
  return std::max(compute, memory) / ClockScale(dev) + dev.spec.launch_overhead_s;
}

double CostModel::ProfiledOrRoofline(NodeId op, DeviceId device) const {
  if (profile_ != nullptr) {
    const hw::Device& dev = cluster_->device(device);
    auto hit =
        profile_->FindOpTime(*graph_, op, dev.name, dev.spec.model, hw::DeviceKindName(dev.kind));
    if (hit) {
      // A per-name entry was measured on this very device; the others at the nominal clock.
      if (hit->matched_by == ProfileMatch::kDeviceName) return hit->seconds;
      return hit->seconds / ClockScale(dev);
    }
  }
  return ModelTime(op, device);
}

double CostModel::OpTime(NodeId op, DeviceId device) const {
  if (!graph_->node(op).is_op()) return 0.0;
  return ProfiledOrRoofline(op, device);
}

double CostModel::OpTimeDha(NodeId op, DeviceId device) const {
  if (!graph_->node(op).is_op()) return 0.0;
  double base = ProfiledOrRoofline(op, device);
  if (!std::isfinite(base)) return base;
  int64_t weights = OpWeightBytes(op);
  double t = base;
  if (weights > 0 && !DhaIsMeasured(op, device)) {
    const hw::Device& dev = cluster_->device(device);
    bool profiled =
        profile_ != nullptr &&
        profile_->FindOpTime(*graph_, op, dev.name, dev.spec.model, hw::DeviceKindName(dev.kind))
            .has_value();
    if (profiled) {
      // A measured time is a floor; the weights still have to cross the host route.
      const hw::Route& route = cluster_->HostToDevice(device);
      double stream = CopyTime(weights, route.src, route.dst, HostMemory::kMapped);
      t = std::max(base, stream + LaunchCost(device));
    } else {
      t = DhaModelTime(op, device);
    }
  }
  if (options_.sortinghat_static_adjustments && IsGpuLike(cluster_->device(device).kind)) {
    t *= 2.0 * HostBusSharing(device);
  }
  return t;
}

// The op streams its weights over the host route while it computes and touches its activations in
// device memory: the slowest of the three governs.
double CostModel::DhaModelTime(NodeId op, DeviceId device) const {
  const hw::Device& dev = cluster_->device(device);
  const hw::Route& route = cluster_->HostToDevice(device);
  double stream = CopyTime(OpWeightBytes(op), route.src, route.dst, HostMemory::kMapped);
  const graph::OpCost& cost = op_costs_[op.index()];
  int64_t act_bytes = cost.input_bytes + cost.output_bytes;
  double bw = dev.spec.memory_bandwidth_bytes_per_s;
  double compute = 0.0;
  double activations = 0.0;
  double fixed = 0.0;
  double floor = 0.0;
  if (const DeviceCalibration* c = calibration_[device.index()]) {
    const ClassFit& fit = c->Fit(op_class_[op.index()]);
    compute = CurveTime(CalibratedFlops(*c, op), fit.compute_half_flops, PeakFlopsFor(op, device),
                        fit.compute_max);
    activations =
        CurveTime(static_cast<double>(act_bytes), fit.memory_half_bytes, bw, fit.memory_max);
    fixed = fit.fixed_s;
    floor = fit.min_s;
  } else {
    Efficiency eff = EfficiencyFor(device);
    if (cost.flops > 0.0) {
      double peak = PeakFlopsFor(op, device);
      compute = peak > 0.0 ? cost.flops / (peak * eff.compute) : kInf;
    }
    if (act_bytes > 0)
      activations = bw > 0.0 ? static_cast<double>(act_bytes) / (bw * eff.memory) : kInf;
  }
  return std::max(floor / ClockScale(dev),
                  fixed + std::max(std::max(compute, activations) / ClockScale(dev), stream)) +
         LaunchCost(device);
}

bool CostModel::DhaIsMeasured(NodeId op, DeviceId device) const {
  const hw::Device& dev = cluster_->device(device);
  return dev.kind == hw::DeviceKind::kCpu && profile_ != nullptr && graph_->node(op).is_op() &&
         profile_->FindOpTime(*graph_, op, dev.name, dev.spec.model, hw::DeviceKindName(dev.kind))
             .has_value();
}

bool CostModel::Supports(NodeId op, DeviceId device) const {
  if (!graph_->node(op).is_op()) return true;
  return std::isfinite(ProfiledOrRoofline(op, device));
}

double CostModel::FastestOpTime(NodeId op) const {
  double best = kInf;
  for (DeviceId d : cluster_->DeviceIds()) best = std::min(best, OpTime(op, d));
  return best;
}

int CostModel::HostBusSharing(DeviceId device) const { return host_bus_sharing_[device.index()]; }

double CostModel::AdjustGpuTransfer(double seconds, PlaceId src, PlaceId dst) const {
  if (!options_.sortinghat_static_adjustments) return seconds;
  const hw::Place& a = cluster_->place(src);
  const hw::Place& b = cluster_->place(dst);
  if (a.kind != hw::PlaceKind::kDevice || b.kind != hw::PlaceKind::kDevice) return seconds;
  if (!IsGpuLike(cluster_->device(a.device).kind) || !IsGpuLike(cluster_->device(b.device).kind)) {
    return seconds;
  }
  const hw::Route& route = cluster_->GetRoute(src, dst);
  bool direct = route.hops.size() == 1 && !route.via_host;
  return seconds * (direct ? 1.5 : static_cast<double>(std::max(num_gpus_, 1)));
}

double CostModel::TransferTime(int64_t bytes, PlaceId src, PlaceId dst) const {
  if (src == dst) return 0.0;
  double t = CopyTime(bytes, src, dst, HostMemory::kPinned);
  return AdjustGpuTransfer(t, src, dst);
}

double CostModel::TensorTransferTime(TensorId tensor, DeviceId src, DeviceId dst) const {
  if (src == dst) return 0.0;
  PlaceId sp = cluster_->PlaceOf(src);
  PlaceId dp = cluster_->PlaceOf(dst);
  if (sp == dp) return 0.0;
  const graph::Tensor& t = graph_->tensor(tensor);
  if (profile_ != nullptr) {
    const hw::Device& a = cluster_->device(src);
    const hw::Device& b = cluster_->device(dst);
    std::vector<std::string> keys = {t.name};
    if (t.producer.valid()) keys.push_back(graph_->node(t.producer).name);
    for (const std::string& key : keys) {
      auto hit = profile_->TransferTime(key, a.name, b.name);
      if (!hit) hit = profile_->TransferTime(key, a.spec.model, b.spec.model);
      if (hit) return AdjustGpuTransfer(*hit, sp, dp);
    }
  }
  return TransferTime(t.Bytes(), sp, dp);
}

double CostModel::WeightLoadTime(NodeId weight, DeviceId device) const {
  const graph::Node& node = graph_->node(weight);
  if (node.kind != graph::NodeKind::kWeight) return 0.0;
  int64_t bytes = 0;
  for (TensorId t : node.outputs) bytes += graph_->tensor(t).Bytes();
  PlaceId host = cluster_->HostOf(device);
  PlaceId place = cluster_->PlaceOf(device);
  if (host == place || options_.resident_weight_fraction >= 1.0) return 0.0;
  return (1.0 - options_.resident_weight_fraction) *
         CopyTime(bytes, host, place, HostMemory::kPinned);
}

int64_t CostModel::OpWeightBytes(NodeId op) const {
  const graph::Node& node = graph_->node(op);
  if (!node.is_op()) return 0;
  std::set<TensorId> seen;
  int64_t bytes = 0;
  for (TensorId t : node.inputs) {
    if (!t.valid() || !seen.insert(t).second) continue;
    const graph::Tensor& tensor = graph_->tensor(t);
    if (tensor.producer.valid() && graph_->node(tensor.producer).kind == graph::NodeKind::kWeight) {
      bytes += tensor.Bytes();
    }
  }
  return bytes;
}

int64_t CostModel::OpOutputBytes(NodeId op) const {
  const graph::Node& node = graph_->node(op);
  if (!node.is_op()) return 0;
  int64_t bytes = 0;
  for (TensorId t : node.outputs) {
    if (t.valid()) bytes += graph_->tensor(t).Bytes();
  }
  return bytes;
}

int64_t CostModel::OpWorkspaceBytes(NodeId op) const {
  const graph::Node& node = graph_->node(op);
  if (!node.is_op() || node.op_type != "Conv" || node.inputs.size() < 2 || node.outputs.empty()) {
    return 0;
  }
  if (!node.inputs[0].valid() || !node.inputs[1].valid() || !node.outputs[0].valid()) return 0;
  const graph::Tensor& x = graph_->tensor(node.inputs[0]);
  const graph::Tensor& w = graph_->tensor(node.inputs[1]);
  const graph::Tensor& y = graph_->tensor(node.outputs[0]);
  if (x.shape.size() < 3 || w.shape.size() != x.shape.size() || y.shape.size() != x.shape.size()) {
    return 0;
  }
  // im2col: one column of C * prod(kernel) values per output position, for the whole batch.
  int64_t kernel = 1;
  for (size_t i = 2; i < w.shape.size(); ++i) kernel *= w.shape[i];
  int64_t out_positions = 1;
  for (size_t i = 2; i < y.shape.size(); ++i) out_positions *= y.shape[i];
  bool unit_strides = true;
  for (int64_t s : node.attrs.GetInts("strides")) unit_strides = unit_strides && s == 1;
  bool no_pads = true;
  for (int64_t p : node.attrs.GetInts("pads")) no_pads = no_pads && p == 0;
  if (kernel == 1 && unit_strides && no_pads) return 0;  // the input already is the matrix
  int64_t batch = x.shape[0];
  int64_t channels = x.shape[1];
  return batch * channels * kernel * out_positions * graph::DTypeSize(x.dtype);
}

int64_t CostModel::OpMemoryBytes(NodeId op) const {
  if (!graph_->node(op).is_op()) return 0;
  if (std::optional<int64_t> stated = StatedMemory(op)) return *stated;
  return OpWeightBytes(op) + OpOutputBytes(op) + OpWorkspaceBytes(op);
}

int64_t CostModel::OpMemoryBytes(NodeId op, DeviceId device, bool dha) const {
  int64_t total = OpMemoryBytes(op);
  if (!dha) return total;
  return std::max<int64_t>(0, total - OpWeightBytes(op));
}

std::optional<int64_t> CostModel::StatedMemory(NodeId node) const {
  if (profile_ == nullptr) return std::nullopt;
  return profile_->NodeMemory(graph_->node(node).name);
}

std::optional<double> CostModel::ProfiledTransferTime(TensorId tensor, DeviceId src,
                                                      DeviceId dst) const {
  if (profile_ == nullptr) return std::nullopt;
  const hw::Device& a = cluster_->device(src);
  const hw::Device& b = cluster_->device(dst);
  const graph::Tensor& t = graph_->tensor(tensor);
  std::vector<std::string> keys = {t.name};
  if (t.producer.valid()) keys.push_back(graph_->node(t.producer).name);
  for (const std::string& key : keys) {
    auto hit = profile_->TransferTime(key, a.name, b.name);
    if (!hit) hit = profile_->TransferTime(key, a.spec.model, b.spec.model);
    if (hit && std::isfinite(*hit)) return hit;
  }
  return std::nullopt;
}

std::optional<double> CostModel::TransferSendCost(DeviceId src, DeviceId dst) const {
  if (profile_ == nullptr) return std::nullopt;
  const hw::Device& a = cluster_->device(src);
  const hw::Device& b = cluster_->device(dst);
  return profile_->SendCost(a.name, a.spec.model, b.name, b.spec.model);
}

std::optional<double> CostModel::TransferRecvCost(DeviceId src, DeviceId dst) const {
  if (profile_ == nullptr) return std::nullopt;
  const hw::Device& a = cluster_->device(src);
  const hw::Device& b = cluster_->device(dst);
  return profile_->RecvCost(a.name, a.spec.model, b.name, b.spec.model);
}

std::optional<double> CostModel::SubgraphStartCost(DeviceId device) const {
  if (profile_ == nullptr) return std::nullopt;
  const hw::Device& d = cluster_->device(device);
  return profile_->SubgraphCost(d.name, d.spec.model);
}

std::optional<double> CostModel::CpuContention(DeviceId device) const {
  const hw::Device& d = cluster_->device(device);
  if (profile_ == nullptr || d.kind != hw::DeviceKind::kCpu) return std::nullopt;
  return profile_->CpuContention(d.name, d.spec.model);
}

}  // namespace hx::cost
