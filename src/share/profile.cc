#include "hexplan/share/profile.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hexplan/core/file_util.h"
#include "hexplan/core/json_text.h"
#include "hexplan/core/utf8.h"
#include "hexplan/share/caps.h"
#include "hexplan/share/mig.h"

namespace hx::share {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> SplitComma(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::stringstream ss(line);
  while (std::getline(ss, cell, ',')) out.push_back(Trim(cell));
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

bool ParseDouble(const std::string& s, double* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *v = std::strtod(s.c_str(), &end);
  return errno == 0 && end == s.c_str() + s.size() && std::isfinite(*v);
}

bool ParseInt(const std::string& s, int* v) {
  double d;
  if (!ParseDouble(s, &d) || d != std::floor(d) || std::fabs(d) > 1e9) return false;
  *v = static_cast<int>(d);
  return true;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) lines.push_back(line);
  return lines;
}

std::string Stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

}  // namespace

StatusOr<ServiceProfile> ReadParvaProfileCsv(const std::string& path) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  HX_RETURN_IF_ERROR(CheckUtf8Text(text, path));
  ServiceProfile prof;
  prof.model = Stem(path);
  prof.source = path;
  HX_RETURN_IF_ERROR(CheckUtf8Field(prof.model, path + ": the model name (the file name)"));
  const auto lines = Lines(text);
  bool header_seen = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string line = Trim(lines[i]);
    const std::string where = path + ":" + std::to_string(i + 1) + ": ";
    if (line.empty()) continue;
    auto cells = SplitComma(line);
    if (!header_seen) {
      header_seen = true;
      if (cells.size() != 5 || cells[0] != "Mig instance") {
        return ParseError(where +
                          "expected the header `Mig instance,Batch size,Workload Number,"
                          "Throughput,Latency`");
      }
      continue;
    }
    if (cells.size() != 5) {
      return ParseError(where +
                        "expected 5 fields (Mig instance, Batch size, Workload Number, "
                        "Throughput, Latency), found " +
                        std::to_string(cells.size()));
    }
    ProfilePoint p;
    double tp = 0, lat = 0;
    if (!ParseInt(cells[0], &p.gpcs) || SizeIndex(p.gpcs) < 0) {
      return ParseError(where + "Mig instance: expected 1, 2, 3, 4 or 7, found '" + cells[0] + "'");
    }
    if (!ParseInt(cells[1], &p.batch) || p.batch < 1) {
      return ParseError(where + "Batch size: expected a positive integer, found '" + cells[1] +
                        "'");
    }
    if (!ParseInt(cells[2], &p.processes) || p.processes < 1 || p.processes > kMaxMpsProcesses) {
      return ParseError(where + "Workload Number: expected MPS processes in [1, " +
                        std::to_string(kMaxMpsProcesses) + "], found '" + cells[2] + "'");
    }
    if (!ParseDouble(cells[3], &tp) || tp < 0) {
      return ParseError(where + "Throughput: expected a number >= 0, found '" + cells[3] + "'");
    }
    if (!ParseDouble(cells[4], &lat) || lat < 0) {
      return ParseError(where + "Latency: expected seconds >= 0, found '" + cells[4] + "'");
    }
    if (tp == 0 && lat == 0) continue;  // `0,0`: not measured
    if (tp == 0 || lat == 0) {
      return ParseError(where +
                        "Throughput and Latency must both be positive (or both 0 = not "
                        "measured)");
    }
    p.throughput = tp * p.processes;  // the file holds per-process throughput
    p.latency_ms = lat * 1000.0;
    prof.points.push_back(p);
  }
  if (!header_seen) return ParseError(path + ": empty profile file");
  if (prof.points.empty()) return ParseError(path + ": no measured points (all rows are `0,0`)");
  return prof;
}

