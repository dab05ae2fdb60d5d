#include "hexplan/core/xml.h"

#include <gtest/gtest.h>

namespace hx {
namespace {

TEST(XmlEscapeTest, EscapesMarkupAndDropsForbiddenControlCharacters) {
  EXPECT_EQ(XmlEscape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
  EXPECT_EQ(XmlEscape(std::string("x\x01y\tz\n")), "xy\tz\n");
  EXPECT_EQ(XmlEscape(""), "");
}

}  // namespace
}  // namespace hx
