// Validation building blocks shared by every implementation, so that all of
// them reject the same inputs with the same error in the documented order.
#pragma once

#include <optional>
#include <string_view>
#include <type_traits>

#include "chunkmeta/types.hpp"

namespace chunkmeta::detail {

// Rule 1: the chunk size in [1, 2^31-1].
std::optional<Error> check_chunk_size(std::int64_t chunk) noexcept;

// Rules 1-2: chunk size, and query_start_loc having B + 1 entries.
template <typename Int>
std::optional<Error> check_shape(const BasicWorkloadView<Int>& workload) noexcept;

// Rules 3-4 without branching (so it vectorises): every entry in [0, 2^31-1]
// and query_start_loc non-decreasing. Call after check_shape.
template <typename Int>
bool values_in_domain(const BasicWorkloadView<Int>& workload) noexcept;

// The first broken rule among 3-5, in the documented order, for a workload
// already known to break one. Plain and slow: errors are the rare path.
template <typename Int>
Error first_broken_rule(const BasicWorkloadView<Int>& workload) noexcept;

// Mamba's workload inside another spec's view (its chunk size, computed
// tokens and offsets): the specs built on Mamba's chunks validate it first.
template <typename View>
auto mamba_workload_of(const View& view) noexcept {
  using Int = std::remove_const_t<typename decltype(view.query_start_loc)::element_type>;
  return BasicWorkloadView<Int>{view.chunk_size, view.num_computed_tokens, view.query_start_loc};
}

// The chunk cap in force, and the error for a workload above it.
std::int64_t chunk_cap(const Limits& limits) noexcept;
Error output_too_large(std::int64_t chunks, std::int64_t cap) noexcept;

// The error of a result, if it is one: validate() as "the sizes, or why not".
template <typename T>
std::optional<Error> error_of(const Result<T>& result) noexcept {
  return result.ok() ? std::nullopt : std::optional<Error>(result.error());
}

// A caller's buffer `field` of `have` entries where the output needs `need`.
inline Error buffer_too_small(std::string_view field, std::int64_t have, std::int64_t need) noexcept {
  return Error{ErrorCode::output_buffer_too_small, field, Error::kNoIndex, have, need};
}

// max_output_sizes' engine limits: neither the tokens nor the rows (named `rows_field`) negative.
inline std::optional<Error> check_engine_limits(std::int64_t max_tokens, std::int64_t max_rows,
                                                std::string_view rows_field = "max_rows") noexcept {
  if (max_tokens < 0) return Error{ErrorCode::negative_value, "max_tokens", Error::kNoIndex, max_tokens, 0};
  if (max_rows < 0) return Error{ErrorCode::negative_value, rows_field, Error::kNoIndex, max_rows, 0};
  return std::nullopt;
}

// All rules plus the cap; the exact output sizes on success.
template <typename Int>
Result<OutputSizes> checked_sizes(const BasicWorkloadView<Int>& workload, const Limits& limits) noexcept;

#define CHUNKMETA_DECLARE_FOR(Int)                                                                  \
  extern template std::optional<Error> check_shape(const BasicWorkloadView<Int>&) noexcept;         \
  extern template bool values_in_domain(const BasicWorkloadView<Int>&) noexcept;                    \
  extern template Error first_broken_rule(const BasicWorkloadView<Int>&) noexcept;                  \
  extern template Result<OutputSizes> checked_sizes(const BasicWorkloadView<Int>&, const Limits&) noexcept;
CHUNKMETA_DECLARE_FOR(std::int32_t)
CHUNKMETA_DECLARE_FOR(std::int64_t)
#undef CHUNKMETA_DECLARE_FOR

}  // namespace chunkmeta::detail
