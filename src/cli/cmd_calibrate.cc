// hexplan calibrate: runs every fit of the calibrated GPU cost model on the measured data
// (../shared/data, or --data DIR), prints each fit's error against its bound (--report, --json)
// and writes the fitted values into data/calibration/<model>.yaml files (--write DIR).
// docs/cost-model.md "Fits".
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "hexplan/core/json_text.h"
#include "hexplan/cost/calibration_fits.h"
#include "hexplan/cost/gpu_measure.h"
#include "hexplan/hw/device_spec.h"

#ifndef HX_SHARED_DATA_DIR
#define HX_SHARED_DATA_DIR "../shared/data"
#endif

namespace hx::cli {
namespace {

using cost::CalibrationFits;
using cost::DeviceFits;

struct CalibrateArgs {
  std::string data_dir = HX_SHARED_DATA_DIR;
  std::string write_dir;
  bool report = false;
  bool json = false;
  bool measure = false;
  cost::GpuMeasureOptions gpu;
  double link_gbps = 15.75;
};

nlohmann::json ErrorsJson(const cost::FitErrors& e) {
  return {{"samples", e.samples}, {"geomean", e.geomean}, {"median", e.median}, {"max", e.max}};
}

nlohmann::json GroupsJson(const std::vector<cost::GroupErrors>& list) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : list)
    out.push_back({{"group", g.group},
                   {"fitted", ErrorsJson(g.fitted)},
                   {"held_out", ErrorsJson(g.held_out)}});
  return out;
}

nlohmann::json ClassJson(const cost::ClassFitResult& c) {
  nlohmann::json harness = nlohmann::json::object();
  for (const auto& [name, s] : c.fit.harness_s) harness[name] = s;
  return {{"class", std::string(cost::OpClassName(c.op_class))},
          {"source", c.fit.source},
          {"samples", c.fit.samples},
          {"fit_error", c.fit.fit_error},
          {"held_out_error", c.fit.held_out_error},
          {"bound", c.bound},
          {"pass", c.pass},
          {"compute_max", c.fit.compute_max},
          {"compute_half_flops", c.fit.compute_half_flops},
          {"memory_max", c.fit.memory_max},
          {"memory_half_bytes", c.fit.memory_half_bytes},
          {"fixed_s", c.fit.fixed_s},
          {"harness_s", harness},
          {"groups", GroupsJson(c.groups)},
          {"operators", GroupsJson(c.operators)}};
}

nlohmann::json DeviceJson(const DeviceFits& d) {
  nlohmann::json classes = nlohmann::json::array(), models = nlohmann::json::array(),
                 collectives = nlohmann::json::array();
  for (const auto& c : d.classes) classes.push_back(ClassJson(c));
  for (const auto& m : d.models)
    models.push_back({{"model", m.model},
                      {"all", ErrorsJson(m.all)},
                      {"held_out", ErrorsJson(m.held_out)},
                      {"speed_factor", m.speed_factor},
                      {"shape_all", ErrorsJson(m.shape_all)},
                      {"shape_fitted", ErrorsJson(m.shape_fitted)},
                      {"shape_held_out", ErrorsJson(m.shape_held_out)},
                      {"bound_median", m.bound},
                      {"pass", m.pass}});
  for (const auto& c : d.collectives) {
    nlohmann::json lines = nlohmann::json::array();
    for (const auto& l : c.calibration.lines)
      lines.push_back({{"alpha_s", l.alpha_s}, {"bus_bytes_per_s", l.bus_bytes_per_s}});
    collectives.push_back({{"system", c.system},
                           {"collective", c.calibration.collective},
                           {"fabric", c.calibration.fabric},
                           {"library", c.calibration.library},
                           {"max_bytes", c.calibration.max_bytes},
                           {"gpus", c.calibration.gpus},
                           {"lines", lines},
                           {"samples", c.calibration.samples},
                           {"fit_error", c.calibration.fit_error},
                           {"held_out_error", c.calibration.held_out_error},
                           {"bound", c.bound},
                           {"nccl_latency_s", c.nccl_latency_s},
                           {"fitted_latency_s", c.fitted_latency_s},
                           {"written", c.written},
                           {"pass", c.pass}});
  }
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : d.kernel_checks)
    checks.push_back({{"class", std::string(cost::OpClassName(c.op_class))},
                      {"source", c.source},
                      {"samples", c.samples},
                      {"ratio", c.ratio},
                      {"errors", ErrorsJson(c.errors)}});
  return {{"model", d.model},
          {"measured_on", d.measured_on},
          {"dtype", d.dtype},
          {"peak_flops", d.peak.flops_per_s},
          {"peak_bytes_per_s", d.peak.bytes_per_s},
          {"classes", classes},
          {"models", models},
          {"collectives", collectives},
          {"kernel_checks", checks},
          {"pass", d.pass()}};
}

