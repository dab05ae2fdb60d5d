#include "hexplan/core/yaml_document.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
#include <utility>
#include <vector>

namespace hx {
namespace {

std::string Child(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// A key as text: scalars as written, anything else (a mapping used as a key) by its emitted form.
std::string KeyText(const YAML::Node& key) {
  if (key.IsScalar()) return key.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << key;
  return out.c_str();
}

}  // namespace

std::optional<DuplicateYamlKey> FindDuplicateYamlKey(const YAML::Node& root) {
  // Every mapping, with an explicit stack (a document may nest deeply); of the repeats found, the
  // one whose second occurrence comes first in the file is reported. Each collection is visited
  // once: an alias (`*a`) is its anchor's node, and ten lists each aliasing the previous one ten
  // times would otherwise be 10^10 visits from 300 bytes. A node's start in the text names it.
  std::optional<DuplicateYamlKey> first;
  std::set<int> visited;  // Mark().pos of the mappings and sequences seen
  std::vector<std::pair<YAML::Node, std::string>> stack{{root, ""}};
  while (!stack.empty()) {
    auto [node, path] = std::move(stack.back());
    stack.pop_back();
    if ((node.IsMap() || node.IsSequence()) && !visited.insert(node.Mark().pos).second) continue;
    if (node.IsMap()) {
      std::map<std::string, int> seen;  // key -> 1-based line
      for (const auto& kv : node) {
        std::string key = KeyText(kv.first);
        int line = kv.first.Mark().line + 1;
        auto [it, fresh] = seen.emplace(key, line);
        if (!fresh && (!first || line < first->line))
          first = DuplicateYamlKey{key, path, line, it->second};
        stack.emplace_back(kv.second, Child(path, key));
      }
    } else if (node.IsSequence()) {
      for (size_t i = 0; i < node.size(); ++i)
        stack.emplace_back(node[i], path + "[" + std::to_string(i) + "]");
    }
  }
  return first;
}

std::string DescribeDuplicateYamlKey(const DuplicateYamlKey& d) {
  const std::string lines = d.first_line == d.line ? "both on line " + std::to_string(d.line)
                                                   : "lines " + std::to_string(d.first_line) +
                                                         " and " + std::to_string(d.line);
  return "key '" + d.key + "' appears twice in " + (d.path.empty() ? "the document" : d.path) +
         " (" + lines + "; a mapping's keys must differ)";
}

std::string YamlParseErrorMessage(const YAML::ParserException& e) {
  if (const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e))
    return "YAML nested " + std::to_string(deep->depth()) +
           " levels deep, past the parser's limit (a mapping or list inside itself that many "
           "times)";
  return e.msg;
}

}  // namespace hx
