// SolveWithCbc: validation, then CBC in a child process watched by a hard deadline (see
// SolveOptions::hard_limit). The child sends its SolveResult back through a pipe as raw bytes.

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>

#include "hexplan/core/interrupt.h"
#include "hexplan/core/stopwatch.h"
#include "hexplan/milp/solver.h"
#include "milp/cbc_in_process.h"

namespace hx::milp {
namespace {

struct Header {
  uint8_t status = 0;
  uint8_t used_mip_start = 0;
  uint8_t preprocessed = 0;
  double objective = 0.0;
  double bound = 0.0;
  double gap = 0.0;
  double solve_time_s = 0.0;
  uint64_t num_values = 0;
  uint64_t num_progress = 0;
};

template <typename T>
void Append(std::string* out, const T* data, size_t count) {
  out->append(reinterpret_cast<const char*>(data), sizeof(T) * count);
}

std::string Serialize(const SolveResult& r) {
  Header h;
  h.status = static_cast<uint8_t>(r.status);
  h.used_mip_start = r.used_mip_start;
  h.preprocessed = r.preprocessed;
  h.objective = r.objective;
  h.bound = r.bound;
  h.gap = r.gap;
  h.solve_time_s = r.solve_time_s;
  h.num_values = r.values.size();
  h.num_progress = r.progress.size();
  std::string out;
  Append(&out, &h, 1);
  Append(&out, r.values.data(), r.values.size());
  for (const ProgressPoint& p : r.progress) {
    const double v[3] = {p.time_s, p.incumbent, p.bound};
    Append(&out, v, 3);
  }
  return out;
}

bool Deserialize(const std::string& bytes, size_t num_vars, SolveResult* r) {
  Header h;
  if (bytes.size() < sizeof h) return false;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.status > static_cast<uint8_t>(SolveStatus::kUnbounded)) return false;
  if (h.num_values != 0 && h.num_values != num_vars) return false;
  if (bytes.size() != sizeof h + sizeof(double) * (h.num_values + 3 * h.num_progress)) return false;
  r->status = static_cast<SolveStatus>(h.status);
  r->used_mip_start = h.used_mip_start != 0;
  r->preprocessed = h.preprocessed != 0;
  r->objective = h.objective;
  r->bound = h.bound;
  r->gap = h.gap;
  r->solve_time_s = h.solve_time_s;
  const char* p = bytes.data() + sizeof h;
  r->values.resize(h.num_values);
  if (h.num_values > 0) std::memcpy(r->values.data(), p, sizeof(double) * h.num_values);
  p += sizeof(double) * h.num_values;
  r->progress.resize(h.num_progress);
  for (ProgressPoint& point : r->progress) {
    double v[3];
    std::memcpy(v, p, sizeof v);
    p += sizeof v;
    point.time_s = v[0];
    point.incumbent = v[1];
    point.bound = v[2];
  }
  return true;
}

void WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// What the caller gets when the child did not answer: the MIP start when it is feasible.
SolveResult FallbackResult(const Model& model, const SolveOptions& options, double elapsed) {
  SolveResult r;
  r.solve_time_s = elapsed;
  if (!options.mip_start.empty()) {  // checked feasible by SolveWithCbc
    r.status = SolveStatus::kFeasible;
    r.values = options.mip_start;
    r.objective = model.Evaluate(r.values);
    r.used_mip_start = true;
  }
  ProgressPoint last;
  last.time_s = elapsed;
  last.incumbent = r.objective;
  r.progress.push_back(last);
  return r;
}

// The result pipe, and the progress pipe when the caller wants live progress: the child writes
// each progress point there as three doubles (time, incumbent, bound; one atomic write).
struct ChildPipes {
  int result[2] = {-1, -1};
  int progress[2] = {-1, -1};

