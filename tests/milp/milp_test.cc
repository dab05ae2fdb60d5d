#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <tuple>

#include "hexplan/milp/model.h"
#include "hexplan/milp/solver.h"
#include "testing/cli_runner.h"

namespace hx::milp {
namespace {

// max 5a + 4b + 3c  s.t. 2a + 3b + c <= 5, 4a + b + 2c <= 11, 3a + 4b + 2c <= 8, integers >= 0.
// Optimum: a=2, b=0, c=1, objective 13 (classic textbook instance).
Model Textbook() {
  Model m("textbook");
  Var a = m.AddInteger(0, 10, "a"), b = m.AddInteger(0, 10, "b"), c = m.AddInteger(0, 10, "c");
  m.AddLessEqual(2 * LinExpr(a) + 3 * LinExpr(b) + LinExpr(c), 5, "r1");
  m.AddLessEqual(4 * LinExpr(a) + LinExpr(b) + 2 * LinExpr(c), 11, "r2");
  m.AddLessEqual(3 * LinExpr(a) + 4 * LinExpr(b) + 2 * LinExpr(c), 8, "r3");
  m.Maximize(5 * LinExpr(a) + 4 * LinExpr(b) + 3 * LinExpr(c));
  return m;
}

// Brute force over all integer points for the textbook model.
double BruteForceTextbook() {
  double best = -1;
  for (int a = 0; a <= 10; ++a)
    for (int b = 0; b <= 10; ++b)
      for (int c = 0; c <= 10; ++c)
        if (2 * a + 3 * b + c <= 5 && 4 * a + b + 2 * c <= 11 && 3 * a + 4 * b + 2 * c <= 8)
          best = std::max(best, 5.0 * a + 4.0 * b + 3.0 * c);
  return best;
}

TEST(MilpTest, SolvesTextbookInstanceToProvenOptimum) {
  auto r = SolveWithCbc(Textbook(), SolveOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, SolveStatus::kOptimal);
  EXPECT_NEAR(r->objective, BruteForceTextbook(), 1e-6);
  EXPECT_NEAR(r->objective, 13.0, 1e-6);
  EXPECT_TRUE(Textbook().Violations(r->values).empty());
  EXPECT_EQ(r->gap, 0.0);
}

TEST(MilpTest, InfeasibleIsAResultNotAnError) {
  Model m("infeasible");
  Var x = m.AddBinary("x"), y = m.AddBinary("y");
  m.AddGreaterEqual(LinExpr(x) + LinExpr(y), 3, "too_much", "memory");
  m.Minimize(LinExpr(x));
  auto r = SolveWithCbc(m, SolveOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, SolveStatus::kInfeasible);
  EXPECT_FALSE(r->has_solution());
}

TEST(MilpTest, BadModelsAndOptionsAreCallErrors) {
  Model m;
  Var x = m.AddContinuous(5, 1, "x");
  m.Minimize(LinExpr(x));
  EXPECT_FALSE(SolveWithCbc(m, SolveOptions{}).ok());
  SolveOptions bad;
  bad.time_limit_s = -1;
  EXPECT_FALSE(SolveWithCbc(Textbook(), bad).ok());
  SolveOptions wrong_start;
  wrong_start.mip_start = {1.0};
  EXPECT_FALSE(SolveWithCbc(Textbook(), wrong_start).ok());
}

TEST(MilpTest, IndicatorUsesTightestBigM) {
  Model m;
  Var b = m.AddBinary("b");
  Var x = m.AddContinuous(0, 7, "x");
  // b = 1 => x <= 2. With x in [0,7], M must be 5 (x - 2 <= 5 (1 - b)).
  ASSERT_TRUE(m.AddIndicator(b, true, LinExpr(x), Sense::kLessEqual, 2, "ind").ok());
  ASSERT_EQ(m.num_constraints(), 1u);
  const Constraint& c = m.constraints()[0];
  // Stored as x + 5b <= 7.
  double coef_b = 0, coef_x = 0;
  for (auto [i, v] : c.terms) (i == b.index() ? coef_b : coef_x) = v;
  EXPECT_DOUBLE_EQ(coef_x, 1.0);
  EXPECT_DOUBLE_EQ(coef_b, 5.0);
  EXPECT_DOUBLE_EQ(c.rhs, 7.0);
  // Maximising x + 10 b picks b=1, x=2 (12) over b=0, x=7 (7).
  m.Maximize(LinExpr(x) + 10 * LinExpr(b));
  auto r = SolveWithCbc(m, SolveOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->objective, 12.0, 1e-6);
  // An unbounded variable cannot give a big-M.
  Model u;
  Var ub = u.AddBinary("b");
  Var ux = u.AddContinuous(0, kInfinity, "x");
  EXPECT_FALSE(u.AddIndicator(ub, true, LinExpr(ux), Sense::kLessEqual, 2, "bad").ok());
}

TEST(MilpTest, MipStartIsUsedAndInfeasibleStartDropped) {
  SolveOptions opt;
  opt.mip_start = {2, 0, 1};
  auto r = SolveWithCbc(Textbook(), opt);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->used_mip_start);
  EXPECT_NEAR(r->objective, 13.0, 1e-6);
  CollectingLogger log;
  opt.mip_start = {10, 10, 10};
  auto r2 = SolveWithCbc(Textbook(), opt, &log);
  ASSERT_TRUE(r2.ok());
  EXPECT_FALSE(r2->used_mip_start);
  EXPECT_EQ(log.Count(LogLevel::kWarning), 1u);
  EXPECT_NEAR(r2->objective, 13.0, 1e-6);
}

TEST(MilpTest, ObjectiveConstantColumnCountsInObjectiveAndBound) {
  // Loaded in one piece (column-major): the constant is a last column fixed at 1, so CBC's
  // objective and bound include it; a MIP start covers only the model's own variables.
  Model m = Textbook();
  m.SetObjective(5 * LinExpr(Var(0)) + 4 * LinExpr(Var(1)) + 3 * LinExpr(Var(2)) + 100.0, false);
  for (bool start : {false, true}) {
    SolveOptions opt;
    if (start) opt.mip_start = {1, 1, 0};
    auto r = SolveWithCbc(m, opt);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, SolveStatus::kOptimal);
    EXPECT_EQ(r->used_mip_start, start);
    EXPECT_NEAR(r->objective, 113.0, 1e-6);
    EXPECT_NEAR(r->bound, 113.0, 1e-6);
    EXPECT_EQ(r->values.size(), m.num_vars());
  }
}

