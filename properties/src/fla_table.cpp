// FLA's property suites (SPEC Part 2), one per output: the shared properties
// over its generators, the relation to Mamba's spec (no computed tokens), and
// the library's own properties (validation, the cap, the buffers of the writers).
#include "chunkmeta/properties/relations.hpp"
#include "tables_internal.hpp"

namespace chunkmeta::properties {
namespace {

using namespace tables;

// SPEC Part 2, "Relation to Part 1": without computed tokens, Mamba's chunking
// is FLA's. The implementation's answer against Mamba's reference, transformed.
Property agrees_with_mamba(const Spec& spec) {
  Property p;
  p.name = "AgreesWithTheMambaSpecWithoutComputedTokens";
  p.sentence = "gives what Mamba's reference gives for the same batch without computed tokens";
  p.draw = builders::workload_cases(fla_valid_workloads());
  p.asks = [](const Case& c) { return std::vector<Workload>{c.workload}; };
  p.judge = [&spec](const Implementation&, const Case& c, std::span<const Answer> answers) -> std::optional<Counterexample> {
    auto outcome = builders::outcome_of(spec, c.workload, answers[0]);
    if (auto* cx = std::get_if<Counterexample>(&outcome)) return std::move(*cx);
    const Outcome& actual = std::get<Outcome>(outcome);
    const Outcome mamba = harness::mamba_spec().reference(c.workload);
    // Above the cap both refuse with output_too_large; the differential property judges refusals.
    if (!mamba.ok()) return std::nullopt;
    const Outcome predicted(fla_outputs_from_mamba(spec, c.workload, mamba.value()));
    if (actual.ok() && !harness::compare_outcomes(spec, predicted, actual)) return std::nullopt;
    return builders::expect_relation(spec, c.workload,
                                     "the output differs from Mamba's chunk metadata for the same batch without "
                                     "computed tokens",
                                     {{"the same batch as Mamba's workload (its reference output)", c.workload, mamba,
                                       &harness::mamba_spec()}},
                                     predicted, actual);
  };
  p.classes = [](const Case& c) { return fla_edge_classes(c.workload); };
  return p;
}

}  // namespace

engine::PropertyTable make_fla_table(const Spec& spec) {
  using namespace builders;
  const auto valid = fla_valid_workloads();
  const Classes classes = [](const Workload& w) { return fla_edge_classes(w); };
  engine::PropertyTable table;
  table.spec = &spec;
  table.properties = {
      matches_reference(spec, "MatchesReferenceOnEveryValidWorkload",
                        "matches the reference, element for element, on every valid input", valid, classes),
      matches_reference(spec, "MatchesReferenceOnHugeBatches",
                        "matches the reference on batches of 2^15 to 140,000 sequences, with chunks of sequences past "
                        "2^15 and 2^16",
                        fla_huge_batches(), [](const Workload& w) { return fla_huge_batch_classes(w); }, 0.02),
      satisfies_invariants(spec, valid, classes),
      agrees_with_mamba(spec),
      split_and_join(spec, valid, classes),
      shift_invariance(spec, "IgnoresAShiftOfCuSeqlens", "gives the same result when every cu_seqlens entry is shifted",
                       valid, classes),
      rejects_invalid(spec, fla_invalid_cases(), fla_invalid_of),
      validate_names_rule(spec, fla_invalid_cases(), fla_invalid_of),
      validate_accepts_valid(spec, valid, classes),
      validate_applies_cap(spec, valid, classes),
      writes_into_any_buffer(spec, valid, classes),
  };
  table.properties[2].sentence = "satisfies the SPEC's five invariants";
  table.workload_classes = [](const Workload& w) { return fla_edge_classes(w); };
  table.classes = {{"", all_fla_edge_classes(), true},
                   {"invalid: ", all_fla_invalid_rules(), false},
                   {"huge batch: ", all_fla_huge_batch_classes(), false}};
  return table;
}

}  // namespace chunkmeta::properties
