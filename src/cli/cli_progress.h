#pragma once
// Progress lines on stderr for the long commands (place, compare, simulate): core/progress.h's
// reporter set up for this process — one redrawn line on a terminal, plain lines into a pipe,
// nothing under --quiet — with the planner's name, its elapsed time and, for MILP planners, the
// solver's incumbent, bound and gap.
//
// HEXPLAN_PROGRESS_AFTER and HEXPLAN_PROGRESS_EVERY (seconds; default 2 and 5) move the threshold
// before anything shows and the interval of plain lines: the tests set them low.

#include <string>

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
  // Starts the task `name` and points request->on_solver_progress at it.
  void StartPlanner(const std::string& name, place::PlanRequest* request);

 private:
  ProgressReporter reporter_;
  ProgressTicker ticker_;  // after reporter_: stops before it goes
};

}  // namespace hx::cli
