// The family's one input domain: a chunk size, cumulative offsets of each
// row's tokens (Mamba's query_start_loc, FLA's cu_seqlens), and for the specs
// that read them one or two values per row (Mamba's computed tokens, a
// checkpoint offset), a second scalar (a cache's block size), an optional
// scalar (an alignment a backend may not have) and a flag. A spec names the
// fields it reads (Spec::inputs); the run loop, the shrinker, the wire and
// reports move them without knowing which spec they belong to.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string_view>
#include <vector>

#include "chunkmeta/types.hpp"

namespace chunkmeta::harness {

// The integer type the engine's offsets tensor holds (read by specs whose
// outputs follow it; the others' engines use int32).
enum class Dtype : std::uint8_t { int32, int64 };
std::string_view to_string(Dtype dtype) noexcept;
std::optional<Dtype> parse_dtype(std::string_view name) noexcept;

struct Workload {
  std::int64_t chunk_size = 1;
  // One per row; zeros for a spec that does not read them (so every valid
  // workload of any spec is a valid Mamba workload, shrunk by one shrinker).
  std::vector<std::int64_t> num_computed_tokens;
  std::vector<std::int64_t> query_start_loc{0};
  Dtype dtype = Dtype::int32;
  // A second scalar (Slot::block_size); 0 for a spec that does not read one.
  std::int64_t block_size = 0;
  // A second value per row (Slot::second_per_row: a checkpoint offset, say);
  // empty for a spec that does not read one (so those workloads are as before).
  std::vector<std::int64_t> second_per_row{};
  // An optional scalar (Slot::optional_scalar): none given, or a value (any:
  // the spec's validation judges it); none for a spec that does not read one.
  std::optional<std::int64_t> optional_scalar{};
  // A flag (Slot::flag); false for a spec that does not read one.
  bool flag = false;

  std::size_t rows() const { return num_computed_tokens.size(); }
  friend bool operator==(const Workload&, const Workload&) = default;
};

// Where a workload keeps each input a spec reads: the spec names it
// (Spec::inputs), the harness moves it, so a spec with these inputs needs no
// code outside its folder. In the order the wire writes them.
enum class Slot : std::uint8_t {
  chunk_size,  // Workload::chunk_size: a positive scalar every spec reads
  block_size,  // Workload::block_size: a second scalar
  per_row,     // Workload::num_computed_tokens: one value per row
  offsets,     // Workload::query_start_loc: rows + 1 cumulative offsets
  rows,        // the number of rows: an argument some engine functions take, never sent
  second_per_row,  // Workload::second_per_row: a second value per row (sent after the offsets)
  optional_scalar,  // Workload::optional_scalar: an integer or none (JSON null, Python None)
  flag,             // Workload::flag: a boolean (JSON and Python true/false)
};
// The names of the slots, as `chunkmeta specs --json` writes them.
std::string_view to_string(Slot slot) noexcept;
inline constexpr bool is_array(Slot slot) {
  return slot == Slot::per_row || slot == Slot::offsets || slot == Slot::second_per_row;
}
// Slots a workload keeps one integer in (the optional scalar and the flag are
// not: their doors write null and booleans; the rows are counted, not kept).
inline constexpr bool is_integer_scalar(Slot slot) { return slot == Slot::chunk_size || slot == Slot::block_size; }
inline std::int64_t& scalar_in(Workload& w, Slot slot) { return slot == Slot::block_size ? w.block_size : w.chunk_size; }
inline std::int64_t scalar_in(const Workload& w, Slot slot) {
  return slot == Slot::rows ? static_cast<std::int64_t>(w.rows()) : slot == Slot::block_size ? w.block_size : w.chunk_size;
}
inline std::vector<std::int64_t>& array_in(Workload& w, Slot slot) {
  return slot == Slot::per_row ? w.num_computed_tokens : slot == Slot::second_per_row ? w.second_per_row : w.query_start_loc;
}
inline const std::vector<std::int64_t>& array_in(const Workload& w, Slot slot) {
  return slot == Slot::per_row ? w.num_computed_tokens : slot == Slot::second_per_row ? w.second_per_row : w.query_start_loc;
}

// A workload of no rows with `w`'s scalars (chunk and block sizes, optional
// scalar, flag), dtype and first offset: what row edits (a shrink, a split) start from.
inline Workload empty_like(const Workload& w) {
  Workload out;
  out.chunk_size = w.chunk_size;
  out.query_start_loc.assign(1, w.query_start_loc.empty() ? 0 : w.query_start_loc[0]);
  out.dtype = w.dtype;
  out.block_size = w.block_size;
  out.optional_scalar = w.optional_scalar;
  out.flag = w.flag;
  return out;
}

// The Mamba library's view of a workload, and a workload from its value type.
inline WorkloadView view_of(const Workload& w) { return {w.chunk_size, w.num_computed_tokens, w.query_start_loc}; }
inline Workload workload_of(const chunkmeta::Workload& w) {
  return {w.chunk_size, w.num_computed_tokens, w.query_start_loc, Dtype::int32};
}

// Whether every value fits the engine's int32 tensors: a workload that does
// not cannot reach an int32 implementation (the engine's conversion refuses it).
bool fits_int32(const Workload& workload);

std::ostream& operator<<(std::ostream& os, const Workload& workload);

}  // namespace chunkmeta::harness
