#include "hexplan/share/deploy.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hexplan/core/json_text.h"
#include "hexplan/core/xml.h"

namespace hx::share {
namespace {

std::string ProfileName(const ShareProblem& problem, const PlacedSegment& s) {
  const MigProfile* p = problem.gpu.Find(s.triplet.gpcs);
  return p != nullptr ? p->name : std::to_string(s.triplet.gpcs) + "g";
}

// The GPU numbers `scope` covers, in order.
std::vector<int> ScopeGpus(const SharePlan& plan, const DeployScope& scope) {
  if (!scope.all) {
    std::vector<int> g = scope.gpus;
    std::sort(g.begin(), g.end());
    return g;
  }
  std::vector<int> g(plan.gpus.size());
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<int>(i);
  return g;
}

}  // namespace

Status ValidateForDeployment(const ShareProblem& problem, const SharePlan& plan) {
  if (!plan.mig) {
    return InvalidArgument("plan '" + plan.algo +
                           "' uses MPS shares without MIG: there is no MIG layout to deploy");
  }
  for (size_t g = 0; g < plan.gpus.size(); ++g) {
    Status st = ValidateLayout(problem.gpu, plan.gpus[g].ToLayout());
    if (!st.ok()) return st.WithContext("GPU " + std::to_string(g));
  }
  return Status::Ok();
}

StatusOr<std::string> MigPartedYaml(const ShareProblem& problem, const SharePlan& plan,
                                    const std::string& config_name, const DeployScope& scope) {
  HX_RETURN_IF_ERROR(ValidateForDeployment(problem, plan));
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "version" << YAML::Value << "v1";
  out << YAML::Key << "mig-configs" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << config_name << YAML::Value << YAML::BeginSeq;
  for (int g : ScopeGpus(plan, scope)) {
    std::map<std::string, int> counts;
    if (g < static_cast<int>(plan.gpus.size())) {
      for (const auto& s : plan.gpus[g].segments) counts[ProfileName(problem, s)]++;
    }
    out << YAML::BeginMap;
    out << YAML::Key << "devices" << YAML::Value << YAML::Flow << YAML::BeginSeq << g
        << YAML::EndSeq;
    out << YAML::Key << "mig-enabled" << YAML::Value << true;
    out << YAML::Key << "mig-devices" << YAML::Value << YAML::BeginMap;
    for (const auto& [name, n] : counts) out << YAML::Key << name << YAML::Value << n;
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

StatusOr<std::vector<PlacementRow>> Placements(const ShareProblem& problem, const SharePlan& plan) {
  HX_RETURN_IF_ERROR(ValidateForDeployment(problem, plan));
  std::vector<PlacementRow> rows;
  for (size_t g = 0; g < plan.gpus.size(); ++g) {
    auto segs = plan.gpus[g].segments;
    // Creation order: largest first, so a driver without placement support rebuilds the layout.
    std::stable_sort(segs.begin(), segs.end(), [](const PlacedSegment& a, const PlacedSegment& b) {
      if (a.triplet.gpcs != b.triplet.gpcs) return a.triplet.gpcs > b.triplet.gpcs;
      return a.start < b.start;
    });
    for (const auto& s : segs) {
      const MigProfile* p = problem.gpu.Find(s.triplet.gpcs);
      rows.push_back({static_cast<int>(g), s.start, p->name, p->gi_profile_id,
                      problem.services[s.service].name, s.triplet.batch, s.triplet.processes});
    }
  }
  return rows;
}

StatusOr<std::string> DeploymentScript(const ShareProblem& problem, const SharePlan& plan,
                                       const DeployScope& scope) {
  HX_ASSIGN_OR_RETURN(auto all_rows, Placements(problem, plan));
  const std::vector<int> gpus = ScopeGpus(plan, scope);
  std::vector<PlacementRow> rows;
  for (const auto& r : all_rows) {
    if (std::binary_search(gpus.begin(), gpus.end(), r.gpu)) rows.push_back(r);
  }
  std::ostringstream o;
  o << "#!/bin/sh\n# hexplan share: " << plan.algo << " plan, " << plan.gpus.size() << " x "
    << problem.gpu.name;
  if (!scope.all) o << "; only the " << gpus.size() << " GPUs that change (others keep running)";
  o << "\nset -e\n";
  for (int g : gpus) {
    o << "\n# GPU " << g << "\nnvidia-smi -i " << g << " -mig 1\n"
      << "nvidia-smi mig -i " << g << " -dci || true\nnvidia-smi mig -i " << g << " -dgi || true\n";
    for (const auto& r : rows) {
      if (r.gpu != g) continue;
      o << "nvidia-smi mig -i " << r.gpu << " -cgi " << r.gi_profile_id << ":" << r.start
        << " -C   # " << r.profile << " at slot " << r.start << ": " << r.service << "\n";
    }
  }
  o << "\n# MPS: one control daemon per MIG device (set CUDA_VISIBLE_DEVICES to the device's MIG "
       "UUID from `nvidia-smi -L`)\n";
  for (const auto& r : rows) {
    o << "# GPU " << r.gpu << " slot " << r.start << " " << r.profile << ": service=" << r.service
      << " processes=" << r.processes << " batch=" << r.batch << "\n"
      << "#   CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-" << r.gpu << "-" << r.start
      << " CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log-" << r.gpu << "-" << r.start
      << " nvidia-cuda-mps-control -d\n";
  }
  return o.str();
}

std::string PlanJson(const ShareProblem& problem, const ShareOptions& options,
                     const SharePlan& plan) {
  nlohmann::json j;
  j["algo"] = plan.algo;
  j["gpu"] = problem.gpu.name;
  j["mig"] = plan.mig;
  j["slo_factor"] = options.slo_factor;
  j["gpus"] = plan.metrics.gpus;
  j["gpcs"] = plan.metrics.gpcs;
  j["external_fragmentation"] = plan.metrics.external_fragmentation;
  j["internal_slack"] = plan.metrics.internal_slack;
  j["scheduling_time_ms"] = plan.metrics.scheduling_time_ms;
  j["lower_bound"] = plan.lower_bound;
  j["proven_optimal"] = plan.proven_optimal;
  if (plan.proven_optimal && !plan.minimal_under.empty()) j["minimal_under"] = plan.minimal_under;
  if (!plan.note.empty()) j["note"] = plan.note;
  const SloCheck& slo = plan.slo;
  j["verified"] = slo.checked && slo.verified;
  j["slo_compliance"] = slo.checked ? nlohmann::json(slo.slo_compliance) : nlohmann::json();
  j["verification"] = slo.checked ? nlohmann::json(slo.how) : nlohmann::json("none");
  if (slo.checked) j["repair_rounds"] = slo.repair_rounds;
  j["slo_violations"] = PlanViolations(problem, options, plan);
  j["unsupported"] = nlohmann::json::array();
  for (const auto& u : plan.unsupported) {
    j["unsupported"].push_back({{"service", u.service}, {"reason", u.reason}});
  }
  j["services"] = nlohmann::json::array();
  const auto cap = ServiceCapacity(problem, plan);
  for (size_t i = 0; i < problem.services.size(); ++i) {
    const auto& s = problem.services[i];
    nlohmann::json sj = {
        {"name", s.name}, {"rate", s.rate}, {"slo_ms", s.slo_ms}, {"capacity", cap[i]}};
    if (s.Model() != s.name) sj["model"] = s.Model();
    if (slo.checked && i < slo.p99_ms.size()) {
      sj["slo_compliance"] = slo.compliance[i];
      sj["p99_ms"] = slo.p99_ms[i];
      sj["meets_slo"] = static_cast<bool>(slo.meets_slo[i]);
    }
    if (i < slo.headroom.size()) sj["headroom"] = slo.headroom[i];
    if (i < slo.budget.size()) sj["latency_budget"] = slo.budget[i];
    j["services"].push_back(sj);
  }
  j["layout"] = nlohmann::json::array();
  for (size_t g = 0; g < plan.gpus.size(); ++g) {
    nlohmann::json gj;
    gj["gpu"] = g;
    gj["segments"] = nlohmann::json::array();
    for (const auto& s : plan.gpus[g].segments) {
      gj["segments"].push_back({{"service", problem.services[s.service].name},
                                {"profile", plan.mig ? ProfileName(problem, s) : "mps"},
                                {"start", s.start},
                                {"gpcs", s.share_gpcs},
                                {"batch", s.triplet.batch},
                                {"processes", s.triplet.processes},
                                {"throughput", s.triplet.throughput},
                                {"route_weight", s.RouteWeight()},
                                {"latency_ms", s.triplet.latency_ms}});
    }
    j["layout"].push_back(gj);
  }
  return DumpJson(j, 2);
}

std::string PlanSvg(const ShareProblem& problem, const SharePlan& plan, const std::string& title) {
  static const char* kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
                                  "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#2ca02c"};
  const int cell = 44, row = 30, left = 70, top = 40;
  const int legend_rows = static_cast<int>(problem.services.size() + 2) / 3;
  const int width = left + 7 * cell + 20 + 330;
  const int height = top + static_cast<int>(plan.gpus.size()) * row + 20 + legend_rows * 18 + 20;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\""
    << std::max(height, top + 7 * 18) << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"8\" y=\"18\" font-size=\"13\">" << XmlEscape(title) << "</text>\n";
  for (int k = 0; k < 7; ++k) {
    o << "<text x=\"" << left + k * cell + cell / 2 - 3 << "\" y=\"" << top - 4 << "\">" << k
      << "</text>\n";
  }
  for (size_t g = 0; g < plan.gpus.size(); ++g) {
    const int y = top + static_cast<int>(g) * row;
    o << "<text x=\"8\" y=\"" << y + 19 << "\">GPU " << g << "</text>\n";
    o << "<rect x=\"" << left << "\" y=\"" << y << "\" width=\"" << 7 * cell << "\" height=\""
      << row - 4 << "\" fill=\"#f2f2f2\" stroke=\"#999\"/>\n";
    for (const auto& s : plan.gpus[g].segments) {
      const int x = left + s.start * cell;
      const int w = s.share_gpcs * cell;
      const char* color = kColors[s.service % 12];
      o << "<rect x=\"" << x + 1 << "\" y=\"" << y + 1 << "\" width=\"" << w - 2 << "\" height=\""
        << row - 6 << "\" fill=\"" << color << "\" stroke=\"black\"><title>"
        << XmlEscape(problem.services[s.service].name) << " " << s.triplet.gpcs << "g batch "
        << s.triplet.batch << " x" << s.triplet.processes << "</title></rect>\n";
      o << "<text x=\"" << x + 4 << "\" y=\"" << y + 18 << "\" fill=\"white\">" << s.share_gpcs
        << "g</text>\n";
    }
  }
  const int ly = top + static_cast<int>(plan.gpus.size()) * row + 20;
  for (size_t i = 0; i < problem.services.size(); ++i) {
    const int x = 8 + static_cast<int>(i % 3) * 150;
    const int y = ly + static_cast<int>(i / 3) * 18;
    o << "<rect x=\"" << x << "\" y=\"" << y - 10 << "\" width=\"12\" height=\"12\" fill=\""
      << kColors[i % 12] << "\"/><text x=\"" << x + 16 << "\" y=\"" << y << "\">"
      << XmlEscape(problem.services[i].name) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace hx::share
