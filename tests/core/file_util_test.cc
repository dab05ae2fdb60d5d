// Paths relative to another directory (plan files store their model and cluster paths this way):
// RelativeTo and ResolveFrom undo each other, and absolute paths pass through.

#include "hexplan/core/file_util.h"

#include <gtest/gtest.h>

namespace hx {
namespace {

TEST(FileUtilTest, DirectoryOf) {
  EXPECT_EQ(DirectoryOf("plan.json"), ".");
  EXPECT_EQ(DirectoryOf("out/plan.json"), "out");
  EXPECT_EQ(DirectoryOf("/plan.json"), "/");
  EXPECT_EQ(DirectoryOf("../b/plan.json"), "../b");
}

TEST(FileUtilTest, RelativeToAndResolveFromUndoEachOther) {
  struct Case {
    std::string path, directory, relative;
  };
  for (const Case& c :
       {Case{"a/m.onnx", "b", "../a/m.onnx"}, Case{"m.onnx", ".", "m.onnx"},
        Case{"m.onnx", "out/plans", "../../m.onnx"}, Case{"x/y/m.json", "x", "y/m.json"},
        Case{"../m.json", "b", "../../m.json"}}) {
    EXPECT_EQ(RelativeTo(c.path, c.directory), c.relative) << c.path << " from " << c.directory;
    EXPECT_EQ(ResolveFrom(c.relative, c.directory), c.path) << c.relative << " in " << c.directory;
  }
  EXPECT_EQ(RelativeTo("/abs/m.onnx", "b"), "/abs/m.onnx");
  EXPECT_EQ(ResolveFrom("/abs/m.onnx", "b"), "/abs/m.onnx");
}

// A directory opens as a stream and reads as nothing; every reader would report an empty file.
TEST(FileUtilTest, ReadingADirectoryIsAnErrorSayingSo) {
  auto text = ReadFileToString(::testing::TempDir());
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("is a directory"), std::string::npos)
      << text.status().message();
}

}  // namespace
}  // namespace hx
