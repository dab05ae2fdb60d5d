#pragma once
// A cluster: nodes holding compute devices (GPUs, CPU core groups, MIG instances) and host
// memories, joined by links (PCIe buses and switches, NVLink, NVSwitch, NICs and networks). Every
// endpoint a tensor can live at or pass through is a Place; devices are the places that compute.
//
// Sharing is structural: several GPUs behind one PCIe bus are modelled as host -> bus link ->
// switch place -> per-GPU links, so transfers that cross the bus link contend for it (the simulator
// shares a link direction max-min fairly among the transfers that use it).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hexplan/core/id.h"
#include "hexplan/core/status.h"
#include "hexplan/hw/device_spec.h"

namespace hx::hw {

enum class DeviceKind : uint8_t { kGpu, kCpu, kMig };
const char* DeviceKindName(DeviceKind kind);  // "gpu", "cpu", "mig"

struct Device {
  std::string name;  // unique, e.g. "gpu0", "cpu0"
  DeviceKind kind = DeviceKind::kGpu;
  std::string node;          // the node (server) it sits in
  DeviceSpec spec;           // peak FLOP/s, memory bandwidth, capacity, launch overhead, ...
  double clock_scale = 1.0;  // < 1 for a down-clocked part (sortinghat-v100-hetero: 135/1500)
  PlaceId place;             // its place in the topology
  int64_t memory_bytes() const { return spec.memory_bytes; }
};

enum class PlaceKind : uint8_t {
  kDevice,      // a compute device (see Device)
  kHostMemory,  // a node's host DRAM (weights start here: cold start)
  kSwitch,      // a PCIe switch / root port, an NVSwitch, a NIC or a network switch
};
const char* PlaceKindName(PlaceKind kind);

struct Place {
  std::string name;
  PlaceKind kind = PlaceKind::kSwitch;
  std::string node;  // empty for network-level switches
  DeviceId device;   // valid when kind == kDevice
  int line = 0;      // line in the file it was read from (0: not from a file)
};

enum class LinkKind : uint8_t { kPcie, kNvlink, kNvswitch, kInfiniband, kEthernet, kMemoryBus };
const char* LinkKindName(LinkKind kind);  // "pcie", "nvlink", ...

struct Link {
  std::string name;  // unique, e.g. "pcie-bus0", "nvlink:gpu0-gpu3"
  LinkKind kind = LinkKind::kPcie;
  PlaceId a;
  PlaceId b;
  double bandwidth_bytes_per_s = 0.0;  // per direction
  double latency_s = 0.0;
  bool full_duplex = true;  // false: both directions share one bandwidth
  int count = 1;            // NVLink: number of bricks joined (bandwidth already includes them)
  bool one_way = false;     // carries only a -> b (asymmetric measured channels: MOIRAI Table III)
  bool pair_only = false;   // an end-to-end measured channel: only routes between its two ends use
                            // it, never as a relay (MOIRAI's pairwise bandwidth matrices)
  int line = 0;             // line in the file it was read from (0: not from a file)
};

// One hop of a route: a link crossed a->b (forward) or b->a.
struct RouteHop {
  LinkId link;
  bool forward = true;
};

struct Route {
  PlaceId src;
  PlaceId dst;
  std::vector<RouteHop> hops;           // empty when src == dst
  double bottleneck_bytes_per_s = 0.0;  // min bandwidth along the route (MOIRAI's rule)
  double latency_s = 0.0;               // sum of link latencies
  bool via_host = false;                // GPU->GPU staged through host memory (no P2P)
  bool reachable = true;                // false: no path (TransferSeconds is +infinity)
  // Time to move `bytes` along this route with no contention: latency + bytes / bottleneck.
  double TransferSeconds(int64_t bytes) const;
};

class Cluster {
 public:
  explicit Cluster(std::string name = "") : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // The file the cluster was read from; Finalize's errors then read "<source>:<line>: ...".
  const std::string& source() const { return source_; }
  void set_source(std::string source) { source_ = std::move(source); }

