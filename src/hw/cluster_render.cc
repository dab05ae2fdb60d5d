#include "hexplan/hw/cluster_render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <queue>
#include <sstream>

#include "hexplan/core/json_text.h"
#include "hexplan/core/utf8.h"
#include "hexplan/core/xml.h"
#include "hexplan/hw/quantity.h"

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

const char* LinkColor(LinkKind kind) {
  switch (kind) {
    case LinkKind::kPcie:
      return "#6b6b6b";
    case LinkKind::kNvlink:
      return "#2e9e3f";
    case LinkKind::kNvswitch:
      return "#1b6e2a";
    case LinkKind::kInfiniband:
      return "#2660b5";
    case LinkKind::kEthernet:
      return "#6a4cb5";
    case LinkKind::kMemoryBus:
      return "#a0672a";
  }
  return "#000000";
}

const char* PlaceColor(const Cluster& c, const Place& p) {
  if (p.kind == PlaceKind::kHostMemory) return "#f4e3c1";
  if (p.kind == PlaceKind::kSwitch) return "#e2e2e2";
  switch (c.device(p.device).kind) {
    case DeviceKind::kGpu:
      return "#c4e8b8";
    case DeviceKind::kCpu:
      return "#bcd4ee";
    case DeviceKind::kMig:
      return "#e6cbe6";
  }
  return "#ffffff";
}

