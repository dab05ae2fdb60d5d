// The CBC backend of the milp layer, through CBC's C interface.
#include <coin/Cbc_C_Interface.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <coin/CoinError.hpp>
#include <coin/CoinLpIO.hpp>
#include <coin/CoinMpsIO.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <cstdio>
#include <cstring>
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

// RAII owner of a Cbc_Model.
class CbcHandle {
 public:
  CbcHandle() : model_(Cbc_newModel()) {}
  ~CbcHandle() { Cbc_deleteModel(model_); }
  CbcHandle(const CbcHandle&) = delete;
  CbcHandle& operator=(const CbcHandle&) = delete;
  Cbc_Model* get() const { return model_; }

 private:
  Cbc_Model* model_;
};

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
void LoadIntoCbc(const Model& model, Cbc_Model* cbc) {
  Cbc_setProblemName(cbc, model.name().c_str());
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
  Cbc_loadProblem(cbc, static_cast<int>(ncols), static_cast<int>(nrows), start.data(), index.data(),
                  value.data(), col_lo.data(), col_hi.data(), obj.data(), row_lo.data(),
                  row_hi.data());
  for (size_t i = 0; i < nvars; ++i) {
    const Variable& v = model.vars()[i];
    Cbc_setColName(cbc, static_cast<int>(i), v.name.c_str());
    if (v.type != VarType::kContinuous) Cbc_setInteger(cbc, static_cast<int>(i));
  }
  if (constant) Cbc_setColName(cbc, static_cast<int>(nvars), kConstantVarName);
  for (size_t r = 0; r < nrows; ++r)
    Cbc_setRowName(cbc, static_cast<int>(r), model.constraints()[r].name.c_str());
  Cbc_setObjSense(cbc, model.minimize() ? 1.0 : -1.0);
}

// CBC's message callback carries no user pointer: the solve in flight on this thread is found here.
struct ProgressCollector {
  Stopwatch clock;
  std::vector<ProgressPoint> points;
  ProgressPoint current;
  bool to_stderr = false;
  const std::function<void(const ProgressPoint&)>* on_progress = nullptr;

  void Record() {
    current.time_s = clock.ElapsedSeconds();
    points.push_back(current);
    if (on_progress != nullptr && *on_progress) (*on_progress)(current);
    if (to_stderr) {
      std::fprintf(stderr, "\rmilp: %7.1fs  incumbent %-14.6g bound %-14.6g", current.time_s,
                   current.incumbent, current.bound);
      std::fflush(stderr);
    }
  }
};
thread_local ProgressCollector* g_collector = nullptr;

void COINLINKAGE_CB OnCbcMessage(Cbc_Model* /*model*/, int msgno, int ndouble, const double* dvec,
                                 int /*nint*/, const int* /*ivec*/, int /*nchar*/,
                                 char** /*cvec*/) {
  ProgressCollector* pc = g_collector;
  if (pc == nullptr) return;
  // Cbc0012I / Cbc0004I / Cbc0011I...: integer solution found (first double: its objective).
  // Cbc0010I: "After N nodes, M on tree, X best solution, best possible Y".
  if ((msgno == 12 || msgno == 4 || msgno == 11 || msgno == 16) && ndouble >= 1) {
    if (dvec[0] < pc->current.incumbent) {
      pc->current.incumbent = dvec[0];
      pc->Record();
    }
  } else if (msgno == 10 && ndouble >= 2) {
    double inc = FromCbc(dvec[0]);
    double bound = FromCbc(dvec[1]);
    if (inc < pc->current.incumbent) pc->current.incumbent = inc;
    if (bound > pc->current.bound) pc->current.bound = bound;
    pc->Record();
  }
}

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
  return Status::Ok();
}