// A geomean error as "12.3%", or "-" where the half has no samples of the group.
std::string Percent(const cost::FitErrors& e) {
  if (e.samples == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", 100 * e.geomean);
  return buf;
}

const char* PassText(bool pass) { return pass ? "pass" : "FAIL"; }

void PrintClasses(const DeviceFits& d) {
  std::printf("  %-14s %7s %8s %9s %6s  %-6s %s\n", "class", "samples", "fit err", "held-out",
              "bound", "result", "source");
  for (const auto& c : d.classes) {
    std::string bound = c.bound > 0 ? std::to_string(static_cast<int>(c.bound * 100)) + "%" : "-";
    std::printf("  %-14s %7d %7.1f%% %8.1f%% %6s  %-6s %s\n",
                std::string(cost::OpClassName(c.op_class)).c_str(), c.fit.samples,
                100 * c.fit.fit_error, 100 * c.fit.held_out_error, bound.c_str(),
                c.bound > 0 ? PassText(c.pass) : "-", c.fit.source.c_str());
    for (const auto& g : c.groups) {
      // An unbounded class (the V100's) shows its kernel tables; PipeDream's groups are its
      // models, reported with their bound below.
      if (c.bound <= 0 && g.group.rfind("PipeDream", 0) == 0) continue;
      std::printf("    %-36s fit %6s  held-out %6s  (geomean)\n", g.group.c_str(),
                  Percent(g.fitted).c_str(), Percent(g.held_out).c_str());
    }
    if (c.bound <= 0) continue;
    for (const auto& g : c.operators)
      std::printf("      operator %-34s fit %6s  held-out %6s\n", g.group.c_str(),
                  Percent(g.fitted).c_str(), Percent(g.held_out).c_str());
  }
}

// PipeDream's per-model medians: absolute, and of the shape (after the model's speed factor,
// set on its fitted half), which the bound is on.
void PrintModels(const DeviceFits& d) {
  std::printf("  %-24s %6s %10s %9s %7s %10s %9s %6s  %s\n", "PipeDream model", "layers",
              "median err", "held-out", "factor", "shape err", "held-out", "bound", "result");
  for (const auto& m : d.models)
    std::printf("  %-24s %6d %9.1f%% %8.1f%% %7.2f %9.1f%% %8.1f%% %5.0f%%  %s\n", m.model.c_str(),
                m.all.samples, 100 * m.all.median, 100 * m.held_out.median, m.speed_factor,
                100 * m.shape_all.median, 100 * m.shape_held_out.median, 100 * m.bound,
                PassText(m.pass));
  std::printf(
      "  (factor: measured / predicted, geomean over the model's fitted half; the shape\n"
      "  errors are after it, the bound is on them)\n");
}

// The class curves against a named device's kernels that no fit saw (not bounded).
void PrintKernelChecks(const DeviceFits& d) {
  std::printf("  the curves against %s kernels (not fitted):\n", d.kernel_checks[0].source.c_str());
  std::printf("  %-22s %7s %18s %11s %8s\n", "class", "kernels", "predicted/measured", "median err",
              "geomean");
  for (const auto& c : d.kernel_checks)
    std::printf("  %-22s %7d %17.2fx %10.1f%% %7.1f%%\n",
                std::string(cost::OpClassName(c.op_class)).c_str(), c.samples, c.ratio,
                100 * c.errors.median, 100 * c.errors.geomean);
}

void PrintDevice(const DeviceFits& d) {
  std::printf("%s  (%s peak %.1f TFLOP/s, %.0f GB/s; data: %s)\n", d.model.c_str(), d.dtype.c_str(),
              d.peak.flops_per_s / 1e12, d.peak.bytes_per_s / 1e9, d.measured_on.c_str());
  PrintClasses(d);
  if (!d.models.empty()) PrintModels(d);
  if (!d.kernel_checks.empty()) PrintKernelChecks(d);
  if (!d.collectives.empty()) {
    std::printf("  %-26s %4s %5s %7s %8s %9s %6s %9s %9s  %s\n", "all_reduce system", "gpus",
                "lines", "samples", "fit err", "held-out", "bound", "lat fit", "lat NCCL",
                "result");
    for (const auto& c : d.collectives) {
      char nccl[32] = "        -";  // a custom kernel has no NCCL latency to compare with
      if (c.nccl_latency_s > 0) std::snprintf(nccl, sizeof nccl, "%7.1fus", c.nccl_latency_s * 1e6);
      std::printf("  %-26s %4d %5zu %7d %7.1f%% %8.1f%% %5.0f%% %7.1fus %s  %s%s\n",
                  c.system.c_str(), c.calibration.gpus, c.calibration.lines.size(),
                  c.calibration.samples, 100 * c.calibration.fit_error,
                  100 * c.calibration.held_out_error, 100 * c.bound, c.fitted_latency_s * 1e6, nccl,
                  PassText(c.pass), c.written ? "" : " (not written)");
    }
  }
  std::printf("\n");
}

// Reads DIR/<model>.yaml where it exists, puts the fits in, writes it back.
Status WriteCalibrations(const CalibrationFits& fits, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    return InvalidArgument("--write " + dir + ": cannot create the directory");
  for (const DeviceFits& d : fits.devices) {
    const std::string path = dir + "/" + d.model + ".yaml";
    cost::DeviceCalibration calibration;
    calibration.model = d.model;
    if (std::filesystem::exists(path)) {
      HX_ASSIGN_OR_RETURN(calibration, cost::ReadDeviceCalibration(path));
    }
    cost::ApplyFits(d, calibration);
    HX_RETURN_IF_ERROR(calibration.Validate());
    HX_RETURN_IF_ERROR(cost::WriteDeviceCalibration(calibration, path));
    std::fprintf(stderr, "hexplan: wrote %s\n", path.c_str());
  }
  return Status::Ok();
}

// The calibration file of `path` with `measured`'s copies, launch cost and classes put in.
Status MergeMeasured(const cost::DeviceCalibration& measured, const std::string& path) {
  cost::DeviceCalibration calibration = measured;
  if (std::filesystem::exists(path)) {
    HX_ASSIGN_OR_RETURN(calibration, cost::ReadDeviceCalibration(path));
    calibration.copy.h2d_pinned = measured.copy.h2d_pinned;
    calibration.copy.h2d_pageable = measured.copy.h2d_pageable;
    calibration.copy.d2h_pinned = measured.copy.d2h_pinned;
    calibration.copy.d2h_pageable = measured.copy.d2h_pageable;
    calibration.kernel_launch_s = measured.kernel_launch_s;
    calibration.measured_on = measured.measured_on;
    for (const auto& [op_class, fit] : measured.classes) calibration.classes[op_class] = fit;
  }
  HX_RETURN_IF_ERROR(calibration.Validate());
  return cost::WriteDeviceCalibration(calibration, path);
}

// --measure: this machine's GPU, measured and fitted (gpu_measure.h).
int RunMeasure(const CalibrateArgs& args) {
  cost::GpuMeasureOptions options = args.gpu;
  options.link_bytes_per_s = args.link_gbps * 1e9;
  auto m = cost::MeasureGpu(options);
  if (!m.ok()) return ReportError(m.status());
  auto spec = hw::MatchGpuName(m->device_name);
  if (!spec)
    return ReportError(NotFound("GPU '" + m->device_name +
                                "' is not in the device table (docs/hardware.md): its peak "
                                "FLOP/s and bandwidth are needed for the fit"));
  cost::DevicePeak peak{spec->PeakFlops("fp16"), spec->memory_bandwidth_bytes_per_s};
  auto c = cost::CalibrationFromMeasurements(*m, spec->model, peak, options.link_bytes_per_s);
  if (!c.ok()) return ReportError(c.status());
  std::printf("%s (%s): launch %.1f us\n", spec->model.c_str(), m->device_name.c_str(),
              c->kernel_launch_s * 1e6);
  for (const auto& [name, fit] : {std::pair{"h2d pinned", c->copy.h2d_pinned},
                                  {"h2d pageable", c->copy.h2d_pageable},
                                  {"d2h pinned", c->copy.d2h_pinned},
                                  {"d2h pageable", c->copy.d2h_pageable}})
    std::printf("  copy %-13s %5.1f%% of %.2f GB/s + %.1f us\n", name, 100 * fit.fraction,
                args.link_gbps, fit.fixed_s * 1e6);
  for (const auto& [op_class, fit] : c->classes)
    std::printf("  %-13s fit %5.1f%%  held-out %5.1f%%  (%d samples)\n",
                std::string(cost::OpClassName(op_class)).c_str(), 100 * fit.fit_error,
                100 * fit.held_out_error, fit.samples);
  if (args.write_dir.empty()) return 0;
  Status s = MergeMeasured(*c, args.write_dir + "/" + spec->model + ".yaml");
  return s.ok() ? 0 : ReportError(s);
}

int RunCalibrate(const CalibrateArgs& args) {
  if (args.measure) return RunMeasure(args);
  if (!std::filesystem::is_directory(args.data_dir))
    return ReportError(InvalidArgument("--data " + args.data_dir +
                                       ": no such directory (the measured data, laid out as "
                                       "../shared/data)"));
  auto fits = cost::RunCalibrationFits(args.data_dir);
  if (!fits.ok()) return ReportError(fits.status());
  if (args.json) {
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : fits->devices) devices.push_back(DeviceJson(d));
    nlohmann::json out = {{"data", args.data_dir}, {"devices", devices}, {"pass", fits->pass()}};
    std::printf("%s\n", DumpJson(out, 2).c_str());
  } else if (args.report || args.write_dir.empty()) {
    for (const auto& d : fits->devices) PrintDevice(d);
    std::printf("all bounds met: %s\n", fits->pass() ? "yes" : "no");
  }
  if (!args.write_dir.empty()) {
    Status s = WriteCalibrations(*fits, args.write_dir);
    if (!s.ok()) return ReportError(s);
  }
  return 0;
}

}  // namespace

