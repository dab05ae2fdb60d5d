// _core.planners() and _core.command_options(): the records the CLI itself is built from (the
// planner registry's OptionSpecs; each subcommand's CLI11 options), so that the Python API keeps
// no list of options of its own.
#include <pybind11/stl.h>

#include <string>

#include "cli/cli_app.h"
#include "hexplan/core/options.h"
#include "hexplan/place/planner.h"
#include "module.h"

namespace py = pybind11;

namespace hx::python {
namespace {

py::object ValueToPython(const OptionValue& value) {
  return std::visit([](const auto& v) -> py::object { return py::cast(v); }, value);
}

py::dict SpecToDict(const OptionSpec& spec) {
  py::dict d;
  d["name"] = spec.name;
  d["type"] = OptionTypeName(spec.type());
  d["description"] = spec.description;
  d["default"] = ValueToPython(spec.default_value);
  d["range"] = spec.RangeText();
  d["choices"] = spec.choices;
  return d;
}

// {planner name: [option record, ...]} from the place registry.
py::dict Planners() {
  py::dict out;
  for (const std::string& name : place::PlannerNames()) {
    auto specs = place::PlannerOptionSpecs(name);
    py::list options;
    if (specs.ok())
      for (const OptionSpec& spec : *specs) options.append(SpecToDict(spec));
    out[py::str(name)] = options;
  }
  return out;
}

py::list CommandOptions(const std::string& command) {
  py::list out;
  for (const cli::CliOption& o : cli::CommandOptions(command)) {
    py::dict d;
    d["name"] = o.name;
    d["positional"] = o.positional;
    d["flag"] = o.flag;
    d["repeatable"] = o.repeatable;
    d["required"] = o.required;
    d["description"] = o.description;
    d["default"] = o.default_text;
    out.append(d);
  }
  return out;
}

}  // namespace

void AddRegistry(py::module_& m) {
  m.def("planners", &Planners,
        "{planner: [{name, type, description, default, range, choices}]}: each planner's own "
        "options, from the registry `hexplan planners` prints");
  m.def("command_options", &CommandOptions, py::arg("command"),
        "The options of a `hexplan` subcommand as the CLI defines them: [{name, positional, flag, "
        "repeatable, required, description, default}]");
}

}  // namespace hx::python
