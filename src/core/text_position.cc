#include "hexplan/core/text_position.h"

#include <algorithm>

namespace hx {

TextPosition PositionAt(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  TextPosition p;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

std::string DescribePosition(std::string_view text, size_t offset, const std::string& source) {
  TextPosition p = PositionAt(text, offset);
  return source + ":" + std::to_string(p.line) + ":" + std::to_string(p.column);
}

}  // namespace hx
