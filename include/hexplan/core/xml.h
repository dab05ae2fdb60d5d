#pragma once
// Escaping text for XML and SVG output (every SVG writer in hexplan uses this one).

#include <string>
#include <string_view>

namespace hx {

// Escapes & < > " ' and drops control characters XML 1.0 does not allow (tab and newline are kept);
// ill-formed UTF-8 and the non-characters U+FFFE, U+FFFF become U+FFFD, so the result always
// parses.
std::string XmlEscape(std::string_view text);

}  // namespace hx
