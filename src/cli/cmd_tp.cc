// `hexplan tp MODEL --cluster C --algo asymgroup|megatron|autoddl|ideal [--groups k] [--batch B]
//  [--input-len L] [--output-len L] [--compare] [--json]` (`--model M` is an alias of MODEL):
//  tensor-parallel LLM inference on a (possibly
// asymmetric) cluster with AsymGroup (paper 003) or its baselines. `--report DIR` writes the
// evaluation sweeps (Figs. 8-9) as markdown tables and SVG charts instead.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/command.h"
#include "hexplan/core/file_util.h"
#include "hexplan/core/format_number.h"
#include "hexplan/core/output_files.h"
#include "hexplan/graph/zoo_attention.h"
#include "hexplan/hw/presets.h"
#include "hexplan/tp/llm_tp.h"
#include "hexplan/tp/pipeline.h"
#include "hexplan/tp/serving.h"
#include "hexplan/tp/tp_compare.h"
#include "hexplan/tp/tp_report.h"
#include "hexplan/tp/tp_system.h"

namespace hx::cli {
namespace {

struct TpArgs {
  std::string model;       // MODEL (positional)
  std::string model_flag;  // --model, its alias
  std::string cluster;
  std::string algo = "asymgroup";
  std::string group_algo = "optimized";
  std::string time_preset = "paper";
  std::string engine = "eager";
  std::string all_reduce = "nccl";
  std::string dtype = "fp16";
  int groups = 0;
  int64_t batch = 200;
  int64_t input_len = 128;
  int64_t output_len = 128;
  bool json = false;
  bool no_plan = false;
  bool ignore_memory = false;
  bool paper_volume = false;
  bool compare = false;
  double rate = 0.0;  // --rate: requests per second (0 = no serving simulation)
  int requests = 200;
  std::string pp;  // "", "auto" or a stage count
  int micro_batches = 0;
  bool paper_groups = false;
  std::string report;
};

// The dtypes the time model has FLOP rates for (hw::DeviceSpec: fp32, fp16, bf16), by the names
// PeakFlopsFor takes ("half" -> "fp16").
StatusOr<std::string> CanonicalDtype(const std::string& dtype) {
  auto dt = graph::ParseDType(dtype);
  if (dt && *dt == graph::DType::kF16) return std::string("fp16");
  if (dt && *dt == graph::DType::kBF16) return std::string("bf16");
  if (dt && *dt == graph::DType::kF32) return std::string("fp32");
  return InvalidArgument("--dtype '" + dtype +
                         "': tp models fp16, bf16 and fp32 only (the device table has no FLOP "
                         "rate for other types and quantised kernels are not modelled)");
}

StatusOr<tp::LlmShape> LoadShape(const std::string& model, const std::string& dtype) {
  auto config = graph::ZooTransformerConfig(model);
  if (!config)
    return NotFound("model '" + model +
                    "' is not a transformer of the zoo (`hexplan models` lists them; e.g. "
                    "gpt3-175b, mt-nlg-530b)");
  if (!config->decoder)
    return InvalidArgument("model '" + model +
                           "' is an encoder: it generates no tokens, and tp plans the prefill and "
                           "decode of decoder LLMs");
  HX_RETURN_IF_ERROR(CanonicalDtype(dtype).status());
  auto attention = graph::ZooAttention(model);
  return tp::ShapeFromConfig(model, *config, graph::DTypeSize(*graph::ParseDType(dtype)),
                             attention ? &*attention : nullptr);
}

StatusOr<tp::TpOptions> MakeOptions(const TpArgs& a) {
  tp::TpOptions o;
  HX_ASSIGN_OR_RETURN(o.method, tp::ParseTpMethod(a.algo));
  o.groups = a.groups;
  HX_ASSIGN_OR_RETURN(o.grouping.algo, tp::ParseGroupAlgo(a.group_algo));
  HX_ASSIGN_OR_RETURN(o.time, tp::TimePreset(a.time_preset));
  HX_ASSIGN_OR_RETURN(o.time.engine, tp::ParseTpEngine(a.engine));
  HX_ASSIGN_OR_RETURN(o.time.all_reduce, tp::ParseTpAllReduce(a.all_reduce));
  o.check_memory = !a.ignore_memory;
  o.paper_volume_accounting = a.paper_volume;
  o.best_of_layouts = !a.paper_groups;
  HX_RETURN_IF_ERROR(o.Validate());
  return o;
}

std::string Pct(double v) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.1f%%", 100 * v);
  return b;
}
// `fmt` for ordinary values; scientific notation from kFixedLimit up (FormatNumber).
std::string F(double v, const char* fmt = "%.3f") {
  char b[64];
  std::snprintf(b, sizeof(b), std::isfinite(v) && std::fabs(v) >= kFixedLimit ? "%.3e" : fmt, v);
  return b;
}

// Figs. 8 and 9: writes fig8_volume.svg, fig9_<model>_<out>.svg and report.md under `dir`.
Status WriteReport(const TpArgs& args, const std::string& dir, OutputFiles* outputs) {
  std::ostringstream md;
  // Fig. 8: volume per node count, paper accounting (every collective moves b*h).
  HX_ASSIGN_OR_RETURN(auto rows, tp::NodeCountVolumeSweep(64));
  tp::ChartSpec fig8;
  fig8.title = "Communication volume per linear layer, 1-64 one-GPU nodes";
  fig8.x_label = "nodes";
  fig8.y_label = "fraction of the activation b*h (bottleneck node)";
  tp::ChartSeries meg{"Megatron", {}}, aut{"AutoDDL", {}}, asy{"AsymGroup", {}},
      ide{"ideal sqrt(n)", {}};
  double red_meg = 0, red_aut = 0, aut_meg = 0;
  int count = 0;
  md << "### Fig. 8: communication volume, one GPU per node\n\n"
     << "| nodes | Megatron | AutoDDL (k) | AsymGroup (k) | ideal | AsymGroup vs Megatron | "
        "AsymGroup vs AutoDDL |\n"
     << "|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& r : rows) {
    fig8.x.push_back(std::to_string(r.nodes));
    meg.y.push_back(r.megatron);
    aut.y.push_back(r.autoddl);
    asy.y.push_back(r.asymgroup);
    ide.y.push_back(r.ideal);
    if (r.nodes >= 2) {
      red_meg += 1 - r.asymgroup / r.megatron;
      red_aut += 1 - r.asymgroup / r.autoddl;
      aut_meg += 1 - r.autoddl / r.megatron;
      ++count;
    }
    if (r.nodes <= 8 || r.nodes % 8 == 0 || r.nodes == 37 || r.nodes == 38)
      md << "| " << r.nodes << " | " << F(r.megatron) << " | " << F(r.autoddl) << " ("
         << r.autoddl_k << ") | " << F(r.asymgroup) << " (" << r.asym_k << ") | " << F(r.ideal)
         << " | " << (r.nodes >= 2 ? Pct(1 - r.asymgroup / r.megatron) : "-") << " | "
         << (r.nodes >= 2 ? Pct(1 - r.asymgroup / r.autoddl) : "-") << " |\n";
  }
  fig8.series = {meg, aut, asy, ide};
  HX_RETURN_IF_ERROR(outputs->Stage(dir + "/fig8_volume.svg", tp::RenderChartSvg(fig8)));
  md << "\nMean over 2..64 nodes: AsymGroup " << Pct(red_meg / count)
     << " below Megatron (paper: 63.5%), " << Pct(red_aut / count)
     << " below AutoDDL (paper: 33.4%); AutoDDL " << Pct(aut_meg / count)
     << " below Megatron (paper: 45.1%).\n\n";

