#include "hexplan/sim/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "hexplan/core/json_text.h"
#include "hexplan/core/svg_text.h"
#include "hexplan/core/xml.h"
#include "hexplan/graph/op_cost.h"

namespace hx::sim {
namespace {

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

const char* Colour(const std::string& category) {
  if (category == "op") return "#4e79a7";
  if (category == "op-dha") return "#f28e2b";
  if (category == "weight_load") return "#59a14f";
  if (category == "weight_forward") return "#b07aa1";
  return "#e15759";  // activation
}

// A "nice" tick step for a time axis spanning `span` seconds, about 10 ticks.
double TickStep(double span) {
  if (span <= 0) return 1.0;
  const double raw = span / 10.0;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10.0 * p;
}

uint64_t DeviceRank(DeviceId d) { return d.valid() ? d.index() : UINT64_MAX; }

// a < b with runs of digits compared as numbers: "gpu2" < "gpu10".
bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t i1 = i, j1 = j;
      while (i1 < a.size() && digit(a[i1])) ++i1;
      while (j1 < b.size() && digit(b[j1])) ++j1;
      std::string x = a.substr(i, i1 - i), y = b.substr(j, j1 - j);
      x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
      y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = i1;
      j = j1;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

TimelineRecorder::TimelineRecorder(const plan::Plan& plan, const graph::Graph& graph,
                                   const hw::Cluster& cluster)
    : plan_(plan), graph_(graph), cluster_(cluster) {}

uint32_t TimelineRecorder::TrackFor(const std::string& name, TrackKind kind, double scale,
                                    uint64_t rank) {
  auto key = std::make_pair(static_cast<int>(kind), name);
  auto it = track_index_.find(key);
  if (it != track_index_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(tracks_.size());
  tracks_.push_back(Track{name, kind, scale, rank});
  track_index_.emplace(key, id);
  return id;
}

void TimelineRecorder::OnEvent(const SimEvent& e) {
  end_time_ = std::max(end_time_, e.time);
  const std::string track(e.track);
  switch (e.kind) {
    case SimEvent::Kind::kOpStart: {
      Span s;
      s.track = TrackFor(track, TrackKind::kCompute, 0.0, DeviceRank(e.device));
      s.start = s.finish = e.time;
      s.op = e.op;
      s.device = e.device;
      s.name = e.op.valid() && e.op.index() < graph_.num_nodes() ? graph_.node(e.op).name : "?";
      s.category = e.dha ? "op-dha" : "op";
      open_ops_[e.op.value()] = spans_.size();
      spans_.push_back(std::move(s));
      break;
    }
    case SimEvent::Kind::kOpFinish: {
      auto it = open_ops_.find(e.op.value());
      if (it == open_ops_.end()) break;
      spans_[it->second].finish = e.time;
      open_ops_.erase(it);
      break;
    }
    case SimEvent::Kind::kTransferStart: {
      Span s;
      s.track = TrackFor(track, TrackKind::kCopy, 0.0, CopyTrackRank(track));
      s.start = s.finish = e.time;
      s.bytes = e.value;
      s.transfer = e.transfer;
      if (e.transfer < plan_.transfers.size()) {
        const plan::Transfer& t = plan_.transfers[e.transfer];
        s.name = t.tensor.valid() && t.tensor.index() < graph_.num_tensors()
                     ? graph_.tensor(t.tensor).name
                     : "?";
        s.category = plan::TransferKindName(t.kind);
      } else {
        s.name = "transfer " + std::to_string(e.transfer);
        s.category = "activation";
      }
      open_transfers_[e.transfer] = spans_.size();
      spans_.push_back(std::move(s));
      break;
    }
    case SimEvent::Kind::kTransferFinish: {
      auto it = open_transfers_.find(e.transfer);
      if (it == open_transfers_.end()) break;
      spans_[it->second].finish = e.time;
      open_transfers_.erase(it);
      break;
    }
    case SimEvent::Kind::kLinkRate: {
      double bw = 0.0;
      std::string name = track;
      uint64_t rank = UINT64_MAX;
      if (e.link.valid() && e.link.index() < cluster_.num_links()) {
        const hw::Link& l = cluster_.link(e.link);
        bw = l.bandwidth_bytes_per_s;
        rank = 2 * static_cast<uint64_t>(e.link.index()) + (e.forward ? 0 : 1);
        name = l.name;
        if (l.full_duplex)
          name += " " + cluster_.place(e.forward ? l.a : l.b).name + "->" +
                  cluster_.place(e.forward ? l.b : l.a).name;
      }
      counters_.push_back({TrackFor(name, TrackKind::kLink, bw, rank), e.time, e.value});
      break;
    }
    case SimEvent::Kind::kMemory: {
      double cap = 0.0;
      if (e.device.valid() && e.device.index() < cluster_.num_devices())
        cap = static_cast<double>(cluster_.device(e.device).memory_bytes());
      counters_.push_back(
          {TrackFor("memory " + track, TrackKind::kMemory, cap, DeviceRank(e.device)), e.time,
           e.value});
      break;
    }
  }
}

uint64_t TimelineRecorder::CopyTrackRank(const std::string& track) const {
  // Copy queues are named after their device ("gpu0/in", "gpu0/out").
  auto d = cluster_.FindDevice(track.substr(0, track.find('/')));
  return d ? DeviceRank(*d) : UINT64_MAX;
}

std::vector<uint32_t> TimelineRecorder::TrackOrder() const {
  std::vector<uint32_t> order(tracks_.size());
  for (uint32_t t = 0; t < order.size(); ++t) order[t] = t;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    const Track& a = tracks_[x];
    const Track& b = tracks_[y];
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.rank != b.rank) return a.rank < b.rank;
    return NaturalLess(a.name, b.name);
  });
  return order;
}

