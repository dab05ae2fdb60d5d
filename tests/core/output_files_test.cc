// OutputFiles: outputs appear all together on Commit and not at all otherwise; paths that cannot
// be written are found before any work.
#include "hexplan/core/output_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "testing/cli_runner.h"

namespace hx {
namespace {

namespace fs = std::filesystem;

// Entries of `dir`, hidden temporaries included.
int CountEntries(const std::string& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(OutputFilesTest, NothingAppearsBeforeCommitAndEverythingAfter) {
  const std::string dir = testing::MakeTempDir();
  OutputFiles outputs;
  ASSERT_TRUE(outputs.Stage(dir + "/a.json", "{}").ok());
  ASSERT_TRUE(outputs.Stage(dir + "/b.svg", "<svg/>").ok());
  EXPECT_FALSE(fs::exists(dir + "/a.json"));
  EXPECT_FALSE(fs::exists(dir + "/b.svg"));
  ASSERT_TRUE(outputs.Commit().ok());
  EXPECT_EQ(testing::ReadTextFile(dir + "/a.json"), "{}");
  EXPECT_EQ(testing::ReadTextFile(dir + "/b.svg"), "<svg/>");
  EXPECT_EQ(CountEntries(dir), 2);  // no temporaries left
}

TEST(OutputFilesTest, WithoutCommitNothingIsLeft) {
  const std::string dir = testing::MakeTempDir();
  testing::WriteTextFile(dir + "/adopted.lp", "min: x;");
  {
    OutputFiles outputs;
    ASSERT_TRUE(outputs.Stage(dir + "/a.json", "{}").ok());
    outputs.Adopt(dir + "/adopted.lp");
    // A later output fails: the command returns without committing.
    EXPECT_FALSE(outputs.Stage(dir + "/missing/b.svg", "<svg/>").ok());
  }
  EXPECT_EQ(CountEntries(dir), 0);
}

TEST(OutputFilesTest, StageWithKeepsTheExtensionForWritersThatSniffIt) {
  const std::string dir = testing::MakeTempDir();
  OutputFiles outputs;
  std::string seen;
  ASSERT_TRUE(outputs
                  .StageWith(dir + "/profile.csv",
                             [&](const std::string& temporary) {
                               seen = temporary;
                               std::ofstream(temporary) << "node,device,seconds\n";
                               return Status::Ok();
                             })
                  .ok());
  EXPECT_EQ(fs::path(seen).extension(), ".csv");
  EXPECT_EQ(fs::path(seen).parent_path(), fs::path(dir));
  ASSERT_TRUE(outputs.Commit().ok());
  EXPECT_EQ(testing::ReadTextFile(dir + "/profile.csv"), "node,device,seconds\n");
}

TEST(OutputFilesTest, ExpectNamesTheFlagAndWhy) {
  const std::string dir = testing::MakeTempDir();
  OutputFiles outputs;
  EXPECT_TRUE(outputs.Expect("--trace", "").ok());
  EXPECT_TRUE(outputs.Expect("--trace", dir + "/t.json").ok());
  Status missing = outputs.Expect("--svg", dir + "/nodir/t.svg");
  EXPECT_EQ(missing.ExitCode(), 2);
  EXPECT_NE(missing.message().find("--svg"), std::string::npos) << missing.message();
  EXPECT_NE(missing.message().find("does not exist"), std::string::npos) << missing.message();
  Status is_dir = outputs.Expect("-o", dir);
  EXPECT_EQ(is_dir.ExitCode(), 2);
  EXPECT_NE(is_dir.message().find("is a directory"), std::string::npos) << is_dir.message();
  testing::WriteTextFile(dir + "/file", "x");
  Status parent_is_file = outputs.Expect("-o", dir + "/file/t.json");
  EXPECT_NE(parent_is_file.message().find("not a directory"), std::string::npos)
      << parent_is_file.message();
  // /proc refuses new files even to root, for whom access(2) would say yes.
  EXPECT_EQ(outputs.Expect("-o", "/proc/hexplan-test.json").ExitCode(), 2);
  EXPECT_EQ(CountEntries(dir), 1);  // probes leave nothing behind
}

TEST(OutputFilesTest, ExpectDirectoryCreatesItAndRemovesItOnFailure) {
  const std::string dir = testing::MakeTempDir();
  {
    OutputFiles outputs;
    ASSERT_TRUE(outputs.ExpectDirectory("--report", dir + "/r/a").ok());
    EXPECT_TRUE(fs::is_directory(dir + "/r/a"));
  }  // not committed: the directories it made go again
  EXPECT_FALSE(fs::exists(dir + "/r"));
  OutputFiles outputs;
  ASSERT_TRUE(outputs.ExpectDirectory("--report", dir + "/r/a").ok());
  ASSERT_TRUE(outputs.Stage(dir + "/r/a/report.md", "# r").ok());
  ASSERT_TRUE(outputs.Commit().ok());
  EXPECT_EQ(testing::ReadTextFile(dir + "/r/a/report.md"), "# r");
  testing::WriteTextFile(dir + "/plain", "x");
  EXPECT_EQ(outputs.ExpectDirectory("--report", dir + "/plain/sub").ExitCode(), 2);
}

}  // namespace
}  // namespace hx
