#pragma once
// A small RFC 4180 CSV reader shared by the profile and MOIRAI readers: quoted fields may hold
// commas, doubled quotes and newlines. Each row remembers the 1-based line it starts on so that
// errors can name it.

#include <string>
#include <vector>

#include "hexplan/core/status.h"

namespace hx::cost::internal {

struct CsvRow {
  int line = 0;  // 1-based line where the row starts
  std::vector<std::string> fields;
  bool IsBlank() const;  // every field empty
};

// Splits `text` into rows. Fails on text that is not UTF-8 or an unterminated quote (naming
// `source_name` and the line).
StatusOr<std::vector<CsvRow>> ParseCsv(const std::string& text, const std::string& source_name);

// Quotes a field when it holds a comma, quote or newline.
std::string CsvEscape(const std::string& field);

// Trims ASCII whitespace at both ends.
std::string Trim(const std::string& s);

}  // namespace hx::cost::internal