  // Fig. 9: S0..S16 latency per method.
  HX_ASSIGN_OR_RETURN(tp::TpOptions base, MakeOptions(args));
  base.check_memory = false;  // the paper's configurations exceed A100 memory; reported below
  for (const char* model : {"gpt3-175b", "mt-nlg-530b"}) {
    HX_ASSIGN_OR_RETURN(tp::LlmShape shape, LoadShape(model, args.dtype));
    for (int64_t out : {128, 512, 2048}) {
      tp::LlmWorkload wl;
      wl.batch = args.batch;
      wl.input_len = args.input_len;
      wl.output_len = out;
      tp::ChartSpec chart;
      chart.title = std::string(model) + ", output " + std::to_string(out) +
                    ": latency normalised to Megatron";
      chart.x_label = "system (Table 1)";
      chart.y_label = "total latency / Megatron";
      chart.bars = true;
      tp::ChartSeries s_aut{"AutoDDL", {}}, s_asy{"AsymGroup", {}};
      md << "### Fig. 9: " << model << ", batch " << wl.batch << ", input " << wl.input_len
         << ", output " << out << "\n\n"
         << "| system | GPUs | fits memory | Megatron total s | AutoDDL / Megatron | AsymGroup / "
            "Megatron (k) "
            "| AsymGroup vs AutoDDL | per-token ms (Meg / Auto / Asym) | decode volume GB/token "
            "(Meg / Auto / Asym) | paper's AsymGroup / Megatron (k) |\n"
         << "|---|---:|---|---:|---:|---:|---:|---|---|---:|\n";
      for (int s = 0; s <= 16; s += 2) {
        std::string name = "asym:S" + std::to_string(s);
        HX_ASSIGN_OR_RETURN(hw::Cluster cluster, hw::LoadCluster(name, &CliLogger()));
        HX_ASSIGN_OR_RETURN(tp::TpSystem sys, tp::TpSystemFromCluster(cluster, args.dtype));
        tp::TpResult res[4];
        tp::TpMethod methods[3] = {tp::TpMethod::kMegatron, tp::TpMethod::kAutoDdl,
                                   tp::TpMethod::kAsymGroup};
        for (int m = 0; m < 3; ++m) {
          tp::TpOptions o = base;
          o.method = methods[m];
          o.groups = 0;
          HX_ASSIGN_OR_RETURN(res[m], tp::PlanTensorParallel(sys, shape, wl, o));
        }
        tp::TpOptions paper = base;
        paper.best_of_layouts = false;
        HX_ASSIGN_OR_RETURN(res[3], tp::PlanTensorParallel(sys, shape, wl, paper));
        bool fits = res[0].memory_needed_bytes <= static_cast<double>(sys.MemoryBytes());
        chart.x.push_back("S" + std::to_string(s));
        s_aut.y.push_back(res[1].total_s() / res[0].total_s());
        s_asy.y.push_back(res[2].total_s() / res[0].total_s());
        md << "| S" << s << " | " << sys.NumGpus() << " | " << (fits ? "yes" : "no") << " | "
           << F(res[0].total_s(), "%.2f") << " | " << F(res[1].total_s() / res[0].total_s())
           << " | " << F(res[2].total_s() / res[0].total_s()) << " (" << res[2].k
           << (res[2].reduced() ? std::string(", ") + tp::TpMethodName(res[2].layout) : "")
           << ") | " << Pct(1 - res[2].total_s() / res[1].total_s()) << " | "
           << F(res[0].per_token_s * 1e3, "%.1f") << " / " << F(res[1].per_token_s * 1e3, "%.1f")
           << " / " << F(res[2].per_token_s * 1e3, "%.1f") << " | "
           << F(res[0].comm_volume_bytes / 1e9, "%.2f") << " / "
           << F(res[1].comm_volume_bytes / 1e9, "%.2f") << " / "
           << F(res[2].comm_volume_bytes / 1e9, "%.2f") << " | "
           << F(res[3].total_s() / res[0].total_s()) << " (" << res[3].k << ") |\n";
      }
      md << "\n";
      chart.series = {s_aut, s_asy};
      chart.y_min = 0.0;
      HX_RETURN_IF_ERROR(outputs->Stage(dir + "/fig9_" + model + "_" + std::to_string(out) + ".svg",
                                        tp::RenderChartSvg(chart)));
    }
  }
  HX_RETURN_IF_ERROR(outputs->Stage(dir + "/report.md", md.str()));
  return CommitOutputs(*outputs);
}