std::string ShortBandwidth(double bytes_per_s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", bytes_per_s / 1e9);
  return buf;
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

std::string ClusterToSvg(const Cluster& c) {
  constexpr double kBoxW = 120, kBoxH = 40, kGapX = 24, kLayerH = 110, kMargin = 30, kTitleH = 40,
                   kNodePad = 16;
  const size_t n = c.num_places();
  auto nodes = c.NodeNames();
  std::map<std::string, size_t> node_index;
  for (size_t i = 0; i < nodes.size(); ++i) node_index[nodes[i]] = i;

  // Layers: host memory 0; switches by hop distance from host within the node; devices last.
  std::vector<int> layer(n, -1);
  for (const std::string& node : nodes) {
    PlaceId host = *c.FindHostMemory(node);
    std::queue<size_t> queue;
    layer[host.index()] = 0;
    queue.push(host.index());
    while (!queue.empty()) {
      size_t u = queue.front();
      queue.pop();
      for (LinkId lid : c.LinksAt(PlaceId(u))) {
        const Link& l = c.link(lid);
        size_t v = l.a.index() == u ? l.b.index() : l.a.index();
        const Place& pv = c.place(PlaceId(v));
        if (pv.kind != PlaceKind::kSwitch || pv.node != node || layer[v] >= 0) continue;
        layer[v] = layer[u] + 1;
        queue.push(v);
      }
    }
  }
  int device_layer = 1;
  for (size_t i = 0; i < n; ++i) {
    const Place& p = c.place(PlaceId(i));
    if (p.kind == PlaceKind::kSwitch && !p.node.empty() && layer[i] < 0) layer[i] = 1;
    if (p.kind == PlaceKind::kSwitch && !p.node.empty())
      device_layer = std::max(device_layer, layer[i] + 1);
  }
  bool has_network = false;
  for (size_t i = 0; i < n; ++i) {
    const Place& p = c.place(PlaceId(i));
    if (p.kind == PlaceKind::kDevice) layer[i] = device_layer;
    if (p.node.empty()) has_network = true;
  }
  // Columns: per node, per layer, the places in insertion order.
  std::vector<std::vector<std::vector<size_t>>> grid(
      nodes.size(), std::vector<std::vector<size_t>>(device_layer + 1));
  std::vector<size_t> network;
  for (size_t i = 0; i < n; ++i) {
    const Place& p = c.place(PlaceId(i));
    if (p.node.empty()) {
      network.push_back(i);
    } else {
      grid[node_index[p.node]][layer[i]].push_back(i);
    }
  }
  std::vector<double> node_x(nodes.size()), node_w(nodes.size());
  double x = kMargin;
  for (size_t k = 0; k < nodes.size(); ++k) {
    size_t widest = 1;
    for (const auto& row : grid[k]) widest = std::max(widest, row.size());
    node_w[k] = widest * (kBoxW + kGapX) - kGapX + 2 * kNodePad;
    node_x[k] = x;
    x += node_w[k] + kGapX;
  }
  double network_w = network.size() * (kBoxW + kGapX) - kGapX;
  double width = std::max(x - kGapX + kMargin, network_w + 2 * kMargin);
  double top = kMargin + kTitleH + (has_network ? kLayerH : 0);
  constexpr double kArcRoom = 60;  // below the devices, for arcs between devices of one row
  double height = top + (device_layer + 1) * kLayerH + kArcRoom + kMargin + 40;

  std::vector<double> cx(n), cy(n);
  for (size_t k = 0; k < nodes.size(); ++k) {
    for (int L = 0; L <= device_layer; ++L) {
      const auto& row = grid[k][L];
      double row_w = row.size() * (kBoxW + kGapX) - kGapX;
      double start = node_x[k] + (node_w[k] - row_w) / 2 + kBoxW / 2;
      for (size_t r = 0; r < row.size(); ++r) {
        cx[row[r]] = start + r * (kBoxW + kGapX);
        cy[row[r]] = top + kNodePad + 14 + L * kLayerH + kBoxH / 2;
      }
    }
  }
  for (size_t r = 0; r < network.size(); ++r) {
    cx[network[r]] = (width - network_w) / 2 + kBoxW / 2 + r * (kBoxW + kGapX);
    cy[network[r]] = kMargin + kTitleH + kBoxH / 2;
  }

  std::ostringstream out;
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.0f %.0f\" font-family=\"Helvetica, Arial, sans-serif\">\n",
                width, height, width, height);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" << buf;
  out << "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  std::snprintf(buf, sizeof(buf), "<text x=\"%.0f\" y=\"%.0f\" font-size=\"18\">", kMargin,
                kMargin + 18);
  out << buf << XmlEscape(c.name()) << " (" << c.num_devices() << " devices, " << c.num_links()
      << " links)</text>\n";
  for (size_t k = 0; k < nodes.size(); ++k) {
    std::snprintf(buf, sizeof(buf),
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"8\" "
                  "fill=\"none\" stroke=\"#999999\" stroke-dasharray=\"6,4\"/>\n"
                  "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#555555\">",
                  node_x[k], top, node_w[k],
                  device_layer * kLayerH + kBoxH + 2 * kNodePad + 14 + kArcRoom, node_x[k] + 6,
                  top + 12);
    out << buf << XmlEscape(nodes[k]) << "</text>\n";
  }
  // Links first, boxes on top.
  std::map<std::pair<size_t, size_t>, int> seen;
  for (size_t i = 0; i < c.num_links(); ++i) {
    const Link& l = c.link(LinkId(i));
    size_t a = l.a.index(), b = l.b.index();
    int repeat = seen[{std::min(a, b), std::max(a, b)}]++;
    double x1 = cx[a], y1 = cy[a], x2 = cx[b], y2 = cy[b];
    std::string label = ShortBandwidth(l.bandwidth_bytes_per_s) + " GB/s";
    if (l.count > 1) label += " x" + std::to_string(l.count);
    double lx, ly;
    if (std::fabs(y1 - y2) < 1) {
      // Same row: an arc below the boxes, deeper for farther pairs and repeated links.
      double depth = kBoxH / 2 + 14 + 10 * std::fabs(x2 - x1) / (kBoxW + kGapX) + 14 * repeat;
      double mx = (x1 + x2) / 2, my = y1 + depth * 2;
      std::snprintf(buf, sizeof(buf),
                    "<path d=\"M %.1f %.1f Q %.1f %.1f %.1f %.1f\" fill=\"none\" stroke=\"%s\" "
                    "stroke-width=\"%.1f\"%s/>\n",
                    x1, y1 + kBoxH / 2, mx, my, x2, y2 + kBoxH / 2, LinkColor(l.kind),
                    1.0 + std::min(4.0, std::log2(1.0 + l.bandwidth_bytes_per_s / 16e9)),
                    l.one_way ? " stroke-dasharray=\"4,2\"" : "");
      lx = mx;
      ly = (y1 + kBoxH / 2 + my) / 2 + 4;
    } else {
      double off = 8.0 * repeat;
      std::snprintf(buf, sizeof(buf),
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                    "stroke-width=\"%.1f\"%s/>\n",
                    x1 + off, y1, x2 + off, y2, LinkColor(l.kind),
                    1.0 + std::min(4.0, std::log2(1.0 + l.bandwidth_bytes_per_s / 16e9)),
                    l.one_way ? " stroke-dasharray=\"4,2\"" : "");
      lx = (x1 + x2) / 2 + off + 4;
      ly = (y1 + y2) / 2 + 4 * repeat;
    }
    out << buf;
    std::snprintf(buf, sizeof(buf),
                  "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" fill=\"%s\" "
                  "text-anchor=\"middle\" stroke=\"#ffffff\" stroke-width=\"3\" "
                  "paint-order=\"stroke\">",
                  lx, ly, LinkColor(l.kind));
    out << buf << XmlEscape(label) << "</text>\n";
  }
  for (size_t i = 0; i < n; ++i) {
    const Place& p = c.place(PlaceId(i));
    std::snprintf(buf, sizeof(buf),
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" rx=\"6\" "
                  "fill=\"%s\" stroke=\"#333333\"/>\n",
                  cx[i] - kBoxW / 2, cy[i] - kBoxH / 2, kBoxW, kBoxH, PlaceColor(c, p));
    out << buf;
    std::string sub = p.kind == PlaceKind::kDevice       ? c.device(p.device).spec.model
                      : p.kind == PlaceKind::kHostMemory ? "host memory"
                                                         : "switch";
    if (p.kind == PlaceKind::kDevice && c.device(p.device).clock_scale != 1.0) {
      char scale[32];
      std::snprintf(scale, sizeof(scale), " @%.2gx", c.device(p.device).clock_scale);
      sub += scale;
    }
    std::snprintf(buf, sizeof(buf),
                  "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">", cx[i],
                  cy[i] - 3);
    out << buf << XmlEscape(p.name) << "</text>\n";
    std::snprintf(buf, sizeof(buf),
                  "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" fill=\"#444444\" "
                  "text-anchor=\"middle\">",
                  cx[i], cy[i] + 12);
    out << buf << XmlEscape(sub) << "</text>\n";
  }
  // Legend.
  double lx = kMargin;
  double ly = height - 20;
  for (LinkKind kind : {LinkKind::kPcie, LinkKind::kNvlink, LinkKind::kNvswitch,
                        LinkKind::kInfiniband, LinkKind::kEthernet, LinkKind::kMemoryBus}) {
    std::snprintf(buf, sizeof(buf),
                  "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" "
                  "stroke-width=\"3\"/><text x=\"%.0f\" y=\"%.0f\" font-size=\"10\">%s</text>\n",
                  lx, ly, lx + 20, ly, LinkColor(kind), lx + 24, ly + 4, LinkKindName(kind));
    out << buf;
    lx += 100;
  }
  out << "</svg>\n";
  return out.str();
}

}  // namespace hx::hw