StatusOr<ServiceProfile> ReadHexplanProfileJson(const std::string& path) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  HX_ASSIGN_OR_RETURN(nlohmann::json j, ParseJson<nlohmann::json>(text, path));
  ServiceProfile prof;
  prof.source = path;
  if (!j.is_object()) return ParseError(path + ": expected a JSON object");
  prof.model =
      j.contains("model") && j["model"].is_string() ? j["model"].get<std::string>() : Stem(path);
  HX_RETURN_IF_ERROR(CheckUtf8Field(prof.model, path + ": the model name (the file name)"));
  if (!j.contains("points") || !j["points"].is_array()) {
    return ParseError(path + ": field `points`: expected an array");
  }
  const auto& pts = j["points"];
  for (size_t i = 0; i < pts.size(); ++i) {
    const auto& q = pts[i];
    const std::string where = path + ": points[" + std::to_string(i) + "]";
    ProfilePoint p;
    auto get_num = [&](const char* key, double* v) -> Status {
      if (!q.is_object() || !q.contains(key) || !q[key].is_number()) {
        return ParseError(where + ": field `" + key + "`: expected a number");
      }
      *v = q[key].get<double>();
      return Status::Ok();
    };
    double gpcs, batch, procs;
    HX_RETURN_IF_ERROR(get_num("gpcs", &gpcs));
    HX_RETURN_IF_ERROR(get_num("batch", &batch));
    HX_RETURN_IF_ERROR(get_num("processes", &procs));
    HX_RETURN_IF_ERROR(get_num("throughput", &p.throughput));
    HX_RETURN_IF_ERROR(get_num("latency_ms", &p.latency_ms));
    // Checked as doubles before the casts to int (a cast of 1e300 is undefined).
    if (gpcs != std::floor(gpcs) || gpcs < 1 || gpcs > kGpcsPerGpu ||
        SizeIndex(static_cast<int>(gpcs)) < 0) {
      return ParseError(where + ": field `gpcs`: expected 1, 2, 3, 4 or 7");
    }
    if (batch != std::floor(batch) || batch < 1 || batch > 1e9) {
      return ParseError(where + ": field `batch`: expected an integer in [1, 1e9]");
    }
    if (procs != std::floor(procs) || procs < 1 || procs > kMaxMpsProcesses) {
      return ParseError(where + ": field `processes`: expected MPS processes in [1, " +
                        std::to_string(kMaxMpsProcesses) + "]");
    }
    p.gpcs = static_cast<int>(gpcs);
    p.batch = static_cast<int>(batch);
    p.processes = static_cast<int>(procs);
    if (!(p.throughput > 0) || !(p.latency_ms > 0) || !std::isfinite(p.throughput) ||
        !std::isfinite(p.latency_ms)) {
      return ParseError(where + ": `throughput` and `latency_ms` must be positive");
    }
    prof.points.push_back(p);
  }
  if (prof.points.empty()) return ParseError(path + ": field `points`: empty");
  return prof;
}

std::string ProfileToJson(const ServiceProfile& profile) {
  nlohmann::json j;
  j["model"] = profile.model;
  j["points"] = nlohmann::json::array();
  for (const auto& p : profile.points) {
    j["points"].push_back({{"gpcs", p.gpcs},
                           {"batch", p.batch},
                           {"processes", p.processes},
                           {"throughput", p.throughput},
                           {"latency_ms", p.latency_ms}});
  }
  return DumpJson(j, 1);
}

StatusOr<std::vector<ServiceProfile>> ReadProfileDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return NotFound("--profiles: '" + dir + "' is not a directory");
  }
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".csv" || ext == ".json"))
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<ServiceProfile> out;
  for (const auto& f : files) {
    StatusOr<ServiceProfile> p = FileExtension(f) == "json" || f.ends_with(".json")
                                     ? ReadHexplanProfileJson(f)
                                     : ReadParvaProfileCsv(f);
    if (!p.ok()) return p.status();
    out.push_back(std::move(*p));
  }
  if (out.empty()) return NotFound("--profiles: no *.csv or *.json profile in '" + dir + "'");
  std::sort(out.begin(), out.end(),
            [](const ServiceProfile& a, const ServiceProfile& b) { return a.model < b.model; });
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i].model == out[i - 1].model) {
      return InvalidArgument("--profiles: model '" + out[i].model +
                             "' has two profiles: " + out[i - 1].source + " and " + out[i].source);
    }
  }
  return out;
}

