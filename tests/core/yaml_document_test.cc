// Checks of a YAML document before its fields are read: a key given twice in one mapping (which
// yaml-cpp would resolve to the first silently), found at any depth with both lines named, and a
// document nested past the parser's limit named as such.

#include "hexplan/core/yaml_document.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

namespace hx {
namespace {

TEST(YamlDocumentTest, DistinctKeysPass) {
  EXPECT_FALSE(FindDuplicateYamlKey(YAML::Load("a: 1\nb: {a: 2, b: 3}\nc: [{a: 1}, {a: 2}]\n")));
  EXPECT_FALSE(FindDuplicateYamlKey(YAML::Load("just a scalar")));
  EXPECT_FALSE(FindDuplicateYamlKey(YAML::Load("")));
}

// The repeat FindDuplicateYamlKey reports in `text`, checked field by field.
void ExpectRepeat(const std::string& text, const std::string& key, const std::string& path,
                  int first_line, int line) {
  auto dup = FindDuplicateYamlKey(YAML::Load(text));
  ASSERT_TRUE(dup) << text;
  EXPECT_EQ(dup->key, key) << text;
  EXPECT_EQ(dup->path, path) << text;
  EXPECT_EQ(dup->first_line, first_line) << text;
  EXPECT_EQ(dup->line, line) << text;
}

TEST(YamlDocumentTest, RepeatedTopLevelKeyNamesBothLines) {
  ExpectRepeat("model: A\nnotes: []\nmodel: B\n", "model", "", 1, 3);
  auto dup = FindDuplicateYamlKey(YAML::Load("model: A\nnotes: []\nmodel: B\n"));
  ASSERT_TRUE(dup);
  const std::string text = DescribeDuplicateYamlKey(*dup);
  EXPECT_NE(text.find("'model'"), std::string::npos) << text;
  EXPECT_NE(text.find("lines 1 and 3"), std::string::npos) << text;
}

TEST(YamlDocumentTest, RepeatedKeyInsideSequencesAndMappingsHasItsPath) {
  const char* text =
      "nodes:\n"
      "  - name: a\n"
      "  - name: b\n"
      "    devices:\n"
      "      - {name: gpu0, model: T4, model: V100}\n";
  ExpectRepeat(text, "model", "nodes[1].devices[0]", 5, 5);  // one flow mapping: both on line 5
}

TEST(YamlDocumentTest, TheFirstRepeatInDocumentOrderIsReported) {
  // Two repeats: the one inside `a` (lines 2-3) comes before the top-level one (lines 1 and 5).
  ExpectRepeat("a:\n  x: 1\n  x: 2\nb: 3\na: 4\n", "x", "a", 2, 3);
}

// Aliases are their anchors' nodes: ten lists each naming the previous one ten times would be
// 10^10 visits of 300 bytes if each alias were walked again (the "billion laughs" document).
TEST(YamlDocumentTest, AliasesAreWalkedOnce) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", " : "") + prev;
    text += "]\n";
  }
  text += "a0: again\n";  // and the repeat after them is still found
  auto dup = FindDuplicateYamlKey(YAML::Load(text));
  ASSERT_TRUE(dup);
  EXPECT_EQ(dup->key, "a0");
  EXPECT_EQ(dup->line, 11);
  EXPECT_EQ(DescribeDuplicateYamlKey(*dup).find("both on line"), std::string::npos);
  auto same_line = FindDuplicateYamlKey(YAML::Load("{k: 1, k: 2}"));
  ASSERT_TRUE(same_line);
  EXPECT_NE(DescribeDuplicateYamlKey(*same_line).find("both on line 1"), std::string::npos);
}

TEST(YamlDocumentTest, NestingPastTheParsersLimitIsNamed) {
  const std::string deep = "model: " + std::string(3000, '[') + std::string(3000, ']') + "\n";
  try {
    YAML::Load(deep);
    FAIL() << "yaml-cpp parsed 3000 levels; its depth limit changed";
  } catch (const YAML::ParserException& e) {
    const std::string message = YamlParseErrorMessage(e);
    EXPECT_NE(message.find("levels deep"), std::string::npos) << message;
  }
  try {
    YAML::Load("a: [\n");
    FAIL() << "an unclosed list parsed";
  } catch (const YAML::ParserException& e) {
    EXPECT_EQ(YamlParseErrorMessage(e), e.msg);
  }
}

}  // namespace
}  // namespace hx
