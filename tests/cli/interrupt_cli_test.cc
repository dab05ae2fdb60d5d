// Ctrl-C while a MILP planner runs: the planner stops, the best valid plan found so far is written
// and reported as interrupted, and the exit code is 130.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "testing/cli_runner.h"
#include "testing/test_paths.h"

namespace hx {
namespace {

TEST(InterruptCliTest, SigintDuringAMilpWritesTheBestValidPlanAndExits130) {
  const std::string dir = testing::MakeTempDir();
  const std::string plan = dir + "/plan.json";
  // GETF's assignment MILP on swin-1.8b takes far longer than the 4 s before the signal.
  const std::string cmd = "cd '" + testing::SourceDir() + "' && ('" + testing::CliPath() +
                          "' place swin-1.8b --cluster moirai-inter --algo getf --time-limit 120 "
                          "-o " +
                          plan + " --json >" + dir + "/out.json 2>" + dir +
                          "/err.txt & pid=$!; sleep 4; kill -INT $pid; wait $pid; echo $? >" + dir +
                          "/rc.txt)";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const std::string err = testing::ReadTextFile(dir + "/err.txt");
  EXPECT_EQ(std::atoi(testing::ReadTextFile(dir + "/rc.txt").c_str()), 130) << err;
  EXPECT_NE(err.find("interrupted"), std::string::npos) << err;
  nlohmann::json j = testing::ParseJsonOrFail(testing::ReadTextFile(dir + "/out.json"));
  EXPECT_EQ(j.value("status", ""), "interrupted") << j.dump();
  auto simulated = testing::RunCli("simulate " + plan + " --json");
  EXPECT_EQ(simulated.exit_code, 0) << simulated.err;
}

}  // namespace
}  // namespace hx
