#include "hexplan/tp/tp_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hexplan/core/format_number.h"
#include "hexplan/core/json_text.h"
#include "hexplan/core/xml.h"

namespace hx::tp {
namespace {

std::string Num(double v) { return FormatNumber(v, 1); }

std::string Tick(double v) {
  char buf[32];
  if (std::abs(v) >= 1000 || (std::abs(v) < 0.01 && v != 0))
    std::snprintf(buf, sizeof(buf), "%.2g", v);
  else
    std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

nlohmann::json Block(const WeightBlock& b) {
  return {
      {"layer", b.layer}, {"rows", {b.row_begin, b.row_end}}, {"cols", {b.col_begin, b.col_end}}};
}

}  // namespace

namespace {

nlohmann::json NullIfVolumeOnly(const TpResult& r, double v) {
  return r.volume_only ? nlohmann::json(nullptr) : nlohmann::json(v);
}

nlohmann::json ResultSummary(const TpResult& r, const TpSystem& sys) {
  nlohmann::json j;
  j["method"] = TpMethodName(r.method);
  j["layout"] = TpMethodName(r.layout);
  j["reduced_to"] = r.reduced() ? nlohmann::json(TpMethodName(r.layout)) : nlohmann::json(nullptr);
  j["volume_only"] = r.volume_only;
  j["k"] = r.k;
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : r.grouping.groups) {
    double cap = 0.0;
    for (int n : g) cap += sys.nodes[n].capability;
    groups.push_back({{"nodes", g}, {"capability", cap}});
  }
  j["groups"] = groups;
  j["capabilities"] = r.capabilities;
  j["comm_volume_bytes"] = r.comm_volume_bytes;
  j["comm_volume_prefill_bytes"] = r.comm_volume_prefill_bytes;
  j["comm_volume_intra_bytes"] = r.comm_volume_intra_bytes;
  j["comm_volume_intra_prefill_bytes"] = r.comm_volume_intra_prefill_bytes;
  j["latency_ms"] = NullIfVolumeOnly(r, r.per_token_s * 1e3);
  j["ttft_ms"] = NullIfVolumeOnly(r, r.ttft_s() * 1e3);
  j["tpot_ms"] = NullIfVolumeOnly(r, r.per_token_s * 1e3);
  j["prefill_ms"] = NullIfVolumeOnly(r, r.prefill_s * 1e3);
  j["prefill_compute_ms"] = NullIfVolumeOnly(r, r.prefill_compute_s * 1e3);
  j["prefill_comm_ms"] = NullIfVolumeOnly(r, r.prefill_comm_s * 1e3);
  j["decode_ms"] = NullIfVolumeOnly(r, r.decode_s * 1e3);
  j["decode_compute_ms"] = NullIfVolumeOnly(r, r.decode_compute_s * 1e3);
  j["decode_comm_ms"] = NullIfVolumeOnly(r, r.decode_comm_s * 1e3);
  j["total_ms"] = NullIfVolumeOnly(r, r.total_s() * 1e3);
  if (r.method == TpMethod::kAsymGroup)
    j["paper_asymgroup_total_ms"] = r.paper_asymgroup_total_s * 1e3;
  j["memory_needed_bytes"] = r.memory_needed_bytes;
  j["memory_per_gpu_max_bytes"] = r.memory_per_gpu_max_bytes;
  j["memory_available_bytes"] = sys.MemoryBytes();
  return j;
}

nlohmann::json PlanJson(const TpPlan& plan) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& np : plan.nodes) {
    nlohmann::json n;
    n["node"] = np.node;
    n["name"] = np.name;
    n["group"] = np.group;
    n["capability"] = np.capability;
    n["batch"] = {np.batch_begin, np.batch_end};
    nlohmann::json blocks = nlohmann::json::array();
    for (const auto& b : np.blocks) blocks.push_back(Block(b));
    n["blocks"] = blocks;
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& g : np.gpus) {
      nlohmann::json gb = nlohmann::json::array();
      for (const auto& b : g.blocks) gb.push_back(Block(b));
      gpus.push_back({{"name", g.name}, {"work_share", g.work_share}, {"blocks", gb}});
    }
    n["gpus"] = gpus;
    nlohmann::json sends = nlohmann::json::array();
    for (const auto& s : np.sends)
      sends.push_back(
          {{"layer", s.layer}, {"collective", s.collective}, {"peer", s.peer}, {"bytes", s.bytes}});
    n["sends"] = sends;
    n["bytes_sent_per_layer"] = np.bytes_sent_per_layer;
    nodes.push_back(n);
  }
  return {{"bytes_unit", "per decoder layer per decode step"}, {"nodes", nodes}};
}

