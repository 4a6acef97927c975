#include <optional>
#include <type_traits>

#include "checked_sizes.hpp"
#include "chunkmeta/chunkmeta.hpp"
#include "row_math.hpp"

namespace chunkmeta {
namespace detail {
namespace {

constexpr std::string_view kChunkSize = "chunk_size";
constexpr std::string_view kComputed = "num_computed_tokens";
constexpr std::string_view kQueryStartLoc = "query_start_loc";
constexpr std::string_view kOutput = "cu_chunk_seqlen";

Error error_at(ErrorCode code, std::string_view field, std::int64_t index, std::int64_t value,
               std::int64_t bound = 0) noexcept {
  return Error{code, field, index, value, bound};
}

// Range rule shared by both arrays; the upper check only exists for wide inputs.
template <typename Int>
std::optional<Error> check_range(Int value, std::string_view field, std::int64_t index) noexcept {
  if (value < 0) return error_at(ErrorCode::negative_value, field, index, value);
  if constexpr (sizeof(Int) > sizeof(std::int32_t)) {
    if (value > kMaxValue) return error_at(ErrorCode::value_too_large, field, index, value, kMaxValue);
  }
  return std::nullopt;
}

}  // namespace

std::optional<Error> check_chunk_size(std::int64_t chunk) noexcept {
  if (chunk <= 0) return error_at(ErrorCode::chunk_size_not_positive, kChunkSize, Error::kNoIndex, chunk);
  if (chunk > kMaxValue) return error_at(ErrorCode::value_too_large, kChunkSize, Error::kNoIndex, chunk, kMaxValue);
  return std::nullopt;
}

template <typename Int>
std::optional<Error> check_shape(const BasicWorkloadView<Int>& workload) noexcept {
  if (auto bad = check_chunk_size(workload.chunk_size)) return bad;
  const auto entries = static_cast<std::int64_t>(workload.query_start_loc.size());
  const auto needed = static_cast<std::int64_t>(workload.num_computed_tokens.size()) + 1;
  if (entries != needed) {
    // Index of the first missing (or first extra) entry.
    return error_at(ErrorCode::length_mismatch, kQueryStartLoc, entries < needed ? entries : needed, entries, needed);
  }
  return std::nullopt;
}

// Branch-free ORs so the scans vectorise: with every entry in [0, 2^31-1]
// (no bit from 31 up set), a decreasing step is a negative difference, which
// sets the top bit of the wrapped unsigned difference.
template <typename Int>
bool values_in_domain(const BasicWorkloadView<Int>& workload) noexcept {
  using Bits = std::make_unsigned_t<Int>;
  const auto computed = workload.num_computed_tokens;
  const auto starts = workload.query_start_loc;
  Bits values = 0;
  Bits steps = 0;
  for (std::size_t i = 0; i < computed.size(); ++i) values |= static_cast<Bits>(computed[i]);
  for (std::size_t j = 0; j < starts.size(); ++j) values |= static_cast<Bits>(starts[j]);
  for (std::size_t j = 1; j < starts.size(); ++j) steps |= static_cast<Bits>(starts[j]) - static_cast<Bits>(starts[j - 1]);
  constexpr int kTopBit = static_cast<int>(sizeof(Bits)) * 8 - 1;
  return (values >> 31) == 0 && (steps >> kTopBit) == 0;
}

template <typename Int>
Error first_broken_rule(const BasicWorkloadView<Int>& workload) noexcept {
  const auto computed = workload.num_computed_tokens;
  const auto starts = workload.query_start_loc;
  const auto rows = static_cast<std::int64_t>(computed.size());
  for (std::int64_t i = 0; i < rows; ++i) {
    if (auto bad = check_range(computed[i], kComputed, i)) return *bad;
  }
  for (std::int64_t j = 0; j <= rows; ++j) {
    if (auto bad = check_range(starts[j], kQueryStartLoc, j)) return *bad;
    if (j > 0 && starts[j] < starts[j - 1]) {
      return error_at(ErrorCode::query_start_loc_decreasing, kQueryStartLoc, j, starts[j], starts[j - 1]);
    }
  }
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t sequence = std::int64_t{computed[i]} + (std::int64_t{starts[i + 1]} - std::int64_t{starts[i]});
    if (sequence > kMaxValue) return error_at(ErrorCode::sequence_too_long, kComputed, i, sequence, kMaxValue);
  }
  // Unreachable when the caller's branch-free check (values_in_domain, or the
  // row pass's RowReader) is right; say so rather than invent a rule.
  return error_at(ErrorCode::value_too_large, kQueryStartLoc, Error::kNoIndex, 0, kMaxValue);
}

std::int64_t chunk_cap(const Limits& limits) noexcept {
  return limits.max_chunks < Limits::kMaxChunksCap ? limits.max_chunks : Limits::kMaxChunksCap;
}

Error output_too_large(std::int64_t chunks, std::int64_t cap) noexcept {
  return error_at(ErrorCode::output_too_large, kOutput, Error::kNoIndex, chunks, cap);
}

template <typename Int>
Result<OutputSizes> checked_sizes(const BasicWorkloadView<Int>& workload, const Limits& limits) noexcept {
  if (auto bad = check_shape(workload)) return *bad;
  if (!values_in_domain(workload)) return first_broken_rule(workload);

  const auto computed = workload.num_computed_tokens;
  const auto starts = workload.query_start_loc;
  const std::size_t rows = computed.size();
  const Divisor divisor(static_cast<std::uint32_t>(workload.chunk_size));
  bool broken = false;
  std::int64_t chunks = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    // In range and non-decreasing: both fit in 32 bits, their sum in 33.
    const auto c = static_cast<std::uint32_t>(computed[i]);
    const auto n = static_cast<std::uint32_t>(starts[i + 1] - starts[i]);
    broken |= std::uint64_t{c} + n > static_cast<std::uint64_t>(kMaxValue);
    chunks += cut_row(c, n, divisor).chunks();
  }
  if (broken) return first_broken_rule(workload);
  if (chunks > chunk_cap(limits)) return output_too_large(chunks, chunk_cap(limits));
  return OutputSizes{chunks + 1, chunks, static_cast<std::int64_t>(rows)};
}

