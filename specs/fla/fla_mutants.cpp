// FLA's slips (specs/fla): each a rewrite of the procedure, wrong one way,
// for the mutant catalogue.
#include <algorithm>

#include "chunkmeta/fla.hpp"
#include "fla_spec.hpp"
#include "mutants.hpp"

namespace chunkmeta::mutants {
namespace {

using harness::Workload;

enum class FlaSlip {
  older_sequence_ids,  // sequence id = chunks so far that start a sequence, minus one
  int32_chunk_counts,  // ceil(len / C) as (len + C - 1) / C in int32: wraps near 2^31
  floor_chunk_counts,  // len / C instead of its ceiling
  offsets_one_short,   // the offsets' last entry (the total) left out
};

// The chunk count of a sequence as the slip computes it.
std::int64_t count_with(FlaSlip slip, std::int64_t length, std::int64_t chunk) {
  if (slip == FlaSlip::floor_chunk_counts) return length / chunk;
  if (slip == FlaSlip::int32_chunk_counts) {
    std::int64_t sum = length + chunk - 1;  // int32 arithmetic: wraps past 2^31-1
    if (sum > kMaxValue) sum -= std::int64_t{1} << 32;
    return std::max<std::int64_t>(0, sum / chunk);  // a negative count makes no chunk
  }
  return (length + chunk - 1) / chunk;
}

harness::Outcome fla_rewrite_with(FlaSlip slip, const harness::Spec& spec, const Workload& w) {
  const fla::View64 view{w.chunk_size, w.query_start_loc};
  if (auto error = fla::validate(view)) return *error;  // every mutant validates correctly
  const auto& cu = w.query_start_loc;
  harness::Arrays out(1);
  if (&spec == &harness::fla_chunk_offsets_spec()) {
    std::int64_t total = 0;
    out[0].push_back(0);
    for (std::size_t i = 0; i + 1 < cu.size(); ++i) {
      total += count_with(slip, cu[i + 1] - cu[i], w.chunk_size);
      out[0].push_back(static_cast<std::int32_t>(total));
    }
    if (slip == FlaSlip::offsets_one_short) out[0].pop_back();
    return out;
  }
  std::int64_t starts_seen = 0;  // chunks so far with j = 0
  for (std::size_t i = 0; i + 1 < cu.size(); ++i) {
    const std::int64_t count = count_with(slip, cu[i + 1] - cu[i], w.chunk_size);
    for (std::int64_t j = 0; j < count; ++j) {
      if (j == 0) ++starts_seen;
      const std::int64_t id = slip == FlaSlip::older_sequence_ids ? starts_seen - 1 : static_cast<std::int64_t>(i);
      out[0].push_back(static_cast<std::int32_t>(id));
      out[0].push_back(static_cast<std::int32_t>(j));
    }
  }
  return out;
}

Mutant make_fla(std::string name, const harness::Spec& spec, FlaSlip slip, std::string description,
                std::size_t fewest_failing_rows = 1) {
  return {harness::in_process(std::move(name), description, spec,
                              [slip, &spec](const Workload& w) { return fla_rewrite_with(slip, spec, w); }),
          std::move(description), fewest_failing_rows};
}

}  // namespace

std::vector<Mutant> mutants_of_fla() {
  return {
      make_fla("older-sequence-ids", harness::fla_chunk_indices_spec(), FlaSlip::older_sequence_ids,
               "the sequence id is the count of chunks so far that start a sequence, minus one: every chunk after "
               "an empty sequence gets an earlier sequence's id",
               2),
      make_fla("int32-chunk-counts-indices", harness::fla_chunk_indices_spec(), FlaSlip::int32_chunk_counts,
               "ceil(len / C) computed as (len + C - 1) / C in int32, which wraps for lengths near 2^31"),
      make_fla("floor-chunk-counts-indices", harness::fla_chunk_indices_spec(), FlaSlip::floor_chunk_counts,
               "a sequence's chunk count is len / C, not its ceiling"),
      make_fla("int32-chunk-counts-offsets", harness::fla_chunk_offsets_spec(), FlaSlip::int32_chunk_counts,
               "ceil(len / C) computed as (len + C - 1) / C in int32, which wraps for lengths near 2^31"),
      make_fla("floor-chunk-counts-offsets", harness::fla_chunk_offsets_spec(), FlaSlip::floor_chunk_counts,
               "a sequence's chunk count is len / C, not its ceiling"),
      make_fla("offsets-one-short", harness::fla_chunk_offsets_spec(), FlaSlip::offsets_one_short,
               "chunk_offsets has B entries: the total, offsets[B], is left out", 0)
  };
}

}  // namespace chunkmeta::mutants
