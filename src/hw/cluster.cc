#include "hexplan/hw/cluster.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_map>

namespace hx::hw {
namespace {
constexpr size_t kMaxPlaces = 1024;  // all-pairs routes: kMaxPlaces^2 of them
}  // namespace

const char* DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kGpu:
      return "gpu";
    case DeviceKind::kCpu:
      return "cpu";
    case DeviceKind::kMig:
      return "mig";
  }
  return "?";
}

const char* PlaceKindName(PlaceKind kind) {
  switch (kind) {
    case PlaceKind::kDevice:
      return "device";
    case PlaceKind::kHostMemory:
      return "host";
    case PlaceKind::kSwitch:
      return "switch";
  }
  return "?";
}

const char* LinkKindName(LinkKind kind) {
  switch (kind) {
    case LinkKind::kPcie:
      return "pcie";
    case LinkKind::kNvlink:
      return "nvlink";
    case LinkKind::kNvswitch:
      return "nvswitch";
    case LinkKind::kInfiniband:
      return "infiniband";
    case LinkKind::kEthernet:
      return "ethernet";
    case LinkKind::kMemoryBus:
      return "memory";
  }
  return "?";
}

double Route::TransferSeconds(int64_t bytes) const {
  if (!reachable) return std::numeric_limits<double>::infinity();
  if (hops.empty()) return 0.0;
  return latency_s + static_cast<double>(bytes) / bottleneck_bytes_per_s;
}

std::string Cluster::HostMemoryName(const std::string& node) { return node + ".host"; }

PlaceId Cluster::AddHostMemory(const std::string& node) {
  if (auto existing = FindHostMemory(node)) return *existing;
  finalized_ = false;
  Place place;
  place.name = HostMemoryName(node);
  place.kind = PlaceKind::kHostMemory;
  place.node = node;
  places_.push_back(place);
  return PlaceId(places_.size() - 1);
}

DeviceId Cluster::AddDevice(const std::string& name, DeviceKind kind, const std::string& node,
                            const DeviceSpec& spec) {
  finalized_ = false;
  AddHostMemory(node);
  DeviceId id(devices_.size());
  Place place;
  place.name = name;
  place.kind = PlaceKind::kDevice;
  place.node = node;
  place.device = id;
  places_.push_back(place);
  Device device;
  device.name = name;
  device.kind = kind;
  device.node = node;
  device.spec = spec;
  device.place = PlaceId(places_.size() - 1);
  devices_.push_back(device);
  return id;
}

PlaceId Cluster::AddSwitch(const std::string& name, const std::string& node) {
  finalized_ = false;
  Place place;
  place.name = name;
  place.kind = PlaceKind::kSwitch;
  place.node = node;
  places_.push_back(place);
  return PlaceId(places_.size() - 1);
}

LinkId Cluster::AddLink(const std::string& name, LinkKind kind, PlaceId a, PlaceId b,
                        double bandwidth_bytes_per_s, double latency_s, bool full_duplex,
                        int count) {
  finalized_ = false;
  Link link;
  link.name = name;
  link.kind = kind;
  link.a = a;
  link.b = b;
  link.bandwidth_bytes_per_s = bandwidth_bytes_per_s;
  link.latency_s = latency_s;
  link.full_duplex = full_duplex;
  link.count = count;
  links_.push_back(link);
  return LinkId(links_.size() - 1);
}

void Cluster::SetPeerToPeer(DeviceId a, DeviceId b, bool allowed) {
  finalized_ = false;
  if (b < a) std::swap(a, b);
  auto it = std::find(no_p2p_.begin(), no_p2p_.end(), std::make_pair(a, b));
  if (allowed && it != no_p2p_.end()) no_p2p_.erase(it);
  if (!allowed && it == no_p2p_.end()) no_p2p_.emplace_back(a, b);
}

bool Cluster::PeerToPeerAllowed(DeviceId a, DeviceId b) const {
  if (b < a) std::swap(a, b);
  return std::find(no_p2p_.begin(), no_p2p_.end(), std::make_pair(a, b)) == no_p2p_.end();
}

