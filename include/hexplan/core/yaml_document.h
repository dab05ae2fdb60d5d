#pragma once
// What our YAML readers (clusters, calibrations) check of a document before reading its fields.
//
// Duplicate keys: yaml-cpp keeps every pair of a mapping and its lookup returns
// the first, so `kernel_launch_s: 1e-5` written twice would take the first value and drop the
// second without a word. Readers of our YAML files (clusters, calibrations) reject
// such a document instead, naming both lines.

#include <optional>
#include <string>

namespace YAML {
class Node;
class ParserException;
}  // namespace YAML

namespace hx {

struct DuplicateYamlKey {
  std::string key;     // the repeated key
  std::string path;    // the mapping it repeats in, as dotted keys and [i] indices ("" at the root)
  int line = 0;        // 1-based line of the second occurrence
  int first_line = 0;  // 1-based line of the first
};

// The first repeated key (in document order) of any mapping under `root`, or nullopt.
std::optional<DuplicateYamlKey> FindDuplicateYamlKey(const YAML::Node& root);

// "key 'x' appears twice in a.b (lines 3 and 7)": the message readers prefix with their file.
std::string DescribeDuplicateYamlKey(const DuplicateYamlKey& d);

// A parse error's message. yaml-cpp 0.7 says only "bad file" for a document nested past its depth
// limit; this names the depth.
std::string YamlParseErrorMessage(const YAML::ParserException& e);

}  // namespace hx
