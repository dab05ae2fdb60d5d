// The CBC backend of the milp layer, through CBC's C++ interface (CbcMain1, as CBC's own command
// line and C interface run it), with an event handler for live progress.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <coin/CbcEventHandler.hpp>
#include <coin/CbcModel.hpp>
#include <coin/CbcSolver.hpp>
#include <coin/CoinError.hpp>
#include <coin/CoinLpIO.hpp>
#include <coin/CoinMpsIO.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <coin/OsiClpSolverInterface.hpp>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "hexplan/core/file_util.h"
#include "hexplan/core/stopwatch.h"
#include "hexplan/milp/solver.h"
#include "milp/cbc_in_process.h"

namespace hx::milp {
namespace {

double ToCbc(double v) {
  if (v == kInfinity) return DBL_MAX;
  if (v == -kInfinity) return -DBL_MAX;
  return v;
}
double FromCbc(double v) {
  if (v >= 1e30) return kInfinity;
  if (v <= -1e30) return -kInfinity;
  return v;
}

constexpr const char* kConstantVarName = "hx_objective_constant";

}  // namespace

std::string ExportName(const std::string& name) {
  std::string out = name.empty() ? std::string("_") : name;
  for (char& c : out) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) c = '_';
  }
  if (std::isdigit(static_cast<unsigned char>(out[0])) || out[0] == '.') out = "_" + out;
  return out;
}

namespace {

// Loads the model into CBC in one call (a column-major matrix: adding rows one at a time costs
// CBC a copy per row), then names and integrality. The objective constant becomes a variable fixed
// at 1, the last column, so that exported files keep the same objective value.
void LoadIntoCbc(const Model& model, OsiClpSolverInterface* cbc) {
  cbc->setStrParam(OsiProbName, model.name());
  const size_t nvars = model.num_vars();
  const bool constant = model.objective_constant() != 0.0;
  const size_t ncols = nvars + (constant ? 1 : 0);
  const size_t nrows = model.num_constraints();
  std::vector<double> obj(ncols, 0.0), col_lo(ncols), col_hi(ncols);
  for (const auto& [i, c] : model.objective_terms()) obj[i] += c;
  for (size_t i = 0; i < nvars; ++i) {
    col_lo[i] = ToCbc(model.vars()[i].lower);
    col_hi[i] = ToCbc(model.vars()[i].upper);
  }
  if (constant) {
    col_lo[nvars] = col_hi[nvars] = 1.0;
    obj[nvars] = model.objective_constant();
  }
  // Column starts from the per-column counts, then the entries row by row (so each column's row
  // indices come out sorted).
  std::vector<CoinBigIndex> start(ncols + 1, 0);
  std::vector<double> row_lo(nrows), row_hi(nrows);
  for (size_t r = 0; r < nrows; ++r) {
    const Constraint& c = model.constraints()[r];
    for (const auto& term : c.terms) ++start[term.first + 1];
    row_lo[r] = c.sense == Sense::kLessEqual ? -DBL_MAX : c.rhs;
    row_hi[r] = c.sense == Sense::kGreaterEqual ? DBL_MAX : c.rhs;
  }
  for (size_t i = 0; i < ncols; ++i) start[i + 1] += start[i];
  std::vector<int> index(static_cast<size_t>(start[ncols]));
  std::vector<double> value(static_cast<size_t>(start[ncols]));
  std::vector<CoinBigIndex> next(start.begin(), start.end() - 1);
  for (size_t r = 0; r < nrows; ++r)
    for (const auto& [i, coef] : model.constraints()[r].terms) {
      const CoinBigIndex k = next[i]++;
      index[k] = static_cast<int>(r);
      value[k] = coef;
    }
  cbc->loadProblem(static_cast<int>(ncols), static_cast<int>(nrows), start.data(), index.data(),
                   value.data(), col_lo.data(), col_hi.data(), obj.data(), row_lo.data(),
                   row_hi.data());
  for (size_t i = 0; i < nvars; ++i) {
    const Variable& v = model.vars()[i];
    cbc->setColName(static_cast<int>(i), v.name);
    if (v.type != VarType::kContinuous) cbc->setInteger(static_cast<int>(i));
  }
  if (constant) cbc->setColName(static_cast<int>(nvars), kConstantVarName);
  for (size_t r = 0; r < nrows; ++r)
    cbc->setRowName(static_cast<int>(r), model.constraints()[r].name);
  cbc->setObjSense(model.minimize() ? 1.0 : -1.0);
}

// The progress of one solve: every new incumbent, and the bound when it rises (at most every
// kBoundEvery seconds). CBC calls it from its event handler, on its worker threads too.
struct ProgressCollector {
  static constexpr double kBoundEvery = 0.25;
  Stopwatch clock;
  std::mutex mu;
  std::vector<ProgressPoint> points;
  ProgressPoint current;
  double last_record_s = -kBoundEvery;
  bool to_stderr = false;
  const std::function<void(const ProgressPoint&)>* on_progress = nullptr;