  // The name of a node's host memory place: "<node>.host".
  static std::string HostMemoryName(const std::string& node);

  // ---- Building (presets and readers). Call Finalize() when done; it validates and computes
  // routes. Adds the node's host memory place if not present and returns it.
  PlaceId AddHostMemory(const std::string& node);
  DeviceId AddDevice(const std::string& name, DeviceKind kind, const std::string& node,
                     const DeviceSpec& spec);
  PlaceId AddSwitch(const std::string& name, const std::string& node = "");
  LinkId AddLink(const std::string& name, LinkKind kind, PlaceId a, PlaceId b,
                 double bandwidth_bytes_per_s, double latency_s, bool full_duplex = true,
                 int count = 1);
  // Forbids (or allows) direct peer-to-peer between two GPUs; without P2P a GPU->GPU transfer is
  // staged through host memory (EfficientMIP's assumption). Default: allowed where a route exists.
  void SetPeerToPeer(DeviceId a, DeviceId b, bool allowed);
  // Validates (unknown ends, non-positive bandwidth, negative latency, duplicate names, a device no
  // route reaches) and computes all routes.
  Status Finalize();

  // ---- Access.
  size_t num_devices() const { return devices_.size(); }
  size_t num_places() const { return places_.size(); }
  size_t num_links() const { return links_.size(); }
  const Device& device(DeviceId id) const;
  const Place& place(PlaceId id) const;
  const Link& link(LinkId id) const;
  // Mutable access while building (clock_scale, line numbers, ...); invalidates routes.
  Device& mutable_device(DeviceId id);
  Place& mutable_place(PlaceId id);
  Link& mutable_link(LinkId id);
  std::vector<DeviceId> DeviceIds() const;
  std::vector<DeviceId> DevicesOfKind(DeviceKind kind) const;
  std::optional<DeviceId> FindDevice(const std::string& name) const;
  std::optional<PlaceId> FindPlace(const std::string& name) const;
  std::optional<LinkId> FindLink(const std::string& name) const;
  std::vector<std::string> NodeNames() const;  // in insertion order
  std::optional<PlaceId> FindHostMemory(const std::string& node) const;
  std::vector<DeviceId> DevicesOfNode(const std::string& node) const;

  // The host memory of the device's node (where its weights start).
  PlaceId HostOf(DeviceId device) const;
  PlaceId PlaceOf(DeviceId device) const { return this->device(device).place; }
  bool PeerToPeerAllowed(DeviceId a, DeviceId b) const;

  // The route between two places (after Finalize): by default the path with the best bottleneck
  // bandwidth, ties broken by fewer hops then lower latency; GPU->GPU without P2P goes via host.
  const Route& GetRoute(PlaceId src, PlaceId dst) const;
  const Route& DeviceRoute(DeviceId src, DeviceId dst) const {
    return GetRoute(PlaceOf(src), PlaceOf(dst));
  }
  // Host memory -> device (weight loading): the PCIe route.
  const Route& HostToDevice(DeviceId device) const {
    return GetRoute(HostOf(device), PlaceOf(device));
  }
  // Links adjacent to a place.
  std::vector<LinkId> LinksAt(PlaceId place) const;

  bool finalized() const { return finalized_; }

 private:
  std::string Where(int line) const;  // "<source>:<line>: " or ""
  Status Validate() const;
  Status CheckReachability() const;
  void ComputeRoutes();  // routes.cc
  Route ConcatRoutes(const Route& a, const Route& b) const;

  std::string name_;
  std::string source_;
  std::vector<Device> devices_;
  std::vector<Place> places_;
  std::vector<Link> links_;
  std::vector<std::pair<DeviceId, DeviceId>> no_p2p_;
  std::vector<Route> routes_;  // places x places after Finalize
  bool finalized_ = false;
  std::vector<std::string> errors_;
  std::vector<std::vector<LinkId>> adjacency_;  // per place, after Finalize
};

}  // namespace hx::hw
