// Deliberately wrong implementations: plausible slips in an optimized rewrite.
// Test-only code, never linked into the library. The mutant test proves the
// property suite catches each one with a small counterexample.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::mutants {

struct Mutant {
  harness::Implementation implementation;  // name: the slip; its spec: the computation it gets wrong
  std::string slip;                        // what the rewrite got wrong, for people
  std::size_t fewest_failing_rows = 1;     // rows of the smallest workload that can fail
};

// Every spec's mutants: Mamba's first, then FLA's.
const std::vector<Mutant>& catalogue();

// GoogleTest names parameterised tests after this, not a byte dump.
inline void PrintTo(const Mutant& mutant, std::ostream* os) { *os << mutant.implementation.name; }

}  // namespace chunkmeta::mutants
