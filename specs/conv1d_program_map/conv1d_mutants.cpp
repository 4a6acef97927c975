// The conv1d program map's slips (specs/conv1d_program_map), each a rewrite of
// vLLM's procedure wrong one way, for the mutant catalogue.
#include <algorithm>

#include "conv1d_spec.hpp"
#include "mutants.hpp"

namespace chunkmeta::mutants {
namespace {

using harness::Workload;

enum class MapSlip {
  older_row_ids,        // FLA's older formulation: the row is the count of blocks so far that start a row, minus one
  padding_not_minus_one,  // the engine's buffers padded with 0: a grid over the buffer runs the padding as programs
  tot_from_row_count,   // tot taken as the row count B, not sum(nums)
};

// vLLM's buffers: 2 max(1024, tot) entries.
std::size_t buffer_entries(std::size_t tot) { return 2 * std::max<std::size_t>(1024, tot); }

harness::Outcome map_with(MapSlip slip, const Workload& w) {
  if (auto error = conv1d::validate(harness::conv1d_view(w))) return *error;  // every mutant validates correctly
  const auto& q = w.query_start_loc;
  const std::int64_t M = w.chunk_size;
  harness::Arrays out(3);
  std::int64_t starts_seen = 0;  // blocks so far with offset 0
  for (std::size_t i = 0; i + 1 < q.size(); ++i) {
    const std::int64_t count = (q[i + 1] - q[i] + M - 1) / M;
    out[0].push_back(static_cast<std::int32_t>(count));
    for (std::int64_t o = 0; o < count; ++o) {
      if (o == 0) ++starts_seen;
      const std::int64_t row = slip == MapSlip::older_row_ids ? starts_seen - 1 : static_cast<std::int64_t>(i);
      out[1].push_back(static_cast<std::int32_t>(row));
      out[2].push_back(static_cast<std::int32_t>(o));
    }
  }
  const std::size_t tot = out[1].size();
  if (slip == MapSlip::padding_not_minus_one) {
    // The programs a grid over the whole buffer runs: every entry whose row is not -1.
    out[1].resize(buffer_entries(tot), 0);
    out[2].resize(buffer_entries(tot), 0);
  }
  if (slip == MapSlip::tot_from_row_count) {
    // The buffers' first B entries: the map cut short, or padding (-1) read as programs.
    const std::size_t rows = q.size() - 1;
    out[1].resize(rows, conv1d::kPadding);
    out[2].resize(rows, conv1d::kPadding);
  }
  return out;
}

Mutant make_map(std::string name, MapSlip slip, std::string description, std::size_t fewest_failing_rows) {
  const harness::Spec& spec = harness::conv1d_program_map_spec();
  return {harness::in_process(std::move(name), description, spec, [slip](const Workload& w) { return map_with(slip, w); }),
          std::move(description), fewest_failing_rows};
}

}  // namespace

std::vector<Mutant> mutants_of_conv1d_program_map() {
  return {
      make_map("conv1d-older-row-ids", MapSlip::older_row_ids,
               "FLA's older formulation: a program's row is the count of blocks so far that start a row, minus one, so "
               "every program after an empty row gets an earlier row",
               2),
      make_map("conv1d-padding-not-minus-one", MapSlip::padding_not_minus_one,
               "the engine's buffers (2 max(1024, tot) entries) padded with 0, not -1 (PAD_SLOT_ID): a grid over the "
               "buffer runs every padding entry as block 0 of row 0",
               0),
      make_map("conv1d-tot-from-row-count", MapSlip::tot_from_row_count,
               "tot taken as the row count B, not sum(nums): the map cut short, or padding read as programs", 1),
  };
}

}  // namespace chunkmeta::mutants
