// hexplan._core: the C++ side of `import hexplan` (docs/python.md). It runs the CLI's own commands
// in-process (src/cli/cli_app.h) and exposes the option registry; python/hexplan/ wraps both into
// the typed API.
#include "module.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "hexplan's C++ core: the CLI in-process and its option registry";
  hx::python::AddInvoke(m);
  hx::python::AddRegistry(m);
}
