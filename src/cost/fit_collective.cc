#include "hexplan/cost/fit_collective.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
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

// Weighted least squares for t = a + b*S minimising sum ((a + b S - t)/t)^2, with b > 0 and a >= 0
// (unless `negative_a`: a regime above the smallest sizes, such as a token bucket's shaped rate
// after its burst, t = (S - burst) / rate). Returns false when there are too few samples.
bool FitLine(const std::vector<CollectiveSample>& s, const std::vector<int>& idx, double& a,
             double& b, bool negative_a = false) {
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
  if ((a < 0 && !negative_a) || b <= 0) {
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
  if (!regime_upper_bytes.empty()) return LineFor(bytes).AllReduceSeconds(bytes, gpus);
  double best = std::numeric_limits<double>::infinity();
  for (const auto& l : lines) best = std::min(best, l.AllReduceSeconds(bytes, gpus));
  return lines.empty() ? 0.0 : best;
}

const AlphaBetaLine& AllReduceModel::LineFor(double bytes) const {
  if (regime_upper_bytes.empty()) {
    size_t arg = 0;
    for (size_t i = 1; i < lines.size(); ++i)
      if (lines[i].AllReduceSeconds(bytes, gpus) < lines[arg].AllReduceSeconds(bytes, gpus))
        arg = i;
    return lines.at(arg);
  }
  size_t k = 0;
  while (k < regime_upper_bytes.size() && k + 1 < lines.size() && bytes > regime_upper_bytes[k])
    ++k;
  return lines.at(k);
}

Status AllReduceFitOptions::Validate() const {
  if (max_lines < 1 || max_lines > 6)
    return InvalidArgument("fit max_lines must be in 1..6, got " + std::to_string(max_lines));
  if (max_iterations < 1) return InvalidArgument("fit max_iterations must be >= 1");
  if (!(keep_line_below > 0 && keep_line_below <= 1))
    return InvalidArgument("fit keep_line_below must be in (0, 1]");
  if (min_regime_sizes < 2) return InvalidArgument("fit min_regime_sizes must be >= 2");
  return Status::Ok();
}

namespace {

double SquaredRelError(const AllReduceModel& model, const std::vector<CollectiveSample>& s) {
  double err = 0;
  for (const auto& x : s) err += std::pow(RelError(model.AllReduceSeconds(x.bytes), x.seconds), 2);
  return err;
}

// t = a + b*S (a whole collective) as a line per ring step.
AlphaBetaLine ToRingLine(double a, double b, int gpus) {
  const double steps = 2.0 * (gpus - 1);
  AlphaBetaLine l;
  l.alpha_s = a / steps;
  l.bus_bytes_per_s = steps / gpus / b;
  return l;
}

// `lines` lines, each the minimum over the samples it predicts best (s sorted by size).
AllReduceModel FitFastestLines(const std::vector<CollectiveSample>& s, int gpus, int lines,
                               int max_iterations) {
  const int n = static_cast<int>(s.size());
  // Start: contiguous size ranges, equal counts.
  std::vector<int> assign(n);
  for (int i = 0; i < n; ++i) assign[i] = i * lines / n;
  std::vector<double> as(lines, 0), bs(lines, 1e-12);
  for (int it = 0; it < max_iterations; ++it) {
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
  for (int l = 0; l < lines; ++l) model.lines.push_back(ToRingLine(as[l], bs[l], gpus));
  return model;
}

// The samples of distinct sizes [first, last) of `starts` (indexes into s where a size begins).
struct RegimeFitLine {
  double a = 0, b = 0, err = std::numeric_limits<double>::infinity();
};

// The regimes above the first may have a negative intercept (their lines price only larger sizes),
// as long as they price their own sizes above zero.
RegimeFitLine FitRegimeSizes(const std::vector<CollectiveSample>& s, const std::vector<int>& starts,
                             int first, int last) {
  std::vector<int> idx;
  for (int i = starts[first]; i < starts[last]; ++i) idx.push_back(i);
  RegimeFitLine r;
  if (!FitLine(s, idx, r.a, r.b, first > 0)) return r;
  if (r.a + r.b * s[idx.front()].bytes <= 0 && !FitLine(s, idx, r.a, r.b)) return r;
  r.err = 0;
  for (int i : idx) r.err += std::pow(RelError(r.a + r.b * s[i].bytes, s[i].seconds), 2);
  return r;
}

// Where regime k (its largest size lo) ends and k+1 (its smallest size hi) begins: the lines'
// crossing when it lies between (or on them), else the geometric mean.
double RegimeBound(const RegimeFitLine& left, const RegimeFitLine& right, double lo, double hi) {
  if (left.b != right.b) {
    const double cross = (right.a - left.a) / (left.b - right.b);
    // At a measured size too (within rounding).
    if (cross >= lo * (1 - 1e-9) && cross <= hi * (1 + 1e-9)) return std::clamp(cross, lo, hi);
  }
  return std::sqrt(lo * hi);
}

// The best split of the distinct sizes into `regimes` consecutive ranges of at least `min_sizes`
// each (least total squared relative error), by dynamic programming over the range ends.
std::optional<AllReduceModel> FitSizeRegimes(const std::vector<CollectiveSample>& s, int gpus,
                                             int regimes, int min_sizes) {
  std::vector<int> starts;  // index of each distinct size's first sample, then s.size()
  for (int i = 0; i < static_cast<int>(s.size()); ++i)
    if (i == 0 || s[i].bytes != s[i - 1].bytes) starts.push_back(i);
  const int sizes = static_cast<int>(starts.size());
  starts.push_back(static_cast<int>(s.size()));
  if (sizes < regimes * min_sizes) return std::nullopt;
  const double inf = std::numeric_limits<double>::infinity();
  // best[k][j]: the least error of k regimes over sizes [0, j); from[k][j]: where the last began.
  std::vector<std::vector<double>> best(regimes + 1, std::vector<double>(sizes + 1, inf));
  std::vector<std::vector<int>> from(regimes + 1, std::vector<int>(sizes + 1, -1));
  best[0][0] = 0;
  for (int k = 1; k <= regimes; ++k)
    for (int j = k * min_sizes; j <= sizes; ++j)
      for (int i = (k - 1) * min_sizes; i + min_sizes <= j; ++i) {
        if (best[k - 1][i] == inf) continue;
        const double e = best[k - 1][i] + FitRegimeSizes(s, starts, i, j).err;
        if (e < best[k][j]) best[k][j] = e, from[k][j] = i;
      }
  if (best[regimes][sizes] == inf) return std::nullopt;
  std::vector<int> ends = {sizes};
  for (int k = regimes; k > 1; --k) ends.push_back(from[k][ends.back()]);
  ends.push_back(0);
  std::reverse(ends.begin(), ends.end());  // 0 = e0 < e1 < ... < e_regimes = sizes
  AllReduceModel model;
  model.gpus = gpus;
  std::vector<RegimeFitLine> fits;
  for (int k = 0; k < regimes; ++k) fits.push_back(FitRegimeSizes(s, starts, ends[k], ends[k + 1]));
  for (int k = 0; k < regimes; ++k) {
    model.lines.push_back(ToRingLine(fits[k].a, fits[k].b, gpus));
    if (k + 1 < regimes)
      model.regime_upper_bytes.push_back(RegimeBound(
          fits[k], fits[k + 1], s[starts[ends[k + 1] - 1]].bytes, s[starts[ends[k + 1]]].bytes));
  }
  return model;
}

}  // namespace

StatusOr<AllReduceModel> FitAllReduce(const std::vector<CollectiveSample>& samples, int gpus,
                                      const AllReduceFitOptions& options) {
  HX_RETURN_IF_ERROR(options.Validate());
  if (gpus < 2)
    return InvalidArgument("an all-reduce fit needs >= 2 GPUs, got " + std::to_string(gpus));
  if (samples.size() < 2) return InvalidArgument("an all-reduce fit needs >= 2 samples");
  std::vector<CollectiveSample> s = samples;
  std::sort(s.begin(), s.end(),
            [](const CollectiveSample& a, const CollectiveSample& b) { return a.bytes < b.bytes; });
  const int n = static_cast<int>(s.size());
  AllReduceModel best_model;
  double best_err = std::numeric_limits<double>::infinity();
  for (int lines = 1; lines <= options.max_lines; ++lines) {
    std::optional<AllReduceModel> model;
    if (options.shape == FitShape::kFastestLine) {
      if (lines > n / 2) break;
      model = FitFastestLines(s, gpus, lines, options.max_iterations);
    } else {
      // One regime always fits (whatever the sizes): the plain line.
      model = FitSizeRegimes(s, gpus, lines, lines == 1 ? 1 : options.min_regime_sizes);
      if (!model) break;
    }
    const double err = SquaredRelError(*model, s);
    // A further line must earn its keep; size regimes: none once a line is exact (0.1 % rms).
    if (options.shape == FitShape::kSizeRegimes && best_err < 1e-6 * n) break;
    if (err < best_err * options.keep_line_below) best_err = err, best_model = std::move(*model);
  }
  return best_model;
}

namespace {

// Geometric mean of relative errors, each floored at 1e-4 (a perfect point would be log 0).
double GeomeanRelError(const std::vector<double>& errors) {
  double s = 0;
  for (double e : errors) s += std::log(std::max(e, 1e-4));
  return errors.empty() ? 0.0 : std::exp(s / static_cast<double>(errors.size()));
}

}  // namespace

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
  auto geo = GeomeanRelError;
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

StatusOr<double> LeaveOneOutError(const std::vector<CollectiveSample>& samples, int gpus,
                                  const AllReduceFitOptions& options) {
  std::vector<double> errors;
  for (size_t i = 0; i < samples.size(); ++i) {
    std::vector<CollectiveSample> rest = samples;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
    HX_ASSIGN_OR_RETURN(AllReduceModel without, FitAllReduce(rest, gpus, options));
    errors.push_back(RelError(without.AllReduceSeconds(samples[i].bytes), samples[i].seconds));
  }
  return GeomeanRelError(errors);
}

}  // namespace hx::cost