// A small MOIRAI-like scheduling MILP: n tasks on D identical devices (assignment binaries), a
// random precedence DAG whose edges cost a transfer when their ends are on different devices, and
// big-M non-overlap disjunctions for every pair on a device. `start` gets a feasible MIP start:
// every task on device 0, in index order (which is topological).
Model SchedulingModel(int n, int D, uint64_t seed, std::vector<double>* start) {
  std::mt19937_64 rng(seed);
  Model m("scheduling");
  std::vector<double> dur(n);
  double H = 0;
  for (int i = 0; i < n; ++i) dur[i] = 1 + static_cast<double>(rng() % 9), H += dur[i];
  std::vector<std::pair<int, int>> edges;
  std::vector<double> comm;
  for (int j = 1; j < n; ++j) {
    edges.push_back({static_cast<int>(rng() % j), j});
    comm.push_back(1 + static_cast<double>(rng() % 4));
    if (j > 2 && rng() % 2) {
      edges.push_back({static_cast<int>(rng() % (j - 1)), j});
      comm.push_back(1 + static_cast<double>(rng() % 3));
    }
  }
  for (double c : comm) H += c;
  std::vector<std::vector<Var>> x(n, std::vector<Var>(D));
  std::vector<Var> S(n), C(n);
  Var makespan = m.AddContinuous(0, H, "makespan");
  std::vector<std::pair<Var, double>> init = {{makespan, 0.0}};
  double t = 0;
  for (int i = 0; i < n; ++i) {
    S[i] = m.AddContinuous(0, H, "S_" + std::to_string(i));
    C[i] = m.AddContinuous(0, H, "C_" + std::to_string(i));
    LinExpr one;
    for (int k = 0; k < D; ++k) {
      x[i][k] = m.AddBinary("x_" + std::to_string(i) + "_" + std::to_string(k));
      one += LinExpr(x[i][k]);
    }
    m.AddEqual(one, 1, "assign_" + std::to_string(i));
    m.AddEqual(LinExpr(C[i]), LinExpr(S[i]) + dur[i], "dur_" + std::to_string(i));
    m.AddGreaterEqual(LinExpr(makespan), LinExpr(C[i]), "end_" + std::to_string(i));
    init.push_back({x[i][0], 1.0});
    init.push_back({S[i], t});
    t += dur[i];
    init.push_back({C[i], t});
  }
  init[0].second = t;
  for (size_t e = 0; e < edges.size(); ++e) {
    auto [i, j] = edges[e];
    for (int k = 0; k < D; ++k)
      m.AddGreaterEqual(LinExpr(S[j]),
                        LinExpr(C[i]) + comm[e] * (LinExpr(x[i][k]) - LinExpr(x[j][k])),
                        "flow_" + std::to_string(e) + "_" + std::to_string(k));
    m.AddGreaterEqual(LinExpr(S[j]), LinExpr(C[i]), "prec_" + std::to_string(e));
  }
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      Var d = m.AddBinary("d_" + std::to_string(i) + "_" + std::to_string(j));
      init.push_back({d, 1.0});
      for (int k = 0; k < D; ++k) {
        LinExpr off = 2 - LinExpr(x[i][k]) - LinExpr(x[j][k]);
        m.AddGreaterEqual(LinExpr(S[j]), LinExpr(C[i]) - H * (1 - LinExpr(d)) - H * off);
        m.AddGreaterEqual(LinExpr(S[i]), LinExpr(C[j]) - H * LinExpr(d) - H * off);
      }
    }
  m.Minimize(LinExpr(makespan));
  start->assign(m.num_vars(), 0.0);
  for (auto [v, val] : init) (*start)[v.index()] = val;
  return m;
}

