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

// A formulation judged by the kernels' view alone (harness::kernel_formulations):
// its base spec's values, drawn by two properties with no check of their own
// (the judge's kernels' view is the whole check): the valid workloads, and huge
// batches. No relation and no invalid input: those are the base's contract.
Suite formulation_suite(const harness::Spec& formulation, const Suite& base) {
  using namespace builders;
  Suite suite{{}, base.values};
  suite.table.spec = &formulation;
  const std::string claim(formulation.kernels_view_covers());
  suite.table.properties.push_back(
      matches_reference(formulation.name().ends_with("+cache") ? "IsKernelAndCacheAdequateOnEveryValidWorkload"
                                                                : "IsKernelAdequateOnEveryValidWorkload",
                        "is judged by the kernels' view alone on every valid workload: " + claim, base.values.valid,
                        base.values.classes));
  suite.table.properties.push_back(matches_reference(
      formulation.name().ends_with("+cache") ? "IsKernelAndCacheAdequateOnHugeBatches" : "IsKernelAdequateOnHugeBatches",
      "is judged by the kernels' view alone on huge batches", base.values.huge, base.values.huge_classes, 0.02));
  suite.table.workload_classes = base.values.classes;
  suite.table.classes = {{"", base.values.all_classes, true}, {"huge batch: ", base.values.all_huge_classes, false}};
  return suite;
}

const std::vector<Suite>& formulation_suites() {
  static const std::vector<Suite> suites = [] {
    std::vector<Suite> all;
    for (const harness::Spec* formulation : harness::kernel_formulations()) {
      for (const auto& base : all_suites()) {
        if (base.table.spec == harness::formulation_base(*formulation)) all.push_back(formulation_suite(*formulation, base));
      }
    }
    return all;
  }();
  return suites;
}

const Suite* find_suite(const harness::Spec& spec) {
  for (const auto* suites : {&all_suites(), &formulation_suites()}) {
    for (const auto& suite : *suites) {
      if (suite.table.spec == &spec) return &suite;
    }
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

engine::PropertyTable house_table(const harness::Spec& spec, const ValueModel& values, rc::Gen<InvalidCase> invalid_cases,
                                  std::function<InvalidWorkload(const InvalidCase&)> invalid_of, TablePlan plan) {
  using namespace builders;
  const auto& valid = values.valid;
  const Classes classes = values.classes;
  engine::PropertyTable table;
  table.spec = &spec;
  auto& properties = table.properties;
  properties.push_back(matches_reference("MatchesReferenceOnEveryValidWorkload", plan.valid_sentence, valid, classes));
  properties.push_back(matches_reference("MatchesReferenceOnHugeBatches", plan.huge_sentence, values.huge,
                                         values.huge_classes, 0.02));
  const auto rejects = [&] { properties.push_back(rejects_invalid(invalid_cases, invalid_of)); };
  if (plan.invalid_first) rejects();
  properties.push_back(satisfies_invariants(valid, classes));
  if (!plan.invariants_sentence.empty()) properties.back().sentence = plan.invariants_sentence;
  for (auto& relation : plan.relations) properties.push_back(std::move(relation));
  if (!plan.invalid_first) rejects();
  properties.push_back(validate_names_rule(spec, invalid_cases, invalid_of));
  properties.push_back(validate_accepts_valid(spec, valid, classes));
  properties.push_back(validate_applies_cap(spec, valid, classes));
  properties.push_back(writes_into_any_buffer(spec, valid, classes));
  table.workload_classes = classes;
  table.classes = {{"", values.all_classes, true},
                   {"invalid: ", values.all_rules, false},
                   {"huge batch: ", values.all_huge_classes, false}};
  return table;
}

std::vector<std::string> implementation_property_names(const harness::Spec& spec) {
  std::vector<std::string> names;
  for (const auto& property : table_of(spec).properties) {
    if (property.scope == engine::Scope::implementation) names.push_back(property.name);
  }
  return names;
}

}  // namespace chunkmeta::properties
