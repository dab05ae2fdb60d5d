#include "cost/csv_table.h"

#include <string>
#include <vector>

#include "hexplan/core/utf8.h"

namespace hx::cost::internal {

bool CsvRow::IsBlank() const {
  for (const std::string& f : fields) {
    if (!Trim(f).empty()) return false;
  }
  return true;
}

std::string Trim(const std::string& s) {
  size_t begin = 0;
  size_t end = s.size();
  while (begin < end &&
         (s[begin] == ' ' || s[begin] == '\t' || s[begin] == '\r' || s[begin] == '\n')) {
    ++begin;
  }
  while (end > begin &&
         (s[end - 1] == ' ' || s[end - 1] == '\t' || s[end - 1] == '\r' || s[end - 1] == '\n')) {
    --end;
  }
  return s.substr(begin, end - begin);
}

StatusOr<std::vector<CsvRow>> ParseCsv(const std::string& text, const std::string& source_name) {
  HX_RETURN_IF_ERROR(CheckUtf8Text(text, source_name));
  std::vector<CsvRow> rows;
  CsvRow row;
  std::string field;
  int line = 1;
  row.line = 1;
  bool in_quotes = false;
  int quote_line = 0;
  bool row_has_content = false;
  size_t i = 0;
  // Skip a UTF-8 byte order mark.
  if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF &&
      static_cast<unsigned char>(text[1]) == 0xBB && static_cast<unsigned char>(text[2]) == 0xBF) {
    i = 3;
  }
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field.push_back(c);
      }
      continue;
    }
    if (c == '"') {
      in_quotes = true;
      quote_line = line;
      row_has_content = true;
    } else if (c == ',') {
      row.fields.push_back(std::move(field));
      field.clear();
      row_has_content = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      row.fields.push_back(std::move(field));
      field.clear();
      rows.push_back(std::move(row));
      row = CsvRow();
      ++line;
      row.line = line;
      row_has_content = false;
    } else {
      field.push_back(c);
      row_has_content = true;
    }
  }
  if (in_quotes) {
    return ParseError(source_name + ":" + std::to_string(quote_line) +
                      ": unterminated quoted field");
  }
  if (row_has_content || !field.empty()) {
    row.fields.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string CsvEscape(const std::string& field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

}  // namespace hx::cost::internal