namespace {

StatusOr<std::vector<std::vector<std::string>>> ReadSloTable(const std::string& path) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  HX_RETURN_IF_ERROR(CheckUtf8Text(text, path));
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : Lines(text)) {
    if (Trim(line).empty()) continue;
    rows.push_back(SplitComma(Trim(line)));
  }
  if (rows.empty()) return ParseError(path + ": no scenario rows");
  return rows;
}

}  // namespace

StatusOr<int> CountSloScenarios(const std::string& path) {
  HX_ASSIGN_OR_RETURN(auto rows, ReadSloTable(path));
  return static_cast<int>(rows.size());
}

StatusOr<std::vector<Service>> ReadSloScenario(const std::string& rates_path,
                                               const std::string& latency_path,
                                               const std::string& scenario,
                                               const std::vector<std::string>& models) {
  std::string k = scenario;
  if (!k.empty() && (k[0] == 'S' || k[0] == 's')) k = k.substr(1);
  int row = 0;
  if (!ParseInt(k, &row) || row < 1) {
    return InvalidArgument("--scenario: expected S1, S2, ... or a row number, found '" + scenario +
                           "'");
  }
  HX_ASSIGN_OR_RETURN(auto rates, ReadSloTable(rates_path));
  HX_ASSIGN_OR_RETURN(auto lats, ReadSloTable(latency_path));
  if (row > static_cast<int>(rates.size()) || row > static_cast<int>(lats.size())) {
    return InvalidArgument("--scenario: S" + std::to_string(row) + " does not exist (" +
                           rates_path + " has " + std::to_string(rates.size()) + " rows, " +
                           latency_path + " has " + std::to_string(lats.size()) + ")");
  }
  // Non-empty lines are numbered from 1 as in the file when the file has no blank lines.
  const auto& r = rates[row - 1];
  const auto& l = lats[row - 1];
  for (const auto& [cells, path] : {std::pair{&r, &rates_path}, std::pair{&l, &latency_path}}) {
    if (cells->size() != models.size()) {
      return ParseError(*path + ":" + std::to_string(row) + ": expected " +
                        std::to_string(models.size()) +
                        " columns (one per profiled model, alphabetical), found " +
                        std::to_string(cells->size()));
    }
  }
  std::vector<Service> out;
  for (size_t c = 0; c < models.size(); ++c) {
    const bool rate_na = r[c] == "N/A";
    const bool lat_na = l[c] == "N/A";
    if (rate_na != lat_na) {
      return ParseError(rates_path + " / " + latency_path + ":" + std::to_string(row) +
                        ": column " + std::to_string(c + 1) + " (" + models[c] +
                        ") is N/A in one file only");
    }
    if (rate_na) continue;
    Service s;
    s.name = models[c];
    if (!ParseDouble(r[c], &s.rate) || s.rate <= 0 || s.rate > kMaxServiceRate) {
      return ParseError(rates_path + ":" + std::to_string(row) + ": column " +
                        std::to_string(c + 1) + " (" + models[c] + "): expected a rate in (0, " +
                        std::to_string(static_cast<int64_t>(kMaxServiceRate)) +
                        "] req/s or N/A, found '" + r[c] + "'");
    }
    if (!ParseDouble(l[c], &s.slo_ms) || s.slo_ms <= 0) {
      return ParseError(latency_path + ":" + std::to_string(row) + ": column " +
                        std::to_string(c + 1) + " (" + models[c] +
                        "): expected a latency in ms > 0 or N/A, found '" + l[c] + "'");
    }
    out.push_back(s);
  }
  return out;
}

void AssignServiceIds(std::vector<Service>* services) {
  std::map<std::string, int> count, seen;
  for (Service& s : *services) {
    if (s.model.empty()) s.model = s.name;
    ++count[s.model];
  }
  for (Service& s : *services) {
    const int k = ++seen[s.model];
    s.name = count[s.model] == 1 ? s.model : s.model + "#" + std::to_string(k);
  }
}

}  // namespace hx::share