Command AddCalibrateCommand(CLI::App& root) {
  auto* app = root.add_subcommand(
      "calibrate",
      "fit the GPU cost model's operator classes and collectives to measured data and report "
      "each fit's error");
  auto args = std::make_shared<CalibrateArgs>();
  app->add_flag("--report", args->report, "print each fit's error against its bound (default)");
  app->add_flag("--json", args->json, "print the report as JSON");
  app->add_option("--data", args->data_dir, "the measured data directory")->capture_default_str();
  app->add_option("--write", args->write_dir,
                  "write the fits into DIR/<model>.yaml (existing files are updated: only the "
                  "fitted classes and collectives change)");
  auto* measure =
      app->add_flag("--measure", args->measure,
                    "measure this machine's GPU (copies, launch, cuBLAS GEMMs) instead of the "
                    "published data; needs a build with the CUDA toolkit");
  // The measurement's settings mean nothing without it: given alone they are an error.
  app->add_option("--device", args->gpu.device, "with --measure: the CUDA device ordinal")
      ->capture_default_str()
      ->needs(measure);
  app->add_option("--repeats", args->gpu.repeats, "with --measure: timed runs per point")
      ->capture_default_str()
      ->needs(measure);
  app->add_option("--link-gbps", args->link_gbps,
                  "with --measure: the host link's nominal GB/s the copy fractions are of")
      ->capture_default_str()
      ->needs(measure);
  return {app, [args]() { return RunCalibrate(*args); }};
}

}  // namespace hx::cli
