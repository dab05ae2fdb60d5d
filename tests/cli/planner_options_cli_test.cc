// The planner-owned options on the command line: `place --help` lists each planner's options with
// defaults and bounds, `planners` prints the registry, an option given to a planner that does not
// own it exits 2 naming the flag, and `compare` passes each option to the planners that own it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "testing/cli_runner.h"

namespace hx {
namespace {

using nlohmann::json;
using testing::RunCli;

TEST(PlannerOptionsCliTest, PlaceHelpListsEachPlannersOptionsWithDefaultsAndBounds) {
  auto r = RunCli("place --help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text :
       {"--alpha", "chrion: weight of GPU memory", "--q", "sortinghat: subgraph slots per GPU",
        "(default 6, [2, 64])", "(default 6, [1, 64])", "--ndom", "--submodel-time-limit",
        "--ablation", "one of: no-contention, no-topology, independent", "--export-lp",
        "efficientmip, getf, moirai, sortinghat", "--solution", "--no-warm-start",
        "Planner options"})
    EXPECT_NE(r.out.find(text), std::string::npos) << "no '" << text << "' in:\n" << r.out;
  // The suite script reads the planner list from this line.
  EXPECT_NE(r.out.find("the planner: auto, chrion, deepplan"), std::string::npos) << r.out;
}

TEST(PlannerOptionsCliTest, PlannersCommandPrintsTheRegistry) {
  auto r = RunCli("planners --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = testing::ParseJsonOrFail(r.out);
  ASSERT_TRUE(j.is_array());
  bool saw_sortinghat = false;
  for (const json& p : j) {
    if (p.at("name") != "sortinghat") continue;
    saw_sortinghat = true;
    bool q = false;
    for (const json& o : p.at("options"))
      if (o.at("name") == "q") {
        q = true;
        EXPECT_EQ(o.at("default"), 6);
        EXPECT_EQ(o.at("range"), "[2, 64]");
        EXPECT_EQ(o.at("flag"), "--q");
      }
    EXPECT_TRUE(q);
  }
  EXPECT_TRUE(saw_sortinghat);
  auto md = RunCli("planners --markdown");
  ASSERT_EQ(md.exit_code, 0);
  EXPECT_NE(md.out.find("| `chrion` |"), std::string::npos) << md.out;
}

TEST(PlannerOptionsCliTest, AnOptionOfAnotherPlannerOrOutOfRangeExitsTwo) {
  auto heft = RunCli("place gpt2 --seq 8 --cluster sortinghat-v100 --algo heft --alpha 0.5");
  EXPECT_EQ(heft.exit_code, 2) << heft.err;
  EXPECT_NE(heft.err.find("--alpha: not an option of planner 'heft'"), std::string::npos)
      << heft.err;
  EXPECT_NE(heft.err.find("chrion"), std::string::npos) << heft.err;
  auto q = RunCli("place gpt2 --seq 8 --cluster sortinghat-v100 --algo sortinghat --q 1");
  EXPECT_EQ(q.exit_code, 2) << q.err;
  EXPECT_NE(q.err.find("--q: must be in [2, 64], got 1"), std::string::npos) << q.err;
  auto text = RunCli("place gpt2 --seq 8 --cluster sortinghat-v100 --algo chrion --alpha x");
  EXPECT_EQ(text.exit_code, 2) << text.err;
  EXPECT_NE(text.err.find("--alpha: expected a number, got 'x'"), std::string::npos) << text.err;
  auto coarsen = RunCli("place gpt2 --seq 8 --cluster sortinghat-v100 --coarsen layers");
  EXPECT_EQ(coarsen.exit_code, 2) << coarsen.err;
  EXPECT_NE(coarsen.err.find("--coarsen"), std::string::npos) << coarsen.err;
}

TEST(PlannerOptionsCliTest, CompareGivesEachOptionToItsOwners) {
  auto r = RunCli(
      "compare lstm --layers 2 --batch 2 --io 16 --seq 8 --cluster chrion-1080ti "
      "--algos single,heft,chrion --alpha 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = testing::ParseJsonOrFail(r.out);
  for (const json& row : j.at("results")) EXPECT_FALSE(row.contains("error")) << row.dump();
  auto none = RunCli(
      "compare lstm --layers 2 --batch 2 --io 16 --seq 8 --cluster chrion-1080ti "
      "--algos single,heft --alpha 1");
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_NE(none.err.find("--alpha: not an option of any planner compared"), std::string::npos)
      << none.err;
}

TEST(PlannerOptionsCliTest, GetfAndSortinghatWriteTheirModels) {
  const std::string dir = testing::MakeTempDir();
  for (const char* algo : {"getf", "sortinghat"}) {
    const std::string lp = dir + "/" + algo + ".lp";
    auto r = RunCli(std::string("place gpt2 --seq 8 --cluster sortinghat-v100 --time-limit 10 ") +
                    "--ndom 1000 --algo " + algo + " --export-lp " + lp + " --json");
    if (std::string(algo) == "getf") {
      // --ndom is SortingHat's: refused for getf.
      EXPECT_EQ(r.exit_code, 2) << r.err;
      r = RunCli(std::string("place gpt2 --seq 8 --cluster sortinghat-v100 --time-limit 10 ") +
                 "--algo getf --export-lp " + lp + " --json");
    }
    ASSERT_EQ(r.exit_code, 0) << algo << ": " << r.err;
    std::FILE* f = std::fopen(lp.c_str(), "r");
    EXPECT_NE(f, nullptr) << algo << " wrote no " << lp;
    if (f) std::fclose(f);
  }
}

}  // namespace
}  // namespace hx
