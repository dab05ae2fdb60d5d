// The exact-planner skeleton and the planner-owned options: every exact planner writes its model
// when asked (LP and MPS) and reads an external solution back; options reach only their owners;
// the faster of the model's plan and its warm starts is returned.
#include "hexplan/place/exact/exact_planner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "hexplan/core/interrupt.h"
#include "hexplan/cost/cost_model.h"
#include "hexplan/hw/presets.h"
#include "hexplan/milp/solver.h"
#include "hexplan/place/planner.h"
#include "hexplan/place/sortinghat/sortinghat.h"
#include "hexplan/plan/validator.h"
#include "hexplan/sim/simulator.h"
#include "testing/cli_runner.h"
#include "testing/graph_builders.h"

namespace hx::place {
namespace {

struct Inputs {
  graph::Graph graph;
  hw::Cluster cluster;
  std::unique_ptr<cost::CostModel> cost;
};

std::unique_ptr<Inputs> Make(graph::Graph g, const std::string& cluster) {
  auto in = std::make_unique<Inputs>();
  in->graph = std::move(g);
  auto c = hw::LoadCluster(cluster);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  in->cluster = std::move(*c);
  // The roofline: these solver cases were sized on its numbers (issue 21 kept it as an option).
  cost::CostModelOptions options;
  options.kind = cost::CostModelKind::kRoofline;
  in->cost = std::make_unique<cost::CostModel>(in->graph, in->cluster, options);
  return in;
}

PlanRequest Request(const Inputs& in, double limit = 10) {
  PlanRequest r;
  r.cost = in.cost.get();
  r.options.time_limit_s = limit;
  return r;
}

bool Exists(const std::string& path) { return std::filesystem::exists(path); }

TEST(ExactPlannerTest, EveryExactPlannerWritesItsModelInLpAndMps) {
  auto in = Make(testing::MakeChain(6), "sortinghat-v100");
  const std::string dir = testing::MakeTempDir();
  for (const char* algo : {"moirai", "getf", "efficientmip", "sortinghat"}) {
    PlanRequest r = Request(*in);
    const std::string lp = dir + "/" + algo + ".lp", mps = dir + "/" + algo + ".mps";
    ASSERT_TRUE(r.planner_options.Give("export-lp", lp).ok());
    ASSERT_TRUE(r.planner_options.Give("export-mps", mps).ok());
    if (std::string(algo) == "sortinghat")  // one submodel: one model, the paths as given
      ASSERT_TRUE(r.planner_options.Give("ndom", int64_t{1000}).ok());
    auto out = RunPlanner(algo, r);
    ASSERT_TRUE(out.ok()) << algo << ": " << out.status().ToString();
    ASSERT_TRUE(Exists(lp)) << algo << " wrote no " << lp;
    ASSERT_TRUE(Exists(mps)) << algo << " wrote no " << mps;
    auto model = milp::ReadModelFile(lp);
    ASSERT_TRUE(model.ok()) << algo << ": " << model.status().ToString();
    EXPECT_GT(model->num_vars(), 0u) << algo;
    EXPECT_TRUE(milp::ReadModelFile(mps).ok()) << algo;
  }
}

TEST(ExactPlannerTest, SeveralSubmodelsWriteOneFileEachAndRefuseOneSolutionFile) {
  auto in = Make(testing::MakeChain(8), "sortinghat-v100");
  const std::string dir = testing::MakeTempDir();
  PlanRequest r = Request(*in);
  ASSERT_TRUE(r.planner_options.Give("export-lp", dir + "/sh.lp").ok());
  ASSERT_TRUE(r.planner_options.Give("ndom", int64_t{1}).ok());
  auto out = RunPlanner("sortinghat", r);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(Exists(dir + "/sh.0.lp"));
  EXPECT_TRUE(Exists(dir + "/sh.1.lp"));
  PlanRequest s = Request(*in);
  ASSERT_TRUE(s.planner_options.Give("solution", dir + "/sh.sol").ok());
  ASSERT_TRUE(s.planner_options.Give("ndom", int64_t{1}).ok());
  auto refused = RunPlanner("sortinghat", s);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("--solution"), std::string::npos)
      << refused.status().message();
}

// Solves an exported model with CBC and writes its values as a CBC-style solution file.
void WriteSolution(const std::string& lp, const std::string& sol) {
  auto model = milp::ReadModelFile(lp);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  // Any feasible point will do (the planner reads what the file says): proving optimality of
  // SortingHat's ndom = 1000 model took about 60 s under ASan. CBC stops at its first solution,
  // whatever the machine's load (a 5 s limit found none on a loaded machine); the limit in
  // seconds is only a guard.
  milp::SolveOptions options;
  options.max_solutions = 1;
  options.time_limit_s = 300;
  auto solved = milp::SolveWithCbc(*model, options);
  ASSERT_TRUE(solved.ok() && solved->has_solution());
  std::ofstream out(sol);
  char buf[64];
  for (size_t v = 0; v < model->num_vars(); ++v) {
    std::snprintf(buf, sizeof buf, "%.17g", solved->values[v]);
    out << model->vars()[v].name << " " << buf << "\n";
  }
}

TEST(ExactPlannerTest, GetfReadsAnExternalSolutionOfItsModel) {
  auto in = Make(testing::MakeRandomDag(14, 3), "moirai-intra");
  const std::string dir = testing::MakeTempDir();
  PlanRequest r = Request(*in);
  ASSERT_TRUE(r.planner_options.Give("export-lp", dir + "/getf.lp").ok());
  auto solved = RunPlanner("getf", r);
  ASSERT_TRUE(solved.ok()) << solved.status().ToString();
  WriteSolution(dir + "/getf.lp", dir + "/getf.sol");
  PlanRequest load = Request(*in);
  ASSERT_TRUE(load.planner_options.Give("solution", dir + "/getf.sol").ok());
  auto loaded = RunPlanner("getf", load);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->result.status, PlanStatus::kFeasible);
  EXPECT_NE(loaded->result.detail.find("getf.sol"), std::string::npos) << loaded->result.detail;
  EXPECT_TRUE(plan::CheckPlan(loaded->result.plan, *in->cost, "test").ok());
  // A file that is not a solution is an error naming it.
  PlanRequest missing = Request(*in);
  ASSERT_TRUE(missing.planner_options.Give("solution", dir + "/nope.sol").ok());
  auto bad = RunPlanner("getf", missing);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("nope.sol"), std::string::npos);
}