#define CHUNKMETA_INSTANTIATE_FOR(Int)                                               \
  template std::optional<Error> check_shape(const BasicWorkloadView<Int>&) noexcept; \
  template bool values_in_domain(const BasicWorkloadView<Int>&) noexcept;            \
  template Error first_broken_rule(const BasicWorkloadView<Int>&) noexcept;          \
  template Result<OutputSizes> checked_sizes(const BasicWorkloadView<Int>&, const Limits&) noexcept;
CHUNKMETA_INSTANTIATE_FOR(std::int32_t)
CHUNKMETA_INSTANTIATE_FOR(std::int64_t)
#undef CHUNKMETA_INSTANTIATE_FOR

}  // namespace detail

namespace {
template <typename Int>
std::optional<Error> first_error(const BasicWorkloadView<Int>& workload, const Limits& limits) {
  auto sizes = detail::checked_sizes(workload, limits);
  if (sizes.ok()) return std::nullopt;
  return sizes.error();
}
}  // namespace

std::optional<Error> validate(const WorkloadView& workload, const Limits& limits) {
  return first_error(workload, limits);
}

std::optional<Error> validate(const WorkloadView32& workload, const Limits& limits) {
  return first_error(workload, limits);
}

std::optional<Error> validate(const Workload& workload, const Limits& limits) {
  return validate(view_of(workload), limits);
}

Result<OutputSizes> max_output_sizes(std::int64_t max_tokens, std::int64_t max_rows, std::int64_t chunk_size,
                                     const Limits& limits) noexcept {
  if (auto bad = detail::check_chunk_size(chunk_size)) return *bad;
  if (auto bad = detail::check_engine_limits(max_tokens, max_rows)) return *bad;
  // No valid workload has more than 2^31-1 tokens; more than 2^31 rows is
  // above the cap either way. Clamped there, every product below fits int64.
  const std::int64_t tokens = std::min(max_tokens, kMaxValue);
  const std::int64_t rows = std::min(max_rows, kMaxValue + 1);
  // A row of n >= 1 tokens has at most floor((n + C - 2) / C) + 1 chunks (one
  // more than the C-blocks it fills, when it starts one token before a
  // boundary), and at most n; a row without tokens at most one. Summed (at
  // C = 1 the numerator may be negative, and the division is exact):
  const std::int64_t by_blocks = (tokens + rows * (chunk_size - 2)) / chunk_size + rows;
  const std::int64_t chunks = std::min(by_blocks, tokens + rows);
  if (chunks > detail::chunk_cap(limits)) return detail::output_too_large(chunks, detail::chunk_cap(limits));
  return OutputSizes{chunks + 1, chunks, rows};
}

Result<OutputSizes> output_sizes(const WorkloadView& workload, const Limits& limits) {
  return detail::checked_sizes(workload, limits);
}

Result<OutputSizes> output_sizes(const WorkloadView32& workload, const Limits& limits) {
  return detail::checked_sizes(workload, limits);
}

}  // namespace chunkmeta
