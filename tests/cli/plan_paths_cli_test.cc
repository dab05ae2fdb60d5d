// Plans store model and cluster file paths relative to the plan file's directory, so `simulate`,
// `show` and `run` work from any working directory; older plans, whose paths are relative to where
// they were made, still work from there (with a warning).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "testing/cli_runner.h"

namespace hx {
namespace {

using nlohmann::json;
using testing::RunCli;
using testing::RunCliIn;

// root/a holds the model and cluster files, root/b the plan, root/c is where it is used from.
class PlanPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTempDir();
    for (const char* sub : {"/a", "/b", "/c"})
      ASSERT_EQ(system(("mkdir " + root_ + sub).c_str()), 0);
    auto r = RunCli("export lstm --layers 1 --io 8 --seq 2 -o " + root_ + "/a/m.json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    testing::WriteTextFile(root_ + "/a/c.yaml",
                           testing::ReadTextFile(std::string(HX_SOURCE_DIR) +
                                                 "/fuzz/corpus/cluster_yaml/server.yaml"));
    r = RunCliIn(root_ + "/a", "place m.json --cluster c.yaml --algo heft -o ../b/plan.json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    plan_ = testing::ParseJsonOrFail(testing::ReadTextFile(root_ + "/b/plan.json"));
  }
  std::string root_;
  json plan_;
};

TEST_F(PlanPathsTest, PathsAreStoredRelativeToThePlanFile) {
  EXPECT_EQ(plan_["model"]["spec"], "../a/m.json");
  EXPECT_EQ(plan_["cluster"]["spec"], "../a/c.yaml");
}

TEST_F(PlanPathsTest, SimulateAndShowWorkFromAnotherDirectory) {
  auto sim = RunCliIn(root_ + "/c", "simulate ../b/plan.json --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_GT(testing::ParseJsonOrFail(sim.out)["latency_ms"].get<double>(), 0.0);
  EXPECT_EQ(sim.err.find("working directory"), std::string::npos) << sim.err;
  auto show = RunCliIn(root_ + "/c", "show ../b/plan.json");
  EXPECT_EQ(show.exit_code, 0) << show.err;
  // From the source directory too, with an absolute plan path.
  auto abs = RunCli("simulate " + root_ + "/b/plan.json");
  EXPECT_EQ(abs.exit_code, 0) << abs.err;
}

TEST_F(PlanPathsTest, AnOldPlanWithWorkingDirectoryPathsStillWorksFromThereWithAWarning) {
  json old = plan_;
  old["model"]["spec"] = "a/m.json";  // relative to root, where an older hexplan ran
  old["cluster"]["spec"] = "a/c.yaml";
  testing::WriteTextFile(root_ + "/b/old.json", old.dump(1));
  auto r = RunCliIn(root_, "simulate b/old.json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("working directory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a/m.json"), std::string::npos) << r.err;
  // From elsewhere the old paths resolve nowhere: a clear error naming the plan and the file.
  auto lost = RunCliIn(root_ + "/c", "simulate ../b/old.json");
  EXPECT_EQ(lost.exit_code, 2) << lost.err;
  EXPECT_NE(lost.err.find("old.json"), std::string::npos) << lost.err;
  EXPECT_NE(lost.err.find("m.json"), std::string::npos) << lost.err;
}

TEST_F(PlanPathsTest, ZooNamesAndPresetsAreStoredAsTheyAre) {
  auto r =
      RunCliIn(root_ + "/a", "place gpt2 --cluster sortinghat-v100 --algo heft -o ../b/zoo.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json zoo = testing::ParseJsonOrFail(testing::ReadTextFile(root_ + "/b/zoo.json"));
  EXPECT_EQ(zoo["model"]["spec"], "gpt2");
  EXPECT_EQ(zoo["cluster"]["spec"], "sortinghat-v100");
  EXPECT_EQ(RunCliIn(root_ + "/c", "simulate ../b/zoo.json").exit_code, 0);
}

TEST_F(PlanPathsTest, AZooCnnWithSeparateBatchNormIsRebuiltTheSameWay) {
  auto r = RunCliIn(root_ + "/a",
                    "place mobilenet_v2 --batchnorm separate --cluster sortinghat-v100 --algo "
                    "single -o ../b/bn.json --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double placed = testing::ParseJsonOrFail(r.out)["latency_ms"].get<double>();
  json bn = testing::ParseJsonOrFail(testing::ReadTextFile(root_ + "/b/bn.json"));
  EXPECT_EQ(bn["model"]["batchnorm"], "separate");
  // simulate rebuilds the graph from the plan's options: the model hash matches and so does the
  // latency; a plan of the folded graph says nothing about BatchNorm.
  auto sim = RunCliIn(root_ + "/c", "simulate ../b/bn.json --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_DOUBLE_EQ(testing::ParseJsonOrFail(sim.out)["latency_ms"].get<double>(), placed);
  ASSERT_EQ(RunCliIn(root_ + "/a",
                     "place mobilenet_v2 --cluster sortinghat-v100 --algo single "
                     "-o ../b/folded.json")
                .exit_code,
            0);
  json folded = testing::ParseJsonOrFail(testing::ReadTextFile(root_ + "/b/folded.json"));
  EXPECT_FALSE(folded["model"].contains("batchnorm"));
  EXPECT_NE(folded["model"]["hash"], bn["model"]["hash"]);
}

}  // namespace
}  // namespace hx
