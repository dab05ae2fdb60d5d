#include "hexplan/sim/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "hexplan/core/json_text.h"
#include "hexplan/core/xml.h"

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

}  // namespace

TimelineRecorder::TimelineRecorder(const plan::Plan& plan, const graph::Graph& graph,
                                   const hw::Cluster& cluster)
    : plan_(plan), graph_(graph), cluster_(cluster) {}

uint32_t TimelineRecorder::TrackFor(const std::string& name, TrackKind kind, double scale) {
  auto key = std::make_pair(static_cast<int>(kind), name);
  auto it = track_index_.find(key);
  if (it != track_index_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(tracks_.size());
  tracks_.push_back(Track{name, kind, scale});
  track_index_.emplace(key, id);
  return id;
}

void TimelineRecorder::OnEvent(const SimEvent& e) {
  end_time_ = std::max(end_time_, e.time);
  const std::string track(e.track);
  switch (e.kind) {
    case SimEvent::Kind::kOpStart: {
      Span s;
      s.track = TrackFor(track, TrackKind::kCompute, 0.0);
      s.start = s.finish = e.time;
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
      s.track = TrackFor(track, TrackKind::kCopy, 0.0);
      s.start = s.finish = e.time;
      s.bytes = e.value;
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
      if (e.link.valid() && e.link.index() < cluster_.num_links()) {
        const hw::Link& l = cluster_.link(e.link);
        bw = l.bandwidth_bytes_per_s;
        name = l.name;
        if (l.full_duplex)
          name += " " + cluster_.place(e.forward ? l.a : l.b).name + "->" +
                  cluster_.place(e.forward ? l.b : l.a).name;
      }
      counters_.push_back({TrackFor(name, TrackKind::kLink, bw), e.time, e.value});
      break;
    }
    case SimEvent::Kind::kMemory: {
      double cap = 0.0;
      if (e.device.valid() && e.device.index() < cluster_.num_devices())
        cap = static_cast<double>(cluster_.device(e.device).memory_bytes());
      counters_.push_back({TrackFor("memory " + track, TrackKind::kMemory, cap), e.time, e.value});
      break;
    }
  }
}

std::string TimelineRecorder::ChromeTraceJson() const {
  using nlohmann::json;
  json events = json::array();
  const char* process_names[] = {"compute", "copy queues", "links", "memory"};
  for (int p = 0; p < 4; ++p)
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", p + 1},
                      {"tid", 0},
                      {"args", {{"name", process_names[p]}}}});
  for (size_t t = 0; t < tracks_.size(); ++t) {
    const int pid = static_cast<int>(tracks_[t].kind) + 1;
    events.push_back({{"ph", "M"},
                      {"name", "thread_name"},
                      {"pid", pid},
                      {"tid", t + 1},
                      {"args", {{"name", tracks_[t].name}}}});
  }
  for (const Span& s : spans_) {
    json e = {{"ph", "X"},
              {"name", s.name},
              {"cat", s.category},
              {"pid", static_cast<int>(tracks_[s.track].kind) + 1},
              {"tid", s.track + 1},
              {"ts", s.start * 1e6},
              {"dur", std::max(0.0, s.finish - s.start) * 1e6}};
    if (s.category != "op" && s.category != "op-dha") e["args"] = {{"bytes", s.bytes}};
    events.push_back(std::move(e));
  }
  for (const CounterPoint& c : counters_) {
    const Track& t = tracks_[c.track];
    const bool link = t.kind == TrackKind::kLink;
    events.push_back({{"ph", "C"},
                      {"name", t.name},
                      {"pid", static_cast<int>(t.kind) + 1},
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

std::string TimelineRecorder::SvgGantt(const std::string& title) const {
  const double label_w = 220, plot_w = 1200, right = 20, top = 60, row_h = 18, gap = 4;
  const double counter_h = 36;
  const double span_s = end_time_ > 0 ? end_time_ : 1e-9;
  auto x_of = [&](double t) { return label_w + plot_w * (t / span_s); };
  // Row order: compute, copy, link, memory (each in first-seen order).
  std::vector<uint32_t> rows;
  for (int k = 0; k < 4; ++k)
    for (uint32_t t = 0; t < tracks_.size(); ++t)
      if (static_cast<int>(tracks_[t].kind) == k) rows.push_back(t);
  std::vector<double> row_y(tracks_.size(), 0.0), row_height(tracks_.size(), row_h);
  double y = top;
  for (uint32_t t : rows) {
    const bool counter =
        tracks_[t].kind == TrackKind::kLink || tracks_[t].kind == TrackKind::kMemory;
    row_height[t] = counter ? counter_h : row_h;
    row_y[t] = y;
    y += row_height[t] + gap;
  }
  const double height = y + 40;
  const double width = label_w + plot_w + right;
  std::string svg;
  svg.reserve(64 * (spans_.size() + counters_.size()) + 4096);
  svg += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Fmt("%.0f", width) +
         "\" height=\"" + Fmt("%.0f", height) + "\" viewBox=\"0 0 " + Fmt("%.0f", width) + " " +
         Fmt("%.0f", height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg += "<rect x=\"0\" y=\"0\" width=\"" + Fmt("%.0f", width) + "\" height=\"" +
         Fmt("%.0f", height) + "\" fill=\"#ffffff\"/>\n";
  svg += "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" + XmlEscape(title) +
         "</text>\n";
  svg += "<text x=\"10\" y=\"38\">makespan " + Fmt("%.3f", end_time_ * 1e3) +
         " ms; blue op, orange DHA op, green weight load, purple PT forward, red activation; "
         "counters: link rate / bandwidth, memory / capacity</text>\n";
  // Time axis.
  const double step = TickStep(span_s);
  for (double t = 0; t <= span_s * 1.0001; t += step) {
    const double x = x_of(t);
    svg += "<line x1=\"" + Fmt("%.2f", x) + "\" y1=\"" + Fmt("%.0f", top - 6) + "\" x2=\"" +
           Fmt("%.2f", x) + "\" y2=\"" + Fmt("%.0f", y) + "\" stroke=\"#dddddd\"/>\n";
    svg += "<text x=\"" + Fmt("%.2f", x) + "\" y=\"" + Fmt("%.0f", top - 8) +
           "\" text-anchor=\"middle\">" + Fmt("%g", t * 1e3) + " ms</text>\n";
  }
  for (uint32_t t : rows) {
    svg += "<text x=\"" + Fmt("%.0f", label_w - 6) + "\" y=\"" +
           Fmt("%.1f", row_y[t] + row_height[t] / 2 + 4) + "\" text-anchor=\"end\">" +
           XmlEscape(tracks_[t].name) + "</text>\n";
    svg += "<rect x=\"" + Fmt("%.0f", label_w) + "\" y=\"" + Fmt("%.1f", row_y[t]) + "\" width=\"" +
           Fmt("%.0f", plot_w) + "\" height=\"" + Fmt("%.1f", row_height[t]) +
           "\" fill=\"#f6f6f6\"/>\n";
  }
  for (const Span& s : spans_) {
    const double x0 = x_of(s.start);
    const double w = std::max(0.5, x_of(s.finish) - x0);
    svg += "<rect x=\"" + Fmt("%.2f", x0) + "\" y=\"" + Fmt("%.1f", row_y[s.track] + 1) +
           "\" width=\"" + Fmt("%.2f", w) + "\" height=\"" + Fmt("%.1f", row_h - 2) + "\" fill=\"" +
           Colour(s.category) + "\" stroke=\"#ffffff\" stroke-width=\"0.3\"><title>" +
           XmlEscape(s.name) + " (" + s.category + ") " + Fmt("%.4f", s.start * 1e3) + "-" +
           Fmt("%.4f", s.finish * 1e3) + " ms</title></rect>\n";
  }
  // Counters as step polylines scaled to the track's bandwidth or capacity.
  for (uint32_t t : rows) {
    const Track& tr = tracks_[t];
    if (tr.kind != TrackKind::kLink && tr.kind != TrackKind::kMemory) continue;
    double scale = tr.scale;
    if (scale <= 0)
      for (const CounterPoint& c : counters_)
        if (c.track == t) scale = std::max(scale, c.value);
    if (scale <= 0) scale = 1.0;
    const double base = row_y[t] + row_height[t];
    std::string points = Fmt("%.2f", x_of(0)) + "," + Fmt("%.2f", base);
    double last = 0.0;
    for (const CounterPoint& c : counters_) {
      if (c.track != t) continue;
      const double x = x_of(c.time);
      const double v = std::min(1.0, c.value / scale);
      points += " " + Fmt("%.2f", x) + "," + Fmt("%.2f", base - last * (row_height[t] - 2));
      points += " " + Fmt("%.2f", x) + "," + Fmt("%.2f", base - v * (row_height[t] - 2));
      last = v;
    }
    points +=
        " " + Fmt("%.2f", x_of(span_s)) + "," + Fmt("%.2f", base - last * (row_height[t] - 2));
    points += " " + Fmt("%.2f", x_of(span_s)) + "," + Fmt("%.2f", base);
    svg += std::string("<polygon points=\"") + points + "\" fill=\"" +
           (tr.kind == TrackKind::kLink ? "#76b7b2" : "#edc948") +
           "\" stroke=\"#555555\" stroke-width=\"0.5\"/>\n";
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace hx::sim
