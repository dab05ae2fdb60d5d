#pragma once
// A stop request for long work (a user's Ctrl-C or SIGTERM while planning): the CLI's signal
// handler sets it; solvers and search loops look at it and end early with the best answer they
// have, which the planner then reports as interrupted. Process-wide, like the signals it answers.

namespace hx {

// Async-signal-safe: sets the flag only.
void RequestStop();
bool StopRequested();
void ClearStopRequest();

// While alive, SIGINT and SIGTERM request a stop instead of ending the process (a second signal
// ends it at once); the previous handlers come back when it goes.
class StopOnSignals {
 public:
  StopOnSignals();
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
  // The signal that asked for the stop (0: none).
  static int Signal();
};

}  // namespace hx
