#include "chunkmeta/harness/implementations.hpp"
#include "fuzz_implementations.hpp"

const std::vector<chunkmeta::harness::Implementation>& fuzz_implementations() {
  return chunkmeta::harness::builtin_implementations();
}
