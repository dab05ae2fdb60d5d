// Typed option records: conversion from text, bounds and choices, resolution against specs, and
// errors that name the flag.
#include "hexplan/core/options.h"

#include <gtest/gtest.h>

namespace hx {
namespace {

std::vector<OptionSpec> Specs() {
  return {IntOption("q", "slots", 6, 2, 64), DoubleOption("alpha", "weight", 0.0, 0.0),
          StringOption("ablation", "one idea out", "", {"no-topology", "independent"}),
          BoolOption("fast", "go fast", false),
          DoubleOption("limit", "seconds", 1.0, 0.0, 10.0, /*lower_exclusive=*/true)};
}

TEST(OptionsTest, DefaultsAnswerReadsUntilAValueIsGiven) {
  OptionSet set(Specs());
  EXPECT_EQ(set.Int("q"), 6);
  EXPECT_EQ(set.Double("alpha"), 0.0);
  EXPECT_EQ(set.String("ablation"), "");
  EXPECT_FALSE(set.Bool("fast"));
  ASSERT_TRUE(set.Give("q", "12").ok());
  ASSERT_TRUE(set.Give("alpha", int64_t{2}).ok());  // an integer for a number
  ASSERT_TRUE(set.Give("fast", "yes").ok());
  EXPECT_EQ(set.Int("q"), 12);
  EXPECT_EQ(set.Double("alpha"), 2.0);
  EXPECT_TRUE(set.Bool("fast"));
  EXPECT_TRUE(set.IsGiven("q"));
  EXPECT_FALSE(set.IsGiven("limit"));
}

TEST(OptionsTest, OutOfRangeAndMalformedValuesNameTheFlagAndTheRange) {
  OptionSet set(Specs());
  Status low = set.Give("q", int64_t{1});
  ASSERT_FALSE(low.ok());
  EXPECT_EQ(low.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(low.message().find("--q"), std::string::npos) << low.message();
  EXPECT_NE(low.message().find("[2, 64]"), std::string::npos) << low.message();
  Status text = set.Give("q", "six");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.message().find("--q: expected an integer, got 'six'"), std::string::npos)
      << text.message();
  EXPECT_FALSE(set.Give("q", "6.5").ok());
  EXPECT_FALSE(set.Give("alpha", "-0.1").ok());
  EXPECT_FALSE(set.Give("alpha", "nan").ok());
  Status zero = set.Give("limit", 0.0);  // (0, 10]
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.message().find("(0, 10]"), std::string::npos) << zero.message();
  EXPECT_TRUE(set.Give("limit", 10.0).ok());
  Status choice = set.Give("ablation", "no-contention");
  ASSERT_FALSE(choice.ok());
  EXPECT_NE(choice.message().find("one of: no-topology, independent"), std::string::npos)
      << choice.message();
  EXPECT_FALSE(set.Give("fast", "maybe").ok());
  // A failed Give leaves the value as it was.
  EXPECT_EQ(set.Int("q"), 6);
}

TEST(OptionsTest, ResolveChecksEveryGivenValueAndNamesTheOwner) {
  OptionSet given;  // no specs yet: values are kept as given
  ASSERT_TRUE(given.Give("q", "3").ok());
  ASSERT_TRUE(given.Give("alpha", 0.5).ok());
  auto resolved = given.Resolve(Specs(), "planner 'x'");
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  EXPECT_EQ(resolved->Int("q"), 3);
  EXPECT_EQ(resolved->Double("alpha"), 0.5);
  // Resolving again (a planner called through another) keeps the values.
  auto again = resolved->Resolve(Specs(), "planner 'x'");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->Int("q"), 3);

  auto unknown = given.Resolve({IntOption("q", "slots", 6, 2, 64)}, "planner 'heft'");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("--alpha: not an option of planner 'heft'"),
            std::string::npos)
      << unknown.status().message();
  EXPECT_NE(unknown.status().message().find("its options: --q"), std::string::npos);

  OptionSet bad;
  ASSERT_TRUE(bad.Give("q", "100").ok());
  EXPECT_FALSE(bad.Resolve(Specs(), "planner 'x'").ok());
}

TEST(OptionsTest, RestrictKeepsOnlyTheNamesASpecListKnows) {
  OptionSet given;
  ASSERT_TRUE(given.Give("q", "3").ok());
  ASSERT_TRUE(given.Give("alpha", 0.5).ok());
  OptionSet only_q = given.Restrict({IntOption("q", "slots", 6, 2, 64)});
  EXPECT_TRUE(only_q.IsGiven("q"));
  EXPECT_FALSE(only_q.IsGiven("alpha"));
  EXPECT_TRUE(only_q.specs().empty());  // still to be resolved by its owner
}

TEST(OptionsTest, HelpTextsShowDefaultsAndRanges) {
  const std::vector<OptionSpec> specs = Specs();
  EXPECT_EQ(specs[0].DefaultText(), "6");
  EXPECT_EQ(specs[0].RangeText(), "[2, 64]");
  EXPECT_EQ(specs[1].RangeText(), "[0, inf)");
  EXPECT_EQ(specs[2].DefaultText(), "none");
  EXPECT_EQ(specs[3].RangeText(), "true or false");
  EXPECT_EQ(specs[0].Flag(), "--q");
}

}  // namespace
}  // namespace hx
