#include "hexplan/milp/model.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace hx::milp {

LinExpr& LinExpr::operator+=(const LinExpr& other) {
  terms_.insert(terms_.end(), other.terms_.begin(), other.terms_.end());
  constant_ += other.constant_;
  return *this;
}

LinExpr& LinExpr::operator-=(const LinExpr& other) {
  for (const auto& [v, c] : other.terms_) terms_.push_back({v, -c});
  constant_ -= other.constant_;
  return *this;
}

LinExpr& LinExpr::operator*=(double k) {
  for (auto& t : terms_) t.second *= k;
  constant_ *= k;
  return *this;
}

LinExpr LinExpr::Normalized() const {
  std::map<int, double> merged;
  for (const auto& [v, c] : terms_) merged[v] += c;
  LinExpr out(constant_);
  for (const auto& [v, c] : merged)
    if (c != 0.0) out.terms_.push_back({v, c});
  return out;
}

LinExpr operator+(LinExpr a, const LinExpr& b) { return a += b; }
LinExpr operator-(LinExpr a, const LinExpr& b) { return a -= b; }
LinExpr operator*(LinExpr a, double k) { return a *= k; }
LinExpr operator*(double k, LinExpr a) { return a *= k; }
LinExpr operator-(LinExpr a) { return a *= -1.0; }

Var Model::AddVar(double lower, double upper, VarType type, const std::string& name) {
  Var v(static_cast<int>(vars_.size()));
  Variable var;
  var.name = name.empty() ? "x" + std::to_string(v.index()) : name;
  var.lower = lower;
  var.upper = upper;
  var.type = type;
  if (type == VarType::kBinary) {
    var.lower = std::max(0.0, lower);
    var.upper = std::min(1.0, upper);
  }
  vars_.push_back(std::move(var));
  return v;
}

int Model::AddConstraint(const LinExpr& lhs, Sense sense, const LinExpr& rhs,
                         const std::string& name, const std::string& group) {
  LinExpr diff = (lhs - rhs).Normalized();
  Constraint c;
  c.name = name.empty() ? "c" + std::to_string(constraints_.size()) : name;
  c.group = group;
  c.terms = diff.terms();
  c.sense = sense;
  c.rhs = -diff.constant();
  constraints_.push_back(std::move(c));
  return static_cast<int>(constraints_.size()) - 1;
}

double Model::MinValue(const LinExpr& expr) const {
  double v = expr.constant();
  for (const auto& [i, c] : expr.terms()) v += c > 0 ? c * vars_[i].lower : c * vars_[i].upper;
  return v;
}

double Model::MaxValue(const LinExpr& expr) const {
  double v = expr.constant();
  for (const auto& [i, c] : expr.terms()) v += c > 0 ? c * vars_[i].upper : c * vars_[i].lower;
  return v;
}

Status Model::AddIndicator(Var binary, bool active_value, const LinExpr& lhs, Sense sense,
                           const LinExpr& rhs, const std::string& name, const std::string& group) {
  if (!binary.valid() || static_cast<size_t>(binary.index()) >= vars_.size() ||
      vars_[binary.index()].type != VarType::kBinary) {
    return InvalidArgument("indicator '" + name + "': the controlling variable must be binary");
  }
  // `off` is 1 exactly when the constraint is relaxed.
  LinExpr off = active_value ? LinExpr(1.0) - LinExpr(binary) : LinExpr(binary);
  LinExpr diff = (lhs - rhs).Normalized();
  auto add_side = [&](bool upper_side, const std::string& suffix) -> Status {
    // upper_side: diff <= 0 when active, i.e. diff <= M * off with M = max(diff).
    double m = upper_side ? MaxValue(diff) : -MinValue(diff);
    if (!std::isfinite(m)) {
      return InvalidArgument("indicator '" + name +
                             "': cannot derive big-M, a variable in it has an infinite bound");
    }
    m = std::max(m, 0.0);
    if (upper_side) {
      AddConstraint(diff, Sense::kLessEqual, off * m, name + suffix, group);
    } else {
      AddConstraint(diff, Sense::kGreaterEqual, off * (-m), name + suffix, group);
    }
    return Status::Ok();
  };
  if (sense == Sense::kLessEqual || sense == Sense::kEqual)
    HX_RETURN_IF_ERROR(add_side(true, sense == Sense::kEqual ? "_le" : ""));
  if (sense == Sense::kGreaterEqual || sense == Sense::kEqual)
    HX_RETURN_IF_ERROR(add_side(false, sense == Sense::kEqual ? "_ge" : ""));
  return Status::Ok();
}