namespace {

using nlohmann::json;

int Pid(TimelineRecorder::TrackKind kind) { return static_cast<int>(kind) + 1; }

// What an op slice carries: operator type, shapes, FLOPs and bytes (docs/flops.md).
json OpArgs(const graph::Graph& g, const hw::Cluster& c, const TimelineRecorder::Span& s) {
  json args = json::object();
  if (!s.op.valid() || s.op.index() >= g.num_nodes()) return args;
  const graph::Node& n = g.node(s.op);
  const graph::OpCost cost = graph::ComputeOpCost(g, s.op);
  json inputs = json::array(), outputs = json::array();
  for (TensorId t : n.inputs)
    inputs.push_back(t.valid() ? graph::ShapeToString(g.tensor(t).shape) : "");
  for (TensorId t : n.outputs) outputs.push_back(graph::ShapeToString(g.tensor(t).shape));
  args = {{"op_type", n.op_type},
          {"input_shapes", inputs},
          {"output_shapes", outputs},
          {"flops", cost.flops},
          {"input_bytes", cost.input_bytes},
          {"weight_bytes", cost.weight_bytes},
          {"output_bytes", cost.output_bytes},
          {"bytes", cost.bytes_moved()},
          {"weights_from_host", s.category == "op-dha"}};
  if (s.device.valid() && s.device.index() < c.num_devices())
    args["device"] = c.device(s.device).name;
  return args;
}

// What a transfer slice carries: bytes (as before), the tensor, its shape and the two ends.
json TransferArgs(const plan::Plan& p, const graph::Graph& g, const hw::Cluster& c,
                  const TimelineRecorder::Span& s) {
  json args = {{"bytes", s.bytes}, {"kind", s.category}};
  if (s.transfer < 0 || static_cast<size_t>(s.transfer) >= p.transfers.size()) return args;
  const plan::Transfer& t = p.transfers[s.transfer];
  if (t.tensor.valid() && t.tensor.index() < g.num_tensors()) {
    args["tensor"] = g.tensor(t.tensor).name;
    args["shape"] = graph::ShapeToString(g.tensor(t.tensor).shape);
  }
  if (t.src.valid() && t.src.index() < c.num_places()) args["src"] = c.place(t.src).name;
  if (t.dst.valid() && t.dst.index() < c.num_places()) args["dst"] = c.place(t.dst).name;
  return args;
}

// Flow arrows (trace-event phases "s" and "f", one id each, the finish bound to the enclosing
// slice): producing op -> transfer, and transfer -> each op on the destination device reading it.
void AppendFlows(const plan::Plan& plan, const graph::Graph& graph, const hw::Cluster& cluster,
                 const std::vector<TimelineRecorder::Track>& tracks,
                 const std::vector<TimelineRecorder::Span>& spans, json& events) {
  using Span = TimelineRecorder::Span;
  std::map<uint32_t, size_t> op_span;
  for (size_t i = 0; i < spans.size(); ++i)
    if (spans[i].op.valid()) op_span[spans[i].op.value()] = i;
  int64_t id = 0;
  auto flow = [&](const Span& from, const Span& to, const std::string& name) {
    ++id;
    for (const Span* s : {&from, &to}) {
      json e = {{"ph", s == &from ? "s" : "f"},
                {"id", id},
                {"name", name},
                {"cat", "dataflow"},
                {"pid", Pid(tracks[s->track].kind)},
                {"tid", s->track + 1},
                {"ts", s->start * 1e6}};
      if (s == &to) e["bp"] = "e";
      events.push_back(std::move(e));
    }
  };
  for (const Span& s : spans) {
    if (s.transfer < 0 || static_cast<size_t>(s.transfer) >= plan.transfers.size()) continue;
    const plan::Transfer& t = plan.transfers[s.transfer];
    if (!t.tensor.valid() || t.tensor.index() >= graph.num_tensors()) continue;
    const graph::Tensor& tensor = graph.tensor(t.tensor);
    auto producer = tensor.producer.valid() ? op_span.find(tensor.producer.value()) : op_span.end();
    if (producer != op_span.end()) flow(spans[producer->second], s, tensor.name);
    if (!t.dst.valid() || t.dst.index() >= cluster.num_places()) continue;
    const hw::Place& dst = cluster.place(t.dst);
    if (dst.kind != hw::PlaceKind::kDevice) continue;
    std::set<uint32_t> seen;
    for (NodeId reader : tensor.consumers) {
      auto it = op_span.find(reader.value());
      if (!seen.insert(reader.value()).second || it == op_span.end()) continue;
      if (spans[it->second].device == dst.device) flow(s, spans[it->second], tensor.name);
    }
  }
}

}  // namespace

