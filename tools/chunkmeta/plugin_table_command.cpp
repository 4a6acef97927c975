// `chunkmeta plugin-table PATH[#NAME]`: a plugin's table read in this process,
// for a harness that keeps the plugin out of its own.
#include <iostream>
#include <string>

#include "chunkmeta/harness/json.hpp"
#include "cli.hpp"

namespace chunkmeta::cli {

Command add_plugin_table_command(CLI::App& app) {
  auto plugin = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("plugin-table", "Print a plugin's implementations, one JSON line each "
                                                 "(name, description, spec, rejects_invalid_input)");
  cmd->add_option("plugin", *plugin, "PATH or PATH#NAME")->required();
  return {cmd, [plugin] {
            auto loaded = harness::load_plugin(*plugin);
            if (auto* why = std::get_if<std::string>(&loaded)) {
              std::cout << harness::dump_line(harness::Json{{"error", *why}}) << "\n";
              return kExitFailure;
            }
            for (const auto& impl : std::get<std::vector<Implementation>>(loaded)) {
              std::cout << harness::dump_line(harness::Json{{"name", impl.name},
                                                            {"description", impl.description},
                                                            {"spec", std::string(impl.spec->name())},
                                                            {"rejects_invalid_input", impl.rejects_invalid_input}})
                        << "\n";
            }
            return kExitOk;
          }};
}

}  // namespace chunkmeta::cli
