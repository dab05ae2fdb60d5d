#pragma once
// A small MILP modelling API: continuous, integer and binary variables, linear constraints, big-M
// and indicator helpers that derive the tightest M from variable bounds, and a linear objective.
// Solvers (CBC, embedded; or any external solver through LP/MPS export) live behind solver.h.

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "hexplan/core/status.h"

namespace hx::milp {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

enum class VarType : uint8_t { kContinuous, kInteger, kBinary };

// A handle to a model variable (its column index).
class Var {
 public:
  Var() = default;
  explicit Var(int index) : index_(index) {}
  int index() const { return index_; }
  bool valid() const { return index_ >= 0; }
  friend bool operator==(Var a, Var b) { return a.index_ == b.index_; }

 private:
  int index_ = -1;
};

// sum(coef * var) + constant.
class LinExpr {
 public:
  LinExpr() = default;
  LinExpr(double constant) : constant_(constant) {}  // NOLINT: implicit on purpose
  LinExpr(Var v, double coef = 1.0) { terms_.push_back({v.index(), coef}); }  // NOLINT

  LinExpr& Add(Var v, double coef) {
    terms_.push_back({v.index(), coef});
    return *this;
  }
  LinExpr& operator+=(const LinExpr& other);
  LinExpr& operator-=(const LinExpr& other);
  LinExpr& operator*=(double k);

  const std::vector<std::pair<int, double>>& terms() const { return terms_; }
  double constant() const { return constant_; }
  // Merges repeated variables and drops zero coefficients (sorted by variable index).
  LinExpr Normalized() const;

 private:
  std::vector<std::pair<int, double>> terms_;
  double constant_ = 0.0;
};

LinExpr operator+(LinExpr a, const LinExpr& b);
LinExpr operator-(LinExpr a, const LinExpr& b);
LinExpr operator*(LinExpr a, double k);
LinExpr operator*(double k, LinExpr a);
LinExpr operator-(LinExpr a);

enum class Sense : uint8_t { kLessEqual, kGreaterEqual, kEqual };

struct Variable {
  std::string name;
  double lower = 0.0;
  double upper = kInfinity;
  VarType type = VarType::kContinuous;
};

// expr (sense) rhs, stored with the constant moved to the right-hand side.
struct Constraint {
  std::string name;
  std::string group;  // constraint class ("memory", "non-overlap", ...) for diagnostics
  std::vector<std::pair<int, double>> terms;
  Sense sense = Sense::kLessEqual;
  double rhs = 0.0;
};

class Model {
 public:
  explicit Model(std::string name = "hexplan") : name_(std::move(name)) {}

  const std::string& name() const { return name_; }

  Var AddVar(double lower, double upper, VarType type, const std::string& name = "");
  Var AddContinuous(double lower, double upper, const std::string& name = "") {
    return AddVar(lower, upper, VarType::kContinuous, name);
  }
  Var AddInteger(double lower, double upper, const std::string& name = "") {
    return AddVar(lower, upper, VarType::kInteger, name);
  }
  Var AddBinary(const std::string& name = "") { return AddVar(0.0, 1.0, VarType::kBinary, name); }

  // lhs (sense) rhs. Returns the constraint's row index.
  int AddConstraint(const LinExpr& lhs, Sense sense, const LinExpr& rhs,
                    const std::string& name = "", const std::string& group = "");
  int AddLessEqual(const LinExpr& lhs, const LinExpr& rhs, const std::string& name = "",
                   const std::string& group = "") {
    return AddConstraint(lhs, Sense::kLessEqual, rhs, name, group);
  }
  int AddGreaterEqual(const LinExpr& lhs, const LinExpr& rhs, const std::string& name = "",
                      const std::string& group = "") {
    return AddConstraint(lhs, Sense::kGreaterEqual, rhs, name, group);
  }
  int AddEqual(const LinExpr& lhs, const LinExpr& rhs, const std::string& name = "",
               const std::string& group = "") {
    return AddConstraint(lhs, Sense::kEqual, rhs, name, group);
  }

  // Indicator: when `binary` == `active_value`, lhs (sense) rhs must hold; otherwise it is relaxed
  // by the tightest big-M the variable bounds allow. Fails when a bound needed for M is infinite.
  Status AddIndicator(Var binary, bool active_value, const LinExpr& lhs, Sense sense,
                      const LinExpr& rhs, const std::string& name = "",
                      const std::string& group = "");

  // Interval bounds of an expression from the variable bounds.
  double MinValue(const LinExpr& expr) const;
  double MaxValue(const LinExpr& expr) const;

  void Minimize(const LinExpr& objective) { SetObjective(objective, true); }
  void Maximize(const LinExpr& objective) { SetObjective(objective, false); }
  void SetObjective(const LinExpr& objective, bool minimize);

  size_t num_vars() const { return vars_.size(); }
  size_t num_constraints() const { return constraints_.size(); }
  size_t num_integer_vars() const;
  const Variable& var(Var v) const { return vars_[v.index()]; }
  const std::vector<Variable>& vars() const { return vars_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }
  const std::vector<std::pair<int, double>>& objective_terms() const { return objective_terms_; }
  double objective_constant() const { return objective_constant_; }
  bool minimize() const { return minimize_; }
  // Changes a variable's bounds (fixing it when lower == upper).
  void SetBounds(Var v, double lower, double upper);

  // Replaces every variable and constraint name (sizes must match).
  void RenameAll(const std::vector<std::string>& var_names,
                 const std::vector<std::string>& constraint_names);

  // Checks bounds (lower <= upper, binaries in [0,1]), finite coefficients, valid indices.
  Status Validate() const;

  // Objective value and the largest violation of any bound, integrality or constraint for `values`.
  double Evaluate(const std::vector<double>& values) const;
  struct Violation {
    std::string what;  // "constraint mem_gpu0 (group memory)", "bound of x3", "integrality of y"
    std::string group;
    double amount = 0.0;
  };
  std::vector<Violation> Violations(const std::vector<double>& values,
                                    double tolerance = 1e-6) const;

 private:
  std::string name_;
  std::vector<Variable> vars_;
  std::vector<Constraint> constraints_;
  std::vector<std::pair<int, double>> objective_terms_;
  double objective_constant_ = 0.0;
  bool minimize_ = true;
};

}  // namespace hx::milp