void PrintResult(const TpArgs& args, const tp::TpSystem& sys, const tp::TpResult& r) {
  std::printf("%s on %s (%zu nodes, %d GPUs) with %s: k = %d\n", args.model.c_str(),
              sys.name.c_str(), sys.nodes.size(), sys.NumGpus(), args.algo.c_str(), r.k);
  if (r.reduced())
    std::printf(
        "  reduced to %s's layout: faster than every AsymGroup grouping here (the "
        "paper's grouping: %.1f ms total)\n",
        tp::TpMethodName(r.layout), r.paper_asymgroup_total_s * 1e3);
  for (size_t t = 0; t < r.grouping.groups.size(); ++t) {
    double cap = 0;
    std::printf("  group %zu:", t);
    for (int n : r.grouping.groups[t]) {
      std::printf(" %s", sys.nodes[n].name.c_str());
      cap += sys.nodes[n].capability;
    }
    std::printf("  (capability %.3g)\n", cap);
  }
  if (r.volume_only) {
    std::printf(
        "comm volume per output token: %s between nodes (bottleneck node), %s in prefill\n"
        "ideal is the eq. 1 bound with k = sqrt(N): a volume, with no plan and no times\n",
        tp::FormatBytes(r.comm_volume_bytes).c_str(),
        tp::FormatBytes(r.comm_volume_prefill_bytes).c_str());
    return;
  }
  std::printf(
      "comm volume per output token: %s between nodes (bottleneck node), %s over NVLink "
      "(busiest GPU); prefill: %s between nodes, %s over NVLink\n",
      tp::FormatBytes(r.comm_volume_bytes).c_str(),
      tp::FormatBytes(r.comm_volume_intra_bytes).c_str(),
      tp::FormatBytes(r.comm_volume_prefill_bytes).c_str(),
      tp::FormatBytes(r.comm_volume_intra_prefill_bytes).c_str());
  std::printf(
      "latency: %.3f ms per output token; prefill %.1f ms (compute %.1f, comm %.1f); "
      "decode %.1f ms (compute %.1f, comm %.1f); total %.1f ms\n",
      r.per_token_s * 1e3, r.prefill_s * 1e3, r.prefill_compute_s * 1e3, r.prefill_comm_s * 1e3,
      r.decode_s * 1e3, r.decode_compute_s * 1e3, r.decode_comm_s * 1e3, r.total_s() * 1e3);
  std::printf("memory: %s on the fullest GPU\n",
              tp::FormatBytes(r.memory_per_gpu_max_bytes).c_str());
}