const Device& Cluster::device(DeviceId id) const {
  HX_CHECK_MSG(id.valid() && id.index() < devices_.size(), "device id out of range");
  return devices_[id.index()];
}
const Place& Cluster::place(PlaceId id) const {
  HX_CHECK_MSG(id.valid() && id.index() < places_.size(), "place id out of range");
  return places_[id.index()];
}
const Link& Cluster::link(LinkId id) const {
  HX_CHECK_MSG(id.valid() && id.index() < links_.size(), "link id out of range");
  return links_[id.index()];
}
Device& Cluster::mutable_device(DeviceId id) {
  HX_CHECK_MSG(id.valid() && id.index() < devices_.size(), "device id out of range");
  finalized_ = false;
  return devices_[id.index()];
}
Place& Cluster::mutable_place(PlaceId id) {
  HX_CHECK_MSG(id.valid() && id.index() < places_.size(), "place id out of range");
  finalized_ = false;
  return places_[id.index()];
}
Link& Cluster::mutable_link(LinkId id) {
  HX_CHECK_MSG(id.valid() && id.index() < links_.size(), "link id out of range");
  finalized_ = false;
  return links_[id.index()];
}

std::vector<DeviceId> Cluster::DeviceIds() const {
  std::vector<DeviceId> ids;
  ids.reserve(devices_.size());
  for (size_t i = 0; i < devices_.size(); ++i) ids.emplace_back(i);
  return ids;
}

std::vector<DeviceId> Cluster::DevicesOfKind(DeviceKind kind) const {
  std::vector<DeviceId> ids;
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i].kind == kind) ids.emplace_back(i);
  }
  return ids;
}

std::vector<DeviceId> Cluster::DevicesOfNode(const std::string& node) const {
  std::vector<DeviceId> ids;
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i].node == node) ids.emplace_back(i);
  }
  return ids;
}

std::optional<DeviceId> Cluster::FindDevice(const std::string& name) const {
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i].name == name) return DeviceId(i);
  }
  return std::nullopt;
}

std::optional<PlaceId> Cluster::FindPlace(const std::string& name) const {
  for (size_t i = 0; i < places_.size(); ++i) {
    if (places_[i].name == name) return PlaceId(i);
  }
  return std::nullopt;
}

std::optional<LinkId> Cluster::FindLink(const std::string& name) const {
  for (size_t i = 0; i < links_.size(); ++i) {
    if (links_[i].name == name) return LinkId(i);
  }
  return std::nullopt;
}

std::optional<PlaceId> Cluster::FindHostMemory(const std::string& node) const {
  for (size_t i = 0; i < places_.size(); ++i) {
    if (places_[i].kind == PlaceKind::kHostMemory && places_[i].node == node) return PlaceId(i);
  }
  return std::nullopt;
}

std::vector<std::string> Cluster::NodeNames() const {
  std::vector<std::string> names;
  for (const Place& p : places_) {
    if (p.kind == PlaceKind::kHostMemory) names.push_back(p.node);
  }
  return names;
}

PlaceId Cluster::HostOf(DeviceId device) const {
  auto host = FindHostMemory(this->device(device).node);
  HX_CHECK_MSG(host.has_value(), "device without a host memory");
  return *host;
}

std::vector<LinkId> Cluster::LinksAt(PlaceId place) const {
  std::vector<LinkId> ids;
  for (size_t i = 0; i < links_.size(); ++i) {
    if (links_[i].a == place || links_[i].b == place) ids.emplace_back(i);
  }
  return ids;
}

const Route& Cluster::GetRoute(PlaceId src, PlaceId dst) const {
  HX_CHECK_MSG(finalized_, "Cluster::GetRoute before Finalize()");
  HX_CHECK_MSG(
      src.valid() && dst.valid() && src.index() < places_.size() && dst.index() < places_.size(),
      "place id out of range");
  return routes_[src.index() * places_.size() + dst.index()];
}

std::string Cluster::Where(int line) const {
  std::string where;
  if (!source_.empty()) where = source_ + ":";
  if (line > 0) where += std::to_string(line) + ":";
  if (!where.empty()) where += " ";
  return where;
}

