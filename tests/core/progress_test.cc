#include "hexplan/core/progress.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace hx {
namespace {

// A reporter writing into `out` on a clock the test moves by hand.
struct Fixture {
  std::string out;
  double now = 100.0;
  ProgressReporter reporter;

  explicit Fixture(ProgressOptions options)
      : reporter(
            options, [this](const std::string& s) { out += s; }, [this] { return now; }) {}
  // Ticks every 1/8 s (exact in binary) for `seconds`, as the ticker thread would.
  void Run(double seconds) {
    for (int i = 0; i < static_cast<int>(std::lround(seconds * 8)); ++i) {
      now += 0.125;
      reporter.Tick();
    }
  }
};

ProgressOptions Pipe() { return ProgressOptions{}; }
ProgressOptions Terminal() {
  ProgressOptions o;
  o.terminal = true;
  return o;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ProgressTest, ATaskShorterThanTheThresholdPrintsNothing) {
  for (ProgressOptions o : {Pipe(), Terminal()}) {
    Fixture f(o);
    f.reporter.Start("moirai");
    f.reporter.Update("incumbent 1.000 ms");
    f.Run(1.9);
    f.reporter.Finish();
    EXPECT_EQ(f.out, "") << o.terminal;
  }
}

TEST(ProgressTest, PipeWritesALineAtTheThresholdThenOneEveryInterval) {
  Fixture f(Pipe());
  f.reporter.Start("moirai");
  f.reporter.Update(MilpProgressText(0.012, 0.010));
  f.Run(12.05);  // lines at 2, 7 and 12 s
  EXPECT_EQ(Count(f.out, "\n"), 3u) << f.out;
  EXPECT_EQ(f.out.find('\r'), std::string::npos);
  EXPECT_EQ(f.out.substr(0, f.out.find('\n')),
            "hexplan: moirai  2.0 s  incumbent 12.000 ms  bound 10.000 ms  gap 16.67%");
  EXPECT_NE(f.out.find("hexplan: moirai  7.0 s"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("hexplan: moirai  12.0 s"), std::string::npos) << f.out;
  f.reporter.Finish();
  EXPECT_EQ(Count(f.out, "\n"), 3u);  // nothing to clear in a pipe
}

TEST(ProgressTest, TerminalRedrawsOneLineThrottledAndClearsIt) {
  Fixture f(Terminal());
  f.reporter.Start("efficientmip");
  f.Run(3.0);  // 2.0 s .. 3.0 s, redrawn every 0.25 s at most: 5 draws at most
  EXPECT_EQ(f.out.find('\n'), std::string::npos) << f.out;
  const size_t draws = Count(f.out, "\r\033[Khexplan: efficientmip");
  EXPECT_GE(draws, 3u);
  EXPECT_LE(draws, 5u);
  f.reporter.Finish();
  EXPECT_EQ(f.out.substr(f.out.size() - 4), "\r\033[K");  // cleared when done
  f.Run(5.0);
  EXPECT_EQ(Count(f.out, "hexplan: efficientmip"), draws);  // no task, no line
}

TEST(ProgressTest, TerminalLinesAreCutToTheWidth) {
  ProgressOptions o = Terminal();
  o.width = 20;
  Fixture f(o);
  f.reporter.Start("efficientmip");
  f.reporter.Update(MilpProgressText(0.012, 0.010));
  f.Run(2.0);
  EXPECT_EQ(f.out, "\r\033[Khexplan: efficientm");  // 19 characters after the escape
}

TEST(ProgressTest, NotesWaitUntilTheRunIsLongAndKeepTheirOrder) {
  Fixture f(Pipe());
  f.reporter.Start("single");
  f.reporter.Finish("single  5.000 ms  0.1 s");
  f.now += 0.5;
  f.reporter.Note("heft  4.000 ms  0.1 s");
  EXPECT_EQ(f.out, "");  // the run is 0.5 s old
  f.reporter.Start("moirai");
  f.Run(2.0);
  EXPECT_EQ(f.out.find("hexplan: single  5.000 ms  0.1 s\nhexplan: heft  4.000 ms  0.1 s\n"), 0u)
      << f.out;
  f.reporter.Finish("moirai  3.000 ms  2.0 s");
  EXPECT_NE(f.out.find("hexplan: moirai  3.000 ms  2.0 s\n"), std::string::npos);  // at once now
}

TEST(ProgressTest, AShortRunDropsItsNotes) {
  Fixture f(Pipe());
  f.reporter.Note("single  5.000 ms  0.1 s");
  f.now += 1.0;
  f.reporter.Tick();
  EXPECT_EQ(f.out, "");
}

TEST(ProgressTest, QuietPrintsNothing) {
  for (ProgressOptions o : {Pipe(), Terminal()}) {
    o.quiet = true;
    Fixture f(o);
    f.reporter.Start("moirai");
    f.reporter.Update(MilpProgressText(0.012, 0.010));
    f.Run(20.0);
    f.reporter.Finish("moirai  3.000 ms  20.0 s");
    EXPECT_EQ(f.out, "");
  }
}

TEST(ProgressTest, ANoteOnATerminalClearsTheLineFirst) {
  Fixture f(Terminal());
  f.reporter.Start("moirai");
  f.Run(2.5);
  f.reporter.Note("heft  4.000 ms  0.1 s");
  EXPECT_NE(f.out.find("\r\033[Khexplan: heft  4.000 ms  0.1 s\n"), std::string::npos) << f.out;
}

TEST(ProgressTest, ClearLineMakesRoomForAWarningAndTheLineComesBack) {
  Fixture f(Terminal());
  f.reporter.Start("getf");
  f.Run(2.0);
  f.reporter.ClearLine();
  EXPECT_EQ(f.out.substr(f.out.size() - 4), "\r\033[K");
  f.out += "hexplan: warning: ...\n";
  f.Run(0.125);
  EXPECT_EQ(f.out.substr(f.out.find("...\n") + 4), "\r\033[Khexplan: getf  2.1 s");
}

TEST(ProgressTest, MilpTextWithoutIncumbentOrBound) {
  EXPECT_EQ(MilpProgressText(INFINITY, -INFINITY), "incumbent none");
  EXPECT_EQ(MilpProgressText(0.002, -INFINITY), "incumbent 2.000 ms");
  EXPECT_EQ(MilpProgressText(INFINITY, 0.001), "incumbent none  bound 1.000 ms");
}

}  // namespace
}  // namespace hx
