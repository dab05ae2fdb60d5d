#include "hexplan/tp/tp_compare.h"

#include <cstdio>

#include "hexplan/tp/tp_report.h"

namespace hx::tp {

TpComparison CompareMethods(const TpSystem& sys, const LlmShape& shape, const LlmWorkload& wl,
                            const TpOptions& options) {
  TpComparison c;
  c.methods = {TpMethod::kMegatron, TpMethod::kAutoDdl, TpMethod::kAsymGroup, TpMethod::kIdeal};
  for (TpMethod m : c.methods) {
    TpOptions o = options;
    o.method = m;
    c.results.push_back(PlanTensorParallel(sys, shape, wl, o));
  }
  for (size_t i = 0; i < c.results.size(); ++i) {
    const auto& r = c.results[i];
    if (!r.ok() || r->volume_only) continue;
    if (c.winner < 0 || r->total_s() < c.results[c.winner]->total_s())
      c.winner = static_cast<int>(i);
  }
  return c;
}

Status AddServing(TpComparison& c, const TpSystem& sys, const LlmShape& shape,
                  const LlmWorkload& wl, const TpOptions& options, const ServingOptions& serving) {
  c.rate = serving.rate;
  c.serving.assign(c.methods.size(), std::nullopt);
  for (size_t i = 0; i < c.methods.size(); ++i) {
    if (!c.results[i].ok() || c.results[i]->volume_only) continue;
    TpOptions o = options;
    o.method = c.methods[i];
    HX_ASSIGN_OR_RETURN(c.serving[i], SimulateServing(sys, shape, wl, o, serving));
  }
  return Status::Ok();
}

namespace {

std::string Ms(double s) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.1f", s * 1e3);
  return b;
}

std::string Row(const std::string& name, const TpResult& r, bool winner) {
  char line[400];
  std::string note;
  if (r.reduced()) note = std::string(" (reduced to ") + TpMethodName(r.layout) + ")";
  if (r.volume_only) {
    std::snprintf(line, sizeof(line), "  %-10s %4d %10s %10s %10s %10s %11s %11s  %s\n",
                  name.c_str(), r.k, "-", "-", "-", "-", FormatBytes(r.comm_volume_bytes).c_str(),
                  "-", "volume bound only: no plan, no times");
    return line;
  }
  std::snprintf(
      line, sizeof(line), "%s %-10s %4d %10s %10s %10s %10s %11s %11s%s\n", winner ? "*" : " ",
      name.c_str(), r.k, Ms(r.ttft_s()).c_str(), Ms(r.per_token_s).c_str(), Ms(r.total_s()).c_str(),
      FormatBytes(r.memory_per_gpu_max_bytes).c_str(), FormatBytes(r.comm_volume_bytes).c_str(),
      FormatBytes(r.comm_volume_intra_bytes).c_str(), note.c_str());
  return line;
}

}  // namespace

std::string ComparisonTable(const TpComparison& c) {
  char head[400];
  std::snprintf(head, sizeof(head), "  %-10s %4s %10s %10s %10s %10s %11s %11s\n", "method", "k",
                "TTFT ms", "TPOT ms", "total ms", "mem/GPU", "vol nodes", "vol NVLink");
  std::string out = head;
  for (size_t i = 0; i < c.methods.size(); ++i) {
    std::string name = TpMethodName(c.methods[i]);
    if (c.results[i].ok())
      out += Row(name, *c.results[i], static_cast<int>(i) == c.winner);
    else
      out += "  " + name + std::string(name.size() < 10 ? 10 - name.size() : 0, ' ') +
             " not planned: " + c.results[i].status().message() + "\n";
  }
  out +=
      "(* fastest total; TTFT = prefill, TPOT = decode / output tokens; volumes per output "
      "token: bottleneck node between nodes, busiest GPU over NVLink)\n";
  return out;
}

}  // namespace hx::tp
