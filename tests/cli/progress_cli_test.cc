// Progress lines on stderr for long runs (a MILP planner at its time limit), --quiet, and
// `compare`'s table: rows by simulated latency, the winner marked, and the reason when `single`
// cannot be the reference for speedups.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "testing/cli_runner.h"

namespace hx {
namespace {

// The threshold and interval the tests use (seconds), restored when the test ends.
class ProgressEnv {
 public:
  ProgressEnv(const char* after, const char* every) {
    setenv("HEXPLAN_PROGRESS_AFTER", after, 1);
    setenv("HEXPLAN_PROGRESS_EVERY", every, 1);
  }
  ~ProgressEnv() {
    unsetenv("HEXPLAN_PROGRESS_AFTER");
    unsetenv("HEXPLAN_PROGRESS_EVERY");
  }
};

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

// MOIRAI's MILP on resnet50 over moirai-inter (368 binaries) runs to its 4 s limit with a gap of
// 5-15% (the MIP start is its first incumbent; the bound comes after about a second).
constexpr char kMilpRun[] = "place resnet50 --cluster moirai-inter --algo moirai --time-limit 4";

TEST(ProgressCliTest, AMilpAtItsLimitReportsIncumbentBoundAndGapIntoAPipe) {
  ProgressEnv env("0.5", "0.5");
  auto r = testing::RunCliWithTimeout(kMilpRun, 120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Plain lines (stderr is a file here): no carriage returns or escapes.
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  const std::regex milp_line(
      "hexplan: moirai  [0-9.]+ s  incumbent [0-9.]+ ms  bound [0-9.]+ ms  gap [0-9.]+%");
  int milp_lines = 0;
  for (const std::string& line : Lines(r.err))
    if (std::regex_match(line, milp_line)) ++milp_lines;
  EXPECT_GE(milp_lines, 1) << r.err;
  // The finish line: the planner, its simulated latency and status, its time.
  EXPECT_TRUE(std::regex_search(r.err, std::regex("hexplan: moirai  [0-9.]+ ms \\([a-z_]+\\)  "
                                                  "[0-9.]+ s\n")))
      << r.err;
  // stdout is the report alone.
  EXPECT_EQ(r.out.find("hexplan: moirai"), std::string::npos);
}

TEST(ProgressCliTest, QuietPrintsNoProgress) {
  ProgressEnv env("0.5", "0.5");
  for (const char* where : {"--quiet ", ""}) {
    const std::string args = std::string(where) + kMilpRun + (*where ? "" : " --quiet");
    auto r = testing::RunCliWithTimeout(args, 120);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err.find("hexplan: moirai"), std::string::npos) << args << "\n" << r.err;
  }
}

TEST(ProgressCliTest, AQuickRunPrintsNothingAtTheDefaultThreshold) {
  auto r =
      testing::RunCli("place lstm --layers 2 --io 16 --seq 8 --cluster moirai-inter --algo heft");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// Two V100s of 800 MB each: gpt2 (0.86 GB with its activations) fits on no single one.
constexpr char kSmallCluster[] = R"(name: two-small-gpus
nodes:
  - name: box
    devices:
      - {name: gpu0, model: V100-SXM2-32GB, memory: 800MB}
      - {name: gpu1, model: V100-SXM2-32GB, memory: 800MB}
links:
  - {name: membus, kind: memory, a: host, b: gpu0, bandwidth: 15GB/s, latency: 1us}
  - {a: host, b: gpu1, bandwidth: 15GB/s, latency: 1us}
  - {kind: nvlink, a: gpu0, b: gpu1, bandwidth: 25GB/s, latency: 200ns}
)";

TEST(ProgressCliTest, CompareRanksByLatencyMarksTheWinnerAndSaysWhyThereIsNoSpeedup) {
  const std::string dir = testing::MakeTempDir();
  testing::WriteTextFile(dir + "/small.yaml", kSmallCluster);
  ProgressEnv env("0", "0.5");  // every finished planner gets its line
  const std::string args =
      "compare gpt2 --cluster " + dir + "/small.yaml --algos m-topo,single,heft,pipeline";
  auto r = testing::RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> rows;  // the planner of each table row, in order
  std::vector<std::string> lines = Lines(r.out);
  for (size_t i = 2; i < lines.size(); ++i) {
    // A row: its mark ('*' or ' '), a space, the planner; an error's further lines are indented.
    if (lines[i].size() < 3 || (lines[i][0] != '*' && lines[i][0] != ' ') || lines[i][1] != ' ' ||
        lines[i][2] == ' ')
      continue;
    std::stringstream ss(lines[i].substr(2));
    std::string name;
    ss >> name;
    rows.push_back(name);
  }
  // Simulated latencies: heft 58.2 ms < pipeline 58.6 ms < m-topo 63.1 ms; single fails.
  ASSERT_EQ(rows, (std::vector<std::string>{"heft", "pipeline", "m-topo", "single"})) << r.out;
  EXPECT_NE(r.out.find("* heft "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fastest plan: heft (marked *)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("0.00x"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("speedup n/a (single: no device can hold 'gpt2' alone"), std::string::npos)
      << r.out;
  // A line per finished planner on stderr, failures included.
  for (const char* planner : {"m-topo", "heft", "pipeline"})
    EXPECT_TRUE(std::regex_search(
        r.err, std::regex(std::string("hexplan: ") + planner + "  [0-9.]+ ms \\(heuristic\\)")))
        << planner << "\n"
        << r.err;
  EXPECT_NE(r.err.find("hexplan: single  failed: "), std::string::npos) << r.err;

  auto j = testing::RunCli(args + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  nlohmann::json out = testing::ParseJsonOrFail(j.out);
  EXPECT_EQ(out.value("winner", ""), "heft");
  EXPECT_NE(out.value("single_error", "").find("no device can hold"), std::string::npos);
  // `results` keeps the order run; `rank` gives the order by latency.
  ASSERT_EQ(out["results"].size(), 4u);
  EXPECT_EQ(out["results"][0].value("algo", ""), "m-topo");
  EXPECT_EQ(out["results"][0].value("rank", 0), 3);
  EXPECT_EQ(out["results"][2].value("rank", 0), 1);
  EXPECT_FALSE(out["results"][1].contains("rank"));  // single failed
}

}  // namespace
}  // namespace hx
