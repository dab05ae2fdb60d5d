#include "hexplan/place/exact/exact_planner.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <limits>
#include <set>

#include "hexplan/core/stopwatch.h"
#include "hexplan/plan/validator.h"
#include "hexplan/sim/simulator.h"
#include "place/format_units.h"

namespace hx::place {
namespace {

// "m.lp" -> "m.2.lp" (the part's index before the extension).
std::string PartPath(const std::string& path, int index) {
  if (path.empty()) return path;
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  const std::string tag = "." + std::to_string(index);
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + tag;
  return path.substr(0, dot) + tag + path.substr(dot);
}

// The fast planners every exact planner's answer is compared with (bullet "never slower than the
// obvious plan"): each is run on the request when registered, and kept as a warm plan when it
// passes the validator.
const char* const kBaselines[] = {"single", "heft", "peft", "m-etf", "m-topo", "m-sct"};

}  // namespace

StatusOr<MilpRun> ReadMilpSolution(const milp::Model& model, const MilpSettings& settings,
                                   const std::string& planner, Logger* logger) {
  MilpRun run;
  run.kind = MilpRunKind::kFromSolution;
  HX_ASSIGN_OR_RETURN(run.result.values, milp::ReadSolutionFile(settings.solution_path, model));
  run.result.status = milp::SolveStatus::kFeasible;
  const auto violations = model.Violations(run.result.values, 1e-6);
  run.violations = violations.size();
  run.result.objective = model.Evaluate(run.result.values);
  if (violations.empty()) return run;
  std::set<std::string> groups;
  for (const auto& v : violations) groups.insert(v.group.empty() ? "bounds" : v.group);
  std::string list;
  for (const auto& g : groups) list += (list.empty() ? "" : ", ") + g;
  LogTo(logger, LogLevel::kWarning,
        planner + ": " + settings.solution_path + " violates " + std::to_string(violations.size()) +
            " bounds or constraints of the model (" + list + "; first: " + violations.front().what +
            " by " + std::to_string(violations.front().amount) +
            "); using its placement and order");
  return run;
}

std::vector<OptionSpec> ExactOptionSpecs() {
  return {
      StringOption("export-lp", "write the MILP (LP format) and go on solving", ""),
      StringOption("export-mps", "write the MILP (free MPS) and go on solving", ""),
      StringOption("solution",
                   "load a Gurobi/HiGHS/SCIP/CBC solution file of the exported MILP instead of "
                   "solving",
                   ""),
  };
}

MilpSettings MilpSettingsFor(const PlanRequest& request, const OptionSet& options,
                             double time_limit_s) {
  MilpSettings s;
  s.time_limit_s = time_limit_s;
  s.relative_gap = request.options.relative_gap;
  s.threads = request.options.threads;
  s.seed = request.options.SolverSeed();
  s.export_lp = options.String("export-lp");
  s.export_mps = options.String("export-mps");
  s.solution_path = options.String("solution");
  s.on_progress = request.on_solver_progress;
  return s;
}

StatusOr<MilpSettings> MilpSettings::ForPart(int index, int count,
                                             const std::string& planner) const {
  MilpSettings part = *this;
  if (count <= 1) return part;
  if (!solution_path.empty())
    return InvalidArgument("--solution: " + planner + " solves " + std::to_string(count) +
                           " MILPs for this request and a solution file answers one");
  part.export_lp = PartPath(export_lp, index);
  part.export_mps = PartPath(export_mps, index);
  return part;
}

Status ExportMilp(const milp::Model& model, const MilpSettings& settings) {
  if (!settings.export_lp.empty()) HX_RETURN_IF_ERROR(milp::WriteLpFile(model, settings.export_lp));
  if (!settings.export_mps.empty())
    HX_RETURN_IF_ERROR(milp::WriteMpsFile(model, settings.export_mps));
  return Status::Ok();
}

StatusOr<MilpRun> RunMilp(const milp::Model& model, std::vector<double> mip_start,
                          const MilpSettings& settings, const std::string& planner,
                          Logger* logger) {
  HX_RETURN_IF_ERROR(ExportMilp(model, settings));
  if (!settings.solution_path.empty()) return ReadMilpSolution(model, settings, planner, logger);
  milp::SolveOptions solve;
  solve.time_limit_s = settings.time_limit_s;
  solve.relative_gap = settings.relative_gap;
  solve.threads = settings.threads;
  solve.seed = settings.seed;
  solve.mip_start = std::move(mip_start);
  solve.progress_to_stderr = settings.progress_to_stderr;
  solve.on_progress = settings.on_progress;
  MilpRun run;
  HX_ASSIGN_OR_RETURN(run.result, milp::SolveWithCbc(model, solve, logger));
  return run;
}

double BaselineReserveSeconds(double time_limit_s, size_t ops) {
  const double all = static_cast<double>(std::size(kBaselines) + 1) * kBaselineSecondsPerOp *
                     static_cast<double>(ops);
  return std::min(0.25 * time_limit_s, all);
}

double TimeLeftForModel(const PlanRequest& request, double elapsed_s) {
  const double limit = request.options.time_limit_s;
  const double baselines = BaselineReserveSeconds(limit, request.graph().num_nodes());
  return std::max(0.01, limit - std::min(0.25, 0.03 * limit) - baselines - elapsed_s);
}

double BaselineBudget::Estimate() const {
  return std::max(longest_s_, kBaselineSecondsPerOp * static_cast<double>(ops_));
}

bool BaselineBudget::Admit(const std::string& name, double now_s) {
  if (now_s + Estimate() <= deadline_s_) return true;
  skipped_.push_back(name);
  return false;
}

std::string BaselineBudget::Note() const {
  if (skipped_.empty()) return "";
  std::string s = "; skipped for the time limit:";
  for (size_t i = 0; i < skipped_.size(); ++i) s += (i == 0 ? " " : ", ") + skipped_[i];
  return s;
}

namespace {

// A portfolio's plans for this request (PlanRequest::known_plans, fastest first): the fastest the
// validator accepts joins the warm plans (unless it is one already: SortingHat's warm starts);
// returns the names of them all, whose baselines are not planned again (the portfolio has
// compared their plans already).
std::set<std::string> AddKnownPlans(const PlanRequest& request, ExactAnswer* answer) {
  std::set<std::string> names;
  if (request.known_plans == nullptr) return names;
  const size_t n = request.graph().num_nodes();
  bool added = false;
  for (const KnownPlan& k : *request.known_plans) {
    names.insert(k.planner);
    if (added || !plan::CheckPlan(k.plan, *request.cost, k.planner).ok()) continue;
    added = true;
    const std::vector<DeviceId> devices = k.plan.OpDevices(n);
    const bool there = std::any_of(
        answer->warm_plans.begin(), answer->warm_plans.end(),
        [&](const WarmPlan& w) { return w.name == k.planner && w.plan.OpDevices(n) == devices; });
    if (!there) answer->warm_plans.push_back({k.planner, k.plan, std::nullopt});
  }
  return names;
}

// The baselines not yet among the warm plans, each while `budget` admits it (its start on
// `clock`), with the time left as its limit.
void AddBaselinePlans(const PlanRequest& request, const std::string& self, const Stopwatch& clock,
                      BaselineBudget* budget, ExactAnswer* answer) {
  const std::vector<std::string> names = PlannerNames();
  // Without a plan the validator accepts, the baselines run whatever the clock says: one of them
  // may be the only valid plan (HEFT's with its memory feedback on swin-6.6b, where the warm start
  // and the model's plan overflow).
  bool have_valid =
      !answer->plan.devices.empty() && plan::CheckPlan(answer->plan, *request.cost, self).ok();
  for (const WarmPlan& w : answer->warm_plans)
    have_valid = have_valid || plan::CheckPlan(w.plan, *request.cost, w.name).ok();
  const std::set<std::string> known = AddKnownPlans(request, answer);
  have_valid = have_valid || !known.empty();
  for (const char* name : kBaselines) {
    if (name == self || known.count(name) ||
        std::find(names.begin(), names.end(), name) == names.end())
      continue;
    bool have = false;  // a warm start of that name the validator accepts (warm starts skip the
                        // memory feedback of the planner of that name, so they may not)
    for (const WarmPlan& w : answer->warm_plans)
      have = have || (w.name == name && plan::CheckPlan(w.plan, *request.cost, name).ok());
    if (have) continue;
    const double start = clock.ElapsedSeconds();
    // `single` always runs: it is cheap (one device, no search) and the plan an exact planner
    // must never lose to (GETF's 60 s MILP on MOIRAI's Transformer left no time for it: 113.8 ms
    // against one device's 22.7).
    const bool always = std::string(name) == "single";
    if (have_valid && !always && !budget->Admit(name, start)) continue;
    auto planner = MakePlanner(name);
    if (!planner.ok()) continue;
    PlanRequest sub = request;
    // Without a valid plan yet, a baseline gets the whole limit (its memory retries stop there).
    sub.options.time_limit_s = have_valid ? std::max(1e-3, request.options.time_limit_s - start)
                                          : request.options.time_limit_s;
    sub.planner_options = request.planner_options.Restrict((*planner)->Options());
    auto r = (*planner)->Plan(sub);
    const bool valid = r.ok() && plan::CheckPlan(r->plan, *request.cost, name).ok();
    budget->Ran(clock.ElapsedSeconds() - start);
    have_valid = have_valid || valid;
    if (valid) answer->warm_plans.push_back({name, std::move(r->plan), std::nullopt});
  }
}

// When the model finds no plan within memory (its own memory model can be stricter than the
// validator's): the fastest valid baseline plan, with status warm_start, else `why`.
StatusOr<ExactAnswer> BaselineAnswer(const PlanRequest& request, const std::string& self,
                                     const Stopwatch& clock, BaselineBudget* budget,
                                     const Status& why) {
  ExactAnswer answer;
  AddBaselinePlans(request, self, clock, budget, &answer);
  if (answer.warm_plans.empty()) return why;
  answer.plan = std::move(answer.warm_plans.front().plan);
  answer.kept_warm_start = answer.warm_plans.front().name;
  answer.warm_plans.erase(answer.warm_plans.begin());
  answer.status = PlanStatus::kWarmStart;
  answer.detail = "the model found no plan (" + why.message() + "); kept " + answer.kept_warm_start;
  return answer;
}

// True when every line of the validator's message is a memory violation.
bool OnlyMemoryViolations(const std::string& message) {
  size_t pos = 0;
  bool any = false;
  while ((pos = message.find("\n  - ", pos)) != std::string::npos) {
    pos += 5;
    if (message.compare(pos, 7, "memory:") != 0) return false;
    any = true;
  }
  return any;
}

}  // namespace

Status KeepFasterPlan(const cost::CostModel& cost, ExactAnswer* answer) {
  if (answer->warm_plans.empty() || answer->from_solution_file) return Status::Ok();
  const Status valid = plan::CheckPlan(answer->plan, cost, "the MILP's plan");
  double model_s = std::numeric_limits<double>::infinity();
  if (valid.ok()) {
    HX_ASSIGN_OR_RETURN(sim::SimResult sim, sim::Simulate(answer->plan, cost));
    model_s = sim.makespan_s;
  }
  int best = -1;
  double best_s = model_s;
  for (size_t i = 0; i < answer->warm_plans.size(); ++i) {
    if (!plan::CheckPlan(answer->warm_plans[i].plan, cost, "").ok()) continue;
    auto sim = sim::Simulate(answer->warm_plans[i].plan, cost);
    if (!sim.ok() || !(sim->makespan_s < best_s * (1.0 - 1e-9))) continue;
    best = static_cast<int>(i);
    best_s = sim->makespan_s;
  }
  if (best < 0) {
    if (valid.ok()) return Status::Ok();
    if (OnlyMemoryViolations(valid.message()))
      return ResourceExhausted("no plan found that fits the devices' memory: " + valid.message());
    return Internal(valid.message());
  }
  WarmPlan& warm = answer->warm_plans[best];
  const bool own_warm = answer->status == PlanStatus::kWarmStart;
  answer->detail +=
      "; kept " + std::string(own_warm ? "" : "the plan of ") + warm.name + ": it simulates to " +
      FormatMs(best_s) + ", the " +
      (own_warm ? "model's warm start"
                : "MILP's plan (" + std::string(PlanStatusName(answer->status)) + ")") +
      " to " + (valid.ok() ? FormatMs(model_s) : "an invalid plan (" + valid.message() + ")");
  answer->plan = std::move(warm.plan);
  answer->kept_warm_start = warm.name;
  answer->status = PlanStatus::kWarmStart;
  answer->model_objective_s = warm.objective_s;
  if (!warm.objective_s) {  // the solver's bound still bounds the model's optimum; no gap
    answer->gap.reset();
  } else if (answer->bound_s && *warm.objective_s > 0.0) {
    answer->gap = std::max(0.0, (*warm.objective_s - *answer->bound_s) / *warm.objective_s);
  }
  answer->warm_plans.clear();
  return Status::Ok();
}

std::vector<OptionSpec> ExactPlanner::Options() const {
  std::vector<OptionSpec> specs = ModelOptions();
  for (OptionSpec& s : ExactOptionSpecs()) specs.push_back(std::move(s));
  return specs;
}

StatusOr<PlanResult> ExactPlanner::Plan(const PlanRequest& request) {
  if (request.cost == nullptr) return InvalidArgument(Name() + ": request without a cost model");
  HX_ASSIGN_OR_RETURN(const OptionSet options, ResolveOptions(request, *this));
  const Stopwatch clock;
  // The baselines and the simulations that compare the plans share the limit's end; the last
  // simulation of each kept plan counts as one more baseline's time.
  BaselineBudget budget(request.options.time_limit_s, request.graph().num_nodes());
  const MilpSettings settings = MilpSettingsFor(request, options, request.options.time_limit_s);
  StatusOr<ExactAnswer> solved = SolveModel(request, options, settings);
  if (!solved.ok() && solved.status().code() == StatusCode::kResourceExhausted)
    solved = BaselineAnswer(request, Name(), clock, &budget, solved.status());
  HX_ASSIGN_OR_RETURN(ExactAnswer answer, std::move(solved));
  if (!answer.from_solution_file && !answer.keep_own_plan)
    AddBaselinePlans(request, Name(), clock, &budget, &answer);
  HX_RETURN_IF_ERROR(KeepFasterPlan(*request.cost, &answer));
  answer.detail += budget.Note();
  if (!budget.skipped().empty())
    LogTo(request.logger, LogLevel::kInfo, Name() + ": " + budget.Note().substr(2));
  OnAnswer(answer);
  PlanResult result;
  result.plan = std::move(answer.plan);
  result.status = answer.status;
  result.model_objective_s = answer.model_objective_s;
  result.solver_bound_s = answer.bound_s;
  result.solver_gap = answer.gap;
  result.detail = std::move(answer.detail);
  return result;
}

}  // namespace hx::place
