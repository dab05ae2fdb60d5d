// VidurCollectiveFits (calibration_fits.h): NCCL all-reduce lines from vidur's profiles, and the
// custom all-reduce lines of the published engine kernels (custom_all_reduce_data.h).
#include <algorithm>
#include <sstream>

#include "hexplan/core/file_util.h"
#include "hexplan/cost/calibration_fits.h"
#include "hexplan/cost/custom_all_reduce_data.h"
#include "hexplan/cost/fit_collective.h"

namespace hx::cost {
namespace {

// NCCL's Ring/LL latency constants (baseLatency, NVLink hwLatency) in seconds.
StatusOr<std::pair<double, double>> NcclRingLlLatency(const std::string& path) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  std::istringstream in(text);
  std::string line;
  double base = -1, hw = -1;
  while (std::getline(in, line)) {
    const std::string value = line.substr(line.rfind(',') + 1);  // the last column, in us
    try {
      if (line.rfind("baseLatency,Ring,LL,", 0) == 0) base = std::stod(value) * 1e-6;
      if (line.rfind("hwLatency,Ring,LL,NVLINK,", 0) == 0) hw = std::stod(value) * 1e-6;
    } catch (const std::exception&) {
      return ParseError(path + ": '" + line + "': the value is not a number");
    }
  }
  if (base < 0 || hw < 0)
    return ParseError(path + ": no baseLatency,Ring,LL or hwLatency,Ring,LL,NVLINK row");
  return std::make_pair(base, hw);
}

StatusOr<CollectiveFitResult> FitOne(const std::string& path, const std::string& system, int gpus,
                                     std::pair<double, double> nccl) {
  HX_ASSIGN_OR_RETURN(auto samples, ReadVidurAllReduce(path, gpus, gpus));
  std::vector<CollectiveSample> fitted, held_out;
  for (size_t i = 0; i < samples.size(); ++i) (i % 2 ? held_out : fitted).push_back(samples[i]);
  HX_ASSIGN_OR_RETURN(AllReduceModel model, FitAllReduce(fitted, gpus));
  CollectiveFitResult r;
  r.system = system;
  r.written = system.find("_dgx") != std::string::npos;
  CollectiveCalibration& c = r.calibration;
  c.collective = "all_reduce";
  c.fabric = r.written ? "nvswitch" : "nvlink-pairs";
  c.gpus = gpus;
  for (const AlphaBetaLine& l : model.lines) c.lines.push_back({l.alpha_s, l.bus_bytes_per_s});
  c.source = "vidur " + system + "/all_reduce.csv (NCCL, " + std::to_string(gpus) + " GPUs)";
  c.samples = static_cast<int>(fitted.size());
  c.fit_error = EvaluateFit(model, fitted).geomean_rel_error;
  c.held_out_error = EvaluateFit(model, held_out).geomean_rel_error;
  const double steps = 2.0 * (gpus - 1);
  r.nccl_latency_s = nccl.first + steps * nccl.second;
  r.fitted_latency_s = model.AllReduceSeconds(0.0);
  r.pass = c.fit_error <= r.bound && c.held_out_error <= r.bound;
  return r;
}

}  // namespace

StatusOr<CollectiveFitResult> FitCustomAllReduce(const PublishedAllReduceSet& set) {
  AllReduceFitOptions options;
  options.max_lines = 2;  // one-shot (small) and two-shot (large) kernels
  HX_ASSIGN_OR_RETURN(AllReduceModel model, FitAllReduce(set.samples, set.gpus, options));
  // Six or seven sizes per set: every other size would leave three points for two lines, so each
  // size is held out in turn (leave-one-out) and predicted by the fit of the others.
  HX_ASSIGN_OR_RETURN(double held_out, LeaveOneOutError(set.samples, set.gpus, options));
  CollectiveFitResult r;
  r.system = "custom (engine kernel)";
  r.written = true;
  CollectiveCalibration& c = r.calibration;
  c.collective = "all_reduce";
  c.fabric = "nvswitch";
  c.library = "custom";
  c.gpus = set.gpus;
  for (const CollectiveSample& s : set.samples) c.max_bytes = std::max(c.max_bytes, s.bytes);
  for (const AlphaBetaLine& l : model.lines) c.lines.push_back({l.alpha_s, l.bus_bytes_per_s});
  c.source = set.source;
  c.samples = static_cast<int>(set.samples.size());
  c.fit_error = EvaluateFit(model, set.samples).geomean_rel_error;
  c.held_out_error = held_out;
  r.fitted_latency_s = model.AllReduceSeconds(0.0);
  r.pass = c.fit_error <= r.bound && c.held_out_error <= r.bound;
  return r;
}

StatusOr<std::vector<CollectiveFitResult>> CustomCollectiveFits(const std::string& gpu) {
  std::vector<CollectiveFitResult> out;
  for (const PublishedAllReduceSet& set : PublishedCustomAllReduce(gpu)) {
    HX_ASSIGN_OR_RETURN(auto r, FitCustomAllReduce(set));
    out.push_back(std::move(r));
  }
  return out;
}

StatusOr<std::vector<CollectiveFitResult>> VidurCollectiveFits(const std::string& data_dir,
                                                               const std::string& gpu) {
  HX_ASSIGN_OR_RETURN(
      auto nccl, NcclRingLlLatency(data_dir + "/tp/NVIDIA-nccl/tuner_constants_ring_simple.csv"));
  const std::string base = data_dir + "/tp/microsoft-vidur/data/profiling/network/";
  std::vector<CollectiveFitResult> out;
  struct Set {
    std::string system;
    std::vector<int> gpus;
  } sets[] = {{gpu + "_dgx", {2, 4, 8}}, {gpu + "_pairwise_nvlink", {2, 4}}};
  for (const Set& set : sets)
    for (int n : set.gpus) {
      HX_ASSIGN_OR_RETURN(auto r,
                          FitOne(base + set.system + "/all_reduce.csv", set.system, n, nccl));
      out.push_back(std::move(r));
    }
  HX_ASSIGN_OR_RETURN(auto custom, CustomCollectiveFits(gpu));
  for (CollectiveFitResult& r : custom) out.push_back(std::move(r));
  return out;
}

}  // namespace hx::cost
