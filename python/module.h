#pragma once
// The pieces of the `hexplan._core` extension module (python/hexplan_module.cc puts them
// together); the Python package python/hexplan/ is the API users call.

#include <pybind11/pybind11.h>

namespace hx::python {

// _core.invoke(args) -> (exit_code, stdout_text, error_message): the CLI in-process.
void AddInvoke(pybind11::module_& m);
// _core.planners(), _core.command_options(command): the option registry as plain records.
void AddRegistry(pybind11::module_& m);

}  // namespace hx::python