void Model::SetObjective(const LinExpr& objective, bool minimize) {
  LinExpr n = objective.Normalized();
  objective_terms_ = n.terms();
  objective_constant_ = n.constant();
  minimize_ = minimize;
}

size_t Model::num_integer_vars() const {
  return static_cast<size_t>(std::count_if(vars_.begin(), vars_.end(), [](const Variable& v) {
    return v.type != VarType::kContinuous;
  }));
}

void Model::SetBounds(Var v, double lower, double upper) {
  vars_[v.index()].lower = lower;
  vars_[v.index()].upper = upper;
}

void Model::RenameAll(const std::vector<std::string>& var_names,
                      const std::vector<std::string>& constraint_names) {
  HX_CHECK(var_names.size() == vars_.size() && constraint_names.size() == constraints_.size());
  for (size_t i = 0; i < vars_.size(); ++i) vars_[i].name = var_names[i];
  for (size_t i = 0; i < constraints_.size(); ++i) constraints_[i].name = constraint_names[i];
}

Status Model::Validate() const {
  for (const Variable& v : vars_) {
    if (std::isnan(v.lower) || std::isnan(v.upper) || v.lower > v.upper)
      return InvalidArgument("variable '" + v.name + "': lower bound " + std::to_string(v.lower) +
                             " exceeds upper bound " + std::to_string(v.upper));
  }
  auto check_terms = [&](const std::vector<std::pair<int, double>>& terms,
                         const std::string& where) -> Status {
    for (const auto& [i, c] : terms) {
      if (i < 0 || static_cast<size_t>(i) >= vars_.size())
        return InvalidArgument(where + ": unknown variable index " + std::to_string(i));
      if (!std::isfinite(c))
        return InvalidArgument(where + ": non-finite coefficient on '" + vars_[i].name + "'");
    }
    return Status::Ok();
  };
  for (const Constraint& c : constraints_) {
    HX_RETURN_IF_ERROR(check_terms(c.terms, "constraint '" + c.name + "'"));
    if (!std::isfinite(c.rhs))
      return InvalidArgument("constraint '" + c.name + "': non-finite right-hand side");
  }
  return check_terms(objective_terms_, "objective");
}

double Model::Evaluate(const std::vector<double>& values) const {
  double obj = objective_constant_;
  for (const auto& [i, c] : objective_terms_) obj += c * values.at(i);
  return obj;
}

std::vector<Model::Violation> Model::Violations(const std::vector<double>& values,
                                                double tolerance) const {
  std::vector<Violation> out;
  if (values.size() != vars_.size()) {
    out.push_back({"solution has " + std::to_string(values.size()) + " values for " +
                       std::to_string(vars_.size()) + " variables",
                   "", kInfinity});
    return out;
  }
  for (size_t i = 0; i < vars_.size(); ++i) {
    const Variable& v = vars_[i];
    double x = values[i];
    double amount = std::max(v.lower - x, x - v.upper);
    if (amount > tolerance) out.push_back({"bound of " + v.name, "bounds", amount});
    if (v.type != VarType::kContinuous && std::abs(x - std::round(x)) > tolerance)
      out.push_back({"integrality of " + v.name, "integrality", std::abs(x - std::round(x))});
  }
  for (const Constraint& c : constraints_) {
    double lhs = 0.0;
    for (const auto& [i, coef] : c.terms) lhs += coef * values[i];
    double amount = 0.0;
    switch (c.sense) {
      case Sense::kLessEqual:
        amount = lhs - c.rhs;
        break;
      case Sense::kGreaterEqual:
        amount = c.rhs - lhs;
        break;
      case Sense::kEqual:
        amount = std::abs(lhs - c.rhs);
        break;
    }
    double scaled_tol = tolerance * std::max(1.0, std::abs(c.rhs));
    if (amount > scaled_tol) {
      out.push_back({"constraint " + c.name + (c.group.empty() ? "" : " (group " + c.group + ")"),
                     c.group, amount});
    }
  }
  return out;
}

}  // namespace hx::milp
