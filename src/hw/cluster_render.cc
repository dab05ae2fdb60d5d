#include "hexplan/hw/cluster_render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hexplan/core/json_text.h"
#include "hexplan/core/utf8.h"
#include "hexplan/core/xml.h"
#include "hexplan/hw/quantity.h"
#include "hw/render_colors.h"

namespace hx::hw {
namespace {

constexpr size_t kMaxMatrixDevices = 32;

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

// The inside of a DOT quoted string: quotes and backslashes escaped, a newline as DOT's "\n",
// other control characters dropped, ill-formed UTF-8 as U+FFFD (Graphviz reads UTF-8).
std::string DotEscape(const std::string& s) {
  std::string out;
  for (char c : SanitizeUtf8(s)) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) continue;
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::string ClusterSummary(const Cluster& c) {
  std::ostringstream out;
  auto nodes = c.NodeNames();
  out << "cluster " << c.name() << ": " << c.num_devices() << " devices in " << nodes.size()
      << (nodes.size() == 1 ? " node, " : " nodes, ") << c.num_places() << " places, "
      << c.num_links() << " links\n\n";
  out << Pad("DEVICE", 16) << Pad("KIND", 5) << Pad("MODEL", 20) << Pad("NODE", 10)
      << Pad("MEMORY", 11) << Pad("FP32", 15) << Pad("FP16", 15) << Pad("MEM BW", 13) << "CLOCK\n";
  for (DeviceId id : c.DeviceIds()) {
    const Device& d = c.device(id);
    char clock[32];
    std::snprintf(clock, sizeof(clock), "%.3g", d.clock_scale);
    out << Pad(d.name, 16) << Pad(DeviceKindName(d.kind), 5) << Pad(d.spec.model, 20)
        << Pad(d.node, 10) << Pad(FormatBytes(d.memory_bytes()), 11)
        << Pad(FormatFlops(d.spec.peak_flops_fp32), 15)
        << Pad(FormatFlops(d.spec.PeakFlops("fp16")), 15)
        << Pad(FormatBandwidth(d.spec.memory_bandwidth_bytes_per_s), 13) << clock << "\n";
  }
  out << "\n"
      << Pad("LINK", 26) << Pad("KIND", 11) << Pad("ENDS", 34) << Pad("BANDWIDTH/DIR", 14)
      << "LATENCY\n";
  for (size_t i = 0; i < c.num_links(); ++i) {
    const Link& l = c.link(LinkId(i));
    std::string ends = c.place(l.a).name + (l.one_way ? " -> " : " <-> ") + c.place(l.b).name;
    std::string extra;
    if (l.count > 1) extra += " x" + std::to_string(l.count);
    if (!l.full_duplex) extra += " half-duplex";
    if (l.pair_only) extra += " pair-only";
    out << Pad(l.name, 26) << Pad(LinkKindName(l.kind), 11) << Pad(ends, 34)
        << Pad(FormatBandwidth(l.bandwidth_bytes_per_s), 14) << FormatSeconds(l.latency_s) << extra
        << "\n";
  }
  auto ids = c.DeviceIds();
  if (ids.size() > kMaxMatrixDevices) {
    out << "\n(bandwidth matrix omitted for more than " << kMaxMatrixDevices
        << " devices; see --json)\n";
    return out.str();
  }
  out << "\nbottleneck bandwidth GB/s per direction, row -> column (* = staged via host memory)\n";
  size_t width = 8;
  for (DeviceId id : ids) width = std::max(width, c.device(id).name.size() + 2);
  out << Pad("", width);
  for (DeviceId id : ids) out << Pad(c.device(id).name, width);
  out << "\n";
  for (DeviceId a : ids) {
    out << Pad(c.device(a).name, width);
    for (DeviceId b : ids) {
      const Route& r = c.DeviceRoute(a, b);
      std::string cell = a == b ? "-"
                         : !r.reachable
                             ? "none"
                             : ShortBandwidth(r.bottleneck_bytes_per_s) + (r.via_host ? "*" : "");
      out << Pad(cell, width);
    }
    out << "\n";
  }
  return out.str();
}

std::string ClusterToJson(const Cluster& c) {
  nlohmann::json j;
  j["name"] = c.name();
  j["nodes"] = c.NodeNames();
  nlohmann::json devices = nlohmann::json::array();
  for (DeviceId id : c.DeviceIds()) {
    const Device& d = c.device(id);
    devices.push_back({{"name", d.name},
                       {"kind", DeviceKindName(d.kind)},
                       {"model", d.spec.model},
                       {"memory_bytes", d.memory_bytes()},
                       {"node", d.node},
                       {"peak_flops_fp32", d.spec.peak_flops_fp32},
                       {"peak_flops_fp16", d.spec.PeakFlops("fp16")},
                       {"peak_flops_bf16", d.spec.PeakFlops("bf16")},
                       {"memory_bandwidth_bytes_per_s", d.spec.memory_bandwidth_bytes_per_s},
                       {"launch_overhead_s", d.spec.launch_overhead_s},
                       {"cores", d.spec.cores},
                       {"clock_scale", d.clock_scale}});
  }
  j["devices"] = devices;
  nlohmann::json places = nlohmann::json::array();
  for (size_t i = 0; i < c.num_places(); ++i) {
    const Place& p = c.place(PlaceId(i));
    places.push_back({{"name", p.name}, {"kind", PlaceKindName(p.kind)}, {"node", p.node}});
  }
  j["places"] = places;
  nlohmann::json links = nlohmann::json::array();
  for (size_t i = 0; i < c.num_links(); ++i) {
    const Link& l = c.link(LinkId(i));
    links.push_back({{"name", l.name},
                     {"kind", LinkKindName(l.kind)},
                     {"a", c.place(l.a).name},
                     {"b", c.place(l.b).name},
                     {"bandwidth_bytes_per_s", l.bandwidth_bytes_per_s},
                     {"latency_s", l.latency_s},
                     {"full_duplex", l.full_duplex},
                     {"count", l.count},
                     {"one_way", l.one_way},
                     {"pair_only", l.pair_only}});
  }
  j["links"] = links;
  nlohmann::json no_p2p = nlohmann::json::array();
  auto ids = c.DeviceIds();
  for (size_t x = 0; x < ids.size(); ++x) {
    for (size_t y = x + 1; y < ids.size(); ++y) {
      if (!c.PeerToPeerAllowed(ids[x], ids[y])) {
        no_p2p.push_back({c.device(ids[x]).name, c.device(ids[y]).name});
      }
    }
  }
  j["p2p_disabled"] = no_p2p;
  nlohmann::json names = nlohmann::json::array();
  nlohmann::json bw = nlohmann::json::array(), lat = nlohmann::json::array(),
                 via = nlohmann::json::array();
  for (DeviceId a : ids) {
    names.push_back(c.device(a).name);
    nlohmann::json bw_row = nlohmann::json::array(), lat_row = nlohmann::json::array(),
                   via_row = nlohmann::json::array();
    for (DeviceId b : ids) {
      const Route& r = c.DeviceRoute(a, b);
      if (a == b || !r.reachable) {
        bw_row.push_back(nullptr);
        lat_row.push_back(a == b ? nlohmann::json(0.0) : nlohmann::json(nullptr));
      } else {
        bw_row.push_back(r.bottleneck_bytes_per_s);
        lat_row.push_back(r.latency_s);
      }
      via_row.push_back(r.via_host);
    }
    bw.push_back(bw_row);
    lat.push_back(lat_row);
    via.push_back(via_row);
  }
  j["bandwidth_matrix"] = {
      {"devices", names}, {"bytes_per_s", bw}, {"latency_s", lat}, {"via_host", via}};
  return DumpJson(j, 2) + "\n";
}

std::string ClusterToDot(const Cluster& c) {
  std::ostringstream out;
  out << "digraph \"" << DotEscape(c.name()) << "\" {\n"
      << "  graph [rankdir=TB, fontname=\"Helvetica\"];\n"
      << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n"
      << "  edge [dir=none, fontname=\"Helvetica\", fontsize=9];\n";
  auto emit_place = [&](size_t i, const std::string& indent) {
    const Place& p = c.place(PlaceId(i));
    std::string label = p.name;
    if (p.kind == PlaceKind::kDevice) label += "\\n" + DotEscape(c.device(p.device).spec.model);
    out << indent << "\"" << DotEscape(p.name) << "\" [label=\"" << DotEscape(p.name)
        << (p.kind == PlaceKind::kDevice ? "\\n" + DotEscape(c.device(p.device).spec.model)
                                         : std::string())
        << "\", fillcolor=\"" << PlaceColor(c, p) << "\"];\n";
  };
  auto nodes = c.NodeNames();
  for (size_t n = 0; n < nodes.size(); ++n) {
    out << "  subgraph \"cluster_" << DotEscape(nodes[n]) << "\" {\n"
        << "    label=\"" << DotEscape(nodes[n]) << "\"; style=dashed;\n";
    for (size_t i = 0; i < c.num_places(); ++i) {
      if (c.place(PlaceId(i)).node == nodes[n]) emit_place(i, "    ");
    }
    out << "  }\n";
  }
  for (size_t i = 0; i < c.num_places(); ++i) {
    if (c.place(PlaceId(i)).node.empty()) emit_place(i, "  ");
  }
  for (size_t i = 0; i < c.num_links(); ++i) {
    const Link& l = c.link(LinkId(i));
    out << "  \"" << DotEscape(c.place(l.a).name) << "\" -> \"" << DotEscape(c.place(l.b).name)
        << "\" [label=\"" << LinkKindName(l.kind) << " " << ShortBandwidth(l.bandwidth_bytes_per_s)
        << " GB/s\", color=\"" << LinkColor(l.kind) << "\"" << (l.one_way ? ", dir=forward" : "")
        << "];\n";
  }
  out << "}\n";
  return out.str();
}

}  // namespace hx::hw