std::string TimelineRecorder::ChromeTraceJson() const {
  json events = json::array();
  const char* process_names[] = {"compute", "copy queues", "links", "memory"};
  for (int p = 0; p < 4; ++p)
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", p + 1},
                      {"tid", 0},
                      {"args", {{"name", process_names[p]}}}});
  const std::vector<uint32_t> order = TrackOrder();
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t t = order[i];
    const int pid = Pid(tracks_[t].kind);
    events.push_back({{"ph", "M"},
                      {"name", "thread_name"},
                      {"pid", pid},
                      {"tid", t + 1},
                      {"args", {{"name", tracks_[t].name}}}});
    events.push_back({{"ph", "M"},
                      {"name", "thread_sort_index"},
                      {"pid", pid},
                      {"tid", t + 1},
                      {"args", {{"sort_index", i}}}});
  }
  for (const Span& s : spans_) {
    const bool op = s.category == "op" || s.category == "op-dha";
    events.push_back(
        {{"ph", "X"},
         {"name", s.name},
         {"cat", s.category},
         {"pid", Pid(tracks_[s.track].kind)},
         {"tid", s.track + 1},
         {"ts", s.start * 1e6},
         {"dur", std::max(0.0, s.finish - s.start) * 1e6},
         {"args", op ? OpArgs(graph_, cluster_, s) : TransferArgs(plan_, graph_, cluster_, s)}});
  }
  AppendFlows(plan_, graph_, cluster_, tracks_, spans_, events);
  for (const CounterPoint& c : counters_) {
    const Track& t = tracks_[c.track];
    const bool link = t.kind == TrackKind::kLink;
    events.push_back({{"ph", "C"},
                      {"name", t.name},
                      {"pid", Pid(t.kind)},
                      {"tid", c.track + 1},
                      {"ts", c.time * 1e6},
                      {"args", {{link ? "GB/s" : "GB", c.value / 1e9}}}});
  }
  json doc = {{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ms"},
              {"otherData",
               {{"generator", "hexplan"},
                {"model", plan_.model.name},
                {"cluster", plan_.cluster.name},
                {"algo", plan_.algo}}}};
  return DumpJson(doc) + "\n";
}

