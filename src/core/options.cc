#include "hexplan/core/options.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace hx {
namespace {

std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

StatusOr<OptionValue> ParseText(const OptionSpec& spec, const std::string& text) {
  const std::string bad =
      spec.Flag() + ": expected " + OptionTypeName(spec.type()) + ", got '" + text + "'";
  switch (spec.type()) {
    case OptionType::kBool:
      if (text == "true" || text == "1" || text == "on" || text == "yes") return OptionValue(true);
      if (text == "false" || text == "0" || text == "off" || text == "no")
        return OptionValue(false);
      return InvalidArgument(bad);
    case OptionType::kInt: {
      errno = 0;
      char* end = nullptr;
      const long long v = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || errno == ERANGE) return InvalidArgument(bad);
      return OptionValue(static_cast<int64_t>(v));
    }
    case OptionType::kDouble: {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || std::isnan(v)) return InvalidArgument(bad);
      return OptionValue(v);
    }
    case OptionType::kString:
      return OptionValue(text);
  }
  return InvalidArgument(bad);
}

// A value of another type that converts without loss: an integer for a double option.
StatusOr<OptionValue> Convert(const OptionSpec& spec, const OptionValue& value) {
  if (value.index() == spec.default_value.index()) return value;
  if (const auto* text = std::get_if<std::string>(&value)) return ParseText(spec, *text);
  if (spec.type() == OptionType::kDouble && std::holds_alternative<int64_t>(value))
    return OptionValue(static_cast<double>(std::get<int64_t>(value)));
  if (spec.type() == OptionType::kInt && std::holds_alternative<double>(value)) {
    const double d = std::get<double>(value);
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15)
      return OptionValue(static_cast<int64_t>(d));
  }
  return InvalidArgument(spec.Flag() + ": expected " + OptionTypeName(spec.type()) + ", got " +
                         OptionValueText(value));
}

}  // namespace

const char* OptionTypeName(OptionType type) {
  switch (type) {
    case OptionType::kBool:
      return "a boolean";
    case OptionType::kInt:
      return "an integer";
    case OptionType::kDouble:
      return "a number";
    case OptionType::kString:
      return "text";
  }
  return "?";
}

std::string OptionValueText(const OptionValue& value) {
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) return Number(*d);
  return std::get<std::string>(value);
}

std::string OptionSpec::DefaultText() const {
  const std::string text = OptionValueText(default_value);
  return text.empty() ? "none" : text;
}

std::string OptionSpec::RangeText() const {
  switch (type()) {
    case OptionType::kBool:
      return "true or false";
    case OptionType::kInt:
    case OptionType::kDouble:
      return (lower_exclusive ? "(" : "[") + Number(lower) + ", " + Number(upper) +
             (std::isinf(upper) ? ")" : "]");
    case OptionType::kString: {
      if (choices.empty()) return "text";
      std::string list;
      for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + c;
      return "one of: " + list;
    }
  }
  return "";
}

StatusOr<OptionValue> OptionSpec::Accept(const OptionValue& value) const {
  HX_ASSIGN_OR_RETURN(OptionValue v, Convert(*this, value));
  if (type() == OptionType::kInt || type() == OptionType::kDouble) {
    const double x = type() == OptionType::kInt ? static_cast<double>(std::get<int64_t>(v))
                                                : std::get<double>(v);
    const bool below = lower_exclusive ? !(x > lower) : !(x >= lower);
    if (below || !(x <= upper))
      return InvalidArgument(Flag() + ": must be in " + RangeText() + ", got " +
                             OptionValueText(v));
  }
  if (type() == OptionType::kString && !choices.empty() && v != default_value) {
    bool known = false;
    for (const std::string& c : choices) known = known || std::get<std::string>(v) == c;
    if (!known)
      return InvalidArgument(Flag() + ": expected " + RangeText() + ", got '" +
                             std::get<std::string>(v) + "'");
  }
  return v;
}

OptionSpec BoolOption(std::string name, std::string description, bool default_value) {
  OptionSpec s;
  s.name = std::move(name);
  s.description = std::move(description);
  s.default_value = default_value;
  return s;
}

OptionSpec IntOption(std::string name, std::string description, int64_t default_value,
                     int64_t lower, int64_t upper) {
  OptionSpec s;
  s.name = std::move(name);
  s.description = std::move(description);
  s.default_value = default_value;
  s.lower = static_cast<double>(lower);
  s.upper = static_cast<double>(upper);
  return s;
}

OptionSpec DoubleOption(std::string name, std::string description, double default_value,
                        double lower, double upper, bool lower_exclusive) {
  OptionSpec s;
  s.name = std::move(name);
  s.description = std::move(description);
  s.default_value = default_value;
  s.lower = lower;
  s.upper = upper;
  s.lower_exclusive = lower_exclusive;
  return s;
}

OptionSpec StringOption(std::string name, std::string description, std::string default_value,
                        std::vector<std::string> choices) {
  OptionSpec s;
  s.name = std::move(name);
  s.description = std::move(description);
  s.default_value = std::move(default_value);
  s.choices = std::move(choices);
  return s;
}

const OptionSpec* OptionSet::FindSpec(const std::string& name) const {
  for (const OptionSpec& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

Status OptionSet::Give(const std::string& name, OptionValue value) {
  if (specs_.empty()) {
    given_[name] = std::move(value);
    return Status::Ok();
  }
  const OptionSpec* spec = FindSpec(name);
  if (spec == nullptr) return InvalidArgument("--" + name + ": unknown option");
  HX_ASSIGN_OR_RETURN(OptionValue v, spec->Accept(value));
  given_[name] = std::move(v);
  return Status::Ok();
}

StatusOr<OptionSet> OptionSet::Resolve(std::vector<OptionSpec> specs,
                                       const std::string& who) const {
  OptionSet out(std::move(specs));
  for (const auto& [name, value] : given_) {
    if (out.FindSpec(name) == nullptr) {
      std::string own;
      for (const OptionSpec& s : out.specs_) own += (own.empty() ? "" : ", ") + s.Flag();
      return InvalidArgument("--" + name + ": not an option of " + who +
                             " (its options: " + (own.empty() ? "none" : own) + ")");
    }
    HX_RETURN_IF_ERROR(out.Give(name, value));
  }
  return out;
}

OptionSet OptionSet::Restrict(const std::vector<OptionSpec>& specs) const {
  OptionSet out;
  for (const auto& [name, value] : given_)
    for (const OptionSpec& s : specs)
      if (s.name == name) out.given_[name] = value;
  return out;
}

const OptionValue& OptionSet::Value(const std::string& name, OptionType type) const {
  const OptionSpec* spec = FindSpec(name);
  HX_CHECK_MSG(spec != nullptr, "option '" + name + "' read but not registered");
  HX_CHECK_MSG(spec->type() == type, "option '" + name + "' read as the wrong type");
  auto it = given_.find(name);
  return it != given_.end() ? it->second : spec->default_value;
}

bool OptionSet::Bool(const std::string& name) const {
  return std::get<bool>(Value(name, OptionType::kBool));
}
int64_t OptionSet::Int(const std::string& name) const {
  return std::get<int64_t>(Value(name, OptionType::kInt));
}
double OptionSet::Double(const std::string& name) const {
  return std::get<double>(Value(name, OptionType::kDouble));
}
const std::string& OptionSet::String(const std::string& name) const {
  return std::get<std::string>(Value(name, OptionType::kString));
}

}  // namespace hx
