// OutputFiles: outputs appear all together on Commit and not at all otherwise; paths that cannot
// be written are found before any work.
#include "hexplan/core/output_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

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

// A symbolic link is written through: its target gets the bytes, the link stays a link (relative
// links from their own directory), and nothing is left beside either.
TEST(OutputFilesTest, SymbolicLinksAreWrittenThrough) {
  const std::string dir = testing::MakeTempDir();
  fs::create_directory(dir + "/real");
  fs::create_symlink("real/out.json", dir + "/link.json");  // dangling until written
  OutputFiles outputs;
  ASSERT_TRUE(outputs.Expect("-o", dir + "/link.json").ok());
  ASSERT_TRUE(outputs.Stage(dir + "/link.json", "{\"a\": 1}").ok());
  ASSERT_TRUE(outputs.Commit().ok());
  EXPECT_TRUE(fs::is_symlink(dir + "/link.json"));
  EXPECT_EQ(testing::ReadTextFile(dir + "/real/out.json"), "{\"a\": 1}");
  EXPECT_EQ(CountEntries(dir), 2);
  EXPECT_EQ(CountEntries(dir + "/real"), 1);
}

// A FIFO (like /dev/null or /dev/stdout) is written in place, not replaced by a file; a device
// that refuses the bytes (/dev/full) is the command's error.
TEST(OutputFilesTest, SpecialFilesAreWrittenInPlace) {
  const std::string dir = testing::MakeTempDir();
  const std::string fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = testing::ReadTextFile(fifo); });
  OutputFiles outputs;
  ASSERT_TRUE(outputs.Expect("-o", fifo).ok());
  ASSERT_TRUE(outputs.Stage(fifo, "through the pipe").ok());
  ASSERT_TRUE(outputs.Commit().ok());
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(CountEntries(dir), 1);
  if (fs::exists("/dev/full")) {
    OutputFiles full;
    ASSERT_TRUE(full.Stage("/dev/full", "x").ok());
    Status s = full.Commit();
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("/dev/full"), std::string::npos) << s.message();
    ASSERT_EQ(::stat("/dev/full", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
  }
}

}  // namespace
}  // namespace hx