  void Record() {
    current.time_s = last_record_s = clock.ElapsedSeconds();
    points.push_back(current);
    if (on_progress != nullptr && *on_progress) (*on_progress)(current);
    if (to_stderr) {
      std::fprintf(stderr, "\rmilp: %7.1fs  incumbent %-14.6g bound %-14.6g", current.time_s,
                   current.incumbent, current.bound);
      std::fflush(stderr);
    }
  }
  // Values as a minimisation (CBC's internal sense), inf when none.
  void Offer(double incumbent, double bound) {
    std::lock_guard<std::mutex> lock(mu);
    const bool better = incumbent < current.incumbent;
    if (better) current.incumbent = incumbent;
    const bool rose = bound > current.bound;
    if (rose) current.bound = std::min(bound, current.incumbent);
    if (better || (rose && clock.ElapsedSeconds() - last_record_s >= kBoundEvery)) Record();
  }
};

// CBC's events (a node done, a solution found), read as incumbent and bound. CBC copies the
// handler into the model it solves (and into each thread's), so it holds only a pointer.
class ProgressEvents : public CbcEventHandler {
 public:
  explicit ProgressEvents(ProgressCollector* collector) : collector_(collector) {}
  ProgressEvents(const ProgressEvents& other) = default;
  CbcEventHandler* clone() const override { return new ProgressEvents(*this); }

  CbcAction event(CbcEvent which) override {
    if (which != node && which != treeStatus && which != solution && which != heuristicSolution)
      return noAction;
    if (model_ == nullptr) return noAction;
    const double incumbent = FromCbc(model_->getMinimizationObjValue());
    const double bound = FromCbc(model_->getBestPossibleObjValue() * model_->getObjSense());
    collector_->Offer(incumbent, bound);
    return noAction;
  }

 private:
  ProgressCollector* collector_;
};

// Redirects file descriptor 1 to /dev/null while alive.
class StdoutSilencer {
 public:
  explicit StdoutSilencer(bool active) {
    if (!active) return;
    std::fflush(stdout);
    saved_ = dup(1);
    int devnull = open("/dev/null", O_WRONLY);
    if (saved_ >= 0 && devnull >= 0) dup2(devnull, 1);
    if (devnull >= 0) close(devnull);
  }
  ~StdoutSilencer() {
    if (saved_ < 0) return;
    std::fflush(stdout);
    dup2(saved_, 1);
    close(saved_);
  }
  StdoutSilencer(const StdoutSilencer&) = delete;
  StdoutSilencer& operator=(const StdoutSilencer&) = delete;

 private:
  int saved_ = -1;
};

}  // namespace

const char* SolveStatusName(SolveStatus status) {
  switch (status) {
    case SolveStatus::kOptimal:
      return "optimal";
    case SolveStatus::kFeasible:
      return "feasible";
    case SolveStatus::kInfeasible:
      return "infeasible";
    case SolveStatus::kNoSolution:
      return "no_solution";
    case SolveStatus::kUnbounded:
      return "unbounded";
  }
  return "?";
}

