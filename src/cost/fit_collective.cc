#include "hexplan/cost/fit_collective.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "hexplan/core/file_util.h"

namespace hx::cost {
namespace {

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  for (char ch : line) {
    if (ch == ',') {
      out.push_back(cell);
      cell.clear();
    } else if (ch != '\r') {
      cell += ch;
    }
  }
  out.push_back(cell);
  return out;
}

// Weighted least squares for t = a + b*S minimising sum ((a + b S - t)/t)^2, with a >= 0, b > 0.
// Returns false when there are too few samples.
bool FitLine(const std::vector<CollectiveSample>& s, const std::vector<int>& idx, double& a,
             double& b) {
  if (idx.size() < 2) return false;
  double s11 = 0, s12 = 0, s22 = 0, r1 = 0, r2 = 0;
  for (int i : idx) {
    double w = 1.0 / s[i].seconds;
    double x1 = w, x2 = s[i].bytes * w;
    s11 += x1 * x1;
    s12 += x1 * x2;
    s22 += x2 * x2;
    r1 += x1;
    r2 += x2;
  }
  double det = s11 * s22 - s12 * s12;
  if (std::abs(det) > 1e-300) {
    a = (r1 * s22 - r2 * s12) / det;
    b = (s11 * r2 - s12 * r1) / det;
  } else {
    a = -1;
  }
  if (a < 0 || b <= 0) {
    // Boundary: a = 0 (pure bandwidth), or b tiny (pure latency); keep the better.
    double b0 = r2 / s22;
    double a1 = r1 / s11;
    double e0 = 0, e1 = 0;
    for (int i : idx) {
      double t = s[i].seconds;
      e0 += std::pow((b0 * s[i].bytes - t) / t, 2);
      e1 += std::pow((a1 - t) / t, 2);
    }
    if (e0 <= e1 || b0 <= 0) {
      a = 0;
      b = std::max(b0, 1e-18);
    } else {
      a = a1;
      b = 1e-18;
    }
  }
  return true;
}

double RelError(double pred, double meas) { return std::abs(pred - meas) / meas; }

}  // namespace

StatusOr<std::vector<CollectiveSample>> ReadVidurAllReduce(const std::string& path, int num_workers,
                                                           int devices_per_node) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) return ParseError(path + ": empty file, expected a CSV header");
  std::vector<std::string> header = SplitCsvLine(line);
  auto col = [&](const std::string& name) -> int {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    return -1;
  };
  int c_med = col("time_stats.all_reduce.median"), c_nw = col("num_workers"), c_size = col("size"),
      c_dpn = col("devices_per_node");
  if (c_med < 0 || c_nw < 0 || c_size < 0 || c_dpn < 0)
    return ParseError(path +
                      ": missing column (expected time_stats.all_reduce.median, num_workers, size, "
                      "devices_per_node)");
  std::vector<CollectiveSample> out;
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    std::vector<std::string> cells = SplitCsvLine(line);
    if (cells.size() < header.size())
      return ParseError(path + ":" + std::to_string(line_no) + ": expected " +
                        std::to_string(header.size()) + " cells, got " +
                        std::to_string(cells.size()));
    try {
      if (std::stoi(cells[c_nw]) != num_workers || std::stoi(cells[c_dpn]) != devices_per_node)
        continue;
      CollectiveSample s;
      s.bytes = std::stod(cells[c_size]);
      s.seconds = std::stod(cells[c_med]) * 1e-3;  // ms -> s
      if (s.seconds <= 0 || s.bytes <= 0)
        return ParseError(path + ":" + std::to_string(line_no) + ": size and time must be > 0");
      out.push_back(s);
    } catch (const std::exception&) {
      return ParseError(path + ":" + std::to_string(line_no) + ": a number was expected");
    }
  }
  if (out.empty())
    return NotFound(path + ": no rows with num_workers=" + std::to_string(num_workers) +
                    " devices_per_node=" + std::to_string(devices_per_node));
  std::sort(out.begin(), out.end(),
            [](const CollectiveSample& a, const CollectiveSample& b) { return a.bytes < b.bytes; });
  return out;
}

double AlphaBetaLine::AllReduceSeconds(double bytes, int gpus) const {
  if (gpus <= 1) return 0.0;
  double steps = 2.0 * (gpus - 1);
  return steps * alpha_s + steps / gpus * bytes / bus_bytes_per_s;
}

double AllReduceModel::AllReduceSeconds(double bytes) const {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& l : lines) best = std::min(best, l.AllReduceSeconds(bytes, gpus));
  return lines.empty() ? 0.0 : best;
}

Status AllReduceFitOptions::Validate() const {
  if (max_lines < 1 || max_lines > 6)
    return InvalidArgument("fit max_lines must be in 1..6, got " + std::to_string(max_lines));
  if (max_iterations < 1) return InvalidArgument("fit max_iterations must be >= 1");
  return Status::Ok();
}

