#include "hexplan/core/json_text.h"

namespace hx {

std::string JsonErrorDetail(std::string_view what) {
  if (auto pos = what.find("] "); pos != std::string_view::npos) what.remove_prefix(pos + 2);
  if (what.rfind("parse error", 0) == 0) {
    if (auto pos = what.find(": "); pos != std::string_view::npos) what.remove_prefix(pos + 2);
  }
  return std::string(what);
}

}  // namespace hx