Status ResolveModel(TpArgs* args) {
  if (!args->model_flag.empty() && !args->model.empty() && args->model_flag != args->model)
    return InvalidArgument("MODEL '" + args->model + "' and --model '" + args->model_flag +
                           "' differ; give one");
  if (args->model.empty()) args->model = args->model_flag;
  if (args->model.empty())
    return InvalidArgument("MODEL is required (e.g. `hexplan tp gpt3-175b`)");
  if (args->cluster.empty()) return InvalidArgument("--cluster is required");
  HX_ASSIGN_OR_RETURN(args->dtype, CanonicalDtype(args->dtype));
  return Status::Ok();
}

int RunReport(const TpArgs& args) {
  OutputFiles outputs;
  Status s = outputs.ExpectDirectory("--report", args.report);
  if (s.ok()) s = WriteReport(args, args.report, &outputs);
  if (!s.ok()) return ReportError(s);
  std::printf("wrote %s/report.md and SVG charts\n", args.report.c_str());
  return 0;
}

StatusOr<tp::PipelineOptions> PipelineArgs(const TpArgs& args) {
  tp::PipelineOptions o;
  o.micro_batches = args.micro_batches;
  if (args.pp != "auto") {
    char* end = nullptr;
    long v = std::strtol(args.pp.c_str(), &end, 10);
    if (args.pp.empty() || *end != '\0' || v < 1 || v > 4096)
      return InvalidArgument("--pp '" + args.pp +
                             "': expected 'auto' or a stage count in [1, 4096]");
    o.stages = static_cast<int>(v);
  }
  HX_RETURN_IF_ERROR(o.Validate());
  return o;
}

