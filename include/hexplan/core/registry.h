#pragma once
// A registry of named algorithms: `--algo NAME` in place, tp and share all choose through one.
// Entries are listed by each layer's own code (not static initialisers, which a static library's
// linker may drop); lookups of an unknown name return NotFound naming the flag and the known names.

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "hexplan/core/status.h"

namespace hx {

template <typename Entry>
class Registry {
 public:
  // `what` names the choice in errors, e.g. "--algo: unknown planner".
  explicit Registry(std::string what) : what_(std::move(what)) {}

  // False when the name is taken (the first entry stays).
  bool Register(const std::string& name, Entry entry) {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.emplace(name, std::move(entry)).second;
  }

  std::vector<std::string> Names() const {  // sorted
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> names;
    for (const auto& [name, entry] : entries_) names.push_back(name);
    return names;
  }

  // "a, b, c": for help texts and errors.
  std::string NameList() const {
    std::string list;
    for (const std::string& n : Names()) list += (list.empty() ? "" : ", ") + n;
    return list;
  }

  StatusOr<Entry> Find(const std::string& name) const {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = entries_.find(name);
      if (it != entries_.end()) return it->second;
    }
    return NotFound(what_ + " '" + name + "' (known: " + NameList() + ")");
  }

 private:
  std::string what_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
};

}  // namespace hx
