// ParseJson, the one entry point of every JSON reader: a key given twice in one object is an error
// naming the key and the object's own key (nlohmann would keep the last value silently); distinct
// keys, the same key in sibling objects and syntax errors with their position are as before.

#include "hexplan/core/json_text.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace hx {
namespace {

using nlohmann::json;

TEST(JsonTextTest, AKeyTwiceInOneObjectIsAnError) {
  auto doc = ParseJson<json>(R"({"ops": [{"node": "a", "seconds": 1, "seconds": 2}]})", "p.json");
  ASSERT_FALSE(doc.ok());
  const std::string m = doc.status().message();
  EXPECT_NE(m.find("p.json"), std::string::npos) << m;
  EXPECT_NE(m.find("'seconds' appears twice"), std::string::npos) << m;
  EXPECT_NE(m.find("inside 'ops'"), std::string::npos) << m;
  auto top = ParseJson<json>(R"({"format": "x", "version": 1, "format": "y"})", "t.json");
  ASSERT_FALSE(top.ok());
  EXPECT_NE(top.status().message().find("'format'"), std::string::npos);
}

TEST(JsonTextTest, SameKeyInSiblingObjectsAndNestedObjectsIsFine) {
  auto doc = ParseJson<json>(
      R"({"ops": [{"node": "a", "seconds": 1}, {"node": "b", "seconds": 2}],
          "node": {"node": {"node": 3}}})",
      "p.json");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ((*doc)["ops"][1]["seconds"], 2);
  EXPECT_EQ((*doc)["node"]["node"]["node"], 3);
}

TEST(JsonTextTest, SyntaxErrorsKeepTheirPosition) {
  auto doc = ParseJson<json>("{\n  \"a\": [1,\n}", "s.json");
  ASSERT_FALSE(doc.ok());
  EXPECT_NE(doc.status().message().find("s.json:3:"), std::string::npos) << doc.status().message();
}

}  // namespace
}  // namespace hx