void PrintPipeline(const tp::TpSystem& sys, const tp::PipelineResult& r) {
  std::printf("%zu pipeline stage%s, %d micro-batch%s:\n", r.stages.size(),
              r.stages.size() == 1 ? "" : "s", r.micro_batches, r.micro_batches == 1 ? "" : "es");
  for (size_t s = 0; s < r.stages.size(); ++s) {
    const auto& st = r.stages[s];
    const char* ends = st.embedding && st.lm_head ? " + embedding, LM head"
                       : st.embedding             ? " + embedding"
                       : st.lm_head               ? " + LM head"
                                                  : "";
    std::printf("  stage %zu: layers %lld-%lld (%lld of at most %lld)%s, nodes", s,
                static_cast<long long>(st.layer_begin), static_cast<long long>(st.layer_end - 1),
                static_cast<long long>(st.layer_end - st.layer_begin),
                static_cast<long long>(st.max_layers), ends);
    for (int n : st.nodes) std::printf(" %s", sys.nodes[n].name.c_str());
    std::printf(
        " (capability %.3g), %s k = %d%s, %s on the fullest GPU\n", st.capability,
        tp::TpMethodName(st.tp.method), st.tp.k,
        st.tp.reduced() ? (std::string(" as ") + tp::TpMethodName(st.tp.layout)).c_str() : "",
        tp::FormatBytes(st.tp.memory_per_gpu_max_bytes).c_str());
  }
  std::printf(
      "latency: TTFT %.1f ms, TPOT %.3f ms, decode %.1f ms, total %.1f ms; decode bubbles %.1f%%\n",
      r.prefill_s * 1e3, r.step_s * 1e3, r.decode_s * 1e3, r.total_s() * 1e3,
      100 * r.bubble_fraction);
}

int RunPipeline(const TpArgs& args, const tp::TpSystem& sys, const tp::LlmShape& shape,
                const tp::LlmWorkload& wl, const tp::TpOptions& options) {
  auto pp = PipelineArgs(args);
  if (!pp.ok()) return ReportError(pp.status());
  auto r = tp::PlanPipeline(sys, shape, wl, options, *pp);
  if (!r.ok()) return ReportError(r.status());
  if (args.json)
    std::printf("%s\n", tp::PipelineToJson(*r, sys, shape, wl).c_str());
  else
    PrintPipeline(sys, *r);
  return 0;
}