  bool Open(bool live) {
    if (pipe(result) != 0) return false;
    if (live && pipe(progress) != 0) {
      CloseAll();
      return false;
    }
    return true;
  }
  static void Close(int* fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
  void CloseChildEnds() {
    Close(&result[1]);
    Close(&progress[1]);
  }
  void CloseAll() {
    for (int* fd : {&result[0], &result[1], &progress[0], &progress[1]}) Close(fd);
  }
};

[[noreturn]] void RunChild(const Model& model, const SolveOptions& options, Logger* logger,
                           ChildPipes* pipes) {
  ChildPipes::Close(&pipes->result[0]);
  ChildPipes::Close(&pipes->progress[0]);
  SolveOptions child = options;
  if (pipes->progress[1] >= 0) {
    const int fd = pipes->progress[1];
    child.on_progress = [fd](const ProgressPoint& p) {
      const double v[3] = {p.time_s, p.incumbent, p.bound};
      WriteAll(fd, std::string(reinterpret_cast<const char*>(v), sizeof v));
    };
  }
  WriteAll(pipes->result[1], Serialize(SolveWithCbcInProcess(model, child, logger)));
  pipes->CloseAll();
  _exit(0);
}

// Passes on the complete progress points in `buffer` (the rest waits for more bytes).
void PassOnProgress(const SolveOptions& options, std::string* buffer) {
  constexpr size_t kPoint = 3 * sizeof(double);
  size_t used = 0;
  for (; buffer->size() - used >= kPoint; used += kPoint) {
    double v[3];
    std::memcpy(v, buffer->data() + used, kPoint);
    ProgressPoint p;
    p.time_s = v[0];
    p.incumbent = v[1];
    p.bound = v[2];
    options.on_progress(p);
  }
  buffer->erase(0, used);
}

enum class ChildWait : uint8_t { kDone, kTimedOut, kStopped };

// Reads the child's result into `bytes` (and its progress, passed on as it comes) until it is
// done, past its deadline, or a stop is requested.
ChildWait WaitForChild(const SolveOptions& options, const Stopwatch& clock, ChildPipes* pipes,
                       std::string* bytes) {
  const double deadline = options.time_limit_s * 1.05 + 0.5;
  std::string progress;
  char buf[1 << 16];
  while (true) {
    const double left = deadline - clock.ElapsedSeconds();
    if (left <= 0) return ChildWait::kTimedOut;
    if (StopRequested()) return ChildWait::kStopped;  // looked at every 100 ms
    pollfd pfd[2] = {{pipes->result[0], POLLIN, 0}, {pipes->progress[0], POLLIN, 0}};
    const int ready = poll(pfd, 2, static_cast<int>(std::ceil(std::min(left, 0.1) * 1e3)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // re-checks the deadline
    if (pfd[1].revents != 0) {
      const ssize_t n = read(pipes->progress[0], buf, sizeof buf);
      if (n > 0) {
        progress.append(buf, static_cast<size_t>(n));
        PassOnProgress(options, &progress);
      } else if (n == 0 || errno != EINTR) {
        ChildPipes::Close(&pipes->progress[0]);  // poll skips a negative fd
      }
    }
    if (pfd[0].revents == 0) continue;
    const ssize_t n = read(pipes->result[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // EOF: the child is done (or died); what it reported before is passed on
      while (pipes->progress[0] >= 0) {
        const ssize_t m = read(pipes->progress[0], buf, sizeof buf);
        if (m < 0 && errno == EINTR) continue;
        if (m <= 0) break;
        progress.append(buf, static_cast<size_t>(m));
      }
      PassOnProgress(options, &progress);
      return ChildWait::kDone;
    }
    bytes->append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

StatusOr<SolveResult> SolveWithCbc(const Model& model, const SolveOptions& options,
                                   Logger* logger) {
  HX_RETURN_IF_ERROR(model.Validate());
  HX_RETURN_IF_ERROR(options.Validate());
  if (!options.mip_start.empty() && options.mip_start.size() != model.num_vars()) {
    return InvalidArgument("MIP start has " + std::to_string(options.mip_start.size()) +
                           " values for " + std::to_string(model.num_vars()) + " variables");
  }
  // An infeasible start is dropped here, in this process, where the logger is.
  if (!options.mip_start.empty()) {
    const auto violations = model.Violations(options.mip_start, 1e-6);
    if (!violations.empty()) {
      LogTo(logger, LogLevel::kWarning,
            "MIP start dropped: it violates " + violations.front().what + " by " +
                std::to_string(violations.front().amount));
      SolveOptions without_start = options;
      without_start.mip_start.clear();
      return SolveWithCbc(model, without_start, logger);
    }
  }
  // A stop already requested (Ctrl-C while planning): the MIP start, if any, without solving.
  if (StopRequested()) {
    LogTo(logger, LogLevel::kInfo, "stop requested: not solving; keeping the MIP start");
    return FallbackResult(model, options, 0.0);
  }
  if (!options.hard_limit) return SolveWithCbcInProcess(model, options, logger);
  Stopwatch clock;
  ChildPipes pipes;
  if (!pipes.Open(static_cast<bool>(options.on_progress)))
    return SolveWithCbcInProcess(model, options, logger);
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t child = fork();
  if (child < 0) {
    pipes.CloseAll();
    return SolveWithCbcInProcess(model, options, logger);
  }
  if (child == 0) RunChild(model, options, logger, &pipes);
  pipes.CloseChildEnds();
  std::string bytes;
  const ChildWait wait = WaitForChild(options, clock, &pipes, &bytes);
  const bool timed_out = wait == ChildWait::kTimedOut, stopped = wait == ChildWait::kStopped;
  if (timed_out || stopped) kill(child, SIGKILL);
  int wstatus = 0;
  while (waitpid(child, &wstatus, 0) < 0 && errno == EINTR) {
  }
  SolveResult result;
  if (!timed_out && !stopped && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 &&
      Deserialize(bytes, model.num_vars(), &result)) {
    return result;
  }
  const double elapsed = clock.ElapsedSeconds();
  char why[160];
  if (stopped) {
    std::snprintf(why, sizeof why, "CBC was stopped on request after %.2f s", elapsed);
  } else if (timed_out) {
    std::snprintf(why, sizeof why, "CBC ran past its %.2f s limit and was stopped after %.2f s",
                  options.time_limit_s, elapsed);
  } else if (WIFSIGNALED(wstatus)) {
    std::snprintf(why, sizeof why, "CBC crashed (signal %d) after %.2f s", WTERMSIG(wstatus),
                  elapsed);
  } else {
    std::snprintf(why, sizeof why, "CBC's solve ended without an answer after %.2f s", elapsed);
  }
  result = FallbackResult(model, options, elapsed);
  LogTo(logger, LogLevel::kWarning,
        std::string(why) + (result.has_solution() ? "; keeping the MIP start" : "; no solution"));
  return result;
}

}  // namespace hx::milp
