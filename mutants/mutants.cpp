#include "mutants.hpp"

namespace chunkmeta::mutants {

const std::vector<Mutant>& catalogue() {
  static const std::vector<Mutant> all = [] {
    std::vector<Mutant> every;
#define CHUNKMETA_APPEND_MUTANTS_OF(folder) \
  for (auto& mutant : mutants_of_##folder()) every.push_back(std::move(mutant));
    CHUNKMETA_SPEC_FOLDERS(CHUNKMETA_APPEND_MUTANTS_OF)
#undef CHUNKMETA_APPEND_MUTANTS_OF
    return every;
  }();
  return all;
}

}  // namespace chunkmeta::mutants
