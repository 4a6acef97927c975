// The packed grid's property suites (specs/mamba_packed_grid), one per form:
// the shared properties over its generators, and the relations its contract
// states: the two forms describe the same pieces; they are FLA's chunks when
// every row with tokens starts on the grid; they are the builder's (Part 1)
// chunks when each row's computed tokens put its start on its own grid.
#include "chunkmeta/harness/states.hpp"
#include "chunkmeta/properties/table_helpers.hpp"
#include "fla/fla_generators.hpp"
#include "fla/fla_spec.hpp"
#include "mamba/mamba_spec.hpp"
#include "packed_grid_generators.hpp"
#include "packed_grid_spec.hpp"

namespace chunkmeta::properties {
namespace {

using namespace tables;
using harness::Arrays;

bool every_row_with_tokens_starts_on_the_grid(const Workload& w) {
  const auto& q = w.query_start_loc;
  for (std::size_t i = 0; i + 1 < q.size(); ++i) {
    if (q[i + 1] > q[i] && q[i] % w.chunk_size != 0) return false;
  }
  return true;
}

bool every_row_has_tokens(const Workload& w) {
  const auto& q = w.query_start_loc;
  for (std::size_t i = 0; i + 1 < q.size(); ++i) {
    if (q[i + 1] == q[i]) return false;
  }
  return true;
}

// The contract's relation 1: the implementation's answer against the other form's reference, rewritten.
Property the_two_forms_agree(const Spec& spec, const ValueModel& values) {
  const Spec& other = &spec == &harness::packed_grid_spec() ? harness::mamba_ssm_chunk_indices_spec()
                                                             : harness::packed_grid_spec();
  return builders::agrees_with_relation(
      spec, "DescribesTheSamePiecesAsTheOtherForm",
      "describes the same pieces as the other form's reference (start = chunk_indices C + chunk_offsets = cu_chunk_seqlens)",
      "the pieces differ from those the other form's reference describes for the same batch", values.valid, values.classes,
      [&spec, &other](const Workload& w, const Outcome&) -> std::optional<builders::Prediction> {
        Outcome theirs = other.reference(w);
        if (!theirs.ok()) return std::nullopt;
        Outcome predicted(harness::pieces_as(spec, w, harness::piece_starts(other, w, theirs.value())));
        return builders::Prediction{std::move(predicted),
                                    {"the same batch in the other form (its reference)", w, std::move(theirs), &other}};
      });
}

// Relation 2: FLA's chunks (i, j) start at q[i] + j C; they are the pieces when every row with tokens starts on the grid.
Property agrees_with_fla(const Spec& spec, const ValueModel& values) {
  return builders::agrees_with_relation(
      spec, "IsFlasChunkingWhenEveryRowStartsOnTheGrid",
      "gives FLA's chunks (row i's chunk j starting at q[i] + j C) when every row with tokens starts on the grid",
      "the pieces differ from FLA's chunks for a batch whose rows all start on the grid",
      gen::map(values.valid, rows_on_the_grid), values.classes,
      [&spec](const Workload& w, const Outcome&) -> std::optional<builders::Prediction> {
        if (!every_row_with_tokens_starts_on_the_grid(w)) return std::nullopt;
        Outcome theirs = harness::fla_chunk_indices_spec().reference(w);
        if (!theirs.ok()) return std::nullopt;
        std::vector<std::int64_t> starts;
        const auto& pairs = theirs.value()[0];
        for (std::size_t k = 0; k + 1 < pairs.size(); k += 2)
          starts.push_back(w.query_start_loc[static_cast<std::size_t>(pairs[k])] + std::int64_t{pairs[k + 1]} * w.chunk_size);
        Outcome predicted(harness::pieces_as(spec, w, starts));
        return builders::Prediction{std::move(predicted),
                                    {"the same batch as FLA's cu_seqlens (its reference chunk_indices)", w,
                                     std::move(theirs), &harness::fla_chunk_indices_spec()}};
      });
}

// Relation 3: the builder realigns each row to its computed tokens c_i; with c_i = q[i] mod C every row's grid is the
// packed batch's, and its chunks are the pieces (rows with tokens: the builder gives an off-grid empty row a chunk).
Property agrees_with_the_builder(const Spec& spec, const ValueModel& values) {
  return builders::agrees_with_relation(
      spec, "IsTheBuildersChunkingWhenEachRowsComputedTokensPutItOnTheGrid",
      "gives the builder's (mamba) chunks when every row has tokens and computed tokens c_i = q[i] mod C",
      "the pieces differ from the builder's chunks with c_i = q[i] mod C",
      gen::map(values.valid, rows_with_tokens), values.classes,
      [&spec](const Workload& w, const Outcome&) -> std::optional<builders::Prediction> {
        if (!every_row_has_tokens(w)) return std::nullopt;
        Workload builder = w;
        for (std::size_t i = 0; i < builder.rows(); ++i) builder.num_computed_tokens[i] = w.query_start_loc[i] % w.chunk_size;
        const Spec& mamba = harness::mamba_spec();
        Outcome theirs = mamba.reference(builder);
        if (!theirs.ok()) return std::nullopt;
        const auto& cu = theirs.value()[0];  // cu_chunk_seqlen: the chunks' starts, then T
        const std::vector<std::int64_t> starts(cu.begin(), cu.end() - 1);
        Outcome predicted(harness::pieces_as(spec, w, starts));
        return builders::Prediction{std::move(predicted),
                                    {"the same batch as the builder's, computed tokens q[i] mod C (its reference)",
                                     builder, std::move(theirs), &mamba}};
      });
}

// The kernels' view across the seam (SPEC Part 8): the packed grid reads no computed tokens, yet an engine
// that resumes rows from the prefix cache runs it on rows that have some. Drawn per row: computed tokens c_r
// (half of them putting the row's start on its own grid, c_r = q[r] - q[0] mod C), and a block size M, a
// multiple of C. The pieces' chunk ends are the cache's block ends exactly when every row with a block end
// strictly inside its new tokens has q[r] - q[0] = c_r (mod C).
constexpr const char* kResumedOnTheGrid = "rows resumed on their grid: cache-adequate";
constexpr const char* kResumedOffTheGrid = "a row resumed off its grid: not cache-adequate";

struct Resumed {
  std::vector<std::int64_t> computed;
  std::int64_t block_size;
};

Resumed resumed_of(const Case& c) {
  const Workload& w = c.workload;
  const auto& q = w.query_start_loc;
  const std::int64_t chunk = w.chunk_size;
  Resumed r{{}, chunk * (1 + (c.parameters.empty() ? 0 : c.parameters[0] % 4))};
  for (std::size_t i = 0; i < w.rows(); ++i) {
    const std::int64_t salt = i + 1 < c.parameters.size() ? c.parameters[i + 1] : 0;
    const std::int64_t on_grid = (q[i] - q[0]) % chunk;
    const std::int64_t computed = salt % 2 == 0 ? on_grid + chunk * (salt / 2 % 4) : salt / 2 % (4 * chunk);
    r.computed.push_back(std::min(computed, kMaxValue - (q[i + 1] - q[i])));
  }
  return r;
}

// The relation's prediction: the first row that has a block end inside its new tokens and starts off its grid.
std::optional<std::size_t> first_row_off_its_grid(const Workload& w, const Resumed& r) {
  const auto& q = w.query_start_loc;
  for (std::size_t i = 0; i < w.rows(); ++i) {
    const std::int64_t first_block_end = (r.computed[i] / r.block_size + 1) * r.block_size;
    const bool block_end_inside = first_block_end < r.computed[i] + q[i + 1] - q[i];
    if (block_end_inside && (q[i] - q[0] - r.computed[i]) % w.chunk_size != 0) return i;
  }
  return std::nullopt;
}

Property cache_adequate_exactly_on_the_grid(const Spec& spec, const ValueModel& values) {
  Property p;
  p.name = "IsCacheAdequateExactlyWhenEveryResumedRowStartsOnItsGrid";
  p.sentence = "is cache-adequate for rows resumed at computed tokens c (block size M, a multiple of C) exactly when every "
               "row with a block end inside its new tokens has q[r] - q[0] = c_r (mod C)";
  const auto cases = gen::mapcat(values.valid, [](const Workload& w) {
    return gen::map(gen::container<std::vector<std::int64_t>>(w.rows() + 1, inclusive_range(0, std::int64_t{1} << 40)),
                    [w](std::vector<std::int64_t> salts) { return Case{w, std::move(salts)}; });
  });
  p.draw = [cases](const rc::Random& random, int size) { return pick(cases, random, size); };
  p.asks = [](const Case& c) { return std::vector<Workload>{c.workload}; };
  p.judge = [&spec](const Implementation&, const Case& c, std::span<const Answer> answers) -> std::optional<Counterexample> {
    const Outcome& actual = builders::outcome_of(answers[0]);
    if (!actual.ok()) return std::nullopt;  // the truth judged it already
    const Workload& w = c.workload;
    const Resumed resumed = resumed_of(c);
    const kernel_view::Batch batch{resumed.computed, w.query_start_loc};
    const Arrays& arrays = actual.value();
    kernel_view::ThreeArrayStorage read;
    kernel_view::ThreeArrays chunks{};
    if (&spec == &harness::packed_grid_spec()) {
      chunks = {arrays[0], arrays[2], arrays[1]};
    } else {
      if (kernel_view::read_chunk_indices(batch, w.chunk_size, {arrays[0], arrays[1]}, read)) return std::nullopt;
      chunks = read.view();
    }
    const kernel_view::Scan scanned = kernel_view::scan(batch, w.chunk_size, chunks);
    if (scanned.fault) return std::nullopt;  // not kernel-adequate: the truth's finding on the same answer
    const auto fault = kernel_view::cache_adequate(batch, resumed.block_size, chunks, scanned);
    const auto off_grid = first_row_off_its_grid(w, resumed);
    if (fault.has_value() == off_grid.has_value()) return std::nullopt;
    std::string said = "with computed tokens [";
    for (std::size_t i = 0; i < resumed.computed.size(); ++i) said += (i == 0 ? "" : ", ") + std::to_string(resumed.computed[i]);
    said += "] and block size " + std::to_string(resumed.block_size) + ": ";
    Finding finding{FindingKind::relation_broken,
                    said + (fault ? "not cache-adequate (" + kernel_view::to_string(*fault) +
                                        "), though every row with a block end inside starts on its grid"
                                  : "cache-adequate, though row " + std::to_string(*off_grid) +
                                        " starts off its grid with a block end inside its new tokens"),
                    std::nullopt, actual, std::nullopt, std::nullopt, {}};
    return builders::counterexample(w, std::move(finding));
  };
  p.classes = [classes = values.classes](const Case& c) {
    auto hit = classes(c.workload);
    hit.emplace_back(first_row_off_its_grid(c.workload, resumed_of(c)) ? kResumedOffTheGrid : kResumedOnTheGrid);
    return hit;
  };
  return p;
}

engine::PropertyTable packed_grid_table(const Spec& spec, const ValueModel& values, std::string_view field) {
  TablePlan plan;
  plan.valid_sentence = "matches the reference, element for element, on every valid input";
  plan.huge_sentence = "matches the reference on batches of 2^15 to 140,000 rows, with pieces of rows past 2^15 and 2^16";
  plan.invariants_sentence =
      &spec == &harness::packed_grid_spec()
          ? "satisfies the contract's five invariants (the pieces tile the batch, each inside one row and one chunk, "
            "each row's last piece named)"
          : "satisfies the contract's four invariants (the pieces tile the batch, each inside one row and one chunk)";
  plan.relations = {the_two_forms_agree(spec, values), agrees_with_fla(spec, values), agrees_with_the_builder(spec, values),
                    cache_adequate_exactly_on_the_grid(spec, values)};
  const std::string offsets(field);
  auto table = house_table(spec, values, packed_grid_invalid_cases(),
                           [offsets](const InvalidCase& invalid) { return packed_grid_invalid_of(invalid, offsets); },
                           std::move(plan));
  table.classes.push_back({"", {kResumedOnTheGrid, kResumedOffTheGrid}, false});
  return table;
}

ValueModel values_naming(std::string_view field) {
  const std::string offsets(field);
  return {packed_grid_valid_workloads(),
          packed_grid_edge_classes,
          all_packed_grid_edge_classes(),
          packed_grid_huge_batches(),
          fla_huge_batch_classes,
          all_fla_huge_batch_classes(),
          gen::map(packed_grid_invalid_cases(), [offsets](const InvalidCase& c) { return packed_grid_invalid_of(c, offsets); }),
          all_packed_grid_invalid_rules(field)};
}

}  // namespace

std::vector<Suite> suites_of_mamba_packed_grid() {
  std::vector<Suite> suites;
  for (const auto& [spec, field] : {std::pair<const Spec*, std::string_view>{&harness::packed_grid_spec(), "query_start_loc"},
                                    {&harness::mamba_ssm_chunk_indices_spec(), "cu_seqlens"}}) {
    ValueModel values = values_naming(field);
    suites.push_back({packed_grid_table(*spec, values, field), values});
  }
  return suites;
}

}  // namespace chunkmeta::properties
