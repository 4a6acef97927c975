// `chunkmeta replay FILES`: corpus entries and counterexample reports replayed
// against implementations, each entry against those of its spec.
#include <iostream>
#include <string>

#include "chunkmeta/engine/check.hpp"
#include "cli.hpp"

namespace chunkmeta::cli {
namespace {

struct ReplayOptions {
  std::string spec;
  std::vector<std::string> impls;
  std::vector<std::filesystem::path> inputs;
  bool quiet = false;
};

int replay(const ReplayOptions& chosen, const harness::ResolveOptions& resolve) {
  std::vector<Implementation> impls;
  for (const Spec* spec : specs_of(chosen.spec, true)) {
    if (chosen.impls.empty()) {
      for (const auto& impl : spec->builtins()) impls.push_back(impl);
      continue;
    }
    auto found = implementations(*spec, chosen.impls, resolve);
    // Without --spec, a name of another spec's implementation (a plugin of one spec) is not an error.
    if (!found) {
      if (!chosen.spec.empty()) return kExitUsage;
      continue;
    }
    for (auto& impl : *found) impls.push_back(std::move(impl));
  }
  if (impls.empty()) return kExitUsage;
  const auto replayed = engine::replay_corpus(impls, chosen.inputs);
  if (!chosen.quiet || !replayed.passed()) std::cout << replayed.text;
  if (replayed.files == 0) {
    // Replaying nothing proves nothing: a wrong --spec, an empty folder or a typo is not a pass.
    std::cerr << "chunkmeta: nothing was replayed: no entry under the files named is of "
              << (chosen.spec.empty() ? "any spec" : "spec " + chosen.spec) << "\n";
    return kExitFailure;
  }
  return replayed.passed() ? kExitOk : kExitFailure;
}

}  // namespace

Command add_replay_command(CLI::App& app, const harness::ResolveOptions& resolve) {
  auto chosen = std::make_shared<ReplayOptions>();
  auto* cmd = app.add_subcommand(
      "replay", "Replay corpus entries or counterexample reports (files or folders) against implementations, each "
                "entry against those of its spec.");
  cmd->add_option("--spec", chosen->spec, "The computation: " + harness::spec_names() + " (default: every one)");
  cmd->add_option("--impl", chosen->impls, "Implementations (default: every built-in one). " + implementation_help());
  cmd->add_option("files", chosen->inputs, "Corpus entries, reports, or folders of them")->required();
  cmd->add_flag("--quiet", chosen->quiet, "Print only failures");
  return {cmd, [chosen, resolve] { return replay(*chosen, resolve); }};
}

}  // namespace chunkmeta::cli