int RunCompare(const TpArgs& args, const tp::TpSystem& sys, const tp::LlmShape& shape,
               const tp::LlmWorkload& wl, const tp::TpOptions& options) {
  tp::TpComparison c = tp::CompareMethods(sys, shape, wl, options);
  if (c.winner < 0) return ReportError(c.results[2].status());
  if (args.rate != 0.0) {
    tp::ServingOptions so;
    so.rate = args.rate;
    so.requests = args.requests;
    if (Status s = tp::AddServing(c, sys, shape, wl, options, so); !s.ok()) return ReportError(s);
  }
  if (args.json) {
    std::printf("%s\n", tp::TpComparisonToJson(c, sys, shape, wl).c_str());
    return 0;
  }
  std::printf("%s on %s (%zu nodes, %d GPUs), batch %lld, input %lld, output %lld:\n%s",
              args.model.c_str(), sys.name.c_str(), sys.nodes.size(), sys.NumGpus(),
              static_cast<long long>(wl.batch), static_cast<long long>(wl.input_len),
              static_cast<long long>(wl.output_len), tp::ComparisonTable(c).c_str());
  for (size_t i = 0; i < c.serving.size(); ++i)
    if (c.serving[i])
      std::printf("  %-10s %s\n", tp::TpMethodName(c.methods[i]),
                  tp::ServingLine(*c.serving[i], args.rate).c_str());
  return 0;
}

int RunTp(TpArgs args) {
  if (!args.report.empty()) return RunReport(args);
  if (Status s = ResolveModel(&args); !s.ok()) return ReportError(s);
  auto shape = LoadShape(args.model, args.dtype);
  if (!shape.ok()) return ReportError(shape.status());
  auto options = MakeOptions(args);
  if (!options.ok()) return ReportError(options.status());
  auto cluster = hw::LoadCluster(args.cluster, &CliLogger());
  if (!cluster.ok()) return ReportError(cluster.status());
  auto sys = tp::TpSystemFromCluster(*cluster, args.dtype);
  if (!sys.ok()) return ReportError(sys.status().WithContext("--cluster " + args.cluster));
  if (options->time.all_reduce == tp::TpAllReduce::kCustom && !args.compare) {
    const std::string gap = tp::CustomAllReduceGap(*sys, options->method);
    if (!gap.empty()) CliLogger().Log(LogLevel::kWarning, "--all-reduce custom: " + gap);
  }
  tp::LlmWorkload wl;
  wl.batch = args.batch;
  wl.input_len = args.input_len;
  wl.output_len = args.output_len;
  if (!args.pp.empty()) return RunPipeline(args, *sys, *shape, wl, *options);
  if (args.compare) return RunCompare(args, *sys, *shape, wl, *options);
  auto result = tp::PlanTensorParallel(*sys, *shape, wl, *options);
  if (!result.ok()) return ReportError(result.status());
  std::optional<tp::ServingResult> serving;
  if (args.rate != 0.0 && !result->volume_only) {
    tp::ServingOptions so;
    so.rate = args.rate;
    so.requests = args.requests;
    auto s = tp::SimulateServing(*sys, *shape, wl, *options, so);
    if (!s.ok()) return ReportError(s.status());
    serving = *s;
  }
  if (args.json) {
    std::printf("%s\n", tp::TpResultToJson(*result, *sys, *shape, wl, !args.no_plan,
                                           serving ? &*serving : nullptr, args.rate)
                            .c_str());
  } else {
    PrintResult(args, *sys, *result);
    if (serving) std::printf("serving %s\n", tp::ServingLine(*serving, args.rate).c_str());
  }
  return 0;
}

// The --help footer: every method and grouping algorithm with its one-line description.
std::string MethodsFooter() {
  std::string text = "Methods (--algo):";
  char line[200];
  for (const auto& m : tp::TpMethods()) {
    std::snprintf(line, sizeof(line), "\n  %-10s %s", m.name.c_str(), m.description.c_str());
    text += line;
  }
  text += "\nGrouping algorithms (--group-algo):";
  for (const auto& g : tp::GroupAlgos()) {
    std::snprintf(line, sizeof(line), "\n  %-10s %s", g.name.c_str(), g.description.c_str());
    text += line;
  }
  return text;
}

}  // namespace