Status SolveOptions::Validate() const {
  if (!(time_limit_s > 0)) return InvalidArgument("time limit must be positive seconds");
  if (!(relative_gap >= 0)) return InvalidArgument("relative gap must be >= 0");
  if (threads < 1) return InvalidArgument("threads must be >= 1");
  if (seed < 0) return InvalidArgument("seed must be >= 0");
  if (max_nodes < 0 || max_solutions < 0)
    return InvalidArgument("node and solution limits must be >= 0");
  return Status::Ok();
}

namespace {

// CBC's command line for the solve (what CbcMain1 reads, as CBC's C interface passes it too).
std::vector<std::string> CbcArguments(const SolveOptions& options, double seconds,
                                      bool preprocess) {
  std::vector<std::string> args = {
      "hexplan",
      // Elapsed, not CPU, seconds: on a loaded machine CPU time lags the wall clock several times.
      "-timeMode", "elapsed", "-seconds", std::to_string(seconds), "-ratioGap",
      std::to_string(options.relative_gap), "-threads", std::to_string(options.threads),
      "-randomCbcSeed", std::to_string(options.seed + 1), "-randomSeed",
      std::to_string(options.seed + 1),
      // CBC's log goes to stdout, which a library must not write; progress comes from events.
      "-log", "0"};
  if (!preprocess) {
    args.push_back("-preprocess");
    args.push_back("off");
  }
  if (options.max_nodes > 0) {
    args.push_back("-maxNodes");
    args.push_back(std::to_string(options.max_nodes));
  }
  if (options.max_solutions > 0) {
    args.push_back("-maxSolutions");
    args.push_back(std::to_string(options.max_solutions));
  }
  args.push_back("-solve");
  args.push_back("-quit");
  return args;
}

// The MIP start, by column name (as CBC takes it), when it is feasible; its objective else inf.
double SetMipStart(const Model& model, const SolveOptions& options, OsiClpSolverInterface& solver,
                   CbcModel* cbc, Logger* logger) {
  if (options.mip_start.empty()) return kInfinity;
  auto violations = model.Violations(options.mip_start, 1e-6);
  if (!violations.empty()) {
    LogTo(logger, LogLevel::kWarning,
          "MIP start dropped: it violates " + violations.front().what + " by " +
              std::to_string(violations.front().amount));
    return kInfinity;
  }
  std::vector<std::pair<std::string, double>> start;
  start.reserve(model.num_vars());
  for (size_t i = 0; i < model.num_vars(); ++i)
    start.emplace_back(solver.getColName(static_cast<int>(i)), options.mip_start[i]);
  cbc->setMIPStart(start);
  return model.Evaluate(options.mip_start);
}

// What CBC found, read from the model CbcMain1 solved.
void ReadCbcResult(const Model& model, const SolveOptions& options, double start_objective,
                   CbcModel& cbc, SolveResult* result) {
  const double* best = cbc.bestSolution();
  if (best == nullptr && cbc.isProvenOptimal()) best = cbc.solver()->getColSolution();
  if (best != nullptr) {
    std::vector<double> values(best, best + model.num_vars());
    for (size_t i = 0; i < values.size(); ++i)
      if (model.vars()[i].type != VarType::kContinuous) values[i] = std::round(values[i]);
    result->values = std::move(values);
    result->objective = model.Evaluate(result->values);
  } else if (result->used_mip_start) {
    // CBC accepted the start but kept no copy: the start itself is a valid solution.
    result->values = options.mip_start;
    result->objective = start_objective;
  }
  double bound = FromCbc(cbc.getBestPossibleObjValue());
  if (!model.minimize()) bound = -bound;
  result->bound = bound;

  if (cbc.isProvenInfeasible() && !result->has_solution()) {
    result->status = SolveStatus::kInfeasible;
  } else if (cbc.isContinuousUnbounded() && !result->has_solution()) {
    result->status = SolveStatus::kUnbounded;
  } else if (!result->has_solution()) {
    result->status = SolveStatus::kNoSolution;
  } else if (cbc.isProvenOptimal() && !cbc.isSecondsLimitReached()) {
    result->status = SolveStatus::kOptimal;
    result->bound = result->objective;
  } else {
    result->status = SolveStatus::kFeasible;
  }
  if (result->has_solution() && std::isfinite(result->bound)) {
    result->gap =
        std::abs(result->objective - result->bound) / std::max(std::abs(result->objective), 1e-9);
  }
  if (result->status == SolveStatus::kOptimal) result->gap = 0.0;
}

// The result as the last progress point: where the solve ended.
void AppendClosingPoint(SolveResult& result) {
  ProgressPoint last;
  last.time_s = result.solve_time_s;
  last.incumbent = result.objective;
  last.bound = result.bound;
  result.progress.push_back(last);
}

// A model without integer variables is a linear program: Clp's simplex solves it directly, as
// CBC's C interface does, with no branch and bound (and the same vertex whatever CBC's options).
SolveResult SolveLinearProgram(const Model& model, const SolveOptions& options,
                               OsiClpSolverInterface& solver, const Stopwatch& clock) {
  solver.messageHandler()->setLogLevel(0);
  solver.getModelPtr()->setMaximumSeconds(
      std::max(options.time_limit_s - clock.ElapsedSeconds(), 0.01));
  {
    StdoutSilencer silence(true);
    solver.initialSolve();
  }
  SolveResult result;
  result.solve_time_s = clock.ElapsedSeconds();
  if (solver.isProvenOptimal()) {
    const double* x = solver.getColSolution();
    result.values.assign(x, x + model.num_vars());
    result.objective = model.Evaluate(result.values);
    result.bound = result.objective;
    result.gap = 0.0;
    result.status = SolveStatus::kOptimal;
  } else if (solver.isProvenPrimalInfeasible()) {
    result.status = SolveStatus::kInfeasible;
  } else if (solver.isProvenDualInfeasible()) {
    result.status = SolveStatus::kUnbounded;
  } else {
    result.status = SolveStatus::kNoSolution;
  }
  AppendClosingPoint(result);
  return result;
}

}  // namespace