nlohmann::json ServingJson(const ServingResult& s, double rate) {
  auto pct = [](const Percentiles& p) {
    return nlohmann::json{{"p50", p.p50 * 1e3}, {"p99", p.p99 * 1e3}};
  };
  return {{"rate", rate},
          {"requests", s.requests},
          {"ttft_ms", pct(s.ttft_s)},
          {"tpot_ms", pct(s.tpot_s)},
          {"latency_ms", pct(s.latency_s)},
          {"mean_running", s.mean_running}};
}

void AddWorkload(nlohmann::json& j, const TpSystem& sys, const LlmShape& shape,
                 const LlmWorkload& wl) {
  j["model"] = shape.name;
  j["cluster"] = sys.name;
  j["batch"] = wl.batch;
  j["input_len"] = wl.input_len;
  j["output_len"] = wl.output_len;
}

}  // namespace

std::string TpResultToJson(const TpResult& r, const TpSystem& sys, const LlmShape& shape,
                           const LlmWorkload& wl, bool include_plan, const ServingResult* serving,
                           double rate) {
  nlohmann::json j = ResultSummary(r, sys);
  AddWorkload(j, sys, shape, wl);
  if (serving != nullptr) j["serving"] = ServingJson(*serving, rate);
  if (include_plan && !r.volume_only) j["plan"] = PlanJson(r.plan);
  return DumpJson(j, 2);
}

std::string TpComparisonToJson(const TpComparison& c, const TpSystem& sys, const LlmShape& shape,
                               const LlmWorkload& wl) {
  nlohmann::json j;
  AddWorkload(j, sys, shape, wl);
  nlohmann::json methods = nlohmann::json::array();
  for (size_t i = 0; i < c.methods.size(); ++i) {
    if (c.results[i].ok()) {
      methods.push_back(ResultSummary(*c.results[i], sys));
      if (i < c.serving.size() && c.serving[i])
        methods.back()["serving"] = ServingJson(*c.serving[i], c.rate);
    } else {
      methods.push_back(
          {{"method", TpMethodName(c.methods[i])}, {"error", c.results[i].status().message()}});
    }
  }
  j["methods"] = methods;
  j["winner"] =
      c.winner >= 0 ? nlohmann::json(TpMethodName(c.methods[c.winner])) : nlohmann::json(nullptr);
  return DumpJson(j, 2);
}

