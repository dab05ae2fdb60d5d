// The SVG drawing of a cluster (`hexplan topo --svg`).
//
// Layout. Places sit in rows: network switches on top, then per node (a dashed box, nodes side by
// side) host memory, switches by hop distance from host memory, devices last. Every link is drawn
// with right angles: it leaves its box from a port of its own (ports spread along the box's top or
// bottom edge), runs to a horizontal track of its own in the channel between two rows, and enters
// the other box the same way. A link whose ends are rows apart climbs along a lane at its node's
// right edge, where no box stands; a link between two nodes runs below all node boxes, one from the
// network above them. So no line passes through a box it does not connect, parallel links between
// one pair of places are separate lines, and each link's bandwidth label sits on its own line at a
// spot no other line crosses. Text is set in a monospace font (core/svg_text.h), so its width is
// known and everything, the legend included, is kept inside the canvas.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <queue>
#include <string>
#include <vector>

#include "hexplan/core/svg_text.h"
#include "hexplan/core/xml.h"
#include "hexplan/hw/cluster_render.h"
#include "hw/render_colors.h"

namespace hx::hw {
namespace {

constexpr double kMargin = 20, kBoxH = 40, kNodePad = 12, kNodeLabelH = 20, kNodeGap = 24;
constexpr double kTrack = 13;       // distance between parallel tracks in a channel
constexpr double kChannelPad = 10;  // channel edge to its first or last track
constexpr double kEmptyChannel = 30;
constexpr double kLaneStep = 8;  // distance between lanes at a node's right edge
constexpr double kLabelFont = 9, kNameFont = 12, kSubFont = 9, kTitleFont = 16, kNodeFont = 11,
                 kLegendFont = 10;

struct Pt {
  double x = 0, y = 0;
};

// One end of a link's route: the box edge it leaves from and, when rows lie between that edge and
// the trunk's channel, the channel of its first horizontal run and the lane it then follows.
struct Leg {
  size_t place = 0;
  bool top = false;
  int via = -1;   // channel; -1: straight from the port to the trunk
  int lane = -1;  // lane index within the place's node
  int via_track = 0;
  double port_x = 0;
};

struct LinkPath {
  int channel = 0;  // channel c lies below row c; channel num_rows lies below every node box
  int track = 0;
  Leg a, b;
  std::vector<Pt> points;
  std::string label;
  SvgBox label_box;
  double label_x = 0, label_y = 0;
};

struct Frame {
  std::vector<std::string> nodes;
  std::vector<int> row;   // per place
  std::vector<int> node;  // per place; -1 for network switches
  int num_rows = 0;
  int first_node_row = 0;
  std::vector<double> box_w;  // per place: room for the names and its ports
  double gap = 28;
  std::vector<int> lanes;  // per node
  std::vector<double> node_x, node_w, lane_x0;
  std::vector<double> cx;                // per place
  std::vector<double> row_y, channel_y;  // per row; per channel (its top edge)
  std::vector<std::vector<std::vector<std::pair<double, double>>>> tracks;  // channel, track
  double container_top = 0, container_bottom = 0, width = 0, height = 0;
};

// Rows: host memory 0; switches by hop distance from host memory within their node; devices last.
void AssignRows(const Cluster& c, Frame& f) {
  const size_t n = c.num_places();
  f.nodes = c.NodeNames();
  std::map<std::string, int> node_index;
  for (size_t i = 0; i < f.nodes.size(); ++i) node_index[f.nodes[i]] = static_cast<int>(i);
  std::vector<int> layer(n, -1);
  for (const std::string& node : f.nodes) {
    auto host = c.FindHostMemory(node);
    if (!host) continue;
    std::queue<size_t> queue;
    layer[host->index()] = 0;
    queue.push(host->index());
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
  // Switches host memory does not reach (an NVSwitch fabric) go in the row just above the devices.
  int device_layer = 1;
  bool has_network = false;
  for (size_t i = 0; i < n; ++i) {
    const Place& p = c.place(PlaceId(i));
    if (p.node.empty()) has_network = true;
    if (p.kind == PlaceKind::kSwitch && !p.node.empty())
      device_layer = std::max(device_layer, layer[i] < 0 ? 2 : layer[i] + 1);
    if (p.kind == PlaceKind::kHostMemory && layer[i] < 0) layer[i] = 0;
  }
  for (size_t i = 0; i < n; ++i) {
    const Place& p = c.place(PlaceId(i));
    if (p.kind == PlaceKind::kSwitch && !p.node.empty() && layer[i] < 0)
      layer[i] = device_layer - 1;
  }
  f.first_node_row = has_network ? 1 : 0;
  f.num_rows = f.first_node_row + device_layer + 1;
  f.row.assign(n, 0);
  f.node.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const Place& p = c.place(PlaceId(i));
    if (p.node.empty()) continue;
    f.node[i] = node_index[p.node];
    f.row[i] = f.first_node_row + (p.kind == PlaceKind::kDevice ? device_layer : layer[i]);
  }
}

LinkPath Classify(const Frame& f, size_t a, size_t b) {
  if (f.row[a] > f.row[b]) std::swap(a, b);
  LinkPath r;
  r.a.place = a;
  r.b.place = b;
  const int ra = f.row[a], rb = f.row[b];
  if (f.node[a] == f.node[b] || f.node[a] < 0) {
    // One node (or the network row above the nodes): the trunk runs below the upper end's row.
    r.channel = ra;
    r.b.top = rb > ra;
    if (rb > ra + 1) r.b.via = rb - 1;
    return r;
  }
  r.channel = f.num_rows;  // between two nodes: below every node box
  for (Leg* leg : {&r.a, &r.b})
    if (f.row[leg->place] != f.num_rows - 1) leg->via = f.row[leg->place];
  return r;
}

std::string LinkLabel(const Link& l) {
  std::string label = ShortBandwidth(l.bandwidth_bytes_per_s) + " GB/s";
  if (l.count > 1) label += " x" + std::to_string(l.count);
  return label;
}

std::string SubLabel(const Cluster& c, const Place& p) {
  std::string sub = p.kind == PlaceKind::kDevice       ? c.device(p.device).spec.model
                    : p.kind == PlaceKind::kHostMemory ? "host memory"
                                                       : "switch";
  if (p.kind == PlaceKind::kDevice && c.device(p.device).clock_scale != 1.0) {
    char scale[32];
    std::snprintf(scale, sizeof(scale), " @%.2gx", c.device(p.device).clock_scale);
    sub += scale;
  }
  return sub;
}

// Box width and the gap between boxes: room for the names, the ports and a link label.
void SizeBoxes(const Cluster& c, const std::vector<LinkPath>& routes, Frame& f) {
  std::map<std::pair<size_t, bool>, int> ports;
  double label_w = 0;
  for (const LinkPath& r : routes) {
    for (const Leg* leg : {&r.a, &r.b}) ++ports[{leg->place, leg->top}];
    label_w = std::max(label_w, SvgTextWidth(r.label, kLabelFont));
  }
  double text_w = 0;
  for (size_t i = 0; i < c.num_places(); ++i) {
    const Place& p = c.place(PlaceId(i));
    text_w =
        std::max({text_w, SvgTextWidth(p.name, kNameFont), SvgTextWidth(SubLabel(c, p), kSubFont)});
  }
  f.box_w.assign(c.num_places(), std::max(120.0, text_w + 12));
  for (const auto& [key, count] : ports)
    f.box_w[key.first] = std::max(f.box_w[key.first], 10.0 * (count + 1));
  f.gap = std::max(28.0, label_w + 12);
}

// Columns: nodes side by side, each row centred in its node, lanes at the node's right edge; the
// network row centred over them.
void PlaceColumns(const Cluster& c, Frame& f) {
  const size_t n = c.num_places();
  std::vector<std::vector<std::vector<size_t>>> grid(f.nodes.size(),
                                                     std::vector<std::vector<size_t>>(f.num_rows));
  std::vector<size_t> network;
  for (size_t i = 0; i < n; ++i) {
    if (f.node[i] < 0) {
      network.push_back(i);
    } else {
      grid[f.node[i]][f.row[i]].push_back(i);
    }
  }
  auto row_width = [&](const std::vector<size_t>& row) {
    double w = row.empty() ? 0 : -f.gap;
    for (size_t i : row) w += f.box_w[i] + f.gap;
    return w;
  };
  auto put_row = [&](const std::vector<size_t>& row, double left) {
    for (size_t i : row) {
      f.cx[i] = left + f.box_w[i] / 2;
      left += f.box_w[i] + f.gap;
    }
  };
  f.cx.assign(n, 0);
  f.node_x.assign(f.nodes.size(), 0);
  f.node_w.assign(f.nodes.size(), 0);
  f.lane_x0.assign(f.nodes.size(), 0);
  double x = kMargin;
  for (size_t k = 0; k < f.nodes.size(); ++k) {
    double inner = SvgTextWidth(f.nodes[k], kNodeFont);
    for (const auto& row : grid[k]) inner = std::max(inner, row_width(row));
    const double lane_w = f.lanes[k] > 0 ? 10 + f.lanes[k] * kLaneStep : 0;
    f.node_x[k] = x;
    f.node_w[k] = 2 * kNodePad + inner + lane_w;
    f.lane_x0[k] = x + kNodePad + inner + 10;
    for (const auto& row : grid[k]) put_row(row, x + kNodePad + (inner - row_width(row)) / 2);
    x += f.node_w[k] + kNodeGap;
  }
  const double nodes_right = f.nodes.empty() ? kMargin : x - kNodeGap;
  const double content_w = std::max(nodes_right - kMargin, row_width(network));
  put_row(network, kMargin + (content_w - row_width(network)) / 2);
  f.width = kMargin + content_w + kMargin;
}

double LaneX(const Frame& f, const Leg& leg) {
  return f.lane_x0[f.node[leg.place]] + leg.lane * kLaneStep;
}

// Where a leg's route goes after its port: its lane, or the other end.
double TargetX(const Frame& f, const Leg& leg, const Leg& other) {
  if (leg.lane >= 0) return LaneX(f, leg);
  return other.lane >= 0 ? LaneX(f, other) : f.cx[other.place];
}

// Ports: each (box, edge) spreads its legs evenly, ordered by where they head.
void AssignPorts(const Frame& f, std::vector<LinkPath>& routes) {
  std::map<std::pair<size_t, bool>, std::vector<std::pair<double, Leg*>>> sides;
  for (LinkPath& r : routes) {
    sides[{r.a.place, r.a.top}].push_back({TargetX(f, r.a, r.b), &r.a});
    sides[{r.b.place, r.b.top}].push_back({TargetX(f, r.b, r.a), &r.b});
  }
  for (auto& [key, legs] : sides) {
    std::stable_sort(legs.begin(), legs.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    const double w = f.box_w[key.first], left = f.cx[key.first] - w / 2;
    for (size_t i = 0; i < legs.size(); ++i)
      legs[i].second->port_x = left + w * (i + 1) / (legs.size() + 1);
  }
}

// The first track of `channel` free over [x0, x1].
int TakeTrack(Frame& f, int channel, double x0, double x1) {
  auto& tracks = f.tracks[channel];
  for (size_t t = 0;; ++t) {
    if (t == tracks.size()) tracks.emplace_back();
    bool free = true;
    for (const auto& [u0, u1] : tracks[t]) free = free && (x1 < u0 || u1 < x0);
    if (free) {
      tracks[t].push_back({x0, x1});
      return static_cast<int>(t);
    }
  }
}

double LegEndX(const Frame& f, const Leg& leg) {
  return leg.lane >= 0 ? LaneX(f, leg) : leg.port_x;
}

void AssignTracks(Frame& f, std::vector<LinkPath>& routes) {
  f.tracks.assign(f.num_rows + 1, {});
  for (LinkPath& r : routes) {
    const double x0 = std::min(LegEndX(f, r.a), LegEndX(f, r.b));
    const double x1 = std::max(LegEndX(f, r.a), LegEndX(f, r.b));
    const double mid = (x0 + x1) / 2, half = SvgTextWidth(r.label, kLabelFont) / 2;
    r.track = TakeTrack(f, r.channel, std::min(x0, mid - half) - 4, std::max(x1, mid + half) + 4);
    for (Leg* leg : {&r.a, &r.b}) {
      if (leg->via < 0) continue;
      const double lane = LaneX(f, *leg);
      leg->via_track =
          TakeTrack(f, leg->via, std::min(lane, leg->port_x) - 4, std::max(lane, leg->port_x) + 4);
    }
  }
}

double ChannelHeight(const Frame& f, int channel) {
  const size_t tracks = f.tracks[channel].size();
  if (tracks == 0) return channel == f.num_rows ? 0 : kEmptyChannel;
  return 2 * kChannelPad + (tracks - 1) * kTrack;
}

// Rows and channels from the top: title, network row, its channel, the node boxes (label band,
// then each row and the channel below it), the channel below the node boxes.
void PlaceRows(Frame& f) {
  double y = kMargin + kTitleFont + 16;
  f.row_y.assign(f.num_rows, 0);
  f.channel_y.assign(f.num_rows + 1, 0);
  for (int r = 0; r < f.num_rows; ++r) {
    if (r == f.first_node_row) {
      f.container_top = y;
      y += kNodeLabelH;
    }
    f.row_y[r] = y;
    y += kBoxH;
    f.channel_y[r] = y;
    y += ChannelHeight(f, r);
  }
  f.container_bottom = y;
  f.channel_y[f.num_rows] = y + 4;
  y += 4 + ChannelHeight(f, f.num_rows);
  f.height = y;  // the legend goes below
}

double TrackY(const Frame& f, int channel, int track) {
  return f.channel_y[channel] + kChannelPad + track * kTrack;
}

std::vector<Pt> LegPoints(const Frame& f, const Leg& leg, double trunk_y) {
  const double port_y = f.row_y[f.row[leg.place]] + (leg.top ? 0 : kBoxH);
  std::vector<Pt> pts = {{leg.port_x, port_y}};
  if (leg.via < 0) {
    pts.push_back({leg.port_x, trunk_y});
    return pts;
  }
  const double via_y = TrackY(f, leg.via, leg.via_track), lane = LaneX(f, leg);
  pts.push_back({leg.port_x, via_y});
  pts.push_back({lane, via_y});
  pts.push_back({lane, trunk_y});
  return pts;
}

bool SegmentHitsBox(const Pt& p, const Pt& q, const SvgBox& b) {
  const double x0 = std::min(p.x, q.x), x1 = std::max(p.x, q.x);
  const double y0 = std::min(p.y, q.y), y1 = std::max(p.y, q.y);
  return x0 <= b.x1 && b.x0 <= x1 && y0 <= b.y1 && b.y0 <= y1;  // axis-aligned segments
}

// Things a label may not touch: boxes, other labels, other links' lines.
struct Obstacles {
  std::vector<SvgBox> boxes;
  std::vector<const LinkPath*> routes;
};

int Conflicts(const Obstacles& o, const LinkPath& self, const SvgBox& box) {
  int n = 0;
  for (const SvgBox& b : o.boxes) n += b.Overlaps(box);
  for (const LinkPath* r : o.routes) {
    if (r == &self) continue;
    if (r->label_box.x1 > r->label_box.x0 && r->label_box.Overlaps(box)) ++n;
    for (size_t i = 1; i < r->points.size(); ++i)
      n += SegmentHitsBox(r->points[i - 1], r->points[i], box);
  }
  return n;
}

// The label sits on its own trunk: at the middle if nothing else is there, else the nearest free
// spot along the trunk, else the spot with the fewest things in the way.
void PlaceLabel(const Frame& f, const Obstacles& o, LinkPath& r) {
  const double y = TrackY(f, r.channel, r.track);
  const double xa = LegEndX(f, r.a), xb = LegEndX(f, r.b);
  const double mid = (xa + xb) / 2, reach = std::fabs(xb - xa) / 2;
  const double baseline = y + (kSvgAscentEm - kSvgDescentEm) / 2 * kLabelFont;
  int best = -1;
  for (double d = 0; d <= reach; d = d > 0 ? -d : -d + 3) {
    const double x = mid + d;
    const SvgBox box = SvgTextBox(x, baseline, kLabelFont, "middle", r.label);
    const int conflicts = box.Inside(f.width, f.height) ? Conflicts(o, r, box) : 1 << 20;
    if (best < 0 || conflicts < best) {
      best = conflicts;
      r.label_x = x;
      r.label_y = baseline;
      r.label_box = box;
    }
    if (best == 0) break;
  }
}

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string TextElement(double x, double y, double size, const char* anchor,
                        const std::string& text, const std::string& extra = "") {
  return "<text x=\"" + Fmt("%.1f", x) + "\" y=\"" + Fmt("%.1f", y) + "\" font-size=\"" +
         Fmt("%g", size) + "\" text-anchor=\"" + anchor + "\"" + extra + ">" + XmlEscape(text) +
         "</text>\n";
}

// The legend: a line sample and a name per link kind present, then how to read dashes and widths,
// wrapped to the canvas width. Returns its height.
double Legend(const Cluster& c, const Frame& f, double top, std::string* out) {
  std::vector<std::pair<const char*, std::string>> items;  // colour, text ("" colour: text only)
  bool one_way = false;
  for (LinkKind kind : {LinkKind::kPcie, LinkKind::kNvlink, LinkKind::kNvswitch,
                        LinkKind::kInfiniband, LinkKind::kEthernet, LinkKind::kMemoryBus}) {
    bool present = false;
    for (size_t i = 0; i < c.num_links(); ++i) {
      present = present || c.link(LinkId(i)).kind == kind;
      one_way = one_way || c.link(LinkId(i)).one_way;
    }
    if (present) items.push_back({LinkColor(kind), LinkKindName(kind)});
  }
  items.push_back({"", "labels: GB/s per direction (xN: N links); thicker = faster"});
  if (one_way) items.push_back({"", "dashed: one direction only"});
  double x = kMargin, y = top + kLegendFont;
  const double right = f.width - kMargin;
  for (const auto& [colour, text] : items) {
    const double sample = *colour ? 24 : 0;
    const double w = sample + SvgTextWidth(text, kLegendFont) + 16;
    if (x > kMargin && x + w > right) {
      x = kMargin;
      y += kLegendFont + 8;
    }
    if (*colour && out)
      *out += "<line x1=\"" + Fmt("%.1f", x) + "\" y1=\"" + Fmt("%.1f", y - 3) + "\" x2=\"" +
              Fmt("%.1f", x + 20) + "\" y2=\"" + Fmt("%.1f", y - 3) + "\" stroke=\"" + colour +
              "\" stroke-width=\"3\"/>\n";
    if (out) *out += TextElement(x + sample, y, kLegendFont, "start", text);
    x += w;
  }
  return y + kLegendFont - top;
}

double StrokeWidth(const Link& l) {
  return 1.0 + std::min(3.0, std::log2(1.0 + l.bandwidth_bytes_per_s / 16e9));
}

std::string Points(const std::vector<Pt>& pts) {
  std::string s;
  for (const Pt& p : pts) s += (s.empty() ? "" : " ") + Fmt("%.1f", p.x) + "," + Fmt("%.1f", p.y);
  return s;
}

void DrawNodes(const Frame& f, std::string& svg) {
  for (size_t k = 0; k < f.nodes.size(); ++k) {
    svg += "<rect data-node=\"" + std::to_string(k) + "\" x=\"" + Fmt("%.1f", f.node_x[k]) +
           "\" y=\"" + Fmt("%.1f", f.container_top) + "\" width=\"" + Fmt("%.1f", f.node_w[k]) +
           "\" height=\"" + Fmt("%.1f", f.container_bottom - f.container_top) +
           "\" rx=\"8\" fill=\"none\" stroke=\"#999999\" stroke-dasharray=\"6,4\"/>\n";
    svg += TextElement(f.node_x[k] + 6, f.container_top + 14, kNodeFont, "start", f.nodes[k],
                       " fill=\"#555555\"");
  }
}

void DrawPlaces(const Cluster& c, const Frame& f, std::string& svg) {
  for (size_t i = 0; i < c.num_places(); ++i) {
    const Place& p = c.place(PlaceId(i));
    const double x = f.cx[i] - f.box_w[i] / 2, y = f.row_y[f.row[i]];
    svg += "<rect data-place=\"" + std::to_string(i) + "\" x=\"" + Fmt("%.1f", x) + "\" y=\"" +
           Fmt("%.1f", y) + "\" width=\"" + Fmt("%.1f", f.box_w[i]) + "\" height=\"" +
           Fmt("%.0f", kBoxH) + "\" rx=\"6\" fill=\"" + PlaceColor(c, p) +
           "\" stroke=\"#333333\"/>\n";
    svg += TextElement(f.cx[i], y + 18, kNameFont, "middle", p.name);
    svg += TextElement(f.cx[i], y + 32, kSubFont, "middle", SubLabel(c, p), " fill=\"#444444\"");
  }
}

void DrawLinks(const Cluster& c, const std::vector<LinkPath>& routes, std::string& svg) {
  for (size_t i = 0; i < routes.size(); ++i) {
    const Link& l = c.link(LinkId(i));
    svg += "<polyline data-link=\"" + std::to_string(i) + "\" points=\"" +
           Points(routes[i].points) + "\" fill=\"none\" stroke=\"" + LinkColor(l.kind) +
           "\" stroke-width=\"" + Fmt("%.1f", StrokeWidth(l)) + "\"" +
           (l.one_way ? " stroke-dasharray=\"5,3\"" : "") + "><title>" + XmlEscape(l.name) +
           "</title></polyline>\n";
  }
  for (size_t i = 0; i < routes.size(); ++i) {
    const LinkPath& r = routes[i];
    const SvgBox& b = r.label_box;
    svg += "<rect x=\"" + Fmt("%.1f", b.x0 - 1) + "\" y=\"" + Fmt("%.1f", b.y0) + "\" width=\"" +
           Fmt("%.1f", b.x1 - b.x0 + 2) + "\" height=\"" + Fmt("%.1f", b.y1 - b.y0) +
           "\" fill=\"#ffffff\"/>\n";
    svg += TextElement(r.label_x, r.label_y, kLabelFont, "middle", r.label,
                       " data-link=\"" + std::to_string(i) + "\" fill=\"" +
                           LinkColor(c.link(LinkId(i)).kind) + "\"");
  }
}

std::vector<LinkPath> RouteLinks(const Cluster& c, Frame& f) {
  std::vector<LinkPath> routes;
  f.lanes.assign(f.nodes.size(), 0);
  for (size_t i = 0; i < c.num_links(); ++i) {
    const Link& l = c.link(LinkId(i));
    LinkPath r = Classify(f, l.a.index(), l.b.index());
    r.label = LinkLabel(l);
    for (Leg* leg : {&r.a, &r.b})
      if (leg->via >= 0) leg->lane = f.lanes[f.node[leg->place]]++;
    routes.push_back(std::move(r));
  }
  SizeBoxes(c, routes, f);
  PlaceColumns(c, f);
  AssignPorts(f, routes);
  AssignTracks(f, routes);
  PlaceRows(f);
  for (LinkPath& r : routes) {
    const double y = TrackY(f, r.channel, r.track);
    r.points = LegPoints(f, r.a, y);
    std::vector<Pt> b = LegPoints(f, r.b, y);
    r.points.insert(r.points.end(), b.rbegin(), b.rend());
  }
  return routes;
}

}  // namespace

std::string ClusterToSvg(const Cluster& c) {
  Frame f;
  AssignRows(c, f);
  std::vector<LinkPath> routes = RouteLinks(c, f);
  const std::string title = c.name() + " (" + std::to_string(c.num_devices()) + " devices, " +
                            std::to_string(c.num_links()) + " links)";
  f.width = std::max(f.width, 2 * kMargin + SvgTextWidth(title, kTitleFont));
  f.width = std::max(f.width, 2 * kMargin + SvgTextWidth(std::string(60, 'x'), kLegendFont));
  const double legend_top = f.height + 16;
  f.height = legend_top + Legend(c, f, legend_top, nullptr) + kMargin;

  Obstacles o;
  for (size_t i = 0; i < c.num_places(); ++i)
    o.boxes.push_back({f.cx[i] - f.box_w[i] / 2, f.row_y[f.row[i]], f.cx[i] + f.box_w[i] / 2,
                       f.row_y[f.row[i]] + kBoxH});
  for (size_t k = 0; k < f.nodes.size(); ++k)
    o.boxes.push_back(
        SvgTextBox(f.node_x[k] + 6, f.container_top + 14, kNodeFont, "start", f.nodes[k]));
  for (const LinkPath& r : routes) o.routes.push_back(&r);
  for (LinkPath& r : routes) PlaceLabel(f, o, r);

  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Fmt("%.0f", std::ceil(f.width)) +
         "\" height=\"" + Fmt("%.0f", std::ceil(f.height)) + "\" viewBox=\"0 0 " +
         Fmt("%.0f", std::ceil(f.width)) + " " + Fmt("%.0f", std::ceil(f.height)) +
         "\" font-family=\"" + kSvgFontFamily + "\">\n";
  svg += "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  svg += TextElement(kMargin, kMargin + kTitleFont, kTitleFont, "start", title);
  DrawNodes(f, svg);
  DrawPlaces(c, f, svg);
  DrawLinks(c, routes, svg);
  Legend(c, f, legend_top, &svg);
  svg += "</svg>\n";
  return svg;
}

}  // namespace hx::hw
