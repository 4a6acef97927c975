// What the subcommands of `chunkmeta` share: exit codes, the program's own
// path and corpus, and the look-ups of specs and implementations by the names
// a command line gives. main.cpp wires the subcommands; each lives in its own
// file and adds itself to the app with its options bound to its own state.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chunkmeta/harness/plugin.hpp"
#include "chunkmeta/harness/spec.hpp"
#include "chunkmeta/harness/subprocess.hpp"

namespace chunkmeta::cli {

using harness::Implementation;
using harness::Spec;
using harness::Workload;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;  // as a shell reports a command ended by SIGINT

using Processes = std::vector<std::pair<std::string, std::shared_ptr<harness::Subprocess>>>;

// A subcommand as added to the app, and what it runs once it is the one chosen.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// This executable, so an isolated plugin runs in `SELF compute --impl plugin:...`
// and reports name the program that wrote them.
std::string self_path(const char* argv0);

// The corpus beside this program: share/chunkmeta/corpus in an installed
// prefix, the checkout's corpus (through a link) in the build tree.
std::filesystem::path default_corpus(const std::string& self);

// --impl's help: the forms an implementation is named in.
std::string implementation_help();

// The spec of that name; nullptr, having said so on stderr, for none.
const Spec* spec_named(const std::string& name);

// The implementations of `spec` that --impl names; none named: every built-in one.
std::optional<std::vector<Implementation>> implementations(const Spec& spec, const std::vector<std::string>& texts,
                                                           const harness::ResolveOptions& options);

// The specs a command covers: the one --spec names, else every one (or the default spec alone).
std::vector<const Spec*> specs_of(const std::string& named, bool all_by_default);

// Settings checked before anything runs (CLI11's PositiveNumber lets NaN
// through, and an unsigned option takes "-1" as 2^64 - 1):
// a finite number above 0 (or at least 0), a whole number of digits only.
CLI::Validator finite_number(bool zero_allowed);
CLI::Validator digits_only(const std::string& what);

// The subcommands, in the order `chunkmeta --help` lists them.
Command add_compute_command(CLI::App& app, const harness::ResolveOptions& resolve);
std::vector<Command> add_verification_commands(CLI::App& app, const harness::ResolveOptions& resolve);  // verify, check
Command add_specs_command(CLI::App& app);
Command add_replay_command(CLI::App& app, const harness::ResolveOptions& resolve);
Command add_keep_command(CLI::App& app);
std::vector<Command> add_fuzz_commands(CLI::App& app, const harness::ResolveOptions& resolve);
Command add_plugin_table_command(CLI::App& app);
Command add_steps_command(CLI::App& app, const harness::ResolveOptions& resolve);

}  // namespace chunkmeta::cli
