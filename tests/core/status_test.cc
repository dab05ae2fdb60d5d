#include "hexplan/core/status.h"

#include <gtest/gtest.h>

#include "hexplan/core/file_util.h"
#include "hexplan/core/id.h"
#include "testing/cli_runner.h"

namespace hx {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2) return InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Status UseHalf(int x, int* out) {
  HX_ASSIGN_OR_RETURN(int h, Half(x));
  *out = h;
  return Status::Ok();
}

TEST(StatusTest, ExitCodesSeparateBadInputFromInternalErrors) {
  EXPECT_EQ(Status::Ok().ExitCode(), 0);
  EXPECT_EQ(InvalidArgument("x").ExitCode(), 2);
  EXPECT_EQ(ParseError("x").ExitCode(), 2);
  EXPECT_EQ(NotFound("x").ExitCode(), 2);
  EXPECT_EQ(Internal("x").ExitCode(), 1);
  EXPECT_EQ(IoError("x").ExitCode(), 2);  // an unwritable output is the user's to fix
}

TEST(StatusTest, AssignOrReturnPropagates) {
  int v = 0;
  EXPECT_TRUE(UseHalf(8, &v).ok());
  EXPECT_EQ(v, 4);
  Status s = UseHalf(7, &v);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "odd: 7");
  EXPECT_EQ(s.WithContext("f.json").message(), "f.json: odd: 7");
}

TEST(IdTest, StrongIdsCompareAndDefaultInvalid) {
  NodeId a(3u), b(3u), c;
  EXPECT_EQ(a, b);
  EXPECT_FALSE(c.valid());
  EXPECT_TRUE(a.valid());
  EXPECT_EQ(a.index(), 3u);
}

TEST(FileUtilTest, AtomicWriteReplacesWholeFile) {
  std::string dir = testing::MakeTempDir();
  std::string path = dir + "/out.txt";
  ASSERT_TRUE(WriteFileAtomic(path, "first version").ok());
  ASSERT_TRUE(WriteFileAtomic(path, "second").ok());
  auto read = ReadFileToString(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, "second");
  EXPECT_FALSE(WriteFileAtomic(dir + "/no/such/dir/x", "y").ok());
  EXPECT_EQ(ReadFileToString(dir + "/missing").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(FileExtension("a/b.c/model.ONNX"), "onnx");
  EXPECT_EQ(FileExtension("a/b.c/model"), "");
}

}  // namespace
}  // namespace hx
