// The cluster file format (docs/formats.md, "Cluster YAML"): YAML or JSON, read with yaml-cpp so
// every error names the file and line.

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <type_traits>

#include "hexplan/core/utf8.h"
#include "hexplan/core/yaml_document.h"
#include "hexplan/hw/device_spec.h"
#include "hexplan/hw/presets.h"
#include "hexplan/hw/quantity.h"

namespace hx::hw {
namespace {

// Parallel lanes of one link (an NVLink bundle, a PCIe switch's ports): far above any machine's,
// and within an int (3e9 wrapped to a negative count).
constexpr int kMaxLinkCount = 1'000'000;

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  Status Error(const YAML::Node& node, const std::string& message) const {
    int line = node.IsDefined() ? node.Mark().line + 1 : 0;
    return InvalidArgument(At(line) + message);
  }
  std::string At(int line) const {
    return source_ + (line > 0 ? ":" + std::to_string(line) : "") + ": ";
  }
  static int Line(const YAML::Node& node) { return node.Mark().line + 1; }

  Status CheckKeys(const YAML::Node& map, const std::string& what,
                   const std::set<std::string>& allowed) const {
    if (!map.IsMap()) return Error(map, what + " must be a mapping");
    for (const auto& kv : map) {
      std::string key = kv.first.as<std::string>();
      if (!allowed.count(key)) {
        std::string list;
        for (const auto& k : allowed) list += (list.empty() ? "" : ", ") + k;
        return Error(kv.first,
                     "unknown key '" + key + "' in " + what + " (expected one of: " + list + ")");
      }
    }
    return Status::Ok();
  }

  StatusOr<std::string> String(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) return Error(node, what + " must be a string");
    return node.as<std::string>();
  }

  template <typename Parse>
  auto Quantity(const YAML::Node& node, const std::string& what, Parse parse) const
      -> StatusOr<std::decay_t<decltype(parse(std::string()).value())>> {
    if (!node.IsScalar()) return Error(node, what + " must be a scalar such as in the examples");
    auto v = parse(node.as<std::string>());
    if (!v.ok()) return Error(node, what + ": " + v.status().message());
    return v.value();
  }