SolveResult SolveWithCbcInProcess(const Model& model, const SolveOptions& options, Logger* logger) {
  Stopwatch clock;
  OsiClpSolverInterface solver;
  solver.setIntParam(OsiNameDiscipline, 1);  // keep names: the MIP start is given by name
  LoadIntoCbc(model, &solver);
  if (solver.getNumIntegers() == 0) return SolveLinearProgram(model, options, solver, clock);
  CbcModel cbc(solver);
  CbcSolverUsefulData data;
  CbcMain0(cbc, data);

  SolveResult result;
  const double start_objective = SetMipStart(model, options, solver, &cbc, logger);
  result.used_mip_start = std::isfinite(start_objective);
  const bool preprocess = options.preprocess == Preprocess::kOn ||
                          (options.preprocess == Preprocess::kAuto && !result.used_mip_start);
  result.preprocessed = preprocess;

  ProgressCollector collector;
  collector.to_stderr = options.progress_to_stderr;
  collector.on_progress = &options.on_progress;
  if (result.used_mip_start) {
    collector.current.incumbent = model.minimize() ? start_objective : -start_objective;
    collector.Record();
  }
  ProgressEvents events(&collector);
  cbc.passInEventHandler(&events);
  // What loading took comes off the limit.
  const double limit = std::max(options.time_limit_s - clock.ElapsedSeconds(), 0.01);
  const std::vector<std::string> args = CbcArguments(options, limit, preprocess);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  {
    StdoutSilencer silence(true);  // CBC prints a few lines even at -log 0
    CbcMain1(
        static_cast<int>(argv.size()), argv.data(), cbc, [](CbcModel*, int) { return 0; }, data);
  }
  if (options.progress_to_stderr) std::fprintf(stderr, "\n");

  result.solve_time_s = clock.ElapsedSeconds();
  result.progress = std::move(collector.points);
  ReadCbcResult(model, options, start_objective, cbc, &result);
  AppendClosingPoint(result);
  return result;
}

