#include "chunkmeta/properties/check.hpp"

#include <sstream>

#include "chunkmeta/harness/corpus.hpp"

namespace chunkmeta::properties {

ReplayResult replay_corpus(const std::vector<harness::Implementation>& implementations,
                           const std::vector<std::filesystem::path>& inputs) {
  ReplayResult result;
  std::ostringstream text;
  const auto files = harness::corpus_files(inputs);
  result.files = static_cast<int>(files.size());
  for (const auto& file : files) {
    auto loaded = harness::load_corpus_entry(file);
    if (auto* why = std::get_if<std::string>(&loaded)) {
      text << "unreadable corpus entry: " << *why << "\n";
      ++result.unreadable;
      continue;
    }
    for (auto& cx : harness::replay(std::get<harness::CorpusEntry>(loaded), implementations)) {
      text << harness::render(cx);
      result.failures.push_back(std::move(cx));
    }
  }
  text << "Replay: " << files.size() << " files x " << implementations.size() << " implementations, "
       << result.failures.size() << " failures, " << result.unreadable << " unreadable\n";
  result.text = text.str();
  return result;
}

bool CheckResult::passed() const {
  if (!replay.passed()) return false;
  for (const auto& suite : suites) {
    if (!suite.passed()) return false;
  }
  return true;
}

std::string CheckResult::verdict() const {
  return passed() ? "VERIFIED: every property held\n" : "NOT VERIFIED: see the counterexamples above\n";
}

CheckResult check(const std::vector<harness::Implementation>& implementations, const CheckOptions& options) {
  const auto tell = [&options](const std::string& what) {
    if (options.progress) options.progress(what);
  };
  CheckResult result;
  if (!options.corpus.empty()) {
    tell("Replaying the corpus...\n");
    result.replay = replay_corpus(implementations, options.corpus);
    tell(result.replay.text);
  }
  SuiteOptions suite = options.suite;
  for (const auto& impl : implementations) {
    tell("Verifying " + impl.name + " (" + impl.description + ")" +
         (impl.rejects_invalid_input ? "" : ", valid workloads only") + "...\n");
    result.suites.push_back(run_suite(impl, suite));
    suite.include_library = false;
  }
  result.text = (options.corpus.empty() ? "" : result.replay.text) + summarize(result.suites) + result.verdict();
  return result;
}

}  // namespace chunkmeta::properties