TEST(ExactPlannerTest, TheSolversProgressReachesTheRequestsCallback) {
  auto in = Make(testing::MakeRandomDag(14, 3), "moirai-intra");
  for (const char* algo : {"getf", "moirai"}) {
    PlanRequest r = Request(*in);
    r.options.coarsen = Coarsening::kNone;
    int calls = 0;
    double best = std::numeric_limits<double>::infinity();
    r.on_solver_progress = [&](const milp::ProgressPoint& p) {
      ++calls;
      best = std::min(best, p.incumbent);
    };
    auto out = RunPlanner(algo, r);
    ASSERT_TRUE(out.ok()) << algo << ": " << out.status().ToString();
    // Warm-started: the MIP start is the first incumbent reported.
    EXPECT_GT(calls, 0) << algo;
    EXPECT_TRUE(std::isfinite(best)) << algo;
  }
}

TEST(ExactPlannerTest, SortingHatReadsAnExternalSolutionOfItsOneSubmodel) {
  auto in = Make(testing::MakeChain(5), "sortinghat-v100");
  const std::string dir = testing::MakeTempDir();
  PlanRequest r = Request(*in);
  ASSERT_TRUE(r.planner_options.Give("ndom", int64_t{1000}).ok());
  ASSERT_TRUE(r.planner_options.Give("export-lp", dir + "/sh.lp").ok());
  ASSERT_TRUE(RunPlanner("sortinghat", r).ok());
  WriteSolution(dir + "/sh.lp", dir + "/sh.sol");
  PlanRequest load = Request(*in);
  ASSERT_TRUE(load.planner_options.Give("ndom", int64_t{1000}).ok());
  ASSERT_TRUE(load.planner_options.Give("solution", dir + "/sh.sol").ok());
  SortingHatReport report;
  auto loaded = PlanSortingHat(load, &report);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  // The file's assignment, as read: never swapped for a warm start.
  EXPECT_TRUE(report.kept_milp);
  ASSERT_EQ(report.submodels.size(), 1u);
  EXPECT_EQ(report.submodels[0].status, PlanStatus::kFeasible);
  EXPECT_TRUE(plan::CheckPlan(loaded->plan, *in->cost, "test").ok());
}

