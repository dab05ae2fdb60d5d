#pragma once
// Escaping text for XML and SVG output (every SVG writer in hexplan uses this one).

#include <string>
#include <string_view>

namespace hx {

// Escapes & < > " ' and drops control characters XML 1.0 does not allow (tab and newline are kept).
std::string XmlEscape(std::string_view text);

}  // namespace hx
