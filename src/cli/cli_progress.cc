#include "cli/cli_progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>

#include "hexplan/core/format_number.h"
#include "hexplan/place/plan_status.h"

namespace hx::cli {
namespace {

bool quiet_progress = false;

// A positive number of seconds from the environment, else `fallback`.
double SecondsFromEnv(const char* name, double fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  return (end != nullptr && *end == '\0' && std::isfinite(v) && v >= 0) ? v : fallback;
}

}  // namespace

void SetQuiet(bool quiet) { quiet_progress = quiet; }

ProgressOptions CliProgressOptions() {
  ProgressOptions o;
  o.terminal = isatty(2) != 0;
  winsize size{};
  if (o.terminal && ioctl(2, TIOCGWINSZ, &size) == 0) o.width = size.ws_col;
  o.quiet = quiet_progress;
  o.after_s = SecondsFromEnv("HEXPLAN_PROGRESS_AFTER", o.after_s);
  o.every_s = SecondsFromEnv("HEXPLAN_PROGRESS_EVERY", o.every_s);
  return o;
}

std::string PlannerDoneText(const std::string& planner,
                            const StatusOr<place::PlacementOutcome>& outcome, double seconds) {
  std::string text = planner + "  ";
  if (outcome.ok()) {
    text += FormatNumber(outcome->sim.makespan_s * 1e3) + " ms (" +
            place::PlanStatusName(outcome->result.status) + ")";
  } else {
    // One line: the message's lines joined, cut at kMaxReason characters.
    constexpr size_t kMaxReason = 160;
    std::string why;
    for (char c : outcome.status().message()) {
      if (c == '\n' || c == ' ') {
        if (!why.empty() && why.back() != ' ') why += ' ';
      } else {
        why += c;
      }
    }
    if (why.size() > kMaxReason) why = why.substr(0, kMaxReason - 3) + "...";
    text += "failed: " + why;
  }
  return text + "  " + FormatNumber(seconds, 1) + " s";
}

CliProgress::CliProgress() : reporter_(CliProgressOptions()), ticker_(&reporter_) {}

void CliProgress::LineClearingLogger::Log(LogLevel level, std::string_view message) {
  if (inner_ == nullptr) return;
  reporter_->ClearLine();
  inner_->Log(level, message);
}

void CliProgress::StartPlanner(const std::string& name, place::PlanRequest* request) {
  reporter_.Start(name);
  loggers_.push_back(std::make_unique<LineClearingLogger>(&reporter_, request->logger));
  request->logger = loggers_.back().get();
  ProgressReporter* reporter = &reporter_;
  request->on_solver_progress = [reporter](const milp::ProgressPoint& p) {
    reporter->Update(MilpProgressText(p.incumbent, p.bound));
  };
}

}  // namespace hx::cli
