// The suite's verdicts and the text summary people read.
#include <iomanip>
#include <map>
#include <sstream>

#include "chunkmeta/engine/run.hpp"

namespace chunkmeta::engine {

bool SuiteResult::passed() const {
  for (const auto& p : properties) {
    if (!p.passed || !p.complete()) return false;
  }
  return !interrupted();
}

const PropertyResult* SuiteResult::first_failure() const {
  for (const auto& p : properties) {
    if (!p.passed) return &p;
  }
  return nullptr;
}

std::vector<std::string> SuiteResult::cut_short() const {
  std::vector<std::string> lines;
  for (const auto& p : properties) {
    if (p.complete()) continue;
    const std::string why = p.stopped.empty() ? std::string() : " (" + p.stopped + ")";
    lines.push_back(p.property + (p.not_run ? ": not run" + why
                                            : ": " + std::to_string(p.cases) + " of " + std::to_string(p.planned) +
                                                  " cases" + why));
  }
  return lines;
}

bool SuiteResult::interrupted() const {
  for (const auto& p : properties) {
    if (p.stopped == "interrupted") return true;
  }
  return false;
}

double SuiteResult::seconds() const {
  double total = 0;
  for (const auto& p : properties) total += p.seconds;
  return total;
}

double SuiteResult::implementation_seconds() const {
  double total = 0;
  for (const auto& p : properties) total += p.implementation_seconds;
  return total;
}

int SuiteResult::cases() const {
  int total = 0;
  for (const auto& p : properties) total += p.cases;
  return total;
}

std::string summarize(const std::vector<SuiteResult>& results) {
  std::ostringstream os;
  int properties = 0;
  int cases = 0;
  int failures = 0;
  // Edge classes per table (each spec has its own), in the order the tables come.
  std::vector<std::pair<const PropertyTable*, std::map<std::string, int>>> seen;
  std::map<std::string, int> left_out;  // excluded class -> cases and shrink candidates not tried
  // A run of Mamba's spec alone reads as it always did; a run of several names each suite's spec.
  bool several_specs = false;
  for (const auto& suite : results) several_specs = several_specs || suite.table != results.front().table;
  for (const auto& suite : results) {
    if (suite.properties.empty()) continue;
    const bool named = suite.table != nullptr && suite.table->spec != nullptr &&
                       (several_specs || suite.table->spec != &harness::default_spec());
    os << suite.properties.front().implementation
       << (named ? " (" + std::string(suite.table->spec->name()) + ")" : std::string()) << ":\n";
    if (seen.empty() || seen.back().first != suite.table) seen.emplace_back(suite.table, std::map<std::string, int>{});
    for (const auto& p : suite.properties) {
      if (p.skipped) {
        os << "  SKIP  " << std::left << std::setw(54) << p.property << std::right
           << "  (sends invalid input; the implementation takes valid workloads only)\n";
        continue;
      }
      ++properties;
      cases += p.cases;
      if (p.not_run) {
        os << "  ----  " << std::left << std::setw(54) << p.property << std::right << "  not run ("
           << (p.stopped.empty() ? "the run ended first" : p.stopped) << ")\n";
        continue;
      }
      const char* verdict = !p.passed ? "  FAIL  " : !p.complete() ? "  STOP  " : "  PASS  ";
      os << verdict << std::left << std::setw(54) << p.property << std::right << std::setw(8) << p.cases << " cases";
      if (p.passed && !p.complete()) os << " of " << p.planned;
      if (p.passed && p.complete() && !p.skipped && p.cases > p.planned)
        os << " (at least " << p.planned << ": more while the time budget lasted)";
      if (p.passed && !p.stopped.empty()) os << " (" << p.stopped << ")";
      if (p.slow_calls > 0)
        os << " (" << p.slow_calls << (p.slow_calls == 1 ? " call" : " calls")
           << " slow: timed out, then answered when asked again)";
      os << "\n";
      for (const auto& [name, count] : p.edge_classes) seen.back().second[name] += count;
      for (const auto& [name, count] : p.left_out) left_out[name] += count;
      if (p.passed) continue;
      ++failures;
      if (!p.duplicate_of.empty()) {
        os << "        the same bug as " << p.duplicate_of << " (its minimal counterexample fails here too)\n";
        continue;
      }
      if (p.counterexample) os << harness::render(*p.counterexample, p.files);
      if (!p.message.empty()) os << "        " << p.message << "\n";
    }
  }
  if (cases > 0) {
    for (const auto& [table, counts] : seen) {
      if (table == nullptr || counts.empty()) continue;
      os << "Edge classes seen (cases)" << (seen.size() > 1 ? ", " + std::string(table->spec->name()) : std::string())
         << ":\n";
      for (const auto& group : table->classes) {
        for (const auto& name : group.names) {
          const auto it = counts.find(name);
          if (it == counts.end() && !group.always_shown) continue;
          os << "  " << std::setw(8) << (it == counts.end() ? 0 : it->second) << "  " << group.prefix << name << "\n";
        }
      }
    }
  }
  if (!left_out.empty()) {
    os << "Not tried, outside the stated domain (cases and shrink candidates left out):\n";
    for (const auto& [name, count] : left_out) os << "  " << std::setw(8) << count << "  " << name << "\n";
  }
  if (!results.empty() && !results.front().properties.empty()) {
    const auto seed = results.front().properties.front().seed;
    os << "Seed: " << seed << " (--seed " << seed << " repeats this run)\n";
  }
  int incomplete = 0;
  for (const auto& suite : results) incomplete += static_cast<int>(suite.cut_short().size());
  os << "Summary: " << properties << " properties, " << cases << " cases, " << failures << " failed";
  if (incomplete > 0) os << ", " << incomplete << " cut short or not run";
  os << "\n";
  return os.str();
}

}  // namespace chunkmeta::engine
