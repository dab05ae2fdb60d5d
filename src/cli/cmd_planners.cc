// hexplan planners: the placement planners of the registry with their own options (name,
// default, range, description), as text, a Markdown table (docs/placement.md) or JSON.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "hexplan/core/json_text.h"
#include "hexplan/place/planner.h"

namespace hx::cli {
namespace {

nlohmann::json OptionValueJson(const OptionValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return std::get<std::string>(v);
}

nlohmann::json SpecJson(const OptionSpec& s) {
  nlohmann::json j = {{"name", s.name},
                      {"flag", s.Flag()},
                      {"type", OptionTypeName(s.type())},
                      {"default", OptionValueJson(s.default_value)},
                      {"range", s.RangeText()},
                      {"description", s.description}};
  if (!s.choices.empty()) j["choices"] = s.choices;
  return j;
}

int PrintPlanners(bool json, bool markdown) {
  nlohmann::json out = nlohmann::json::array();
  if (markdown) {
    std::printf("| planner | description | its own options (default, range) |\n");
    std::printf("| --- | --- | --- |\n");
  }
  for (const std::string& name : place::PlannerNames()) {
    auto planner = place::MakePlanner(name);
    if (!planner.ok()) return ReportError(planner.status());
    const std::vector<OptionSpec> specs = (*planner)->Options();
    if (json) {
      nlohmann::json options = nlohmann::json::array();
      for (const OptionSpec& s : specs) options.push_back(SpecJson(s));
      out.push_back(
          {{"name", name}, {"description", (*planner)->Description()}, {"options", options}});
      continue;
    }
    std::string own;
    for (const OptionSpec& s : specs) {
      if (name == "auto") break;
      own += (own.empty() ? ""
              : markdown  ? "<br>"
                          : "\n                ") +
             s.Flag() + " (" + s.DefaultText() + ", " + s.RangeText() + "): " + s.description;
    }
    if (name == "auto") own = "each member's, passed on to the planners that own it";
    if (markdown)
      std::printf("| `%s` | %s | %s |\n", name.c_str(), (*planner)->Description().c_str(),
                  own.empty() ? "none" : own.c_str());
    else
      std::printf("%-14s  %s\n                %s\n", name.c_str(),
                  (*planner)->Description().c_str(),
                  own.empty() ? "(no options of its own)" : own.c_str());
  }
  if (json) std::printf("%s\n", DumpJson(out, 2).c_str());
  return 0;
}

}  // namespace

Command AddPlannersCommand(CLI::App& root) {
  auto* app = root.add_subcommand(
      "planners", "list the placement planners (--algo) with their own options and defaults");
  auto json = std::make_shared<bool>(false);
  auto markdown = std::make_shared<bool>(false);
  app->add_flag("--json", *json, "print JSON");
  app->add_flag("--markdown", *markdown, "print a Markdown table (docs/placement.md)");
  return {app, [json, markdown]() { return PrintPlanners(*json, *markdown); }};
}

}  // namespace hx::cli
