#include "hexplan/core/utf8.h"

#include "hexplan/core/text_position.h"

namespace hx {
namespace {

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The length of the well-formed sequence starting at text[i], or 0 when it is ill-formed
// (Unicode 15, table 3-7: the allowed second byte depends on the lead byte).
size_t SequenceLength(std::string_view text, size_t i) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = at(i);
  if (lead < 0x80) return 1;
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    if (lead == 0xE0) lo = 0xA0;  // overlong below U+0800
    if (lead == 0xED) hi = 0x9F;  // surrogates U+D800..U+DFFF
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    if (lead == 0xF0) lo = 0x90;  // overlong below U+10000
    if (lead == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;  // a continuation byte, C0/C1 (overlong) or F5..FF
  }
  if (i + len > text.size()) return 0;
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if (!IsContinuation(at(i + k))) return 0;
  }
  return len;
}

}  // namespace

size_t FindInvalidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t len = SequenceLength(text, i);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

Status CheckUtf8Text(std::string_view text, const std::string& source) {
  size_t bad = FindInvalidUtf8(text);
  if (bad == std::string_view::npos) return Status::Ok();
  return ParseError(DescribePosition(text, bad, source) + ": invalid UTF-8 at byte " +
                    std::to_string(bad) + " (text files must be UTF-8)");
}

Status CheckUtf8Field(std::string_view text, const std::string& where) {
  size_t bad = FindInvalidUtf8(text);
  if (bad == std::string_view::npos) return Status::Ok();
  return InvalidArgument(where + ": invalid UTF-8 at byte " + std::to_string(bad) +
                         " (names must be UTF-8)");
}

std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t len = SequenceLength(text, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace hx
