// parpat list [PATTERN] [--json]: the variant registry.
#include <fmt/format.h>

#include <iostream>

#include "commands.hpp"
#include "parpat/error.hpp"
#include "parpat/registry.hpp"

namespace parpat::cli {

void add_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "list every pattern, backend and variant");
  auto pattern = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("pattern", *pattern, "only this pattern");
  cmd->add_flag("--json", *json, "print one JSON object");
  cmd->callback([pattern, json] {
    auto variants = list_variants(*pattern);
    if (!pattern->empty() && variants.empty()) throw_invalid("unknown pattern '" + *pattern + "'");
    nlohmann::json out = nlohmann::json::array();
    std::string last;
    for (const auto& v : variants) {
      if (*json) {
        out.push_back({{"pattern", v.pattern},
                       {"backend", v.backend},
                       {"variant", v.name},
                       {"idea", v.idea},
                       {"params", v.params},
                       {"limits", v.limits},
                       {"deterministic", v.deterministic},
                       {"default", v.is_default}});
        continue;
      }
      std::string head = v.pattern + " / " + v.backend;
      if (head != last) std::cout << head << "\n";
      last = head;
      std::cout << fmt::format("  {:<14} {}{}{}\n", v.name + (v.is_default ? "*" : ""), v.idea,
                               v.params.empty() ? "" : "  [" + v.params + "]",
                               v.deterministic ? "" : "  (float results depend on timing)");
      if (!v.limits.empty()) std::cout << fmt::format("  {:<14} covers: {}\n", "", v.limits);
    }
    if (*json)
      std::cout << nlohmann::json{{"variants", out}}.dump() << "\n";
    else
      std::cout << "(* the backend's default)\n";
  });
}

}  // namespace parpat::cli
