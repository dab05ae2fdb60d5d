// _core.invoke: runs one `hexplan` command line in this process with the GIL released. What the
// command prints on stdout (its --json object) is captured and returned; its error, if any, is
// returned instead of printed so that Python raises it. Ctrl-C: a planner running under the CLI's
// StopOnSignals stops with its best plan (exit 130); otherwise Python's own handler has recorded
// the signal and PyErr_CheckSignals raises KeyboardInterrupt when the call returns.
#include <pybind11/stl.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "cli/cli_app.h"
#include "module.h"

namespace py = pybind11;

namespace hx::python {
namespace {

// While alive, file descriptor 1 writes into a temporary file.
class StdoutCapture {
 public:
  StdoutCapture() {
    std::fflush(stdout);
    std::cout.flush();
    file_ = std::tmpfile();
    saved_ = dup(1);
    if (file_ == nullptr || saved_ < 0 || dup2(fileno(file_), 1) < 0)
      throw std::runtime_error("hexplan: cannot capture the command's output");
  }
  ~StdoutCapture() { Restore(); }
  StdoutCapture(const StdoutCapture&) = delete;
  StdoutCapture& operator=(const StdoutCapture&) = delete;

  // Puts stdout back and returns what was written.
  std::string Finish() {
    Restore();
    std::string text;
    std::rewind(file_);
    char buffer[65536];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, file_)) > 0;) text.append(buffer, n);
    std::fclose(file_);
    file_ = nullptr;
    return text;
  }

 private:
  void Restore() {
    if (saved_ < 0) return;
    std::fflush(stdout);
    std::cout.flush();
    dup2(saved_, 1);
    close(saved_);
    saved_ = -1;
  }
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

std::mutex& InvokeMutex() {
  static std::mutex mu;
  return mu;
}

std::tuple<int, std::string, std::string> Invoke(const std::vector<std::string>& args,
                                                 bool capture) {
  int code = 0;
  std::string out;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(InvokeMutex());  // one command at a time: the CLI is global
    cli::SetPrintErrors(false);
    if (capture) {
      StdoutCapture stdout_capture;
      code = cli::RunCli(args);
      out = stdout_capture.Finish();
    } else {
      code = cli::RunCli(args);
    }
  }
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  return {code, out, cli::LastReportedError().message};
}

}  // namespace

void AddInvoke(py::module_& m) {
  m.def("invoke", &Invoke, py::arg("args"), py::arg("capture") = true,
        "Runs `hexplan ARGS...` in this process (GIL released); returns (exit_code, stdout, "
        "error_message). capture=False leaves stdout alone.");
}

}  // namespace hx::python
