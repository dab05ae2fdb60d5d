#pragma once
// Progress lines for long runs (a planner at its time limit, a compare of every planner): the
// task's name, its elapsed time and what it reports (a MILP's incumbent, bound and gap).
//
// Nothing is shown for a task shorter than `after_s`, so quick commands stay silent. On a terminal
// the reporter redraws one line in place ('\r', cleared when the task ends); into a pipe or a file
// it writes a plain line when the task passes `after_s`, then one every `every_s`. Notes (compare's
// line per finished planner) are held until the whole run has lasted `after_s`, then written in
// order: a run that ends sooner writes none.
//
// The clock and the output are injected, so the formatting and the timing rules are tested without
// sleeping; Tick() does the printing and a ProgressTicker calls it from a thread in real runs.
// Every member is thread-safe (a solver thread updates while the ticker prints).

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hx {

struct ProgressOptions {
  bool terminal = false;   // one line redrawn in place; else plain lines
  bool quiet = false;      // print nothing
  double after_s = 2.0;    // a task (or the run, for notes) shows nothing before this many seconds
  double every_s = 5.0;    // plain lines: one per task this often
  double redraw_s = 0.25;  // terminal: redraw at most this often
  int width = 0;           // terminal: the line is cut to width - 1 characters (0: no cut)
};

// A MILP's progress as a detail: "incumbent 12.3 ms  bound 10.1 ms  gap 17.9%" (seconds in;
// "incumbent none" before the first solution, no bound or gap while they are unknown).
std::string MilpProgressText(double incumbent_s, double bound_s);

class ProgressReporter {
 public:
  using Clock = std::function<double()>;                 // monotonic seconds
  using Sink = std::function<void(const std::string&)>;  // writes text as is

  // The default sink writes to file descriptor 2 with write(2) (no stdio lock, so a solver child
  // forked meanwhile cannot inherit one held); the default clock is std::chrono::steady_clock.
  explicit ProgressReporter(ProgressOptions options, Sink sink = nullptr, Clock clock = nullptr);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  const ProgressOptions& options() const { return options_; }

  // A new task (ends the one running, without a line): `name` heads its lines.
  void Start(const std::string& name);
  // What the running task reports now; shown with its next line.
  void Update(const std::string& detail);
  // Prints the running task's line when one is due.
  void Tick();
  // Ends the running task: the terminal line is cleared; `note`, when not empty, is a Note.
  void Finish(const std::string& note = "");
  // A line of its own ("moirai  12.3 ms  19.2 s"), written once the run has lasted after_s.
  void Note(const std::string& line);
  // Clears the terminal line now, before something else writes to the stream (a warning); the
  // task's line comes back at the next tick.
  void ClearLine();

 private:
  void WriteLineLocked(const std::string& line);
  void FlushNotesLocked(double now);
  void ClearLocked();
  std::string TaskLineLocked(double now) const;

  const ProgressOptions options_;
  Sink sink_;
  Clock clock_;
  std::mutex mu_;
  double run_start_ = 0.0;
  bool running_ = false;
  std::string name_;
  std::string detail_;
  double task_start_ = 0.0;
  double last_print_ = 0.0;
  bool printed_ = false;    // a line of this task is out
  bool line_open_ = false;  // terminal: a redrawn line is on screen
  bool run_long_ = false;   // the run has lasted after_s: notes go out at once
  std::vector<std::string> held_notes_;
};

// Calls reporter->Tick() every `period_s` from a thread while alive (null reporter: nothing).
class ProgressTicker {
 public:
  explicit ProgressTicker(ProgressReporter* reporter, double period_s = 0.1);
  ~ProgressTicker();
  ProgressTicker(const ProgressTicker&) = delete;
  ProgressTicker& operator=(const ProgressTicker&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace hx
