// `hexplan topo CLUSTER [--json] [--dot FILE] [--svg FILE]`: a cluster's devices, links and
// bandwidth matrix, and drawings. CLUSTER is a preset name or a YAML/JSON/nvidia-smi file;
// `--from-nvidia-smi FILE [--gpu-names FILE]` imports `nvidia-smi topo -m` output instead.

#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/command.h"
#include "hexplan/core/file_util.h"
#include "hexplan/core/output_files.h"
#include "hexplan/hw/cluster_render.h"
#include "hexplan/hw/nvidia_smi_topo.h"
#include "hexplan/hw/presets.h"

namespace hx::cli {
namespace {

struct TopoArgs {
  std::string cluster;
  bool json = false;
  bool list = false;
  std::string dot;
  std::string svg;
  std::string nvidia_smi;
  std::string gpu_names;
};

StatusOr<hw::Cluster> LoadTopoCluster(const TopoArgs& args) {
  if (!args.nvidia_smi.empty()) {
    if (!args.cluster.empty()) {
      return InvalidArgument("give either CLUSTER or --from-nvidia-smi, not both");
    }
    HX_ASSIGN_OR_RETURN(std::string topo, ReadFileToString(args.nvidia_smi));
    hw::NvidiaSmiImportOptions options;
    if (!args.gpu_names.empty()) {
      if (std::filesystem::is_directory(args.gpu_names))
        return InvalidArgument("--gpu-names " + args.gpu_names + ": is a directory");
      HX_ASSIGN_OR_RETURN(options.gpu_names_csv, ReadFileToString(args.gpu_names));
      if (options.gpu_names_csv.find_first_not_of(" \t\r\n") == std::string::npos)
        return InvalidArgument("--gpu-names " + args.gpu_names +
                               ": empty (expected `nvidia-smi --query-gpu=name --format=csv` "
                               "output)");
      options.gpu_names_source = args.gpu_names;
    } else {
      LogTo(&CliLogger(), LogLevel::kWarning,
            args.nvidia_smi +
                ": a topology capture does not name the GPUs; every GPU is taken as " +
                options.default_model +
                " (give --gpu-names FILE from `nvidia-smi --query-gpu=name --format=csv`)");
    }
    return hw::ImportNvidiaSmiTopo(topo, args.nvidia_smi, options);
  }
  if (!args.gpu_names.empty()) return InvalidArgument("--gpu-names needs --from-nvidia-smi");
  if (args.cluster.empty()) {
    return InvalidArgument(
        "give a CLUSTER (a preset or a file; --list shows the presets) or "
        "--from-nvidia-smi FILE");
  }
  return hw::LoadCluster(args.cluster, &CliLogger());
}

int RunTopo(const TopoArgs& args) {
  if (args.list) {
    for (const auto& p : hw::ClusterPresets()) {
      std::printf("%-24s %s  [%s]\n", p.name.c_str(), p.description.c_str(), p.source.c_str());
    }
    return 0;
  }
  OutputFiles outputs;
  for (Status s : {outputs.Expect("--dot", args.dot), outputs.Expect("--svg", args.svg)})
    if (!s.ok()) return ReportError(s);
  auto cluster = LoadTopoCluster(args);
  if (!cluster.ok()) return ReportError(cluster.status());
  Status s = Status::Ok();
  if (!args.dot.empty()) s = outputs.Stage(args.dot, hw::ClusterToDot(*cluster));
  if (s.ok() && !args.svg.empty()) s = outputs.Stage(args.svg, hw::ClusterToSvg(*cluster));
  if (s.ok()) s = CommitOutputs(outputs);
  if (!s.ok()) return ReportError(s);
  std::string text = args.json ? hw::ClusterToJson(*cluster) : hw::ClusterSummary(*cluster);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

Command AddTopoCommand(CLI::App& root) {
  auto args = std::make_shared<TopoArgs>();
  auto* app = root.add_subcommand(
      "topo", "show a cluster: devices, links, bandwidth matrix; draw it (DOT, SVG)");
  app->add_option(
      "CLUSTER", args->cluster,
      "a preset (see --list), or a cluster file (.yaml/.json, nvidia-smi topo -m .txt)");
  app->add_flag("--json", args->json, "print JSON (devices, links, bandwidth matrix)");
  app->add_flag("--list", args->list, "list the presets");
  app->add_option("--dot", args->dot, "write a Graphviz DOT drawing to FILE");
  app->add_option("--svg", args->svg, "write an SVG drawing to FILE");
  app->add_option("--from-nvidia-smi", args->nvidia_smi,
                  "import `nvidia-smi topo -m` output saved in FILE");
  app->add_option("--gpu-names", args->gpu_names,
                  "with --from-nvidia-smi: `nvidia-smi --query-gpu=name --format=csv` output");
  return {app, [args]() { return RunTopo(*args); }};
}

}  // namespace hx::cli