std::string PipelineToJson(const PipelineResult& r, const TpSystem& sys, const LlmShape& shape,
                           const LlmWorkload& wl) {
  nlohmann::json j;
  AddWorkload(j, sys, shape, wl);
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& st : r.stages) {
    std::vector<std::string> names;
    for (int n : st.nodes) names.push_back(sys.nodes[n].name);
    // The stage's TP result indexes its own nodes (0..): its summary, without the plan.
    TpSystem sub;
    for (int n : st.nodes) sub.nodes.push_back(sys.nodes[n]);
    stages.push_back({{"nodes", st.nodes},
                      {"node_names", names},
                      {"capability", st.capability},
                      {"layers", {st.layer_begin, st.layer_end}},
                      {"max_layers", st.max_layers},
                      {"embedding", st.embedding},
                      {"lm_head", st.lm_head},
                      {"tp", ResultSummary(st.tp, sub)}});
  }
  j["pipeline"] = {{"stages", stages},
                   {"micro_batches", r.micro_batches},
                   {"ttft_ms", r.prefill_s * 1e3},
                   {"tpot_ms", r.step_s * 1e3},
                   {"prefill_ms", r.prefill_s * 1e3},
                   {"decode_ms", r.decode_s * 1e3},
                   {"total_ms", r.total_s() * 1e3},
                   {"handoff_prefill_ms", r.handoff_prefill_s * 1e3},
                   {"handoff_step_ms", r.handoff_step_s * 1e3},
                   {"bubble_fraction", r.bubble_fraction}};
  j["total_ms"] = r.total_s() * 1e3;
  return DumpJson(j, 2);
}

std::string ServingLine(const ServingResult& s, double rate) {
  char b[400];
  std::snprintf(b, sizeof(b),
                "at %.3g req/s (Poisson, %d requests, continuous batching, %.1f running on "
                "average): TTFT p50 %.1f ms, p99 %.1f ms; TPOT p50 %.2f ms, p99 %.2f ms; latency "
                "p50 %.1f ms, p99 %.1f ms",
                rate, s.requests, s.mean_running, s.ttft_s.p50 * 1e3, s.ttft_s.p99 * 1e3,
                s.tpot_s.p50 * 1e3, s.tpot_s.p99 * 1e3, s.latency_s.p50 * 1e3,
                s.latency_s.p99 * 1e3);
  return b;
}

