#include "hexplan/plan/plan.h"

#include <cstring>

namespace hx::plan {

const char* WeightModeName(WeightMode mode) {
  switch (mode) {
    case WeightMode::kLoad:
      return "load";
    case WeightMode::kDha:
      return "dha";
    case WeightMode::kRelay:
      return "relay";
  }
  return "?";
}

std::optional<WeightMode> ParseWeightMode(const std::string& name) {
  for (WeightMode m : {WeightMode::kLoad, WeightMode::kDha, WeightMode::kRelay})
    if (name == WeightModeName(m)) return m;
  return std::nullopt;
}

const char* TransferKindName(TransferKind kind) {
  switch (kind) {
    case TransferKind::kWeightLoad:
      return "weight_load";
    case TransferKind::kWeightForward:
      return "weight_forward";
    case TransferKind::kActivation:
      return "activation";
  }
  return "?";
}

std::optional<TransferKind> ParseTransferKind(const std::string& name) {
  for (TransferKind k :
       {TransferKind::kWeightLoad, TransferKind::kWeightForward, TransferKind::kActivation})
    if (name == TransferKindName(k)) return k;
  return std::nullopt;
}

size_t Plan::NumOps() const {
  size_t n = 0;
  for (const auto& d : devices)
    for (const auto& sg : d.subgraphs) n += sg.ops.size();
  return n;
}

std::vector<DeviceId> Plan::OpDevices(size_t num_nodes) const {
  std::vector<DeviceId> out(num_nodes);
  for (const auto& d : devices)
    for (const auto& sg : d.subgraphs)
      for (NodeId op : sg.ops)
        if (op.valid() && op.index() < num_nodes) out[op.index()] = d.device;
  return out;
}

const DeviceSchedule* Plan::ScheduleOf(DeviceId device) const {
  for (const auto& d : devices)
    if (d.device == device) return &d;
  return nullptr;
}

size_t Plan::QueueIndex(const std::string& name) {
  for (size_t i = 0; i < queues.size(); ++i)
    if (queues[i].name == name) return i;
  queues.push_back(CopyQueue{name, {}});
  return queues.size() - 1;
}

size_t Plan::AddTransfer(Transfer transfer, const std::string& queue) {
  const size_t q = QueueIndex(queue);
  transfers.push_back(std::move(transfer));
  queues[q].transfers.push_back(transfers.size() - 1);
  return transfers.size() - 1;
}

namespace {

class Fnv {
 public:
  void Bytes(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      h_ ^= p[i];
      h_ *= 1099511628211ull;
    }
  }
  void Str(const std::string& s) {
    U64(s.size());
    Bytes(s.data(), s.size());
  }
  void U64(uint64_t v) { Bytes(&v, sizeof v); }
  void I64(int64_t v) { Bytes(&v, sizeof v); }
  void F64(double v) { Bytes(&v, sizeof v); }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 14695981039346656037ull;
};

}  // namespace

uint64_t GraphFingerprint(const graph::Graph& graph) {
  Fnv f;
  f.U64(graph.num_nodes());
  for (NodeId id : graph.NodeIds()) {
    const graph::Node& n = graph.node(id);
    f.U64(static_cast<uint64_t>(n.kind));
    f.Str(n.name);
    f.Str(n.op_type);
    f.U64(n.inputs.size());
    for (TensorId t : n.inputs) f.U64(t.valid() ? t.value() : ~0ull);
    f.U64(n.outputs.size());
    for (TensorId t : n.outputs) f.U64(t.value());
  }
  f.U64(graph.num_tensors());
  for (size_t i = 0; i < graph.num_tensors(); ++i) {
    const graph::Tensor& t = graph.tensor(TensorId(i));
    f.Str(t.name);
    f.U64(static_cast<uint64_t>(t.dtype));
    f.U64(t.shape.size());
    for (int64_t d : t.shape) f.I64(d);
  }
  return f.value();
}

uint64_t ClusterFingerprint(const hw::Cluster& cluster) {
  Fnv f;
  f.U64(cluster.num_devices());
  for (DeviceId d : cluster.DeviceIds()) {
    const hw::Device& dev = cluster.device(d);
    f.Str(dev.name);
    f.U64(static_cast<uint64_t>(dev.kind));
    f.Str(dev.spec.model);
    f.I64(dev.spec.memory_bytes);
    f.F64(dev.clock_scale);
    f.U64(dev.place.value());
  }
  f.U64(cluster.num_places());
  for (size_t i = 0; i < cluster.num_places(); ++i) {
    const hw::Place& p = cluster.place(PlaceId(i));
    f.Str(p.name);
    f.U64(static_cast<uint64_t>(p.kind));
  }
  f.U64(cluster.num_links());
  for (size_t i = 0; i < cluster.num_links(); ++i) {
    const hw::Link& l = cluster.link(LinkId(i));
    f.Str(l.name);
    f.U64(l.a.value());
    f.U64(l.b.value());
    f.F64(l.bandwidth_bytes_per_s);
    f.F64(l.latency_s);
    f.U64(l.full_duplex ? 1 : 0);
  }
  return f.value();
}

}  // namespace hx::plan
