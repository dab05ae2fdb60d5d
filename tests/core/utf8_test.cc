#include "hexplan/core/utf8.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "hexplan/core/json_text.h"
#include "hexplan/core/text_position.h"

namespace hx {
namespace {

constexpr size_t kValid = std::string_view::npos;

TEST(Utf8Test, AcceptsWellFormedText) {
  EXPECT_EQ(FindInvalidUtf8(""), kValid);
  EXPECT_EQ(FindInvalidUtf8("plain ascii\n\t"), kValid);
  EXPECT_EQ(FindInvalidUtf8("gpu\xC3\xA9"), kValid);           // U+00E9
  EXPECT_EQ(FindInvalidUtf8("\xE2\x82\xAC"), kValid);          // U+20AC
  EXPECT_EQ(FindInvalidUtf8("\xED\x9F\xBF"), kValid);          // U+D7FF, below the surrogates
  EXPECT_EQ(FindInvalidUtf8("\xEE\x80\x80"), kValid);          // U+E000, above them
  EXPECT_EQ(FindInvalidUtf8("\xF0\x9F\x98\x80"), kValid);      // U+1F600
  EXPECT_EQ(FindInvalidUtf8("\xF4\x8F\xBF\xBF"), kValid);      // U+10FFFF
  EXPECT_EQ(FindInvalidUtf8(std::string("a\0b", 3)), kValid);  // NUL is a character
  EXPECT_EQ(FindInvalidUtf8("\xEF\xBB\xBFname: x"), kValid);   // a byte-order mark
}

struct BadCase {
  std::string text;
  size_t offset;
};

class Utf8RejectTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(Utf8RejectTest, ReportsTheFirstIllFormedByte) {
  EXPECT_EQ(FindInvalidUtf8(GetParam().text), GetParam().offset);
}

INSTANTIATE_TEST_SUITE_P(IllFormed, Utf8RejectTest,
                         ::testing::Values(BadCase{"ab\x80", 2},    // stray continuation byte
                                           BadCase{"\xC3", 0},      // truncated at the end
                                           BadCase{"x\xC3y", 1},    // continuation missing
                                           BadCase{"\xE2\x82", 0},  // truncated three-byte sequence
                                           BadCase{"\xC0\xAF", 0},  // overlong '/'
                                           BadCase{"\xC1\xBF", 0},  // overlong
                                           BadCase{"ok\xE0\x80\xAF", 2},    // overlong three-byte
                                           BadCase{"\xF0\x80\x80\xAF", 0},  // overlong four-byte
                                           BadCase{"\xED\xA0\x80", 0},      // U+D800, a surrogate
                                           BadCase{"\xED\xBF\xBF", 0},      // U+DFFF
                                           BadCase{"\xF4\x90\x80\x80", 0},  // U+110000
                                           BadCase{"\xF5\x80\x80\x80", 0},  // lead byte above F4
                                           BadCase{"\xFF", 0},              // never in UTF-8
                                           BadCase{"gpu\xC3\xA9\xFE",
                                                   5}));  // after a valid multibyte character

TEST(Utf8Test, TextErrorNamesFileLineColumnAndOffset) {
  Status s = CheckUtf8Text("a: 1\nname: g\xFF\n", "box.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.ExitCode(), 2);
  EXPECT_EQ(s.message(), "box.yaml:2:8: invalid UTF-8 at byte 12 (text files must be UTF-8)");
  EXPECT_TRUE(CheckUtf8Text("a: \xC3\xA9\n", "box.yaml").ok());
}

TEST(Utf8Test, FieldErrorNamesTheField) {
  Status s = CheckUtf8Field("n\xC0\xAF", "m.onnx: node 2 name");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.ExitCode(), 2);
  EXPECT_EQ(s.message(), "m.onnx: node 2 name: invalid UTF-8 at byte 1 (names must be UTF-8)");
}

TEST(Utf8Test, SanitizeReplacesEachIllFormedByte) {
  EXPECT_EQ(SanitizeUtf8("a\xFF"
                         "b\xC3\xA9"),
            "a\xEF\xBF\xBD"
            "b\xC3\xA9");
  EXPECT_EQ(SanitizeUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(FindInvalidUtf8(SanitizeUtf8("\xC3\xF0\x9F\x98")), kValid);
}

TEST(TextPositionTest, CountsLinesAndByteColumns) {
  EXPECT_EQ(PositionAt("abc", 0).line, 1u);
  EXPECT_EQ(PositionAt("abc", 0).column, 1u);
  TextPosition p = PositionAt("ab\ncd\nef", 7);
  EXPECT_EQ(p.line, 3u);
  EXPECT_EQ(p.column, 2u);
  EXPECT_EQ(PositionAt("ab", 99).column, 3u);  // clamped to the end
  EXPECT_EQ(DescribePosition("x\ny", 2, "f.json"), "f.json:2:1");
}

TEST(DumpJsonTest, NeverThrowsOnIllFormedUtf8) {
  nlohmann::json j = {{"name", std::string("q\"<&\x01\xFF\xC3\xA9")}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);
  std::string text = DumpJson(j, 2);
  nlohmann::json back = nlohmann::json::parse(text);
  EXPECT_EQ(back["name"], "q\"<&\x01\xEF\xBF\xBD\xC3\xA9");
}

TEST(ParseJsonTest, SyntaxErrorGivesLineAndColumn) {
  auto r = ParseJson<nlohmann::json>("{\n  \"a\": 1,\n  \"b\": tru\n}", "p.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ExitCode(), 2);
  EXPECT_EQ(r.status().message().rfind("p.json:3:", 0), 0u) << r.status().message();
  EXPECT_NE(r.status().message().find("invalid JSON: syntax error"), std::string::npos)
      << r.status().message();
  auto eof = ParseJson<nlohmann::json>("{\"a\": [1,\n", "p.json");
  ASSERT_FALSE(eof.ok());
  EXPECT_EQ(eof.status().message().rfind("p.json:2:", 0), 0u) << eof.status().message();
}

TEST(ParseJsonTest, RejectsIllFormedUtf8WithItsPosition) {
  auto r = ParseJson<nlohmann::json>("{\"name\": \"g\xFF\"}", "g.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "g.json:1:12: invalid UTF-8 at byte 11 (text files must be UTF-8)");
  auto ok = ParseJson<nlohmann::json>("{\"name\": \"g\xC3\xA9\"}", "g.json");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)["name"], "g\xC3\xA9");
}

}  // namespace
}  // namespace hx
