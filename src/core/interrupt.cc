#include "hexplan/core/interrupt.h"

#include <atomic>
#include <csignal>

namespace hx {
namespace {

std::atomic<bool> g_stop{false};
volatile std::sig_atomic_t g_signal = 0;
struct sigaction g_old_int, g_old_term;

void OnSignal(int sig) {
  if (g_stop.load()) {
    // A second request: restore the default action and end as the signal says.
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_signal = sig;
  g_stop.store(true);
}

}  // namespace

void RequestStop() { g_stop.store(true); }
bool StopRequested() { return g_stop.load(std::memory_order_relaxed); }
void ClearStopRequest() {
  g_stop.store(false);
  g_signal = 0;
}

StopOnSignals::StopOnSignals() {
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
}

StopOnSignals::~StopOnSignals() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

int StopOnSignals::Signal() { return g_signal; }

}  // namespace hx
