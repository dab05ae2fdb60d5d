#pragma once
// UTF-8: all text hexplan reads must be well-formed UTF-8, because names end up in JSON, SVG and
// DOT output. Readers check text where it enters (CheckUtf8Text for a text file, CheckUtf8Field for
// a string taken from a binary file); writers escape where it leaves (XmlEscape, DumpJson).

#include <cstddef>
#include <string>
#include <string_view>

#include "hexplan/core/status.h"

namespace hx {

// The offset of the first byte of the first ill-formed sequence in `text`, or
// std::string_view::npos when all of it is well-formed. Ill-formed: a stray continuation byte, a
// truncated sequence, an overlong form (C0, C1, E0 80.., F0 80..), a surrogate (U+D800..U+DFFF) or
// a code point above U+10FFFF.
size_t FindInvalidUtf8(std::string_view text);

// A text file: ParseError "<source>:<line>:<column>: invalid UTF-8 at byte <offset> (...)".
// Line and column are 1-based; the column counts bytes.
Status CheckUtf8Text(std::string_view text, const std::string& source);

// One string from a binary file: InvalidArgument "<where>: invalid UTF-8 at byte <offset> of ...".
Status CheckUtf8Field(std::string_view text, const std::string& where);

// `text` with each ill-formed sequence replaced by U+FFFD (writers' last defence).
std::string SanitizeUtf8(std::string_view text);

}  // namespace hx