StatusOr<AllReduceModel> FitAllReduce(const std::vector<CollectiveSample>& samples, int gpus,
                                      const AllReduceFitOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  if (gpus < 2)
    return InvalidArgument("an all-reduce fit needs >= 2 GPUs, got " + std::to_string(gpus));
  if (samples.size() < 2) return InvalidArgument("an all-reduce fit needs >= 2 samples");
  std::vector<CollectiveSample> s = samples;
  std::sort(s.begin(), s.end(),
            [](const CollectiveSample& a, const CollectiveSample& b) { return a.bytes < b.bytes; });
  int n = static_cast<int>(s.size());
  double steps = 2.0 * (gpus - 1);
  auto to_line = [&](double a, double b) {
    AlphaBetaLine l;
    l.alpha_s = a / steps;
    l.bus_bytes_per_s = steps / gpus / b;
    return l;
  };
  AllReduceModel best_model;
  double best_err = std::numeric_limits<double>::infinity();
  for (int lines = 1; lines <= options.max_lines && lines <= n / 2; ++lines) {
    // Start: contiguous size ranges, equal counts.
    std::vector<int> assign(n);
    for (int i = 0; i < n; ++i) assign[i] = i * lines / n;
    std::vector<double> as(lines, 0), bs(lines, 1e-12);
    for (int it = 0; it < options.max_iterations; ++it) {
      for (int l = 0; l < lines; ++l) {
        std::vector<int> idx;
        for (int i = 0; i < n; ++i)
          if (assign[i] == l) idx.push_back(i);
        double a, b;
        if (FitLine(s, idx, a, b)) as[l] = a, bs[l] = b;
      }
      bool changed = false;
      for (int i = 0; i < n; ++i) {
        int arg = 0;
        double v = std::numeric_limits<double>::infinity();
        for (int l = 0; l < lines; ++l) {
          double p = as[l] + bs[l] * s[i].bytes;
          if (p < v) v = p, arg = l;
        }
        if (arg != assign[i]) assign[i] = arg, changed = true;
      }
      if (!changed) break;
    }
    AllReduceModel model;
    model.gpus = gpus;
    for (int l = 0; l < lines; ++l) model.lines.push_back(to_line(as[l], bs[l]));
    double err = 0;
    for (const auto& x : s)
      err += std::pow(RelError(model.AllReduceSeconds(x.bytes), x.seconds), 2);
    // A further line must earn its keep (1% lower squared error).
    if (err < best_err * 0.99) best_err = err, best_model = model;
  }
  return best_model;
}

AllReduceFitReport EvaluateFit(const AllReduceModel& model,
                               const std::vector<CollectiveSample>& samples) {
  AllReduceFitReport r;
  r.samples = static_cast<int>(samples.size());
  std::vector<double> errs;
  std::map<int, std::vector<double>> by_bucket;
  for (const auto& x : samples) {
    double e = RelError(model.AllReduceSeconds(x.bytes), x.seconds);
    errs.push_back(e);
    int bucket =
        std::max(0, static_cast<int>(std::floor(std::log(x.bytes / 1024.0) / std::log(8.0))));
    by_bucket[bucket].push_back(e);
  }
  auto geo = [](const std::vector<double>& v) {
    double s = 0;
    for (double e : v) s += std::log(std::max(e, 1e-4));
    return v.empty() ? 0.0 : std::exp(s / v.size());
  };
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double e : v) s += e;
    return v.empty() ? 0.0 : s / v.size();
  };
  r.geomean_rel_error = geo(errs);
  r.mean_rel_error = mean(errs);
  if (!errs.empty()) {
    std::vector<double> sorted = errs;
    std::sort(sorted.begin(), sorted.end());
    r.median_rel_error = sorted[sorted.size() / 2];
  }
  for (const auto& [bucket, v] : by_bucket) {
    SizeBucketError b;
    b.min_bytes = 1024.0 * std::pow(8.0, bucket);
    b.max_bytes = b.min_bytes * 8.0;
    if (bucket == 0) b.min_bytes = 0;
    b.samples = static_cast<int>(v.size());
    b.geomean_rel_error = geo(v);
    b.mean_rel_error = mean(v);
    r.buckets.push_back(b);
  }
  return r;
}

StatusOr<AllReduceFitReport> HeldOutFit(const std::vector<CollectiveSample>& samples, int gpus,
                                        const AllReduceFitOptions& options) {
  std::vector<CollectiveSample> s = samples, train, test;
  std::sort(s.begin(), s.end(),
            [](const CollectiveSample& a, const CollectiveSample& b) { return a.bytes < b.bytes; });
  for (size_t i = 0; i < s.size(); ++i) (i % 2 ? test : train).push_back(s[i]);
  HX_ASSIGN_OR_RETURN(AllReduceModel model, FitAllReduce(train, gpus, options));
  return EvaluateFit(model, test);
}

}  // namespace hx::cost
