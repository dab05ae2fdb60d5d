#include "hexplan/share/algorithms.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "hexplan/share/planner.h"
#include "share/share_test_util.h"
#include "testing/cli_runner.h"

namespace hx::share {
namespace {

TEST(ShareAlgorithmsTest, RegistryHoldsTheListedAlgorithms) {
  std::vector<std::string> listed = AlgoNames();
  ASSERT_EQ(listed.size(), ShareAlgorithms().size());
  EXPECT_EQ(listed.front(), "parvagpu");  // the comparison table's first row
  EXPECT_EQ(listed.back(), "hexplan");
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(ShareAlgorithmRegistry().Names(), listed);
  for (const ShareAlgorithm& a : ShareAlgorithms()) {
    EXPECT_FALSE(a.description.empty()) << a.name;
    EXPECT_TRUE(a.plan) << a.name;
  }
}

class EveryShareAlgorithmTest : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryShareAlgorithmTest, PlansByName) {
  const ShareProblem problem = testing::Scenario("S2");
  ShareOptions o;
  o.algo = GetParam();
  ASSERT_TRUE(ShareAlgorithmRegistry().Find(o.algo).ok());
  auto plan = PlanShare(problem, o);
  ASSERT_TRUE(plan.ok()) << o.algo << ": " << plan.status().message();
  EXPECT_EQ(plan->algo, o.algo);
  EXPECT_GT(plan->metrics.gpus, 0) << o.algo;
  EXPECT_TRUE(PlanViolations(problem, o, *plan).empty()) << o.algo;
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryShareAlgorithmTest, ::testing::ValuesIn(AlgoNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(ShareAlgorithmsTest, UnknownNameIsNotFoundListingTheKnownNames) {
  ShareOptions o;
  o.algo = "nope";
  const Status validated = o.Validate();
  auto plan = PlanShare(testing::Scenario("S1"), o);
  for (const Status& st : {validated, plan.status()}) {
    EXPECT_EQ(st.code(), StatusCode::kNotFound);
    EXPECT_NE(st.message().find("--algo"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("'nope'"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(ShareAlgorithmRegistry().NameList()), std::string::npos)
        << st.message();
  }
}

TEST(ShareAlgorithmsTest, CliRejectsAnUnknownAlgorithmAndListsTheKnownOnes) {
  auto r = hx::testing::RunCli("share --algo nope");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--algo"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(ShareAlgorithmRegistry().NameList()), std::string::npos) << r.err;
  auto help = hx::testing::RunCli("share --help");
  EXPECT_EQ(help.exit_code, 0);
  for (const ShareAlgorithm& a : ShareAlgorithms()) {
    EXPECT_NE(help.out.find(a.description), std::string::npos) << a.name;
  }
}

}  // namespace
}  // namespace hx::share