SolveResult SolveWithCbcInProcess(const Model& model, const SolveOptions& options, Logger* logger) {
  Stopwatch clock;
  CbcHandle handle;
  Cbc_Model* cbc = handle.get();
  LoadIntoCbc(model, cbc);
  // CBC reports progress only through its log; it also prints that log on stdout, which a library
  // must not do, so stdout is silenced for the solve when progress is wanted.
  const bool want_progress = options.progress_to_stderr || static_cast<bool>(options.on_progress);
  Cbc_setLogLevel(cbc, want_progress ? 1 : 0);
  // Elapsed, not CPU, seconds: on a loaded machine CPU time lags the wall clock several times.
  // What loading took comes off the limit.
  Cbc_setParameter(cbc, "timeMode", "elapsed");
  const double limit = std::max(options.time_limit_s - clock.ElapsedSeconds(), 0.01);
  Cbc_setMaximumSeconds(cbc, limit);
  Cbc_setAllowableFractionGap(cbc, options.relative_gap);
  Cbc_setParameter(cbc, "threads", std::to_string(options.threads).c_str());
  Cbc_setParameter(cbc, "randomCbcSeed", std::to_string(options.seed + 1).c_str());
  Cbc_setParameter(cbc, "randomSeed", std::to_string(options.seed + 1).c_str());

  SolveResult result;
  double start_objective = kInfinity;
  if (!options.mip_start.empty()) {
    auto violations = model.Violations(options.mip_start, 1e-6);
    if (violations.empty()) {
      std::vector<int> idx;
      std::vector<double> vals;
      for (size_t i = 0; i < model.num_vars(); ++i) {
        idx.push_back(static_cast<int>(i));
        vals.push_back(options.mip_start[i]);
      }
      Cbc_setMIPStartI(cbc, static_cast<int>(idx.size()), idx.data(), vals.data());
      result.used_mip_start = true;
      start_objective = model.Evaluate(options.mip_start);
    } else {
      LogTo(logger, LogLevel::kWarning,
            "MIP start dropped: it violates " + violations.front().what + " by " +
                std::to_string(violations.front().amount));
    }
  }

  const bool preprocess = options.preprocess == Preprocess::kOn ||
                          (options.preprocess == Preprocess::kAuto && !result.used_mip_start);
  if (!preprocess) Cbc_setParameter(cbc, "preprocess", "off");
  result.preprocessed = preprocess;

  ProgressCollector collector;
  collector.to_stderr = options.progress_to_stderr;
  collector.on_progress = &options.on_progress;
  if (result.used_mip_start) {
    collector.current.incumbent = model.minimize() ? start_objective : -start_objective;
    collector.Record();
  }
  g_collector = &collector;
  Cbc_registerCallBack(cbc, OnCbcMessage);
  {
    StdoutSilencer silence(true);
    Cbc_solve(cbc);
  }
  g_collector = nullptr;
  if (options.progress_to_stderr) std::fprintf(stderr, "\n");

  result.solve_time_s = clock.ElapsedSeconds();
  result.progress = std::move(collector.points);
  const double* best = Cbc_bestSolution(cbc);
  if (best == nullptr && Cbc_isProvenOptimal(cbc)) best = Cbc_getColSolution(cbc);
  if (best != nullptr) {
    std::vector<double> values(best, best + model.num_vars());
    for (size_t i = 0; i < values.size(); ++i)
      if (model.vars()[i].type != VarType::kContinuous) values[i] = std::round(values[i]);
    result.values = std::move(values);
    result.objective = model.Evaluate(result.values);
  } else if (result.used_mip_start) {
    // CBC accepted the start but kept no copy: the start itself is a valid solution.
    result.values = options.mip_start;
    result.objective = start_objective;
  }
  double bound = FromCbc(Cbc_getBestPossibleObjValue(cbc));
  if (!model.minimize()) bound = -bound;
  result.bound = bound;

  if (Cbc_isProvenInfeasible(cbc) && !result.has_solution()) {
    result.status = SolveStatus::kInfeasible;
  } else if (Cbc_isContinuousUnbounded(cbc) && !result.has_solution()) {
    result.status = SolveStatus::kUnbounded;
  } else if (!result.has_solution()) {
    result.status = SolveStatus::kNoSolution;
  } else if (Cbc_isProvenOptimal(cbc) && !Cbc_isSecondsLimitReached(cbc)) {
    result.status = SolveStatus::kOptimal;
    result.bound = result.objective;
  } else {
    result.status = SolveStatus::kFeasible;
  }
  if (result.has_solution() && std::isfinite(result.bound)) {
    result.gap =
        std::abs(result.objective - result.bound) / std::max(std::abs(result.objective), 1e-9);
  }
  if (result.status == SolveStatus::kOptimal) result.gap = 0.0;
  ProgressPoint last;
  last.time_s = result.solve_time_s;
  last.incumbent = result.objective;
  last.bound = result.bound;
  result.progress.push_back(last);
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