Command AddTpCommand(CLI::App& root) {
  auto* app = root.add_subcommand(
      "tp", "tensor-parallel LLM inference on asymmetric clusters (AsymGroup and baselines)");
  auto args = std::make_shared<TpArgs>();
  app->add_option("MODEL", args->model, "zoo transformer (gpt3-175b, mt-nlg-530b, ...)");
  app->add_option("--model", args->model_flag, "the same as MODEL");
  app->add_option("--cluster", args->cluster,
                  "cluster preset or file (asym:S8, asym:nodes=38, ...)");
  app->add_option("--algo", args->algo, "the method: " + tp::TpMethodRegistry().NameList());
  app->add_option("--groups", args->groups, "number of groups k (0 = automatic)");
  app->add_option("--group-algo", args->group_algo,
                  "the grouping algorithm: " + tp::GroupAlgoRegistry().NameList());
  app->add_option(
      "--time-preset", args->time_preset,
      "per-step latency: paper | nccl | calibrated (nccl, kernels on the cost layer's fits)");
  app->add_option("--engine", args->engine,
                  "how kernels run: eager (one per operator, host launch on the critical path) | "
                  "fused (TensorRT-LLM/FasterTransformer: fused attention, asynchronous launch)");
  app->add_option("--all-reduce", args->all_reduce,
                  "the one-node all-reduce: nccl | custom (the engine's own kernel, as "
                  "TensorRT-LLM and vLLM run small all-reduces; needs --time-preset calibrated)")
      ->capture_default_str();
  app->add_option("--batch", args->batch, "batch size (sequences)");
  app->add_option("--input-len", args->input_len, "prompt tokens");
  app->add_option("--output-len", args->output_len, "generated tokens");
  app->add_option("--dtype", args->dtype, "fp16 | bf16 | fp32 (others exit 2)");
  auto* compare =
      app->add_flag("--compare", args->compare,
                    "every method side by side: time to first token, time per output token, total, "
                    "memory, volume; the fastest marked");
  app->add_option(
      "--rate", args->rate,
      "also simulate serving: Poisson arrivals of R requests/s of the workload's "
      "lengths, continuous batching up to --batch; prints TTFT/TPOT/latency p50 and p99");
  app->add_option("--requests", args->requests, "with --rate: requests simulated (default 200)");
  app->add_option("--pp", args->pp,
                  "pipeline stages over the nodes: auto (the fastest count) or N; each stage runs "
                  "--algo over its nodes")
      ->excludes(compare);  // the comparison is of one-stage layouts
  app->add_option("--micro-batches", args->micro_batches,
                  "with --pp: micro-batches (0 = one per stage)");
  app->add_flag("--paper-groups", args->paper_groups,
                "asymgroup: keep the paper's grouping even where a baseline's layout is faster");
  app->add_flag("--json", args->json, "print JSON (groups, comm_volume_bytes, latency_ms, plan)");
  app->add_flag("--no-plan", args->no_plan, "omit the per-node plan from --json");
  app->add_flag("--ignore-memory", args->ignore_memory,
                "do not require weights + KV cache to fit GPU memory (the paper's setups do not)");
  app->add_flag("--paper-volume", args->paper_volume,
                "count every collective as b*h as the paper's eq. 1 does (volume and time)");
  auto* report = app->add_option(
      "--report", args->report,
      "write the paper's Fig. 8/9 sweeps (markdown + SVG) into DIR: GPT-3 175B and MT-NLG 530B on "
      "asym:S0-S16, every method; takes --batch, --input-len, --dtype and the time options, not a "
      "MODEL, --cluster or a method's options");
  // The sweep fixes its models, clusters and methods: an option it would ignore is an error.
  for (const char* ignored : {"MODEL", "--model", "--cluster", "--algo", "--groups", "--compare",
                              "--rate", "--requests", "--pp", "--micro-batches", "--paper-groups",
                              "--json", "--no-plan", "--ignore-memory", "--output-len"})
    report->excludes(app->get_option(ignored));
  app->footer(MethodsFooter());
  return {app, [args]() { return RunTp(*args); }};
}

}  // namespace hx::cli