namespace {
// Free-format MPS (names must not contain spaces; ours never do). Integer columns sit between
// MARKER INTORG / INTEND lines; the objective constant is a column fixed at 1, as in LoadIntoCbc.
// Export names, made unique (LP and MPS need unique row and column names): a repeated name gets
// "_2", "_3", ... appended.
std::vector<std::string> UniqueExportNames(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  out.reserve(names.size());
  std::unordered_map<std::string, int> seen;
  for (const std::string& n : names) {
    std::string e = ExportName(n);
    int& count = seen[e];
    if (++count > 1) {
      std::string candidate;
      do {
        candidate = e + "_" + std::to_string(count++);
      } while (seen.count(candidate));
      seen[candidate] = 1;
      e = candidate;
    }
    out.push_back(e);
  }
  return out;
}

// A copy of the model whose names are the unique export names.
Model WithExportNames(const Model& model) {
  Model copy = model;
  std::vector<std::string> vars, rows;
  for (const Variable& v : model.vars()) vars.push_back(v.name);
  for (const Constraint& c : model.constraints()) rows.push_back(c.name);
  copy.RenameAll(UniqueExportNames(vars), UniqueExportNames(rows));
  return copy;
}

}  // namespace

std::vector<std::string> ExportVariableNames(const Model& model) {
  std::vector<std::string> vars;
  for (const Variable& v : model.vars()) vars.push_back(v.name);
  return UniqueExportNames(vars);
}

namespace {

std::string ToFreeMps(const Model& model) {
  std::string out = "NAME " + (model.name().empty() ? std::string("hexplan") : model.name()) + "\n";
  if (!model.minimize()) out += "OBJSENSE\n    MAX\n";
  out += "ROWS\n N  OBJ\n";
  for (const Constraint& c : model.constraints()) {
    const char* s = c.sense == Sense::kLessEqual      ? "L"
                    : c.sense == Sense::kGreaterEqual ? "G"
                                                      : "E";
    out += std::string(" ") + s + "  " + ExportName(c.name) + "\n";
  }
  // Column-wise coefficients.
  std::vector<std::vector<std::pair<int, double>>> cols(model.num_vars());
  for (size_t r = 0; r < model.constraints().size(); ++r)
    for (const auto& [i, coef] : model.constraints()[r].terms)
      cols[i].push_back({static_cast<int>(r), coef});
  std::vector<double> obj(model.num_vars(), 0.0);
  for (const auto& [i, c] : model.objective_terms()) obj[i] += c;
  char buf[64];
  auto num = [&](double v) {
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf);
  };
  out += "COLUMNS\n";
  bool in_int = false;
  int marker = 0;
  for (size_t i = 0; i < model.num_vars(); ++i) {
    const Variable& v = model.vars()[i];
    bool integer = v.type != VarType::kContinuous;
    if (integer != in_int) {
      out += "    MARKER" + std::to_string(marker++) + " 'MARKER' " +
             (integer ? "'INTORG'" : "'INTEND'") + "\n";
      in_int = integer;
    }
    const std::string vn = ExportName(v.name);
    out += "    " + vn + " OBJ " + num(obj[i]) + "\n";
    for (const auto& [r, coef] : cols[i])
      out += "    " + vn + " " + ExportName(model.constraints()[r].name) + " " + num(coef) + "\n";
  }
  if (in_int) out += "    MARKER" + std::to_string(marker++) + " 'MARKER' 'INTEND'\n";
  if (model.objective_constant() != 0.0)
    out +=
        std::string("    ") + kConstantVarName + " OBJ " + num(model.objective_constant()) + "\n";
  out += "RHS\n";
  for (const Constraint& c : model.constraints())
    if (c.rhs != 0.0) out += "    RHS " + ExportName(c.name) + " " + num(c.rhs) + "\n";
  out += "BOUNDS\n";
  for (const Variable& var : model.vars()) {
    Variable v = var;
    v.name = ExportName(var.name);
    if (v.lower == v.upper) {
      out += " FX BND " + v.name + " " + num(v.lower) + "\n";
      continue;
    }
    if (v.lower == -kInfinity && v.upper == kInfinity) {
      out += " FR BND " + v.name + "\n";
      continue;
    }
    if (v.lower == -kInfinity)
      out += " MI BND " + v.name + "\n";
    else
      out += " LO BND " + v.name + " " + num(v.lower) + "\n";
    if (v.upper != kInfinity) out += " UP BND " + v.name + " " + num(v.upper) + "\n";
  }
  if (model.objective_constant() != 0.0) out += std::string(" FX BND ") + kConstantVarName + " 1\n";
  out += "ENDATA\n";
  return out;
}

