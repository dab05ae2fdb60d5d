#include "hexplan/core/xml.h"

#include "hexplan/core/utf8.h"

namespace hx {
namespace {

// U+FFFE and U+FFFF are well-formed UTF-8 but not XML 1.0 characters.
bool IsNonCharacterAt(const std::string& text, size_t i) {
  return i + 2 < text.size() && text[i] == '\xEF' && text[i + 1] == '\xBF' &&
         (text[i + 2] == '\xBE' || text[i + 2] == '\xBF');
}

}  // namespace

std::string XmlEscape(std::string_view raw) {
  std::string text = SanitizeUtf8(raw);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (IsNonCharacterAt(text, i)) {
          out += "\xEF\xBF\xBD";
          i += 2;
        } else if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n') {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace hx