Status Cluster::Validate() const {
  if (!errors_.empty()) return InvalidArgument(errors_.front());
  if (devices_.empty()) return InvalidArgument(Where(0) + "cluster '" + name_ + "' has no devices");
  if (places_.size() > kMaxPlaces) {
    return ResourceExhausted(Where(0) + "cluster '" + name_ + "' has " +
                             std::to_string(places_.size()) +
                             " places; routes are precomputed for "
                             "at most " +
                             std::to_string(kMaxPlaces));
  }
  std::unordered_map<std::string, size_t> place_names;
  for (size_t i = 0; i < places_.size(); ++i) {
    const Place& p = places_[i];
    if (p.name.empty()) return InvalidArgument(Where(p.line) + "a place has an empty name");
    auto [it, inserted] = place_names.emplace(p.name, i);
    if (!inserted) {
      const Place& first = places_[it->second];
      std::string first_at =
          first.line > 0 ? " (first defined at line " + std::to_string(first.line) + ")" : "";
      return InvalidArgument(Where(p.line) + "duplicate name '" + p.name + "'" + first_at);
    }
  }
  std::unordered_map<std::string, size_t> link_names;
  for (size_t i = 0; i < links_.size(); ++i) {
    const Link& l = links_[i];
    std::string what = "link '" + l.name + "'";
    if (l.name.empty()) return InvalidArgument(Where(l.line) + "a link has an empty name");
    auto [it, inserted] = link_names.emplace(l.name, i);
    if (!inserted) return InvalidArgument(Where(l.line) + "duplicate link name '" + l.name + "'");
    if (!l.a.valid() || l.a.index() >= places_.size() || !l.b.valid() ||
        l.b.index() >= places_.size()) {
      return InvalidArgument(Where(l.line) + what + " connects an unknown place");
    }
    if (l.a == l.b) {
      return InvalidArgument(Where(l.line) + what + " connects '" + places_[l.a.index()].name +
                             "' to itself");
    }
    if (!(l.bandwidth_bytes_per_s > 0.0) || !std::isfinite(l.bandwidth_bytes_per_s)) {
      return InvalidArgument(Where(l.line) + what +
                             ": bandwidth must be a positive finite number of bytes/s, got " +
                             std::to_string(l.bandwidth_bytes_per_s));
    }
    if (!(l.latency_s >= 0.0) || !std::isfinite(l.latency_s)) {
      return InvalidArgument(Where(l.line) + what + ": latency must be >= 0 seconds, got " +
                             std::to_string(l.latency_s));
    }
    if (l.count < 1) {
      return InvalidArgument(Where(l.line) + what + ": count must be >= 1, got " +
                             std::to_string(l.count));
    }
  }
  for (const Device& d : devices_) {
    const Place& p = places_[d.place.index()];
    if (!(d.clock_scale > 0.0) || d.clock_scale > 1e3) {
      return InvalidArgument(Where(p.line) + "device '" + d.name + "': clock_scale must be > 0");
    }
    if (d.spec.memory_bytes < 0 || d.spec.peak_flops_fp32 < 0 ||
        d.spec.memory_bandwidth_bytes_per_s < 0 || d.spec.launch_overhead_s < 0) {
      return InvalidArgument(Where(p.line) + "device '" + d.name +
                             "': spec figures must be non-negative");
    }
    if (!(d.spec.peak_flops_fp32 > 0.0)) {
      return InvalidArgument(Where(p.line) + "device '" + d.name + "' (model '" + d.spec.model +
                             "'): peak fp32 FLOP/s must be > 0");
    }
  }
  return Status::Ok();
}

Status Cluster::Finalize() {
  HX_RETURN_IF_ERROR(Validate());
  ComputeRoutes();
  finalized_ = true;
  Status status = CheckReachability();
  if (!status.ok()) finalized_ = false;
  return status;
}

Status Cluster::CheckReachability() const {
  // Every device must reach, and be reached from, its host memory and every other device.
  for (const Device& d : devices_) {
    const Place& p = places_[d.place.index()];
    PlaceId host = *FindHostMemory(d.node);
    if (!GetRoute(host, d.place).reachable || !GetRoute(d.place, host).reachable) {
      return InvalidArgument(Where(p.line) + "device '" + d.name +
                             "' is not reachable from its host memory '" +
                             places_[host.index()].name + "': no route (add a link)");
    }
  }
  for (const Device& d : devices_) {
    for (const Device& other : devices_) {
      if (&other == &d || GetRoute(d.place, other.place).reachable) continue;
      return InvalidArgument(Where(places_[other.place.index()].line) + "device '" + other.name +
                             "' is not reachable from device '" + d.name +
                             "': no route (add a link)");
    }
  }
  return Status::Ok();
}

}  // namespace hx::hw