// CPLEX LP format, the dialect CBC, Gurobi, HiGHS and SCIP all read.
std::string ToLp(const Model& model) {
  char buf[64];
  auto num = [&](double v) {
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf);
  };
  auto terms_to_string = [&](const std::vector<std::pair<int, double>>& terms) {
    std::string line;
    for (const auto& [i, c] : terms) {
      line += (c < 0 ? " - " : (line.empty() ? " " : " + ")) + num(std::abs(c)) + " " +
              ExportName(model.vars()[i].name);
    }
    return line;
  };
  std::string out = "\\ " + model.name() + " (written by hexplan)\n";
  out += model.minimize() ? "Minimize\n" : "Maximize\n";
  std::vector<std::pair<int, double>> obj = model.objective_terms();
  std::string objective = " obj:" + terms_to_string(obj);
  if (model.objective_constant() != 0.0) {
    double k = model.objective_constant();
    objective += (k < 0 ? " - " : " + ") + num(std::abs(k)) + " " + kConstantVarName;
  }
  if (obj.empty() && model.objective_constant() == 0.0)
    objective += " 0 " + ExportName(model.num_vars() ? model.vars()[0].name : "x");
  out += objective + "\n";
  out += "Subject To\n";
  for (const Constraint& c : model.constraints()) {
    const char* op = c.sense == Sense::kLessEqual      ? "<="
                     : c.sense == Sense::kGreaterEqual ? ">="
                                                       : "=";
    std::string lhs = terms_to_string(c.terms);
    if (lhs.empty()) lhs = " 0 " + ExportName(model.num_vars() ? model.vars()[0].name : "x");
    out += " " + ExportName(c.name) + ":" + lhs + " " + op + " " + num(c.rhs) + "\n";
  }
  out += "Bounds\n";
  for (const Variable& v : model.vars()) {
    const std::string n = ExportName(v.name);
    if (v.lower == v.upper)
      out += " " + n + " = " + num(v.lower) + "\n";
    else if (v.lower == -kInfinity && v.upper == kInfinity)
      out += " " + n + " free\n";
    else {
      out += " " + (v.lower == -kInfinity ? std::string("-inf") : num(v.lower)) + " <= " + n;
      out += v.upper == kInfinity ? std::string("\n") : " <= " + num(v.upper) + "\n";
    }
  }
  if (model.objective_constant() != 0.0) out += std::string(" ") + kConstantVarName + " = 1\n";
  std::string generals, binaries;
  for (const Variable& v : model.vars()) {
    if (v.type == VarType::kInteger) generals += " " + ExportName(v.name) + "\n";
    if (v.type == VarType::kBinary) binaries += " " + ExportName(v.name) + "\n";
  }
  if (!generals.empty()) out += "General\n" + generals;
  if (!binaries.empty()) out += "Binary\n" + binaries;
  out += "End\n";
  return out;
}

}  // namespace

