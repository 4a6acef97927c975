// Deliberately wrong implementations: plausible slips in an optimized rewrite.
// Test-only code, never linked into the library. The mutant test proves the
// property suite catches each one with a small counterexample.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "chunkmeta/harness/spec.hpp"
#include "registry.hpp"

namespace chunkmeta::mutants {

struct Mutant {
  harness::Implementation implementation;  // name: the slip; its spec: the computation it gets wrong
  std::string slip;                        // what the rewrite got wrong, for people
  std::size_t fewest_failing_rows = 1;     // rows of the smallest workload that can fail
  // A slip of validation (invalid input accepted): caught only through a door
  // that sends invalid input, not through an engine function's (valid workloads only).
  bool slip_of_validation = false;
};

// Every spec's mutants, in the registry's order: each spec folder's hook.
const std::vector<Mutant>& catalogue();
#define CHUNKMETA_DECLARE_MUTANTS_OF(folder) std::vector<Mutant> mutants_of_##folder();
CHUNKMETA_SPEC_FOLDERS(CHUNKMETA_DECLARE_MUTANTS_OF)
#undef CHUNKMETA_DECLARE_MUTANTS_OF

// GoogleTest names parameterised tests after this, not a byte dump.
inline void PrintTo(const Mutant& mutant, std::ostream* os) { *os << mutant.implementation.name; }
// A parameterised test's name for a mutant: its name with '-' as '_' (GoogleTest takes no '-').
inline std::string test_name_of(const Mutant& mutant) {
  std::string name;
  for (char c : mutant.implementation.name) name += c == '-' ? '_' : c;
  return name;
}

}  // namespace chunkmeta::mutants