TEST(MilpTest, MipStartWithShortLimitsDoesNotCrash) {
  // Regression: with CBC's preprocessing on, these solves segfaulted in
  // CglPreProcess::postProcess when the limit ended the search (CBC 2.10.8: 31 of 160 runs of
  // n 10-16, seeds 1-8, limits 0.05-0.3 s). A MIP start now turns preprocessing off.
  const std::tuple<int, uint64_t, double> cases[] = {{10, 2, 0.05}, {10, 3, 0.05}, {10, 8, 0.1},
                                                     {12, 1, 0.05}, {12, 1, 0.1},  {16, 3, 0.1}};
  for (auto [n, seed, limit] : cases) {
    std::vector<double> start;
    Model m = SchedulingModel(n, 3, seed, &start);
    ASSERT_TRUE(m.Violations(start).empty());
    SolveOptions opt;
    opt.time_limit_s = limit;
    opt.mip_start = start;
    auto r = SolveWithCbc(m, opt);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->used_mip_start);
    EXPECT_FALSE(r->preprocessed);
    ASSERT_TRUE(r->has_solution()) << "n " << n << " seed " << seed;
    EXPECT_TRUE(r->status == SolveStatus::kOptimal || r->status == SolveStatus::kFeasible);
    EXPECT_TRUE(m.Violations(r->values, 1e-5).empty());
    EXPECT_LE(r->objective, m.Evaluate(start) + 1e-6);
    EXPECT_LE(r->bound, r->objective + 1e-6);
  }
  // Without a start, preprocessing stays on.
  std::vector<double> start;
  auto r = SolveWithCbc(SchedulingModel(8, 2, 1, &start), SolveOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->preprocessed);
}

// Limits that hold whatever the machine's load: CBC stops at its first solution (a feasible point
// the test can write as a solution file) or after one node, with a valid answer and no optimality
// claimed unless proven.
TEST(MilpTest, SolutionAndNodeLimitsStopCbcWithAFeasiblePoint) {
  std::vector<double> start;
  const Model m = SchedulingModel(10, 2, 4, &start);
  for (int limit : {0, 1}) {
    SolveOptions opt;
    opt.time_limit_s = 300;  // a guard only
    opt.max_solutions = limit == 0 ? 1 : 0;
    opt.max_nodes = limit;
    if (limit == 1) opt.mip_start = start;  // one node need not find a point of its own
    auto r = SolveWithCbc(m, opt);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(r->has_solution()) << "limit " << limit;
    EXPECT_TRUE(m.Violations(r->values, 1e-5).empty());
    EXPECT_LE(r->bound, r->objective + 1e-6);
  }
  SolveOptions bad;
  bad.max_nodes = -1;
  EXPECT_FALSE(SolveWithCbc(m, bad).ok());
}

TEST(MilpTest, ViolationsNameTheConstraintGroup) {
  Model m;
  Var x = m.AddContinuous(0, 10, "x");
  m.AddLessEqual(LinExpr(x), 4, "mem_gpu0", "memory");
  auto v = m.Violations({6.0});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].group, "memory");
  EXPECT_NEAR(v[0].amount, 2.0, 1e-9);
}

