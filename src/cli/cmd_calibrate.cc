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
};

nlohmann::json ErrorsJson(const cost::FitErrors& e) {
  return {{"samples", e.samples}, {"geomean", e.geomean}, {"median", e.median}, {"max", e.max}};
}

nlohmann::json ClassJson(const cost::ClassFitResult& c) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : c.groups)
    groups.push_back({{"group", g.group},
                      {"fitted", ErrorsJson(g.fitted)},
                      {"held_out", ErrorsJson(g.held_out)}});
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
          {"groups", groups}};
}

nlohmann::json DeviceJson(const DeviceFits& d) {
  nlohmann::json classes = nlohmann::json::array(), models = nlohmann::json::array(),
                 collectives = nlohmann::json::array();
  for (const auto& c : d.classes) classes.push_back(ClassJson(c));
  for (const auto& m : d.models)
    models.push_back({{"model", m.model},
                      {"all", ErrorsJson(m.all)},
                      {"held_out", ErrorsJson(m.held_out)},
                      {"bound_median", m.bound},
                      {"pass", m.pass}});
  for (const auto& c : d.collectives) {
    nlohmann::json lines = nlohmann::json::array();
    for (const auto& l : c.calibration.lines)
      lines.push_back({{"alpha_s", l.alpha_s}, {"bus_bytes_per_s", l.bus_bytes_per_s}});
    collectives.push_back({{"system", c.system},
                           {"collective", c.calibration.collective},
                           {"fabric", c.calibration.fabric},
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
  return {{"model", d.model},
          {"measured_on", d.measured_on},
          {"dtype", d.dtype},
          {"peak_flops", d.peak.flops_per_s},
          {"peak_bytes_per_s", d.peak.bytes_per_s},
          {"classes", classes},
          {"models", models},
          {"collectives", collectives},
          {"pass", d.pass()}};
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
    for (const auto& g : c.groups)
      if (c.bound > 0)
        std::printf("    %-36s fit %5.1f%%  held-out %5.1f%%  (geomean)\n", g.group.c_str(),
                    100 * g.fitted.geomean, 100 * g.held_out.geomean);
  }
}

void PrintDevice(const DeviceFits& d) {
  std::printf("%s  (%s peak %.1f TFLOP/s, %.0f GB/s; data: %s)\n", d.model.c_str(), d.dtype.c_str(),
              d.peak.flops_per_s / 1e12, d.peak.bytes_per_s / 1e9, d.measured_on.c_str());
  PrintClasses(d);
  if (!d.models.empty()) {
    std::printf("  %-28s %7s %13s %16s %6s  %s\n", "PipeDream model", "layers", "median err",
                "median held-out", "bound", "result");
    for (const auto& m : d.models)
      std::printf("  %-28s %7d %12.1f%% %15.1f%% %5.0f%%  %s\n", m.model.c_str(), m.all.samples,
                  100 * m.all.median, 100 * m.held_out.median, 100 * m.bound, PassText(m.pass));
  }
  if (!d.collectives.empty()) {
    std::printf("  %-26s %4s %5s %7s %8s %9s %6s %9s %9s  %s\n", "all_reduce system", "gpus",
                "lines", "samples", "fit err", "held-out", "bound", "lat fit", "lat NCCL",
                "result");
    for (const auto& c : d.collectives)
      std::printf("  %-26s %4d %5zu %7d %7.1f%% %8.1f%% %5.0f%% %7.1fus %7.1fus  %s%s\n",
                  c.system.c_str(), c.calibration.gpus, c.calibration.lines.size(),
                  c.calibration.samples, 100 * c.calibration.fit_error,
                  100 * c.calibration.held_out_error, 100 * c.bound, c.fitted_latency_s * 1e6,
                  c.nccl_latency_s * 1e6, PassText(c.pass), c.written ? "" : " (not written)");
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

int RunCalibrate(const CalibrateArgs& args) {
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
  return {app, [args]() { return RunCalibrate(*args); }};
}

}  // namespace hx::cli