  StatusOr<double> Number(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) return Error(node, what + " must be a number");
    try {
      return node.as<double>();
    } catch (const YAML::Exception&) {
      return Error(node, what + " must be a number, got '" + node.as<std::string>() + "'");
    }
  }

  StatusOr<bool> Bool(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) return Error(node, what + " must be true or false");
    try {
      return node.as<bool>();
    } catch (const YAML::Exception&) {
      return Error(node, what + " must be true or false, got '" + node.as<std::string>() + "'");
    }
  }

  Status ReadDevice(Cluster& c, const YAML::Node& d, const std::string& node_name) {
    HX_RETURN_IF_ERROR(
        CheckKeys(d, "a device",
                  {"name", "kind", "model", "cores", "memory", "fp32", "fp16", "bf16",
                   "memory_bandwidth", "launch_overhead", "clock_scale", "mig"}));
    if (!d["name"]) return Error(d, "a device needs a 'name'");
    HX_ASSIGN_OR_RETURN(std::string name, String(d["name"], "device name"));
    std::string what = "device '" + name + "'";
    DeviceKind kind = DeviceKind::kGpu;
    if (d["kind"]) {
      HX_ASSIGN_OR_RETURN(std::string k, String(d["kind"], what + " kind"));
      if (k == "gpu")
        kind = DeviceKind::kGpu;
      else if (k == "cpu")
        kind = DeviceKind::kCpu;
      else if (k == "mig")
        kind = DeviceKind::kMig;
      else
        return Error(d["kind"], what + ": kind must be gpu, cpu or mig, got '" + k + "'");
    }
    DeviceSpec spec;
    if (d["model"]) {
      HX_ASSIGN_OR_RETURN(std::string model, String(d["model"], what + " model"));
      auto known = FindDeviceSpec(model);
      if (known) {
        spec = *known;
      } else if (!d["fp32"]) {
        std::string list;
        for (const auto& s : KnownDeviceSpecs()) list += (list.empty() ? "" : ", ") + s.model;
        return Error(d["model"], what + ": unknown model '" + model + "' (known: " + list +
                                     "; or give fp32, memory, ...)");
      } else {
        spec.model = model;
      }
    } else if (!d["fp32"]) {
      return Error(d, what + " needs a 'model' from the device table or explicit 'fp32'");
    } else {
      spec.model = name;
    }
    if (d["cores"]) {
      HX_ASSIGN_OR_RETURN(double cores, Number(d["cores"], what + " cores"));
      if (cores < 1 || cores != std::floor(cores)) {
        return Error(d["cores"], what + ": cores must be a positive integer");
      }
      if (spec.cores > 0 && kind == DeviceKind::kCpu && d["model"] && !d["fp32"]) {
        if (cores > spec.cores) {
          return Error(d["cores"], what + ": " + spec.model + " has only " +
                                       std::to_string(spec.cores) + " cores");
        }
        spec = spec.cores == 1 ? CpuCoreGroupSpec(spec, static_cast<int>(cores))
                               : CpuCoresOf(spec, static_cast<int>(cores));
      } else {
        spec.cores = static_cast<int>(cores);
      }
    }
    if (d["mig"]) {
      if (kind != DeviceKind::kMig) return Error(d["mig"], what + ": 'mig' needs kind: mig");
      HX_ASSIGN_OR_RETURN(std::string profile, String(d["mig"], what + " mig"));
      // "<slices>g.<memory>gb", e.g. 3g.40gb: compute scales with the 7 slices of the GPU.
      int slices = 0, gb = 0;
      char tail = 0;
      if (std::sscanf(profile.c_str(), "%dg.%dgb%c", &slices, &gb, &tail) != 2 || slices < 1 ||
          slices > 7 || gb < 1) {
        return Error(d["mig"],
                     what + ": mig profile must look like 3g.40gb, got '" + profile + "'");
      }
      double f = slices / 7.0;
      spec.peak_flops_fp32 *= f;
      spec.peak_flops_fp16 *= f;
      spec.peak_flops_bf16 *= f;
      spec.memory_bandwidth_bytes_per_s *= f;
      spec.cores = static_cast<int>(spec.cores * f);
      spec.memory_bytes = int64_t{gb} << 30;
      spec.model += " MIG " + profile;
    }
    if (d["memory"]) {
      HX_ASSIGN_OR_RETURN(spec.memory_bytes, Quantity(d["memory"], what + " memory", ParseBytes));
      // Written out, 0 is no memory (a plan needing any would not fit), not "unlimited".
      if (spec.memory_bytes <= 0) return Error(d["memory"], what + ": memory must be > 0");
    }
    if (d["fp32"]) {
      HX_ASSIGN_OR_RETURN(spec.peak_flops_fp32, Quantity(d["fp32"], what + " fp32", ParseFlops));
    }
    if (d["fp16"]) {
      HX_ASSIGN_OR_RETURN(spec.peak_flops_fp16, Quantity(d["fp16"], what + " fp16", ParseFlops));
    }
    if (d["bf16"]) {
      HX_ASSIGN_OR_RETURN(spec.peak_flops_bf16, Quantity(d["bf16"], what + " bf16", ParseFlops));
    }
    if (d["memory_bandwidth"]) {
      HX_ASSIGN_OR_RETURN(
          spec.memory_bandwidth_bytes_per_s,
          Quantity(d["memory_bandwidth"], what + " memory_bandwidth", ParseBandwidth));
      if (!(spec.memory_bandwidth_bytes_per_s > 0))
        return Error(d["memory_bandwidth"], what + ": memory_bandwidth must be > 0");
    }
    if (d["launch_overhead"]) {
      HX_ASSIGN_OR_RETURN(spec.launch_overhead_s,
                          Quantity(d["launch_overhead"], what + " launch_overhead", ParseSeconds));
    }
    if (!(spec.peak_flops_fp32 > 0)) return Error(d, what + ": fp32 must be > 0");
    HX_RETURN_IF_ERROR(CheckNewName(c, d, name));
    DeviceId id = c.AddDevice(name, kind, node_name, spec);
    c.mutable_place(c.PlaceOf(id)).line = Line(d);
    if (d["clock_scale"]) {
      HX_ASSIGN_OR_RETURN(double scale, Number(d["clock_scale"], what + " clock_scale"));
      if (!(scale > 0 && scale <= 1000)) {
        return Error(d["clock_scale"], what + ": clock_scale must be > 0");
      }
      c.mutable_device(id).clock_scale = scale;
    }
    return Status::Ok();
  }

  Status ReadNode(Cluster& c, const YAML::Node& n, size_t index) {
    HX_RETURN_IF_ERROR(CheckKeys(n, "a node", {"name", "devices", "switches"}));
    std::string name = "node" + std::to_string(index);
    if (n["name"]) {
      HX_ASSIGN_OR_RETURN(name, String(n["name"], "node name"));
    }
    if (auto first = c.FindHostMemory(name)) {
      return Error(n, "duplicate node name '" + name + "' (first defined at line " +
                          std::to_string(c.place(*first).line) + ")");
    }
    PlaceId host = c.AddHostMemory(name);
    c.mutable_place(host).line = Line(n);
    if (n["devices"]) {
      if (!n["devices"].IsSequence()) return Error(n["devices"], "devices must be a list");
      for (const auto& d : n["devices"]) HX_RETURN_IF_ERROR(ReadDevice(c, d, name));
    }
    if (n["switches"]) HX_RETURN_IF_ERROR(ReadSwitches(c, n["switches"], name));
    return Status::Ok();
  }

  // A device or switch name must be new: found here, before a link end names the place that the
  // duplicate replaced.
  Status CheckNewName(const Cluster& c, const YAML::Node& at, const std::string& name) {
    const auto first = c.FindPlace(name);
    if (!first) return Status::Ok();
    return Error(at, "duplicate name '" + name + "' (first defined at line " +
                         std::to_string(c.place(*first).line) + ")");
  }

  Status ReadSwitches(Cluster& c, const YAML::Node& list, const std::string& node) {
    if (!list.IsSequence()) return Error(list, "switches must be a list of names");
    for (const auto& s : list) {
      HX_ASSIGN_OR_RETURN(std::string name, String(s, "switch name"));
      HX_RETURN_IF_ERROR(CheckNewName(c, s, name));
      PlaceId id = c.AddSwitch(name, node);
      c.mutable_place(id).line = Line(s);
    }
    return Status::Ok();
  }

  StatusOr<PlaceId> End(const Cluster& c, const YAML::Node& node, const std::string& what) {
    HX_ASSIGN_OR_RETURN(std::string name, String(node, what));
    if (auto p = c.FindPlace(name)) return *p;
    auto nodes = c.NodeNames();
    if (name == "host" && nodes.size() == 1) return *c.FindHostMemory(nodes.front());
    if (auto h = c.FindHostMemory(name)) return *h;
    return Error(node, what + " '" + name +
                           "' is not a device, switch or host memory of this cluster (host "
                           "memories are '<node>.host')");
  }

  Status ReadLink(Cluster& c, const YAML::Node& l, size_t index) {
    HX_RETURN_IF_ERROR(CheckKeys(l, "a link",
                                 {"name", "kind", "a", "b", "bandwidth", "latency", "duplex",
                                  "count", "one_way", "pair_only"}));
    std::string what = "link " + std::to_string(index + 1);
    if (l["name"]) {
      HX_ASSIGN_OR_RETURN(std::string n, String(l["name"], "link name"));
      what = "link '" + n + "'";
    }
    if (!l["a"] || !l["b"]) return Error(l, what + " needs both ends 'a' and 'b'");
    if (!l["bandwidth"]) return Error(l, what + " needs a 'bandwidth' (e.g. 16GB/s)");
    HX_ASSIGN_OR_RETURN(PlaceId a, End(c, l["a"], what + " end a"));
    HX_ASSIGN_OR_RETURN(PlaceId b, End(c, l["b"], what + " end b"));
    LinkKind kind = LinkKind::kPcie;
    if (l["kind"]) {
      HX_ASSIGN_OR_RETURN(std::string k, String(l["kind"], what + " kind"));
      bool found = false;
      for (LinkKind candidate :
           {LinkKind::kPcie, LinkKind::kNvlink, LinkKind::kNvswitch, LinkKind::kInfiniband,
            LinkKind::kEthernet, LinkKind::kMemoryBus}) {
        if (k == LinkKindName(candidate)) {
          kind = candidate;
          found = true;
        }
      }
      if (!found) {
        return Error(l["kind"], what +
                                    ": kind must be pcie, nvlink, nvswitch, infiniband, "
                                    "ethernet or memory, got '" +
                                    k + "'");
      }
    }
    std::string name =
        std::string(LinkKindName(kind)) + ":" + c.place(a).name + "-" + c.place(b).name;
    if (l["name"]) name = l["name"].as<std::string>();
    HX_ASSIGN_OR_RETURN(double bandwidth,
                        Quantity(l["bandwidth"], what + " bandwidth", ParseBandwidth));
    double latency = 0.0;
    if (l["latency"]) {
      HX_ASSIGN_OR_RETURN(latency, Quantity(l["latency"], what + " latency", ParseSeconds));
    }
    bool full_duplex = true;
    if (l["duplex"]) {
      HX_ASSIGN_OR_RETURN(std::string duplex, String(l["duplex"], what + " duplex"));
      if (duplex != "full" && duplex != "half") {
        return Error(l["duplex"], what + ": duplex must be full or half");
      }
      full_duplex = duplex == "full";
    }
    int count = 1;
    if (l["count"]) {
      HX_ASSIGN_OR_RETURN(double n, Number(l["count"], what + " count"));
      if (!(n >= 1 && n <= kMaxLinkCount) || n != std::floor(n))
        return Error(l["count"], what + ": count must be an integer in [1, " +
                                     std::to_string(kMaxLinkCount) + "], got '" +
                                     l["count"].Scalar() + "'");
      count = static_cast<int>(n);
    }
    LinkId id = c.AddLink(name, kind, a, b, bandwidth, latency, full_duplex, count);
    Link& link = c.mutable_link(id);
    link.line = Line(l);
    if (l["one_way"]) {
      HX_ASSIGN_OR_RETURN(link.one_way, Bool(l["one_way"], what + " one_way"));
    }
    if (l["pair_only"]) {
      HX_ASSIGN_OR_RETURN(link.pair_only, Bool(l["pair_only"], what + " pair_only"));
    }
    return Status::Ok();
  }

  Status ReadP2p(Cluster& c, const YAML::Node& p) {
    HX_RETURN_IF_ERROR(CheckKeys(p, "p2p", {"disable"}));
    if (!p["disable"]) return Status::Ok();
    if (!p["disable"].IsSequence()) return Error(p["disable"], "p2p.disable must be a list");
    for (const auto& pair : p["disable"]) {
      if (!pair.IsSequence() || pair.size() != 2) {
        return Error(pair, "p2p.disable entries are pairs of device names: [gpu0, gpu1]");
      }
      DeviceId ids[2];
      for (size_t k = 0; k < 2; ++k) {
        HX_ASSIGN_OR_RETURN(std::string n, String(pair[k], "p2p device"));
        auto d = c.FindDevice(n);
        if (!d) return Error(pair[k], "p2p.disable: unknown device '" + n + "'");
        ids[k] = *d;
      }
      c.SetPeerToPeer(ids[0], ids[1], false);
    }
    return Status::Ok();
  }

  StatusOr<Cluster> Read(const std::string& text) {
    HX_RETURN_IF_ERROR(CheckUtf8Text(text, source_));
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
      return ParseError(source_ + ":" + std::to_string(e.mark.line + 1) + ":" +
                        std::to_string(e.mark.column + 1) +
                        ": YAML syntax error: " + YamlParseErrorMessage(e));
    }
    if (auto dup = FindDuplicateYamlKey(root))
      return ParseError(source_ + ":" + std::to_string(dup->line) + ": " +
                        DescribeDuplicateYamlKey(*dup));
    if (!root.IsMap()) return ParseError(source_ + ": a cluster file is a mapping with 'nodes'");
    HX_RETURN_IF_ERROR(CheckKeys(root, "the cluster", {"name", "nodes", "links", "p2p"}));
    Cluster c;
    c.set_source(source_);
    if (root["name"]) {
      HX_ASSIGN_OR_RETURN(std::string name, String(root["name"], "name"));
      c.set_name(name);
    } else {
      c.set_name(source_);
    }
    if (!root["nodes"] || !root["nodes"].IsSequence() || root["nodes"].size() == 0) {
      return Error(root["nodes"] ? root["nodes"] : root,
                   "'nodes' must be a non-empty list of nodes");
    }
    size_t index = 0;
    for (const auto& n : root["nodes"]) HX_RETURN_IF_ERROR(ReadNode(c, n, index++));
    if (root["links"]) {
      if (!root["links"].IsSequence()) return Error(root["links"], "'links' must be a list");
      index = 0;
      for (const auto& l : root["links"]) HX_RETURN_IF_ERROR(ReadLink(c, l, index++));
    }
    if (root["p2p"]) HX_RETURN_IF_ERROR(ReadP2p(c, root["p2p"]));
    HX_RETURN_IF_ERROR(c.Finalize());
    return c;
  }

 private:
  std::string source_;
};

}  // namespace

StatusOr<Cluster> ReadClusterYaml(const std::string& text, const std::string& source_name) {
  Reader reader(source_name);
  try {
    return reader.Read(text);
  } catch (const YAML::Exception& e) {
    return ParseError(source_name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

}  // namespace hx::hw
