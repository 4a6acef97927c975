// Test-only: the differential target with a planted mismatch (a mutant from
// the property suite's catalogue), to prove fuzzing finds one and that the
// finding ends in a shrunk report.
#include <algorithm>

#include "mutants.hpp"
#include "fuzz_implementations.hpp"

const std::vector<chunkmeta::harness::Implementation>& fuzz_implementations(const chunkmeta::harness::Spec& spec) {
  static const std::vector<chunkmeta::harness::Implementation> planted = [] {
    const auto& all = chunkmeta::mutants::catalogue();
    const auto it = std::find_if(all.begin(), all.end(), [](const auto& m) { return m.implementation.name == "power-of-two-modulo"; });
    return std::vector<chunkmeta::harness::Implementation>{it->implementation};
  }();
  static const std::vector<chunkmeta::harness::Implementation> none;
  return &spec == planted.front().spec ? planted : none;
}
