#pragma once
// JSON text in and out, the same way in every reader and writer. Templated on the JSON type so
// that core does not depend on nlohmann; call with nlohmann::json: ParseJson<Json>(text, path),
// DumpJson(doc, 2).
//
// In: the text must be UTF-8 (CheckUtf8Text), and a syntax error is a ParseError
// "<source>:<line>:<column>: invalid JSON: <what the parser says>".
// Out: nlohmann's dump() throws type_error 316 on a string that is not UTF-8. Readers reject such
// text, so DumpJson's replacement of ill-formed bytes by U+FFFD is a last defence, not a code path.

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hexplan/core/status.h"
#include "hexplan/core/text_position.h"
#include "hexplan/core/utf8.h"

namespace hx {

// "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..." ->
// "syntax error ...": the position is reported separately.
std::string JsonErrorDetail(std::string_view what);

// A key given twice in one JSON object: nlohmann keeps the last value without a word, so readers
// refuse the document instead ("key 'seconds' appears twice in one object, inside 'ops'").
struct DuplicateJsonKeys {
  std::vector<std::set<std::string>> keys;  // per open object
  std::vector<std::string> last_key;        // per open object: the key being read
  std::string duplicate, inside;
  std::string Message(const std::string& source) const {
    return source + ": invalid JSON: key '" + duplicate + "' appears twice in one object" +
           (inside.empty() ? "" : ", inside '" + inside + "'") + " (an object's keys must differ)";
  }
};

template <typename Json>
StatusOr<Json> ParseJson(std::string_view text, const std::string& source) {
  HX_RETURN_IF_ERROR(CheckUtf8Text(text, source));
  DuplicateJsonKeys dup;
  using Event = typename Json::parse_event_t;
  auto check_keys = [&dup](int /*depth*/, Event event, Json& parsed) {
    if (event == Event::object_start) {
      dup.keys.emplace_back();
      dup.last_key.emplace_back();
    } else if (event == Event::object_end && !dup.keys.empty()) {
      dup.keys.pop_back();
      dup.last_key.pop_back();
    } else if (event == Event::key && !dup.keys.empty() && dup.duplicate.empty()) {
      const std::string key = parsed.template get<std::string>();
      if (!dup.keys.back().insert(key).second) {
        dup.duplicate = key;
        for (auto it = dup.last_key.rbegin() + 1; it < dup.last_key.rend() && dup.inside.empty();
             ++it)
          dup.inside = *it;
      }
      dup.last_key.back() = key;
    }
    return true;
  };
  try {
    Json doc = Json::parse(text, check_keys);
    if (!dup.duplicate.empty()) return ParseError(dup.Message(source));
    return doc;
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
