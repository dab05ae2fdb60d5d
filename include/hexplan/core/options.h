#pragma once
// Typed, bounded options that an algorithm owns and registers (HiGHS-style): name, description,
// default and bounds in one record that `--help`, flag validation, the docs' tables and the Python
// API all read. An OptionSet holds the values a user gave; resolved against an algorithm's specs it
// answers every read with the given value or the default, and rejects unknown or out-of-range ones
// with an error naming the flag.

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "hexplan/core/status.h"

namespace hx {

enum class OptionType { kBool, kInt, kDouble, kString };
const char* OptionTypeName(OptionType type);

using OptionValue = std::variant<bool, int64_t, double, std::string>;

struct OptionSpec {
  std::string name;         // the flag without dashes: "alpha" is `--alpha`
  std::string description;  // one line for --help
  OptionValue default_value;
  // Numbers: the inclusive range [lower, upper]; `lower_exclusive` makes it (lower, upper].
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  bool lower_exclusive = false;
  // Strings: the accepted values (empty: any text). The default is always accepted.
  std::vector<std::string> choices;

  OptionType type() const { return static_cast<OptionType>(default_value.index()); }
  std::string Flag() const { return "--" + name; }
  // "0", "[0, inf)", "one of: a, b": for help texts and the docs' tables.
  std::string DefaultText() const;
  std::string RangeText() const;
  // Converts a value of a compatible type (text for any type, an integer for a double) to this
  // option's type and checks its range; the error names the flag.
  StatusOr<OptionValue> Accept(const OptionValue& value) const;
};

OptionSpec BoolOption(std::string name, std::string description, bool default_value);
OptionSpec IntOption(std::string name, std::string description, int64_t default_value,
                     int64_t lower, int64_t upper = std::numeric_limits<int32_t>::max());
OptionSpec DoubleOption(std::string name, std::string description, double default_value,
                        double lower, double upper = std::numeric_limits<double>::infinity(),
                        bool lower_exclusive = false);
OptionSpec StringOption(std::string name, std::string description, std::string default_value,
                        std::vector<std::string> choices = {});

// The text form of a value ("true", "6", "0.5", "fusion").
std::string OptionValueText(const OptionValue& value);

class OptionSet {
 public:
  OptionSet() = default;
  explicit OptionSet(std::vector<OptionSpec> specs) : specs_(std::move(specs)) {}

  // Records a value the user gave. With specs, the value is converted and checked now; without
  // (a set of given values not yet resolved), it is kept as given.
  Status Give(const std::string& name, OptionValue value);
  Status Give(const std::string& name, const char* text) { return Give(name, std::string(text)); }

  // A set with these specs and every given value, each converted and checked; a given name the
  // specs do not know is an error naming the flag and `who` ("planner 'heft'").
  StatusOr<OptionSet> Resolve(std::vector<OptionSpec> specs, const std::string& who) const;
  // The given values the specs know, still unresolved (a portfolio passing options on to its
  // members, each taking its own and checking it when it resolves them).
  OptionSet Restrict(const std::vector<OptionSpec>& specs) const;

  const std::vector<OptionSpec>& specs() const { return specs_; }
  const std::map<std::string, OptionValue>& given() const { return given_; }
  bool IsGiven(const std::string& name) const { return given_.count(name) > 0; }
  const OptionSpec* FindSpec(const std::string& name) const;

  // The value given or the default. The name must be one of the specs (HX_CHECK).
  bool Bool(const std::string& name) const;
  int64_t Int(const std::string& name) const;
  double Double(const std::string& name) const;
  const std::string& String(const std::string& name) const;

 private:
  const OptionValue& Value(const std::string& name, OptionType type) const;

  std::vector<OptionSpec> specs_;
  std::map<std::string, OptionValue> given_;
};

}  // namespace hx
