#include "hexplan/core/xml.h"

#include <gtest/gtest.h>

#include "hexplan/core/utf8.h"

namespace hx {
namespace {

TEST(XmlEscapeTest, EscapesMarkupAndDropsForbiddenControlCharacters) {
  EXPECT_EQ(XmlEscape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
  EXPECT_EQ(XmlEscape(std::string("x\x01y\tz\n")), "xy\tz\n");
  EXPECT_EQ(XmlEscape(std::string("a\0b\x1f\r", 5)), "ab");
  EXPECT_EQ(XmlEscape(""), "");
}

TEST(XmlEscapeTest, KeepsValidMultibyteAndReplacesWhatXmlCannotHold) {
  EXPECT_EQ(XmlEscape("gpu\xC3\xA9\xE2\x82\xAC"), "gpu\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(XmlEscape("a\xFF"), "a\xEF\xBF\xBD");                                // ill-formed UTF-8
  EXPECT_EQ(XmlEscape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(XmlEscape("x\xEF\xBF\xBEy\xEF\xBF\xBF"),
            "x\xEF\xBF\xBDy\xEF\xBF\xBD");  // U+FFFE, U+FFFF
  EXPECT_EQ(FindInvalidUtf8(XmlEscape("\xC0\xAF<\xF4\x90")), std::string_view::npos);
}

}  // namespace
}  // namespace hx
