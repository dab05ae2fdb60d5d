// `efficientmip`: EfficientMIP's latency model and IP (Tarnawski et al., NeurIPS 2020) as a planner
// on any graph and cluster: accelerators = the cluster's GPUs, CPUs = its CPU devices, transfers
// priced through host memory. Warm-started from the paper's greedy and from HEFT's placement cut
// into contiguous pieces; the plan runs each subgraph back to back on its GPU.

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "hexplan/core/stopwatch.h"
#include "hexplan/place/efficientmip/efficientmip.h"
#include "hexplan/place/exact/exact_planner.h"
#include "hexplan/place/list/list_scheduling.h"
#include "hexplan/place/problem_builder.h"
#include "hexplan/plan/plan_builder.h"
#include "hexplan/plan/validator.h"
#include "place/builtin_planners.h"
#include "place/efficientmip/efficientmip_internal.h"
#include "place/format_units.h"

namespace hx::place {
namespace {

// HEFT's placement in EfficientMIP's terms (its per-device sets cut into contiguous pieces).
std::optional<EfficientMipSplit> HeftWarmStart(const EfficientMipInstance& inst,
                                               const cost::CostModel& cost) {
  auto problem = BuildGraphProblem(cost);
  if (!problem.ok()) return std::nullopt;
  auto schedule = ScheduleHeft(problem->problem);
  if (!schedule.ok()) return std::nullopt;
  std::map<uint32_t, int> acc_index;
  for (size_t i = 0; i < inst.accelerator_devices.size(); ++i)
    acc_index[inst.accelerator_devices[i].value()] = static_cast<int>(i);
  std::vector<int> node_index(cost.graph().num_nodes(), -1);
  for (int v = 0; v < inst.num_nodes(); ++v) node_index[inst.graph_nodes[v].index()] = v;
  std::vector<int> device(inst.num_nodes(), EfficientMipSplit::kCpu);
  for (size_t t = 0; t < problem->task_node.size(); ++t) {
    const int v = node_index[problem->task_node[t].index()];
    if (v < 0) continue;
    const DeviceId d = problem->devices[schedule->device[t]];
    auto it = acc_index.find(d.value());
    device[v] = it == acc_index.end() ? EfficientMipSplit::kCpu : it->second;
  }
  return efficientmip_internal::SplitFromDevices(inst, device);
}

// The plan: each accelerator runs its subgraphs in the split's order, each subgraph's ops in a
// topological order; CPU ops are spread over the CPU devices (earliest free first) in the order
// the model starts them.
StatusOr<plan::Plan> PlanFromSplit(const EfficientMipInstance& inst, const EfficientMipSplit& split,
                                   const cost::CostModel& cost) {
  efficientmip_internal::SplitTimes times;
  EfficientMipEvalOptions eval;
  std::string error;
  const double latency = efficientmip_internal::SplitLatency(inst, split, eval, &error, &times);
  if (!std::isfinite(latency)) return Internal("efficientmip: invalid split: " + error);
  const std::vector<int> order = efficientmip_internal::NodeOrder(inst);
  plan::Plan p;
  std::map<uint32_t, size_t> schedule_of;  // device -> index in p.devices
  auto schedule = [&](DeviceId d) -> plan::DeviceSchedule& {
    auto [it, fresh] = schedule_of.emplace(d.value(), p.devices.size());
    if (fresh) p.devices.push_back({d, {}});
    return p.devices[it->second];
  };
  for (int s = 0; s < split.num_subgraphs(); ++s) {
    plan::Subgraph sg;
    for (int v : order)
      if (split.subgraph_of[v] == s) sg.ops.push_back(inst.graph_nodes[v]);
    schedule(inst.accelerator_devices[split.subgraph_device[s]]).subgraphs.push_back(std::move(sg));
  }
  std::vector<int> cpu_nodes;
  for (int v : order)
    if (split.subgraph_of[v] == EfficientMipSplit::kCpu) cpu_nodes.push_back(v);
  std::stable_sort(cpu_nodes.begin(), cpu_nodes.end(),
                   [&](int a, int b) { return times.node_rank[a] < times.node_rank[b]; });
  if (!cpu_nodes.empty()) {
    if (inst.cpu_devices.empty()) return Internal("efficientmip: CPU nodes but no CPU device");
    std::vector<double> free_at(inst.cpu_devices.size(), 0.0);
    for (int v : cpu_nodes) {
      const double start = times.node_finish[v] - inst.cpu_latency_s[v];
      size_t pick = 0;
      for (size_t c = 1; c < free_at.size(); ++c)
        if (std::max(free_at[c], start) < std::max(free_at[pick], start)) pick = c;
      free_at[pick] = std::max(free_at[pick], start) + inst.cpu_latency_s[v];
      schedule(inst.cpu_devices[pick]).subgraphs.push_back(plan::Subgraph{{inst.graph_nodes[v]}});
    }
  }
  HX_RETURN_IF_ERROR(plan::CompleteTransfers(p, cost.graph(), cost.cluster()));
  p.estimate_ms = latency * 1e3;
  return p;
}

// A split that passes hexplan's memory check, with its plan and the instance tightened to it.
struct FittedSplit {
  plan::Plan plan;
  EfficientMipSolveResult solved;
};

class EfficientMipPlanner final : public ExactPlanner {
 public:
  std::string Name() const override { return "efficientmip"; }
  std::string Description() const override {
    return "EfficientMIP's latency IP (contiguous subgraphs, q per GPU, transfers through host "
           "memory) on CBC, warm-started from its greedy, a DP and HEFT";
  }

