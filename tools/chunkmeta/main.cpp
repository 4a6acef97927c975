// chunkmeta: compute the family's chunk metadata from JSON Lines, verify
// implementations with each spec's property suite, and replay corpus entries
// and reports. This file only wires the subcommands (one file each, cli.hpp).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/harness/keep_freed_memory.hpp"
#include "chunkmeta/harness/report.hpp"
#include "cli.hpp"

int main(int argc, char** argv) {
  using namespace chunkmeta;
  harness::keep_freed_memory();  // cases' outputs reach megabytes, freed case after case
  CLI::App app{"chunkmeta: the chunk metadata chunked kernels trust (`chunkmeta specs` lists the computations), "
               "fast implementations, and a harness that proves implementations equal to the references."};
  app.set_version_flag("--version", std::string("chunkmeta ") + std::string(kVersion));
  app.require_subcommand(1);

  harness::ResolveOptions resolve;
  resolve.self_path = cli::self_path(argv[0]);
  harness::set_program(resolve.self_path);

  std::vector<cli::Command> commands;
  commands.push_back(cli::add_compute_command(app, resolve));
  for (auto& command : cli::add_verification_commands(app, resolve)) commands.push_back(std::move(command));
  commands.push_back(cli::add_specs_command(app));
  commands.push_back(cli::add_replay_command(app, resolve));
  commands.push_back(cli::add_steps_command(app, resolve));
  commands.push_back(cli::add_keep_command(app));
  for (auto& command : cli::add_fuzz_commands(app, resolve)) commands.push_back(std::move(command));
  commands.push_back(cli::add_plugin_table_command(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? cli::kExitOk : cli::kExitUsage;
  }
  for (const auto& command : commands) {
    if (*command.app) return command.run();
  }
  return cli::kExitUsage;  // require_subcommand(1): not reached
}