Status WriteLpFile(const Model& model, const std::string& path) {
  HX_RETURN_IF_ERROR(model.Validate());
  return WriteFileAtomic(path, ToLp(WithExportNames(model)));
}
Status WriteMpsFile(const Model& model, const std::string& path) {
  HX_RETURN_IF_ERROR(model.Validate());
  return WriteFileAtomic(path, ToFreeMps(WithExportNames(model)));
}

namespace {
// Copies what a CoinLpIO or CoinMpsIO reader holds into a Model.
template <typename Reader>
Model ModelFromReader(const Reader& reader, const std::string& name, bool minimize,
                      bool negate_objective) {
  Model model(name);
  const int ncols = reader.getNumCols();
  const int nrows = reader.getNumRows();
  const double* lower = reader.getColLower();
  const double* upper = reader.getColUpper();
  const double* obj = reader.getObjCoefficients();
  LinExpr objective;
  for (int i = 0; i < ncols; ++i) {
    double lo = FromCbc(lower[i]), hi = FromCbc(upper[i]);
    VarType type = !reader.isInteger(i)   ? VarType::kContinuous
                   : (lo >= 0 && hi <= 1) ? VarType::kBinary
                                          : VarType::kInteger;
    Var v = model.AddVar(lo, hi, type, reader.columnName(i));
    if (obj[i] != 0.0) objective.Add(v, negate_objective ? -obj[i] : obj[i]);
  }
  const CoinPackedMatrix* rows = reader.getMatrixByRow();
  const double* row_lower = reader.getRowLower();
  const double* row_upper = reader.getRowUpper();
  for (int r = 0; r < nrows; ++r) {
    const std::string row_name = reader.rowName(r);
    LinExpr lhs;
    const CoinShallowPackedVector row = rows->getVector(r);
    for (int k = 0; k < row.getNumElements(); ++k)
      lhs.Add(Var(row.getIndices()[k]), row.getElements()[k]);
    double lo = FromCbc(row_lower[r]), hi = FromCbc(row_upper[r]);
    if (lo == hi) {
      model.AddEqual(lhs, lo, row_name);
    } else {
      const bool ranged = std::isfinite(lo) && std::isfinite(hi);
      if (std::isfinite(lo)) model.AddGreaterEqual(lhs, lo, row_name + (ranged ? "_lo" : ""));
      if (std::isfinite(hi)) model.AddLessEqual(lhs, hi, row_name + (ranged ? "_hi" : ""));
    }
  }
  model.SetObjective(objective, minimize);
  return model;
}
}  // namespace

StatusOr<Model> ReadModelFile(const std::string& path) {
  const std::string ext = FileExtension(path);
  if (ext != "lp" && ext != "mps") {
    return InvalidArgument(path + ": expected a .lp or .mps file");
  }
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  std::string head = text.substr(0, std::min<size_t>(text.size(), 4096));
  for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  StdoutSilencer silence(true);
  try {
    if (ext == "lp") {
      CoinLpIO reader;
      reader.setInfinity(DBL_MAX);
      reader.readLp(path.c_str());
      // CoinLpIO turns a maximisation into a minimisation by negating the objective.
      const bool max = reader.wasMaximization();
      return ModelFromReader(reader, path, !max, max);
    }
    CoinMpsIO reader;
    reader.messageHandler()->setLogLevel(0);
    if (int errors = reader.readMps(path.c_str(), ""); errors != 0) {
      return ParseError(path + ": " + std::to_string(errors) + " errors reading the MPS file");
    }
    bool minimize = true;
    if (size_t pos = head.find("objsense"); pos != std::string::npos) {
      size_t max_pos = head.find("max", pos);
      if (max_pos != std::string::npos && max_pos < pos + 32) minimize = false;
    }
    return ModelFromReader(reader, path, minimize, false);
  } catch (const CoinError& e) {
    return ParseError(path + ": " + e.message());
  }
}

}  // namespace hx::milp