std::string FormatBytes(double bytes) {
  static const char* kUnits[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  int u = 0;
  double v = bytes;
  while (std::fabs(v) >= 999.5 && u < 5) v /= 1000.0, ++u;
  char buf[48];
  if (u == 0)
    std::snprintf(buf, sizeof(buf), "%.0f B", v);
  else
    std::snprintf(buf, sizeof(buf), "%.3g %s", v, kUnits[u]);
  return buf;
}

std::string RenderChartSvg(const ChartSpec& c) {
  const double W = 720, H = 360, left = 70, right = 150, top = 40, bottom = 50;
  const double pw = W - left - right, ph = H - top - bottom;
  double ymax = c.y_min;
  for (const auto& s : c.series)
    for (double v : s.y)
      if (std::isfinite(v)) ymax = std::max(ymax, v);
  if (ymax <= c.y_min) ymax = c.y_min + 1.0;
  // A round top.
  double range = ymax - c.y_min;
  double step = std::pow(10.0, std::floor(std::log10(range / 5.0)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (range / (step * m) <= 6) {
      step *= m;
      break;
    }
  double ytop = c.y_min + std::ceil(range / step) * step;
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  size_t n = c.x.size();
  auto X = [&](size_t i) {
    return c.bars ? left + pw * (i + 0.5) / std::max<size_t>(n, 1)
                  : left + (n > 1 ? pw * i / (n - 1) : pw / 2);
  };
  auto Y = [&](double v) { return top + ph * (1.0 - (v - c.y_min) / (ytop - c.y_min)); };
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" viewBox=\"0 0 " << W << ' ' << H << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << W / 2 << "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">"
    << XmlEscape(c.title) << "</text>\n";
  for (double v = c.y_min; v <= ytop + step * 1e-9; v += step) {
    o << "<line x1=\"" << left << "\" x2=\"" << left + pw << "\" y1=\"" << Num(Y(v)) << "\" y2=\""
      << Num(Y(v)) << "\" stroke=\"#ddd\"/>\n";
    o << "<text x=\"" << left - 6 << "\" y=\"" << Num(Y(v) + 4) << "\" text-anchor=\"end\">"
      << Tick(v) << "</text>\n";
  }
  size_t label_every = std::max<size_t>(1, n / 16);
  for (size_t i = 0; i < n; ++i)
    if (i % label_every == 0 || i + 1 == n)
      o << "<text x=\"" << Num(X(i)) << "\" y=\"" << top + ph + 16 << "\" text-anchor=\"middle\">"
        << XmlEscape(c.x[i]) << "</text>\n";
  o << "<line x1=\"" << left << "\" x2=\"" << left << "\" y1=\"" << top << "\" y2=\"" << top + ph
    << "\" stroke=\"black\"/>\n";
  o << "<line x1=\"" << left << "\" x2=\"" << left + pw << "\" y1=\"" << top + ph << "\" y2=\""
    << top + ph << "\" stroke=\"black\"/>\n";
  o << "<text x=\"" << left + pw / 2 << "\" y=\"" << H - 10 << "\" text-anchor=\"middle\">"
    << XmlEscape(c.x_label) << "</text>\n";
  o << "<text x=\"16\" y=\"" << top + ph / 2
    << "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " << top + ph / 2 << ")\">"
    << XmlEscape(c.y_label) << "</text>\n";
  size_t ns = c.series.size();
  for (size_t s = 0; s < ns; ++s) {
    const char* color = colors[s % 6];
    const auto& ser = c.series[s];
    if (c.bars) {
      double group_w = pw / std::max<size_t>(n, 1) * 0.8;
      double bw = group_w / std::max<size_t>(ns, 1);
      for (size_t i = 0; i < n && i < ser.y.size(); ++i) {
        if (!std::isfinite(ser.y[i])) continue;
        double x0 = X(i) - group_w / 2 + bw * s;
        o << "<rect x=\"" << Num(x0) << "\" y=\"" << Num(Y(ser.y[i])) << "\" width=\"" << Num(bw)
          << "\" height=\"" << Num(Y(c.y_min) - Y(ser.y[i])) << "\" fill=\"" << color << "\"/>\n";
      }
    } else {
      o << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
      for (size_t i = 0; i < n && i < ser.y.size(); ++i)
        if (std::isfinite(ser.y[i])) o << Num(X(i)) << ',' << Num(Y(ser.y[i])) << ' ';
      o << "\"/>\n";
    }
    double ly = top + 14 + 18 * s;
    o << "<rect x=\"" << left + pw + 12 << "\" y=\"" << ly - 9
      << "\" width=\"12\" height=\"10\" fill=\"" << color << "\"/>\n";
    o << "<text x=\"" << left + pw + 30 << "\" y=\"" << ly << "\">" << XmlEscape(ser.name)
      << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

StatusOr<std::vector<VolumeRow>> NodeCountVolumeSweep(int max_nodes) {
  if (max_nodes < 1 || max_nodes > 1024)
    return InvalidArgument("node sweep needs 1..1024 nodes, got " + std::to_string(max_nodes));
  std::vector<VolumeRow> rows;
  for (int n = 1; n <= max_nodes; ++n) {
    std::vector<double> caps(n, 1.0);
    VolumeRow r;
    r.nodes = n;
    // Per linear layer, Megatron's share is half an all-reduce: b*h (n-1)/n (eq. 1's 1D figure).
    HX_ASSIGN_OR_RETURN(r.megatron, CommVolumeFraction(TpMethod::kMegatron, caps, n));
    HX_ASSIGN_OR_RETURN(r.autoddl, CommVolumeFraction(TpMethod::kAutoDdl, caps, n));
    HX_ASSIGN_OR_RETURN(r.ideal, CommVolumeFraction(TpMethod::kIdeal, caps, n));
    HX_ASSIGN_OR_RETURN(AutoGroupingResult a, FormGroupsAutoK(caps));
    r.asymgroup = a.best.cost.total();
    r.asym_k = a.best.grouping.k();
    r.autoddl_k = AutoDdlGridRows(n);
    rows.push_back(r);
  }
  return rows;
}

}  // namespace hx::tp
