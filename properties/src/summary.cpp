// The suite's verdicts and the text summary people read.
#include "chunkmeta/properties/suite.hpp"

#include <iomanip>
#include <map>
#include <sstream>

#include "chunkmeta/properties/generators.hpp"

namespace chunkmeta::properties {

bool SuiteResult::passed() const {
  for (const auto& p : properties) {
    if (!p.passed) return false;
  }
  return !interrupted();
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
  std::map<std::string, int> classes;
  for (const auto& suite : results) {
    if (!suite.properties.empty()) os << suite.properties.front().implementation << ":\n";
    for (const auto& p : suite.properties) {
      if (p.skipped) {
        os << "  SKIP  " << std::left << std::setw(54) << p.property << std::right
           << "  (sends invalid input; the implementation takes valid workloads only)\n";
        continue;
      }
      ++properties;
      cases += p.cases;
      const char* verdict = !p.passed ? "  FAIL  " : p.stopped.empty() ? "  PASS  " : "  STOP  ";
      os << verdict << std::left << std::setw(54) << p.property << std::right << std::setw(8) << p.cases << " cases";
      if (p.passed && !p.stopped.empty()) os << " (" << p.stopped << ")";
      os << "\n";
      for (const auto& [name, count] : p.edge_classes) classes[name] += count;
      if (p.passed) continue;
      ++failures;
      if (!p.duplicate_of.empty()) {
        os << "        the same counterexample as " << p.duplicate_of << " (listed there)\n";
        continue;
      }
      if (p.counterexample) {
        os << harness::render(*p.counterexample, p.files);
      }
      if (!p.message.empty() && !p.counterexample) os << p.message << "\n";
    }
  }
  if (cases > 0) {
    os << "Edge classes seen (cases):\n";
    for (const auto& name : all_edge_classes()) os << "  " << std::setw(8) << classes[name] << "  " << name << "\n";
    for (const auto& name : all_invalid_rules()) {
      if (classes.count(name)) os << "  " << std::setw(8) << classes[name] << "  invalid: " << name << "\n";
    }
    for (const auto& name : all_huge_batch_classes()) {
      if (classes.count(name)) os << "  " << std::setw(8) << classes[name] << "  huge batch: " << name << "\n";
    }
  }
  if (!results.empty() && !results.front().properties.empty()) {
    const auto seed = results.front().properties.front().seed;
    os << "Seed: " << seed << " (RC_PARAMS=\"seed=" << seed << "\" repeats this run)\n";
  }
  os << "Summary: " << properties << " properties, " << cases << " cases, " << failures << " failed\n";
  return os.str();
}

}  // namespace chunkmeta::properties