TEST(MilpTest, ExportedLpAndMpsReReadGiveTheSameOptimum) {
  std::string dir = testing::MakeTempDir();
  Model m = Textbook();
  m.SetObjective(5 * LinExpr(Var(0)) + 4 * LinExpr(Var(1)) + 3 * LinExpr(Var(2)) + 100.0, false);
  for (const char* ext : {"lp", "mps"}) {
    std::string path = dir + "/model." + ext;
    ASSERT_TRUE((std::string(ext) == "lp" ? WriteLpFile(m, path) : WriteMpsFile(m, path)).ok());
    auto back = ReadModelFile(path);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    auto r = SolveWithCbc(*back, SolveOptions{});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, SolveStatus::kOptimal) << ext;
    EXPECT_NEAR(r->objective, 113.0, 1e-6) << ext;
  }
  EXPECT_FALSE(ReadModelFile(dir + "/missing.lp").ok());
  EXPECT_FALSE(ReadModelFile(dir + "/model.txt").ok());
}

TEST(MilpTest, ReadsSolutionFilesOfOtherSolvers) {
  std::string dir = testing::MakeTempDir();
  Model m = Textbook();
  struct Case {
    const char* name;
    const char* text;
  };
  const Case cases[] = {
      {"gurobi.sol", "# Solution for model textbook\n# Objective value = 13\na 2\nb 0\nc 1\n"},
      {"cbc.sol",
       "Optimal - objective value 13.00000000\n      0 a   2   -5\n      2 c   1   -3\n"},
      {"scip.sol",
       "solution status: optimal solution found\nobjective value: 13\na 2 \t(obj:5)\nc 1 "
       "\t(obj:3)\n"},
      {"highs.sol",
       "Model status\nOptimal\n\n# Primal solution values\nFeasible\nObjective 13\n# Columns 3\n"
       "a 2\nb 0\nc 1\n# Rows 3\nr1 5\nr2 10\n"},
  };
  for (const Case& c : cases) {
    std::string path = dir + "/" + c.name;
    std::ofstream(path) << c.text;
    auto values = ReadSolutionFile(path, m);
    ASSERT_TRUE(values.ok()) << c.name << ": " << values.status().ToString();
    EXPECT_NEAR(m.Evaluate(*values), 13.0, 1e-9) << c.name;
    EXPECT_TRUE(m.Violations(*values).empty()) << c.name;
  }
  std::ofstream(dir + "/bad.sol") << "a two\n";
  auto bad = ReadSolutionFile(dir + "/bad.sol", m);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.sol:1"), std::string::npos);
}

TEST(MilpTest, TimeLimitReturnsIncumbentWithBound) {
  // A knapsack with many items and a tiny time limit: whatever CBC proves, a solution comes back
  // and bound <= objective for a maximisation is reversed: objective <= bound.
  Model m("knapsack");
  LinExpr weight, value;
  for (int i = 0; i < 60; ++i) {
    Var x = m.AddBinary("x" + std::to_string(i));
    weight.Add(x, 37 + (i * 7919) % 101);
    value.Add(x, 41 + (i * 104729) % 97);
  }
  m.AddLessEqual(weight, 1500, "capacity");
  m.Maximize(value);
  SolveOptions opt;
  // Wall-clock, loading included: enough for a first incumbent on a loaded machine under ASan.
  opt.time_limit_s = 3.0;
  auto r = SolveWithCbc(m, opt);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->has_solution());
  EXPECT_TRUE(r->status == SolveStatus::kOptimal || r->status == SolveStatus::kFeasible);
  EXPECT_TRUE(m.Violations(r->values).empty());
  EXPECT_LE(r->objective, r->bound + 1e-6);
}