 protected:
  std::vector<OptionSpec> ModelOptions() const override {
    return {IntOption("q", "subgraphs per accelerator in the IP (the paper's q)", 6, 1, 64)};
  }

  StatusOr<ExactAnswer> SolveModel(const PlanRequest& request, const OptionSet& opts,
                                   const MilpSettings& settings) override {
    const cost::CostModel& cost = *request.cost;
    HX_ASSIGN_OR_RETURN(EfficientMipInstance inst, EfficientMipInstanceFromCostModel(cost));
    Stopwatch watch;
    EfficientMipSolveOptions options;
    options.relative_gap = settings.relative_gap;
    options.threads = settings.threads;
    options.seed = request.options.seed;
    options.subgraphs_per_device = static_cast<int>(opts.Int("q"));
    options.on_progress = settings.on_progress;
    if (request.options.warm_start) {
      if (auto heft = HeftWarmStart(inst, cost)) {
        options.warm_starts.push_back(*heft);
        options.warm_start_names.push_back("heft");
      }
    }
    const int64_t stated_memory = inst.accelerator_memory_bytes;
    HX_ASSIGN_OR_RETURN(FittedSplit fitted,
                        FitToMemory(request, options, settings.time_limit_s, &inst));

    options.time_limit_s = std::max(0.1, settings.time_limit_s - watch.ElapsedSeconds());
    options.export_lp_path = settings.export_lp;
    options.export_mps_path = settings.export_mps;
    options.solution_path = settings.solution_path;
    options.warm_starts.push_back(fitted.solved.split);
    options.warm_start_names.push_back("fitted " + fitted.solved.source);
    HX_ASSIGN_OR_RETURN(EfficientMipSolveResult solved,
                        SolveEfficientMip(inst, options, request.logger));
    HX_ASSIGN_OR_RETURN(plan::Plan p, PlanFromSplit(inst, solved.split, cost));
    EfficientMipInstance check = inst;
    std::string ignored;
    if (Refit(check, p, cost, request.logger, &ignored)) {
      LogTo(request.logger, LogLevel::kInfo,
            "efficientmip: the solver's split overflows memory once activations are counted; "
            "keeping the heuristic split that fits");
      solved = fitted.solved;
      solved.status = PlanStatus::kWarmStart;
      p = fitted.plan;
    }
    ExactAnswer answer;
    answer.plan = std::move(p);
    answer.status = solved.status;
    answer.model_objective_s = solved.latency_s;
    answer.bound_s = solved.bound_s;
    answer.gap = solved.gap;
    answer.detail = Detail(inst, solved, options.subgraphs_per_device, stated_memory);
    answer.from_solution_file = !settings.solution_path.empty();
    answer.warm_plans.push_back(
        {"fitted " + fitted.solved.source, std::move(fitted.plan), fitted.solved.latency_s});
    return answer;
  }