namespace {

constexpr double kPlotW = 1200, kRowH = 18, kCounterH = 36, kRowGap = 4, kRightRoom = 48;
constexpr double kFont = 11, kTitleFont = 14, kBarFont = 9, kScaleFont = 9;

std::string Text(double x, double y, double size, const char* anchor, const std::string& text,
                 const std::string& extra = "") {
  return "<text x=\"" + Fmt("%.1f", x) + "\" y=\"" + Fmt("%.1f", y) + "\" font-size=\"" +
         Fmt("%g", size) + "\" text-anchor=\"" + anchor + "\"" + extra + ">" + XmlEscape(text) +
         "</text>\n";
}

// Colour swatches with their meaning, wrapped to `width`; returns the y below the last line.
double Legend(double top, double width, std::string* svg) {
  const std::pair<const char*, const char*> items[] = {
      {"#4e79a7", "operator"},     {"#f28e2b", "operator reading host weights (DHA)"},
      {"#59a14f", "weight load"},  {"#b07aa1", "weight forward (PT)"},
      {"#e15759", "activation"},   {"#76b7b2", "link rate"},
      {"#edc948", "memory in use"}};
  double x = 10, y = top + kFont;
  for (const auto& [colour, text] : items) {
    const double w = 14 + SvgTextWidth(text, kFont) + 16;
    if (x > 10 && x + w > width - 10) {
      x = 10;
      y += kFont + 8;
    }
    if (svg) {
      *svg += "<rect x=\"" + Fmt("%.1f", x) + "\" y=\"" + Fmt("%.1f", y - 9) +
              "\" width=\"10\" height=\"10\" fill=\"" + colour + "\"/>\n";
      *svg += Text(x + 14, y, kFont, "start", text);
    }
    x += w;
  }
  return y + 6;
}

// The smallest of 1, 2, 5 times a power of ten at or above v.
double NiceCeil(double v) {
  if (v <= 0) return 1.0;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= v * (1 - 1e-12)) return m * p;
  return 10.0 * p;
}

std::string Gb(double bytes) { return Fmt("%.3g", bytes / 1e9); }

}  // namespace

// The Gantt chart: title, makespan, colour legend, time axis, then one row per track in
// TrackOrder. Slices are bars (named inside when the name fits, always in the tooltip); counters
// are step areas. Link rows are scaled to the link's bandwidth; memory rows to a round number just
// above the device's peak use, so that small use still shows; each counter row says its scale.
std::string TimelineRecorder::SvgGantt(const std::string& title) const {
  const double span_s = end_time_ > 0 ? end_time_ : 1e-9;
  const std::vector<uint32_t> rows = TrackOrder();
  double label_w = 80;
  for (const Track& t : tracks_) label_w = std::max(label_w, SvgTextWidth(t.name, kFont) + 16);
  const std::string makespan = "makespan " + Fmt("%.3f", end_time_ * 1e3) + " ms";
  const double width =
      std::max(label_w + kPlotW + kRightRoom, 20 + SvgTextWidth(title, kTitleFont));
  auto x_of = [&](double t) { return label_w + kPlotW * (t / span_s); };
  const double axis_y = Legend(46, width, nullptr) + 16;
  const double top = axis_y + 8;
  std::vector<double> row_y(tracks_.size(), 0.0), row_height(tracks_.size(), kRowH);
  double y = top;
  for (uint32_t t : rows) {
    const bool counter =
        tracks_[t].kind == TrackKind::kLink || tracks_[t].kind == TrackKind::kMemory;
    row_height[t] = counter ? kCounterH : kRowH;
    row_y[t] = y;
    y += row_height[t] + kRowGap;
  }
  const double height = y + 20;
  std::string svg;
  svg.reserve(160 * (spans_.size() + counters_.size()) + 4096);
  svg += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Fmt("%.0f", width) +
         "\" height=\"" + Fmt("%.0f", height) + "\" viewBox=\"0 0 " + Fmt("%.0f", width) + " " +
         Fmt("%.0f", height) + "\" font-family=\"" + kSvgFontFamily + "\" font-size=\"11\">\n";
  svg += "<rect x=\"0\" y=\"0\" width=\"" + Fmt("%.0f", width) + "\" height=\"" +
         Fmt("%.0f", height) + "\" fill=\"#ffffff\"/>\n";
  svg += Text(10, 20, kTitleFont, "start", title, " font-weight=\"bold\"");
  svg += Text(10, 38, kFont, "start", makespan);
  Legend(46, width, &svg);
  const double step = TickStep(span_s);
  for (double t = 0; t <= span_s * 1.0001; t += step) {
    const double x = x_of(t);
    svg += "<line x1=\"" + Fmt("%.2f", x) + "\" y1=\"" + Fmt("%.0f", top - 6) + "\" x2=\"" +
           Fmt("%.2f", x) + "\" y2=\"" + Fmt("%.0f", y) + "\" stroke=\"#dddddd\"/>\n";
    svg += Text(x, axis_y, kFont, "middle", Fmt("%g", t * 1e3) + " ms");
  }
  for (uint32_t t : rows) {
    svg += Text(label_w - 6, row_y[t] + row_height[t] / 2 + 4, kFont, "end", tracks_[t].name,
                " data-track=\"" + std::to_string(t) + "\"");
    svg += "<rect x=\"" + Fmt("%.0f", label_w) + "\" y=\"" + Fmt("%.1f", row_y[t]) + "\" width=\"" +
           Fmt("%.0f", kPlotW) + "\" height=\"" + Fmt("%.1f", row_height[t]) +
           "\" fill=\"#f6f6f6\"/>\n";
  }
  for (size_t i = 0; i < spans_.size(); ++i) {
    const Span& s = spans_[i];
    const double x0 = x_of(s.start);
    const double w = std::max(0.5, x_of(s.finish) - x0);
    svg += "<rect data-span=\"" + std::to_string(i) + "\" x=\"" + Fmt("%.2f", x0) + "\" y=\"" +
           Fmt("%.1f", row_y[s.track] + 1) + "\" width=\"" + Fmt("%.2f", w) + "\" height=\"" +
           Fmt("%.1f", kRowH - 2) + "\" fill=\"" + Colour(s.category) +
           "\" stroke=\"#ffffff\" stroke-width=\"0.3\"><title>" + XmlEscape(s.name) + " (" +
           s.category + ") " + Fmt("%.4f", s.start * 1e3) + "-" + Fmt("%.4f", s.finish * 1e3) +
           " ms</title></rect>\n";
    if (w >= SvgTextWidth(s.name, kBarFont) + 4)
      svg += Text(x0 + 2, row_y[s.track] + kRowH / 2 + 3, kBarFont, "start", s.name,
                  " data-span=\"" + std::to_string(i) + "\" fill=\"#ffffff\"");
  }
  for (uint32_t t : rows) svg += CounterRow(t, row_y[t], row_height[t], label_w, span_s);
  svg += "</svg>\n";
  return svg;
}

