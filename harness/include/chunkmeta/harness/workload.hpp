// The family's one input domain: a chunk size, cumulative offsets of each
// row's tokens (Mamba's query_start_loc, FLA's cu_seqlens), and for the specs
// that read them one or two values per row (Mamba's computed tokens, a
// checkpoint offset), a second scalar (a cache's block size), an optional
// scalar (an alignment a backend may not have) and a flag, and any number
// more of each kind (Workload::more_*). A spec names the fields it reads
// (Spec::inputs); the run loop, the shrinker, the wire and reports move them
// without knowing which spec they belong to.
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
  // Fields past the ones above, for a spec that reads more of a kind: the
  // Slot::more_* slots, Input::index naming which. Empty for a spec that does
  // not (every spec of the family today), so its workloads are as before.
  std::vector<std::int64_t> more_scalars{};
  std::vector<std::vector<std::int64_t>> more_per_row{};  // each one value per row
  std::vector<std::optional<std::int64_t>> more_optionals{};
  std::vector<std::uint8_t> more_flags{};  // 0 or 1

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
  // More of each kind, the index-th of Workload::more_*: a spec's inputs may name any number.
  more_scalar,
  more_per_row,
  more_optional,
  more_flag,
};
// The names of the slots, as `chunkmeta specs --json` writes them.
std::string_view to_string(Slot slot) noexcept;
inline constexpr bool is_array(Slot slot) {
  return slot == Slot::per_row || slot == Slot::offsets || slot == Slot::second_per_row || slot == Slot::more_per_row;
}
inline constexpr bool is_optional(Slot slot) { return slot == Slot::optional_scalar || slot == Slot::more_optional; }
inline constexpr bool is_flag(Slot slot) { return slot == Slot::flag || slot == Slot::more_flag; }
// Slots a workload keeps one integer in (the optional scalars and the flags are
// not: their doors write null and booleans; the rows are counted, not kept).
inline constexpr bool is_integer_scalar(Slot slot) {
  return slot == Slot::chunk_size || slot == Slot::block_size || slot == Slot::more_scalar;
}

// Each field of a workload by its slot and, for the Slot::more_* slots, its
// index: what the layers that move a workload (the wire, the C ABI, the JSON
// forms, Python's arguments) read and write, whatever the spec. Writing a
// more_* field past the last makes room for it.
inline std::int64_t& scalar_in(Workload& w, Slot slot, std::size_t index = 0) {
  if (slot == Slot::more_scalar) {
    if (w.more_scalars.size() <= index) w.more_scalars.resize(index + 1, 0);
    return w.more_scalars[index];
  }
  return slot == Slot::block_size ? w.block_size : w.chunk_size;
}
inline std::int64_t scalar_in(const Workload& w, Slot slot, std::size_t index = 0) {
  if (slot == Slot::more_scalar) return index < w.more_scalars.size() ? w.more_scalars[index] : 0;
  return slot == Slot::rows ? static_cast<std::int64_t>(w.rows()) : slot == Slot::block_size ? w.block_size : w.chunk_size;
}
inline std::vector<std::int64_t>& array_in(Workload& w, Slot slot, std::size_t index = 0) {
  if (slot == Slot::more_per_row) {
    if (w.more_per_row.size() <= index) w.more_per_row.resize(index + 1);
    return w.more_per_row[index];
  }
  return slot == Slot::per_row ? w.num_computed_tokens : slot == Slot::second_per_row ? w.second_per_row : w.query_start_loc;
}
inline const std::vector<std::int64_t>& array_in(const Workload& w, Slot slot, std::size_t index = 0) {
  static const std::vector<std::int64_t> none;
  if (slot == Slot::more_per_row) return index < w.more_per_row.size() ? w.more_per_row[index] : none;
  return slot == Slot::per_row ? w.num_computed_tokens : slot == Slot::second_per_row ? w.second_per_row : w.query_start_loc;
}
inline std::optional<std::int64_t>& optional_in(Workload& w, Slot slot, std::size_t index = 0) {
  if (slot != Slot::more_optional) return w.optional_scalar;
  if (w.more_optionals.size() <= index) w.more_optionals.resize(index + 1);
  return w.more_optionals[index];
}
inline std::optional<std::int64_t> optional_in(const Workload& w, Slot slot, std::size_t index = 0) {
  if (slot != Slot::more_optional) return w.optional_scalar;
  return index < w.more_optionals.size() ? w.more_optionals[index] : std::nullopt;
}
inline bool flag_in(const Workload& w, Slot slot, std::size_t index = 0) {
  if (slot != Slot::more_flag) return w.flag;
  return index < w.more_flags.size() && w.more_flags[index] != 0;
}
inline void set_flag(Workload& w, Slot slot, std::size_t index, bool value) {
  if (slot != Slot::more_flag) {
    w.flag = value;
    return;
  }
  if (w.more_flags.size() <= index) w.more_flags.resize(index + 1, 0);
  w.more_flags[index] = value ? 1 : 0;
}

// Every array of one value per row a workload holds past the computed tokens
// (the second value per row, then each more_per_row): what a row edit (a
// shrink, a split) carries along with the rows, in the same order for two
// workloads with as many more_per_row arrays (empty_like keeps them so).
// Empty ones are not rows of any spec.
template <typename W>
auto other_per_row(W& w) {
  std::vector<decltype(&w.second_per_row)> arrays{&w.second_per_row};
  for (auto& values : w.more_per_row) arrays.push_back(&values);
  return arrays;
}

// A workload of no rows with `w`'s scalars (chunk and block sizes, optional
// scalars, flags, and more of them), dtype and first offset, and as many
// (empty) more_per_row arrays: what row edits (a shrink, a split) start from.
inline Workload empty_like(const Workload& w) {
  Workload out;
  out.chunk_size = w.chunk_size;
  out.query_start_loc.assign(1, w.query_start_loc.empty() ? 0 : w.query_start_loc[0]);
  out.dtype = w.dtype;
  out.block_size = w.block_size;
  out.optional_scalar = w.optional_scalar;
  out.flag = w.flag;
  out.more_scalars = w.more_scalars;
  out.more_per_row.resize(w.more_per_row.size());
  out.more_optionals = w.more_optionals;
  out.more_flags = w.more_flags;
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
