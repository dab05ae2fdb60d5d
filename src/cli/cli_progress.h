#pragma once
// Progress lines on stderr for the long commands (place, compare, simulate): core/progress.h's
// reporter set up for this process — one redrawn line on a terminal, plain lines into a pipe,
// nothing under --quiet — with the planner's name, its elapsed time and, for MILP planners, the
// solver's incumbent, bound and gap.
//
// HEXPLAN_PROGRESS_AFTER and HEXPLAN_PROGRESS_EVERY (seconds; default 2 and 5) move the threshold
// before anything shows and the interval of plain lines: the tests set them low.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hexplan/core/logger.h"
#include "hexplan/core/progress.h"
#include "hexplan/core/status.h"
#include "hexplan/place/planner.h"

namespace hx::cli {

// `--quiet`: no progress lines (warnings and errors still print).
void SetQuiet(bool quiet);

// This process's options: terminal when stderr is one, quiet under --quiet, the environment's
// threshold and interval when set.
ProgressOptions CliProgressOptions();

// "moirai  12.345 ms (feasible)  19.3 s", or "moirai  failed: <message>  0.1 s".
std::string PlannerDoneText(const std::string& planner,
                            const StatusOr<place::PlacementOutcome>& outcome, double seconds);

// While alive: a reporter on stderr with a thread ticking it.
class CliProgress {
 public:
  CliProgress();
  ProgressReporter& reporter() { return reporter_; }
  // Starts the task `name`, points request->on_solver_progress at it, and routes the request's
  // logger through one that clears the terminal line before a warning prints.
  void StartPlanner(const std::string& name, place::PlanRequest* request);

 private:
  class LineClearingLogger final : public Logger {
   public:
    LineClearingLogger(ProgressReporter* reporter, Logger* inner)
        : reporter_(reporter), inner_(inner) {}
    void Log(LogLevel level, std::string_view message) override;

   private:
    ProgressReporter* reporter_;
    Logger* inner_;
  };

  ProgressReporter reporter_;
  std::vector<std::unique_ptr<LineClearingLogger>> loggers_;  // one per request started
  ProgressTicker ticker_;                                     // last: stops first
};

}  // namespace hx::cli