// A counter track as a step area, with its scale written at the row's right end.
std::string TimelineRecorder::CounterRow(uint32_t t, double row_y, double row_h, double label_w,
                                         double span_s) const {
  const Track& tr = tracks_[t];
  if (tr.kind != TrackKind::kLink && tr.kind != TrackKind::kMemory) return "";
  double peak = 0;
  for (const CounterPoint& c : counters_)
    if (c.track == t) peak = std::max(peak, c.value);
  double scale = tr.scale;
  std::string note;
  if (tr.kind == TrackKind::kMemory) {
    scale = NiceCeil(peak > 0 ? peak : tr.scale);
    note = "full height " + Gb(scale) + " GB; peak " + Gb(peak) + " GB" +
           (tr.scale > 0 ? " of " + Gb(tr.scale) + " GB" : "");
  } else {
    if (scale <= 0) scale = peak > 0 ? peak : 1.0;
    note = "full height " + Gb(scale) + " GB/s";
  }
  auto x_of = [&](double time) { return label_w + kPlotW * (time / span_s); };
  const double base = row_y + row_h, usable = row_h - 2;
  std::string points = Fmt("%.2f", x_of(0)) + "," + Fmt("%.2f", base);
  double last = 0.0;
  for (const CounterPoint& c : counters_) {
    if (c.track != t) continue;
    const double x = x_of(c.time);
    const double v = std::min(1.0, c.value / scale);
    points += " " + Fmt("%.2f", x) + "," + Fmt("%.2f", base - last * usable);
    points += " " + Fmt("%.2f", x) + "," + Fmt("%.2f", base - v * usable);
    last = v;
  }
  points += " " + Fmt("%.2f", x_of(span_s)) + "," + Fmt("%.2f", base - last * usable);
  points += " " + Fmt("%.2f", x_of(span_s)) + "," + Fmt("%.2f", base);
  return std::string("<polygon data-track=\"") + std::to_string(t) + "\" points=\"" + points +
         "\" fill=\"" + (tr.kind == TrackKind::kLink ? "#76b7b2" : "#edc948") +
         "\" stroke=\"#555555\" stroke-width=\"0.5\"/>\n" +
         Text(label_w + kPlotW - 4, row_y + kScaleFont + 1, kScaleFont, "end", note,
              " fill=\"#333333\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\"");
}

}  // namespace hx::sim
