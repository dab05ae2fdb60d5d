#pragma once
// Where a byte offset lies in a text, as a 1-based line and column: readers that learn only a byte
// offset (a JSON parser's error, an invalid UTF-8 byte) report "file:line:column" with it.

#include <cstddef>
#include <string>
#include <string_view>

namespace hx {

struct TextPosition {
  size_t line = 1;    // 1-based
  size_t column = 1;  // 1-based, in bytes
};

// The position of byte `offset` (clamped to the end of `text`).
TextPosition PositionAt(std::string_view text, size_t offset);

// "<source>:<line>:<column>" for byte `offset` of `text`.
std::string DescribePosition(std::string_view text, size_t offset, const std::string& source);

}  // namespace hx
