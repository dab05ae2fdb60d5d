#include "hexplan/core/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "hexplan/core/format_number.h"

namespace hx {
namespace {

// "\r" and "erase to the end of the line": the terminal line is redrawn or cleared in place.
constexpr char kClearLine[] = "\r\033[K";

void WriteToStderr(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(2, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string Seconds(double s) { return FormatNumber(s, 1) + " s"; }

}  // namespace

std::string MilpProgressText(double incumbent_s, double bound_s) {
  std::string out = "incumbent ";
  out += std::isfinite(incumbent_s) ? FormatNumber(incumbent_s * 1e3) + " ms" : "none";
  if (std::isfinite(bound_s)) out += "  bound " + FormatNumber(bound_s * 1e3) + " ms";
  if (std::isfinite(incumbent_s) && std::isfinite(bound_s)) {
    const double gap = std::abs(incumbent_s - bound_s) / std::max(std::abs(incumbent_s), 1e-9);
    out += "  gap " + FormatNumber(100.0 * gap, 2) + "%";
  }
  return out;
}

ProgressReporter::ProgressReporter(ProgressOptions options, Sink sink, Clock clock)
    : options_(options),
      sink_(sink ? std::move(sink) : Sink(WriteToStderr)),
      clock_(clock ? std::move(clock) : Clock(SteadySeconds)) {
  run_start_ = clock_();
}

ProgressReporter::~ProgressReporter() {
  std::lock_guard<std::mutex> lock(mu_);
  ClearLocked();
}

void ProgressReporter::Start(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  ClearLocked();
  running_ = true;
  name_ = name;
  detail_.clear();
  task_start_ = clock_();
  last_print_ = task_start_;
  printed_ = false;
}

void ProgressReporter::Update(const std::string& detail) {
  std::lock_guard<std::mutex> lock(mu_);
  detail_ = detail;
}

std::string ProgressReporter::TaskLineLocked(double now) const {
  std::string line = "hexplan: " + name_ + "  " + Seconds(now - task_start_);
  if (!detail_.empty()) line += "  " + detail_;
  return line;
}

void ProgressReporter::Tick() {
  std::lock_guard<std::mutex> lock(mu_);
  if (options_.quiet) return;
  const double now = clock_();
  FlushNotesLocked(now);
  if (!running_ || now - task_start_ < options_.after_s) return;
  if (options_.terminal) {
    if (printed_ && now - last_print_ < options_.redraw_s) return;
    std::string line = TaskLineLocked(now);
    // A line longer than the terminal wraps, and '\r' then redraws only its last row.
    if (options_.width > 1 && line.size() >= static_cast<size_t>(options_.width))
      line.resize(static_cast<size_t>(options_.width - 1));
    sink_(kClearLine + line);
    line_open_ = true;
  } else {
    if (printed_ && now - last_print_ < options_.every_s) return;
    sink_(TaskLineLocked(now) + "\n");
  }
  printed_ = true;
  last_print_ = now;
}

void ProgressReporter::Finish(const std::string& note) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ClearLocked();
    running_ = false;
  }
  if (!note.empty()) Note(note);
}

void ProgressReporter::Note(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  if (options_.quiet) return;
  held_notes_.push_back(line);
  FlushNotesLocked(clock_());
}

void ProgressReporter::ClearLine() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!line_open_) return;
  ClearLocked();
  printed_ = false;
}

void ProgressReporter::FlushNotesLocked(double now) {
  if (!run_long_ && now - run_start_ < options_.after_s) return;
  run_long_ = true;
  if (held_notes_.empty()) return;
  for (const std::string& note : held_notes_) WriteLineLocked("hexplan: " + note);
  held_notes_.clear();
}

void ProgressReporter::WriteLineLocked(const std::string& line) {
  ClearLocked();
  sink_(line + "\n");
  // The task's line comes back at the next tick.
  if (options_.terminal) printed_ = false;
}

void ProgressReporter::ClearLocked() {
  if (!line_open_) return;
  sink_(kClearLine);
  line_open_ = false;
}

ProgressTicker::ProgressTicker(ProgressReporter* reporter, double period_s) {
  if (reporter == nullptr || reporter->options().quiet) return;
  thread_ = std::thread([this, reporter, period_s] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::duration<double>(period_s));
      if (stop_) break;
      lock.unlock();
      reporter->Tick();
      lock.lock();
    }
  });
}

ProgressTicker::~ProgressTicker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace hx
