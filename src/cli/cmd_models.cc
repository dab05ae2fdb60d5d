#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "hexplan/core/json_text.h"
#include "hexplan/graph/zoo.h"

namespace hx::cli {

Command AddModelsCommand(CLI::App& root) {
  auto* app = root.add_subcommand("models", "list the built-in model zoo");
  auto json = std::make_shared<bool>(false);
  app->add_flag("--json", *json, "print JSON");
  return {app, [json]() {
            const auto& models = graph::ZooModels();
            if (*json) {
              nlohmann::json out = nlohmann::json::array();
              for (const auto& m : models) {
                out.push_back({{"name", m.name},
                               {"family", m.family},
                               {"description", m.description},
                               {"published_params", m.published_params},
                               {"default_seq", m.default_seq},
                               {"source", m.source}});
              }
              std::printf("%s\n", DumpJson(out, 2).c_str());
              return 0;
            }
            std::printf("%-18s %-11s %12s  %s\n", "MODEL", "FAMILY", "PARAMS", "DESCRIPTION");
            for (const auto& m : models) {
              std::printf("%-18s %-11s %11.2fM  %s\n", m.name.c_str(), m.family.c_str(),
                          m.published_params / 1e6, m.description.c_str());
            }
            return 0;
          }};
}

}  // namespace hx::cli
