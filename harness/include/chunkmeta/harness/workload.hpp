// The one input domain of the family: every spec reads a chunk size and
// cumulative offsets of each row's tokens (Mamba's query_start_loc, FLA's
// cu_seqlens); Mamba also reads the tokens each row computed before; FLA's
// outputs take the integer type of the engine's offsets tensor.
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

  std::size_t rows() const { return num_computed_tokens.size(); }
  friend bool operator==(const Workload&, const Workload&) = default;
};

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
