// The stop request behind Ctrl-C: set by the signal handler while a StopOnSignals lives, read by
// solvers and search loops; the process survives the first signal.
#include "hexplan/core/interrupt.h"

#include <gtest/gtest.h>

#include <csignal>

namespace hx {
namespace {

TEST(InterruptTest, ASignalWhileGuardedRequestsAStopInsteadOfEndingTheProcess) {
  ClearStopRequest();
  EXPECT_FALSE(StopRequested());
  {
    StopOnSignals guard;
    std::raise(SIGINT);  // would end the test binary without the guard
    EXPECT_TRUE(StopRequested());
    EXPECT_EQ(StopOnSignals::Signal(), SIGINT);
  }
  ClearStopRequest();
  EXPECT_FALSE(StopRequested());
  EXPECT_EQ(StopOnSignals::Signal(), 0);
  {
    StopOnSignals guard;
    std::raise(SIGTERM);
    EXPECT_TRUE(StopRequested());
    EXPECT_EQ(StopOnSignals::Signal(), SIGTERM);
  }
  ClearStopRequest();
  RequestStop();
  EXPECT_TRUE(StopRequested());
  ClearStopRequest();
}

}  // namespace
}  // namespace hx
