#include "chunkmeta/properties/tables.hpp"

#include "chunkmeta/properties/table_helpers.hpp"

namespace chunkmeta::properties {

namespace {

// Every spec folder's suites, in the registry's order.
const std::vector<Suite>& all_suites() {
  static const std::vector<Suite> suites = [] {
    std::vector<Suite> all;
#define CHUNKMETA_APPEND_SUITES_OF(folder) \
  for (auto& suite : suites_of_##folder()) all.push_back(std::move(suite));
    CHUNKMETA_SPEC_FOLDERS(CHUNKMETA_APPEND_SUITES_OF)
#undef CHUNKMETA_APPEND_SUITES_OF
    return all;
  }();
  return suites;
}

const Suite* find_suite(const harness::Spec& spec) {
  for (const auto& suite : all_suites()) {
    if (suite.table.spec == &spec) return &suite;
  }
  return nullptr;
}

// A registered spec without a suite is a build mistake (SpecsRegistry test); the first suite stands in.
const Suite& suite_of(const harness::Spec& spec) {
  const Suite* suite = find_suite(spec);
  return suite != nullptr ? *suite : all_suites().front();
}

}  // namespace

bool has_suite(const harness::Spec& spec) { return find_suite(spec) != nullptr; }
const engine::PropertyTable& table_of(const harness::Spec& spec) { return suite_of(spec).table; }
const ValueModel& values_of(const harness::Spec& spec) { return suite_of(spec).values; }

std::vector<std::string> implementation_property_names(const harness::Spec& spec) {
  std::vector<std::string> names;
  for (const auto& property : table_of(spec).properties) {
    if (property.scope == engine::Scope::implementation) names.push_back(property.name);
  }
  return names;
}

}  // namespace chunkmeta::properties
