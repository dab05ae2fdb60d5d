#pragma once
// Splitting text at a separator, dropping empty pieces ("a//b/" -> {"a", "b"}): how op names
// ("/transformer/h.3/attn/MatMul", "features.5.1") are read into their scopes.

#include <string>
#include <vector>

namespace hx {

std::vector<std::string> SplitNonEmpty(const std::string& text, char separator);

}  // namespace hx
