// `hexplan calibrate`: a missing data directory is the user's to fix (exit 2, naming it).
#include <gtest/gtest.h>

#include "testing/cli_runner.h"

namespace hx {
namespace {

using testing::RunCli;

TEST(CalibrateCliTest, MissingDataDirectoryIsExit2) {
  auto r = RunCli("calibrate --report --data /nonexistent/hexplan-data");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/hexplan-data"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--data"), std::string::npos) << r.err;
}

// A data directory without one of the files: exit 2 naming the file.
TEST(CalibrateCliTest, MissingDataFileIsExit2) {
  const std::string dir = testing::MakeTempDir();
  auto r = RunCli("calibrate --data " + dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(dir), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hx