 private:
  // hexplan's memory check is stricter than EfficientMIP's sum of node sizes (activations in
  // flight count too, and a cluster's CPUs may have no stated memory): fit the model to it with
  // quick heuristic solves, shrinking the accelerator memory by the overflow or giving up the
  // CPUs, before the full solve.
  static StatusOr<FittedSplit> FitToMemory(const PlanRequest& request,
                                           const EfficientMipSolveOptions& options,
                                           double time_limit_s, EfficientMipInstance* inst) {
    const cost::CostModel& cost = *request.cost;
    std::string overflow;  // the last memory shortfall, for the error
    for (int attempt = 0; attempt < 6; ++attempt) {
      EfficientMipSolveOptions quick = options;
      quick.use_milp = false;
      quick.time_limit_s = std::max(0.2, std::min(5.0, time_limit_s * 0.1));
      auto solved = SolveEfficientMip(*inst, quick);
      if (!solved.ok()) {
        if (overflow.empty()) return solved.status();
        return ResourceExhausted("efficientmip: no split of '" + cost.graph().name() +
                                 "' passes hexplan's memory check (it counts activations as "
                                 "well as EfficientMIP's node sizes): " +
                                 overflow);
      }
      HX_ASSIGN_OR_RETURN(plan::Plan p, PlanFromSplit(*inst, solved->split, cost));
      if (!Refit(*inst, p, cost, request.logger, &overflow))
        return FittedSplit{std::move(p), std::move(*solved)};
    }
    return ResourceExhausted(
        "efficientmip: no split of '" + cost.graph().name() +
        "' fits the devices' memory once activations are counted: " + overflow);
  }

  static std::string Detail(const EfficientMipInstance& inst, const EfficientMipSolveResult& solved,
                            int q, int64_t stated_memory) {
    return "efficientmip: " + solved.source + " " + FormatMs(solved.latency_s) + " (greedy " +
           (std::isfinite(solved.greedy_latency_s) ? FormatMs(solved.greedy_latency_s)
                                                   : std::string("failed")) +
           ", q = " + std::to_string(q) +
           (inst.accelerator_memory_bytes < stated_memory
                ? ", accelerator memory taken as " + std::to_string(inst.accelerator_memory_bytes) +
                      " bytes to leave room for activations"
                : std::string()) +
           (!inst.has_cpu && !inst.cpu_devices.empty() ? ", CPUs left out" : "") + ")" +
           (solved.milp_note.empty() ? std::string() : "; MILP: " + solved.milp_note);
  }

  // Whether the plan overflows a device; if so, tightens the instance (true).
  static bool Refit(EfficientMipInstance& inst, const plan::Plan& p, const cost::CostModel& cost,
                    Logger* logger, std::string* overflow) {
    int64_t acc_overflow = 0;
    bool cpu_overflow = false;
    for (const plan::DeviceMemoryBound& m : plan::PlanMemoryBound(p, cost)) {
      if (m.total() <= m.capacity_bytes) continue;
      *overflow = cost.cluster().device(m.device).name + " needs " + std::to_string(m.total()) +
                  " bytes but has " + std::to_string(m.capacity_bytes);
      if (cost.cluster().device(m.device).kind == hw::DeviceKind::kCpu)
        cpu_overflow = true;
      else
        acc_overflow = std::max(acc_overflow, m.total() - m.capacity_bytes);
    }
    if (cpu_overflow && inst.has_cpu) {
      LogTo(logger, LogLevel::kInfo, "efficientmip: CPU memory too small; CPUs left out");
      inst.has_cpu = false;
      for (double& t : inst.cpu_latency_s) t = std::numeric_limits<double>::infinity();
    }
    if (acc_overflow > 0) {
      inst.accelerator_memory_bytes -= acc_overflow + inst.accelerator_memory_bytes / 100;
      LogTo(logger, LogLevel::kInfo,
            "efficientmip: accelerator memory for the model lowered to " +
                std::to_string(inst.accelerator_memory_bytes) + " bytes");
    }
    return cpu_overflow || acc_overflow > 0;
  }
};

}  // namespace

std::unique_ptr<Planner> MakeEfficientMipPlanner() {
  return std::make_unique<EfficientMipPlanner>();
}

}  // namespace hx::place
