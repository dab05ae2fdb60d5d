// `hexplan run` and `hexplan profile` end to end: a plan made by `place` runs on two CPU core
// groups, its output file equals a one-device run's, profiles load back, and bad input exits 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "hexplan/cost/profile.h"
#include "hexplan/exec/tensor.h"
#include "testing/cli_runner.h"

namespace hx {
namespace {

using testing::RunCli;

const char* kModel = "lstm --seq 3 --layers 2 --io 8";

TEST(RunCliTest, PlanOnTwoGroupsMatchesOneGroup) {
  const std::string dir = testing::MakeTempDir();
  // cores=2 keeps the two-group cluster valid on any machine.
  const std::string two = "local-cpu:groups=2,cores=2", one = "local-cpu:groups=1,cores=2";
  ASSERT_EQ(RunCli(std::string("place ") + kModel + " --cluster " + two + " --algo heft -o " + dir +
                   "/two.json")
                .exit_code,
            0);
  ASSERT_EQ(
      RunCli(std::string("place ") + kModel + " --cluster " + one + " -o " + dir + "/one.json")
          .exit_code,
      0);
  auto a = RunCli(std::string("run ") + kModel + " --plan " + dir +
                  "/two.json --random-input --seed 5 --repeat 3 --output " + dir +
                  "/two.npy --trace " + dir + "/trace.json --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto b = RunCli(std::string("run ") + kModel + " --plan " + dir +
                  "/one.json --random-input --seed 5 --output " + dir + "/one.npy");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  auto j = nlohmann::json::parse(a.out);
  EXPECT_EQ(j["latency_ms"].size(), 3u);
  EXPECT_GT(j["latency_ms_median"].get<double>(), 0.0);
  EXPECT_GE(j["latency_ms_p95"].get<double>(), j["latency_ms_median"].get<double>());
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json({3, 1, 8}));
  auto x = exec::ReadNpyFile(dir + "/two.npy");
  auto y = exec::ReadNpyFile(dir + "/one.npy");
  ASSERT_TRUE(x.ok() && y.ok());
  EXPECT_EQ(x->bytes, y->bytes);
  // The trace is the simulator's format.
  std::string text;
  {
    FILE* f = std::fopen((dir + "/trace.json").c_str(), "r");
    ASSERT_NE(f, nullptr);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
    std::fclose(f);
  }
  auto tj = nlohmann::json::parse(text);
  EXPECT_GT(tj["traceEvents"].size(), 10u);
}

TEST(RunCliTest, CpuWeightsInPlaceDropTheLoadsAndGiveTheSameOutput) {
  const std::string dir = testing::MakeTempDir();
  const std::string two = "local-cpu:groups=2,cores=2";
  for (const std::string name : {"copied", "in-place"}) {
    auto placed = RunCli(std::string("place ") + kModel + " --cluster " + two + " --algo heft" +
                         (name == "in-place" ? " --cpu-weights-in-place" : "") + " -o " + dir +
                         "/" + name + ".json");
    ASSERT_EQ(placed.exit_code, 0) << placed.err;
    auto ran = RunCli(std::string("run ") + kModel + " --plan " + dir + "/" + name +
                      ".json --random-input --seed 5 --output " + dir + "/" + name + ".npy");
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
  }
  auto plan_json = [&](const std::string& name) {
    FILE* f = std::fopen((dir + "/" + name + ".json").c_str(), "r");
    HX_CHECK(f != nullptr);
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
    std::fclose(f);
    return nlohmann::json::parse(text);
  };
  auto count = [](const nlohmann::json& list, const char* key, const char* value) {
    size_t k = 0;
    for (const auto& e : list) k += e[key] == value;
    return k;
  };
  const auto copied = plan_json("copied"), in_place = plan_json("in-place");
  EXPECT_GT(count(copied["transfers"], "kind", "weight_load"), 0u);
  EXPECT_EQ(count(in_place["transfers"], "kind", "weight_load"), 0u);
  EXPECT_EQ(count(in_place["weights"], "mode", "dha"), in_place["weights"].size());
  auto x = exec::ReadNpyFile(dir + "/copied.npy");
  auto y = exec::ReadNpyFile(dir + "/in-place.npy");
  ASSERT_TRUE(x.ok() && y.ok());
  EXPECT_EQ(x->bytes, y->bytes);
}

// `export --weights random --seed N` writes the values `run --seed N` gives the zoo model, so the
// file runs to the same output; another seed's file holds other weights (its payload is used).
TEST(RunCliTest, ExportWithRandomWeightsRunsLikeTheZooModel) {
  const std::string dir = testing::MakeTempDir();
  const std::string cluster = " --cluster local-cpu:groups=1,cores=1";
  auto output = [&](const std::string& model, const std::string& name) {
    auto placed = RunCli("place " + model + cluster + " -o " + dir + "/" + name + ".json");
    EXPECT_EQ(placed.exit_code, 0) << placed.err;
    auto ran = RunCli("run " + model + " --plan " + dir + "/" + name +
                      ".json --random-input --seed 7 --output " + dir + "/" + name + ".npy");
    EXPECT_EQ(ran.exit_code, 0) << ran.err;
    auto npy = exec::ReadNpyFile(dir + "/" + name + ".npy");
    EXPECT_TRUE(npy.ok()) << npy.status().ToString();
    return npy.ok() ? npy->bytes : std::vector<uint8_t>{};
  };
  for (const char* seed : {"7", "8"}) {
    auto exported = RunCli(std::string("export ") + kModel + " --weights random --seed " + seed +
                           " -o " + dir + "/m" + seed + ".onnx");
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    EXPECT_NE(exported.out.find("weights seeded random"), std::string::npos) << exported.out;
  }
  const auto zoo = output(kModel, "zoo");
  ASSERT_FALSE(zoo.empty());
  EXPECT_EQ(output(dir + "/m7.onnx", "file7"), zoo);
  EXPECT_NE(output(dir + "/m8.onnx", "file8"), zoo);
  EXPECT_EQ(
      RunCli(std::string("export ") + kModel + " --weights all -o " + dir + "/x.onnx").exit_code,
      2);
  EXPECT_EQ(
      RunCli(std::string("export ") + kModel + " --weights random -o " + dir + "/x.json").exit_code,
      2);
}

TEST(RunCliTest, ProfileWritesAProfileTheCostModelReads) {
  const std::string dir = testing::MakeTempDir();
  // A small time budget keeps this fast under Debug+ASan; the profile is complete all the same.
  auto r =
      RunCli(std::string("profile ") + kModel +
             " --cluster local-cpu:groups=2,cores=2 --repeat 2 --budget 1 --contention --json -o " +
             dir + "/p.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["kernel_sum_ms"].get<double>(), 0.0);
  EXPECT_GT(j["concurrent_kernel_sum_ms"].get<double>(), 0.0);
  EXPECT_GE(j["contention_gamma"].get<double>(), 0.0);
  auto p = cost::Profile::ReadFile(dir + "/p.json");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_GT(p->node_times().size(), 20u);
  EXPECT_FALSE(p->transfer_times().empty());
  // Every device model of the cluster gets a measured contention term the simulator reads.
  ASSERT_EQ(p->cpu_contention().size(), 1u);
  EXPECT_EQ(p->cpu_contention().begin()->second, j["contention_gamma"].get<double>());
  auto bad = RunCli(std::string("profile ") + kModel +
                    " --cluster local-cpu:groups=2,cores=2 --budget -1 -o " + dir + "/q.json");
  EXPECT_EQ(bad.exit_code, 2);
}

TEST(RunCliTest, BadInputsExitTwo) {
  const std::string dir = testing::MakeTempDir();
  ASSERT_EQ(RunCli(std::string("place ") + kModel + " --cluster local-cpu:groups=1,cores=1 -o " +
                   dir + "/p.json")
                .exit_code,
            0);
  auto missing = RunCli(std::string("run ") + kModel + " --plan " + dir + "/p.json");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("'input'"), std::string::npos) << missing.err;
  auto bad_file = RunCli(std::string("run ") + kModel + " --plan " + dir +
                         "/p.json --random-input --input input=" + dir + "/nope.npy");
  EXPECT_EQ(bad_file.exit_code, 2);
  auto other_model =
      RunCli("run lstm --seq 4 --layers 2 --io 8 --plan " + dir + "/p.json --random-input");
  EXPECT_EQ(other_model.exit_code, 2);
  EXPECT_NE(other_model.err.find("fingerprint"), std::string::npos) << other_model.err;
  auto gpu = RunCli("place " + std::string(kModel) + " --cluster sortinghat-v100-hetero -o " + dir +
                    "/g.json");
  if (gpu.exit_code == 0) {
    auto r = RunCli(std::string("run ") + kModel + " --plan " + dir + "/g.json --random-input");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("not a CPU"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace hx