TEST(ExactPlannerTest, AStopRequestEndsEveryExactPlannerWithAValidInterruptedPlan) {
  auto in = Make(testing::MakeRandomDag(16, 7), "sortinghat-v100");
  RequestStop();  // as if Ctrl-C came before the solvers started
  for (const char* algo : {"moirai", "getf", "efficientmip", "sortinghat", "auto", "pipeline"}) {
    auto out = RunPlanner(algo, Request(*in, 30));
    ASSERT_TRUE(out.ok()) << algo << ": " << out.status().ToString();
    EXPECT_EQ(out->result.status, PlanStatus::kInterrupted) << algo;
    EXPECT_TRUE(plan::CheckPlan(out->result.plan, *in->cost, algo).ok()) << algo;
    EXPECT_LT(out->result.planning_time_s, 25.0) << algo;  // not the full limit
  }
  ClearStopRequest();
  auto normal = RunPlanner("getf", Request(*in));
  ASSERT_TRUE(normal.ok());
  EXPECT_NE(normal->result.status, PlanStatus::kInterrupted);
}

TEST(ExactPlannerTest, AnOptionReachesOnlyItsOwnersAndOutOfRangeIsRefused) {
  auto in = Make(testing::MakeChain(4), "sortinghat-v100");
  PlanRequest r = Request(*in);
  ASSERT_TRUE(r.planner_options.Give("alpha", 0.5).ok());
  auto heft = RunPlanner("heft", r);
  ASSERT_FALSE(heft.ok());
  EXPECT_EQ(heft.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(heft.status().message().find("--alpha: not an option of planner 'heft'"),
            std::string::npos)
      << heft.status().message();
  EXPECT_NE(heft.status().message().find("an option of chrion"), std::string::npos)
      << heft.status().message();
  // `auto` passes it on to chrion, the planner that owns it.
  EXPECT_TRUE(RunPlanner("auto", r).ok());

  PlanRequest q = Request(*in);
  ASSERT_TRUE(q.planner_options.Give("q", int64_t{1}).ok());
  auto sortinghat = RunPlanner("sortinghat", q);
  ASSERT_FALSE(sortinghat.ok());
  EXPECT_NE(sortinghat.status().message().find("--q: must be in [2, 64]"), std::string::npos)
      << sortinghat.status().message();
  EXPECT_TRUE(RunPlanner("efficientmip", q).ok());  // efficientmip's q starts at 1

  PlanRequest ablation = Request(*in);
  ASSERT_TRUE(ablation.planner_options.Give("ablation", "no-bus").ok());
  auto refused = RunPlanner("sortinghat", ablation);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--ablation"), std::string::npos);
}

TEST(ExactPlannerTest, EveryRegisteredOptionAcceptsItsOwnDefault) {
  for (const std::string& name : PlannerNames()) {
    auto specs = PlannerOptionSpecs(name);
    ASSERT_TRUE(specs.ok()) << name;
    for (const OptionSpec& s : *specs) {
      EXPECT_FALSE(s.name.empty()) << name;
      EXPECT_FALSE(s.description.empty()) << name << " --" << s.name;
      EXPECT_TRUE(s.Accept(s.default_value).ok()) << name << " --" << s.name;
    }
  }
  // The exact planners all own the file options.
  for (const char* exact : {"moirai", "getf", "efficientmip", "sortinghat"}) {
    auto specs = PlannerOptionSpecs(exact);
    ASSERT_TRUE(specs.ok());
    int files = 0;
    for (const OptionSpec& s : *specs)
      files += s.name == "export-lp" || s.name == "export-mps" || s.name == "solution";
    EXPECT_EQ(files, 3) << exact;
  }
}

TEST(ExactPlannerTest, WithoutWarmStartsExactPlannersStillPlan) {
  auto in = Make(testing::MakeRandomDag(12, 5), "moirai-intra");
  for (const char* algo : {"moirai", "getf", "efficientmip", "sortinghat"}) {
    PlanRequest r = Request(*in);
    r.options.warm_start = false;
    if (std::string(algo) == "sortinghat" || std::string(algo) == "efficientmip") {
      auto gpu = Make(testing::MakeRandomDag(12, 5), "sortinghat-v100");
      r.cost = gpu->cost.get();
      auto out = RunPlanner(algo, r);
      ASSERT_TRUE(out.ok()) << algo << ": " << out.status().ToString();
      continue;
    }
    auto out = RunPlanner(algo, r);
    ASSERT_TRUE(out.ok()) << algo << ": " << out.status().ToString();
    EXPECT_EQ(out->result.detail.find("warm start heft"), std::string::npos) << algo;
  }
}

TEST(ExactPlannerTest, KeepFasterPlanReturnsTheFastestValidPlan) {
  auto in = Make(testing::MakeChain(6), "sortinghat-v100");
  auto single = RunPlanner("single", Request(*in));
  auto heft = RunPlanner("heft", Request(*in));
  ASSERT_TRUE(single.ok() && heft.ok());
  const bool heft_faster = heft->sim.makespan_s < single->sim.makespan_s * (1 - 1e-9);
  const plan::Plan& slow = heft_faster ? single->result.plan : heft->result.plan;
  const plan::Plan& fast = heft_faster ? heft->result.plan : single->result.plan;

  ExactAnswer answer;
  answer.plan = slow;
  answer.status = PlanStatus::kOptimal;
  answer.model_objective_s = 1.0;
  answer.bound_s = 0.5;
  answer.gap = 0.5;
  answer.warm_plans.push_back({"fast", fast, 0.8});
  ASSERT_TRUE(KeepFasterPlan(*in->cost, &answer).ok());
  if (heft->sim.makespan_s != single->sim.makespan_s) {
    EXPECT_EQ(answer.status, PlanStatus::kWarmStart);
    EXPECT_EQ(answer.kept_warm_start, "fast");
    EXPECT_DOUBLE_EQ(*answer.model_objective_s, 0.8);
    EXPECT_NEAR(*answer.gap, (0.8 - 0.5) / 0.8, 1e-12);
  }

  // The model's plan kept when it is the faster one.
  ExactAnswer keep;
  keep.plan = fast;
  keep.warm_plans.push_back({"slow", slow, std::nullopt});
  ASSERT_TRUE(KeepFasterPlan(*in->cost, &keep).ok());
  EXPECT_EQ(keep.status, PlanStatus::kFeasible);
  EXPECT_TRUE(keep.kept_warm_start.empty());

  // An invalid model plan gives way to any valid warm start; with none, it is an error.
  ExactAnswer broken;
  broken.plan = fast;
  broken.plan.devices.clear();
  broken.warm_plans.push_back({"slow", slow, std::nullopt});
  ASSERT_TRUE(KeepFasterPlan(*in->cost, &broken).ok());
  EXPECT_EQ(broken.status, PlanStatus::kWarmStart);
  EXPECT_FALSE(broken.model_objective_s.has_value());
  ExactAnswer hopeless;
  hopeless.plan = broken.plan;
  hopeless.plan.devices.clear();
  hopeless.warm_plans.push_back({"also broken", hopeless.plan, std::nullopt});
  EXPECT_FALSE(KeepFasterPlan(*in->cost, &hopeless).ok());
}

TEST(ExactPlannerTest, MilpSettingsForPartNumberTheFiles) {
  MilpSettings s;
  s.export_lp = "/tmp/dir.v1/model.lp";
  s.export_mps = "out";
  auto one = s.ForPart(0, 1, "x");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->export_lp, "/tmp/dir.v1/model.lp");
  auto second = s.ForPart(1, 3, "x");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->export_lp, "/tmp/dir.v1/model.1.lp");
  EXPECT_EQ(second->export_mps, "out.1");
  s.solution_path = "a.sol";
  EXPECT_FALSE(s.ForPart(0, 2, "x").ok());
}

TEST(PlanStatusTest, EveryStatusHasOneSpellingThatParsesBack) {
  std::set<std::string> names;
  for (PlanStatus s : {PlanStatus::kOptimal, PlanStatus::kFeasible, PlanStatus::kTimeLimit,
                       PlanStatus::kWarmStart, PlanStatus::kHeuristic, PlanStatus::kInterrupted}) {
    const std::string name = PlanStatusName(s);
    EXPECT_TRUE(names.insert(name).second) << name;
    ASSERT_TRUE(ParsePlanStatus(name).has_value()) << name;
    EXPECT_EQ(*ParsePlanStatus(name), s);
  }
  EXPECT_FALSE(ParsePlanStatus("warm").has_value());
}

TEST(CoarseningTest, NamesParseBackAndUnknownOnesNameTheFlag) {
  for (Coarsening c : {Coarsening::kPlannerDefault, Coarsening::kNone, Coarsening::kFusion}) {
    auto parsed = ParseCoarsening(CoarseningName(c));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, c);
  }
  auto bad = ParseCoarsening("layers");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--coarsen"), std::string::npos);
}

}  // namespace
}  // namespace hx::place