TEST(MilpTest, SolvingInAChildProcessGivesTheSameAnswerAsInProcess) {
  // hard_limit runs CBC in a child and sends the result back through a pipe: the same status,
  // objective, bound and values as in this process.
  Model m("assignment");
  std::vector<std::vector<Var>> x(6, std::vector<Var>(3));
  LinExpr cost;
  for (int i = 0; i < 6; ++i) {
    LinExpr one;
    for (int k = 0; k < 3; ++k) {
      x[i][k] = m.AddBinary("x" + std::to_string(i) + "_" + std::to_string(k));
      one.Add(x[i][k], 1.0);
      cost.Add(x[i][k], 1.0 + (i * 7 + k * 3) % 5);
    }
    m.AddEqual(one, 1.0, "assign" + std::to_string(i));
  }
  for (int k = 0; k < 3; ++k) {
    LinExpr load;
    for (int i = 0; i < 6; ++i) load.Add(x[i][k], 1.0);
    m.AddLessEqual(load, 2.0, "capacity" + std::to_string(k));
  }
  m.Minimize(cost);
  SolveOptions isolated, local;
  local.hard_limit = false;
  auto a = SolveWithCbc(m, isolated);
  auto b = SolveWithCbc(m, local);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->status, SolveStatus::kOptimal);
  EXPECT_EQ(a->status, b->status);
  EXPECT_DOUBLE_EQ(a->objective, b->objective);
  EXPECT_DOUBLE_EQ(a->bound, b->bound);
  EXPECT_EQ(a->values, b->values);
  EXPECT_FALSE(a->progress.empty());
  EXPECT_TRUE(m.Violations(a->values).empty());
}

// Forty items into two knapsacks at once: big enough that CBC branches for a while.
Model TwoKnapsacks() {
  Model m("two-knapsacks");
  LinExpr w1, w2, value;
  for (int i = 0; i < 40; ++i) {
    Var x = m.AddBinary("x" + std::to_string(i));
    w1.Add(x, 20 + (i * 7919) % 61);
    w2.Add(x, 15 + (i * 6007) % 53);
    value.Add(x, 30 + (i * 104729) % 71);
  }
  m.AddLessEqual(w1, 700, "capacity1");
  m.AddLessEqual(w2, 600, "capacity2");
  m.Maximize(value);
  return m;
}

TEST(MilpTest, ParallelCbcFindsTheSameOptimumAsOneThread) {
  // CBC with threads = 2 searches on worker threads (CbcModel::branchAndBound starts them), whose
  // copies of our event handler report progress: the collector serialises them (`make tsan` runs
  // this under ThreadSanitizer). The answer is the one-thread optimum.
  const Model m = TwoKnapsacks();
  auto solve = [&](int threads, int* calls) {
    SolveOptions opt;
    opt.threads = threads;
    opt.relative_gap = 0.0;
    opt.hard_limit = false;  // in this process, with the event handler's calls on CBC's threads
    opt.on_progress = [calls](const ProgressPoint&) { ++*calls; };
    return SolveWithCbc(m, opt);
  };
  int calls1 = 0, calls2 = 0;
  auto one = solve(1, &calls1);
  auto two = solve(2, &calls2);
  ASSERT_TRUE(one.ok() && two.ok());
  ASSERT_EQ(one->status, SolveStatus::kOptimal);
  ASSERT_EQ(two->status, SolveStatus::kOptimal);
  EXPECT_NEAR(one->objective, two->objective, 1e-6);
  EXPECT_TRUE(m.Violations(two->values).empty());
  // The closing point is recorded without a call.
  EXPECT_LE(static_cast<size_t>(calls1), one->progress.size());
  EXPECT_LE(static_cast<size_t>(calls2), two->progress.size());
}

TEST(MilpTest, ProgressArrivesWhileCbcSolvesInItsChildProcess) {
  // CBC's events (not its log) carry the progress; from the child they come through a pipe.
  const Model m = TwoKnapsacks();
  SolveOptions opt;
  opt.relative_gap = 0.0;
  std::vector<ProgressPoint> seen;
  opt.on_progress = [&seen](const ProgressPoint& p) { seen.push_back(p); };
  auto r = SolveWithCbc(m, opt);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status, SolveStatus::kOptimal);
  ASSERT_FALSE(seen.empty());
  // Minimisation values: no incumbent better than the optimum, none getting worse, and the bound
  // never above the incumbent.
  double last = kInfinity;
  for (const ProgressPoint& p : seen) {
    EXPECT_GE(p.incumbent, -r->objective - 1e-6);
    EXPECT_LE(p.incumbent, last);
    EXPECT_LE(p.bound, p.incumbent + 1e-6);
    last = p.incumbent;
  }
  EXPECT_TRUE(std::isfinite(seen.back().incumbent));
  EXPECT_EQ(seen.size() + 1, r->progress.size());  // and the closing point
}

}  // namespace
}  // namespace hx::milp
