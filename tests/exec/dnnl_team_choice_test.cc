// TeamChoice (src/exec/dnnl/team_choice.h): a node's first runs alternate between the device
// thread alone and its team, the first run of each way is not counted, the faster median wins
// for the rest of the cycle, and the next cycle measures again.
#include <gtest/gtest.h>

#include <functional>

#include "exec/dnnl/team_choice.h"

namespace hx::exec::dnnl_impl {
namespace {

// Runs `runs` runs whose time depends on the way chosen; returns how many used the team.
int RunTeamChoice(TeamChoice& c, int runs, const std::function<double(bool, int)>& seconds) {
  int team = 0;
  for (int i = 0; i < runs; ++i) {
    const bool t = c.NextUsesTeam();
    team += t ? 1 : 0;
    c.Record(seconds(t, i));
  }
  return team;
}

TEST(TeamChoiceTest, ProbesBothWaysThenKeepsTheFasterMedian) {
  TeamChoice c;
  // The team is slower in the median although its first (uncounted) run and one outlier of the
  // thread alone would make the means say otherwise.
  auto seconds = [](bool team, int i) {
    if (i < 2) return team ? 0.001 : 9.0;  // uncounted: making the primitive
    if (!team && i == 4) return 5.0;       // one preempted run alone
    return team ? 3.0 : 1.0;
  };
  EXPECT_EQ(RunTeamChoice(c, TeamChoice::kProbeRuns, seconds), TeamChoice::kProbeRuns / 2);
  EXPECT_FALSE(c.uses_team());
  EXPECT_EQ(RunTeamChoice(c, 100, seconds), 0);
}

TEST(TeamChoiceTest, MeasuresAgainEachCycle) {
  TeamChoice c;
  // Alone is faster in the first cycle, the team in the second (the load went away).
  auto seconds = [](bool team, int i) { return (i < TeamChoice::kCycleRuns) == team ? 2.0 : 1.0; };
  RunTeamChoice(c, TeamChoice::kCycleRuns, seconds);
  EXPECT_FALSE(c.uses_team());
  TeamChoice fresh;
  const int team_runs = RunTeamChoice(fresh, 2 * TeamChoice::kCycleRuns, seconds);
  EXPECT_TRUE(fresh.uses_team());
  // Cycle one: half the probes; cycle two: half the probes and every run after them.
  EXPECT_EQ(team_runs,
            TeamChoice::kProbeRuns / 2 + TeamChoice::kCycleRuns - TeamChoice::kProbeRuns / 2);
}

}  // namespace
}  // namespace hx::exec::dnnl_impl
