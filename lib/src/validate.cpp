#include <optional>

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

template <typename Int>
Result<OutputSizes> checked_sizes(const BasicWorkloadView<Int>& workload, const Limits& limits) noexcept {
  const std::int64_t chunk = workload.chunk_size;
  if (chunk <= 0) return error_at(ErrorCode::chunk_size_not_positive, kChunkSize, Error::kNoIndex, chunk);
  if (chunk > kMaxValue) return error_at(ErrorCode::value_too_large, kChunkSize, Error::kNoIndex, chunk, kMaxValue);

  const auto computed = workload.num_computed_tokens;
  const auto starts = workload.query_start_loc;
  const auto rows = static_cast<std::int64_t>(computed.size());
  const auto entries = static_cast<std::int64_t>(starts.size());
  if (entries != rows + 1) {
    // Index of the first missing (or first extra) entry.
    return error_at(ErrorCode::length_mismatch, kQueryStartLoc, entries < rows + 1 ? entries : rows + 1,
                    entries, rows + 1);
  }

  for (std::int64_t i = 0; i < rows; ++i) {
    if (auto bad = check_range(computed[i], kComputed, i)) return *bad;
  }
  for (std::int64_t j = 0; j < entries; ++j) {
    if (auto bad = check_range(starts[j], kQueryStartLoc, j)) return *bad;
    if (j > 0 && starts[j] < starts[j - 1]) {
      return error_at(ErrorCode::query_start_loc_decreasing, kQueryStartLoc, j, starts[j], starts[j - 1]);
    }
  }

  std::int64_t chunks = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t new_tokens = std::int64_t{starts[i + 1]} - std::int64_t{starts[i]};
    const std::int64_t sequence = std::int64_t{computed[i]} + new_tokens;
    if (sequence > kMaxValue) return error_at(ErrorCode::sequence_too_long, kComputed, i, sequence, kMaxValue);
    chunks += cut_row(static_cast<std::uint32_t>(computed[i]), static_cast<std::uint32_t>(new_tokens),
                      static_cast<std::uint32_t>(chunk))
                  .chunks();
  }

  const std::int64_t cap = limits.max_chunks < Limits::kMaxChunksCap ? limits.max_chunks : Limits::kMaxChunksCap;
  if (chunks > cap) return error_at(ErrorCode::output_too_large, kOutput, Error::kNoIndex, chunks, cap);
  return OutputSizes{chunks + 1, chunks, rows};
}

template Result<OutputSizes> checked_sizes(const WorkloadView&, const Limits&) noexcept;
template Result<OutputSizes> checked_sizes(const WorkloadView32&, const Limits&) noexcept;

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

Result<OutputSizes> output_sizes(const WorkloadView& workload, const Limits& limits) {
  return detail::checked_sizes(workload, limits);
}

Result<OutputSizes> output_sizes(const WorkloadView32& workload, const Limits& limits) {
  return detail::checked_sizes(workload, limits);
}

}  // namespace chunkmeta
