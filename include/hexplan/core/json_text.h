#pragma once
// JSON text in and out, the same way in every reader and writer. Templated on the JSON type so
// that core does not depend on nlohmann; call with nlohmann::json: ParseJson<Json>(text, path),
// DumpJson(doc, 2).
//
// In: the text must be UTF-8 (CheckUtf8Text), and a syntax error is a ParseError
// "<source>:<line>:<column>: invalid JSON: <what the parser says>".
// Out: nlohmann's dump() throws type_error 316 on a string that is not UTF-8. Readers reject such
// text, so DumpJson's replacement of ill-formed bytes by U+FFFD is a last defence, not a code path.

#include <string>
#include <string_view>

#include "hexplan/core/status.h"
#include "hexplan/core/text_position.h"
#include "hexplan/core/utf8.h"

namespace hx {

// "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..." ->
// "syntax error ...": the position is reported separately.
std::string JsonErrorDetail(std::string_view what);

template <typename Json>
StatusOr<Json> ParseJson(std::string_view text, const std::string& source) {
  HX_RETURN_IF_ERROR(CheckUtf8Text(text, source));
  try {
    return Json::parse(text);
  } catch (const typename Json::parse_error& e) {
    size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    return ParseError(DescribePosition(text, offset, source) +
                      ": invalid JSON: " + JsonErrorDetail(e.what()));
  } catch (const typename Json::exception& e) {  // out_of_range: a number too large, ...
    return ParseError(source + ": invalid JSON: " + JsonErrorDetail(e.what()));
  }
}

template <typename Json>
std::string DumpJson(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace hx
