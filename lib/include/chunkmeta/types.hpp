// Value types shared by every chunkmeta API: workloads, results, errors.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace chunkmeta {

inline constexpr std::string_view kVersion = "0.1.0";

// Largest value the engine's int32 tensors can hold; the spec's domain bound.
inline constexpr std::int64_t kMaxValue = std::numeric_limits<std::int32_t>::max();

// A workload with wide (int64) values, so that invalid inputs (negative, above
// 2^31-1) can be represented, validated and reported instead of truncated.
struct Workload {
  std::int64_t chunk_size = 1;
  std::vector<std::int64_t> num_computed_tokens;
  std::vector<std::int64_t> query_start_loc{0};

  friend bool operator==(const Workload&, const Workload&) = default;
};

// Non-owning view of a workload's arrays. `Int` is std::int32_t for the
// engine's tensors (read in place, no copy) or std::int64_t for wide inputs.
template <typename Int>
struct BasicWorkloadView {
  std::int64_t chunk_size = 1;
  std::span<const Int> num_computed_tokens;
  std::span<const Int> query_start_loc;
};
using WorkloadView = BasicWorkloadView<std::int64_t>;
using WorkloadView32 = BasicWorkloadView<std::int32_t>;

inline WorkloadView view_of(const Workload& workload) {
  return {workload.chunk_size, workload.num_computed_tokens, workload.query_start_loc};
}

// An allocator whose resize() default-initialises new elements (leaves ints
// unset) instead of zeroing them: fast() sizes its outputs from an upper
// bound and writes every entry it keeps, so zero-filling would cost about as
// much as writing the output again (a third of fast()'s time at C=64).
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* at) noexcept {
    ::new (static_cast<void*>(at)) U;  // default-initialised: no zero for an int
  }
  template <typename U, typename... Args>
  void construct(U* at, Args&&... args) {
    ::new (static_cast<void*>(at)) U(std::forward<Args>(args)...);
  }
};

// One output array: a std::vector of int32 (`Int32Array v(n)` leaves its n
// entries unset) that compares equal to any other vector of the same values.
using Int32Array = std::vector<std::int32_t, UninitializedAllocator<std::int32_t>>;
template <typename A, typename B>
  requires(!std::is_same_v<A, B>)
bool operator==(const std::vector<std::int32_t, A>& a, const std::vector<std::int32_t, B>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

// The three outputs the kernels consume, as the int32 arrays uploaded to them.
struct ChunkMetadata {
  Int32Array cu_chunk_seqlen{0};
  Int32Array seq_idx;
  Int32Array last_chunk_indices;

  friend bool operator==(const ChunkMetadata&, const ChunkMetadata&) = default;
};

// One code per rule of the spec's valid domain, plus the resource limits.
// The spelled names (to_string) are stable and machine-readable.
enum class ErrorCode {
  chunk_size_not_positive,     // chunk_size <= 0
  length_mismatch,             // query_start_loc must have B+1 entries
  negative_value,              // an entry below 0
  value_too_large,             // an entry (or chunk_size) above 2^31-1
  query_start_loc_decreasing,  // query_start_loc[j] < query_start_loc[j-1]
  sequence_too_long,           // num_computed_tokens[i] + new tokens > 2^31-1
  output_too_large,            // valid, but more chunks than Limits::max_chunks
  output_buffer_too_small,     // fast_into: a caller buffer is shorter than needed
  cu_seqlens_decreasing,       // fla: cu_seqlens[j] < cu_seqlens[j-1]
  // Rules any spec may name on any of its fields (the field says which):
  not_positive,                // a scalar below 1 that must be at least 1 (value)
  not_a_multiple,              // a value that must be a multiple of another input's (bound)
  not_increasing,              // an entry not above the one before (bound), where each must be
  below_minimum,               // a value below the least another input allows it (bound)
};
inline constexpr ErrorCode kLastErrorCode = ErrorCode::below_minimum;

// Invalid input breaks the spec's domain; a resource limit refuses a valid
// workload (documented cap, or a caller's buffer) and is an error of its own kind.
enum class ErrorKind { invalid_input, resource_limit };

std::string_view to_string(ErrorCode code) noexcept;
std::optional<ErrorCode> parse_error_code(std::string_view name) noexcept;
ErrorKind kind_of(ErrorCode code) noexcept;

// Allocation-free error value: the hot path can return it without touching
// the heap; `message()` builds the sentence for a person when asked.
struct Error {
  static constexpr std::int64_t kNoIndex = -1;

  ErrorCode code{};
  std::string_view field;          // "chunk_size", "num_computed_tokens", ...
  std::int64_t index = kNoIndex;   // position in `field`, or kNoIndex for a scalar
  std::int64_t value = 0;          // the offending value (a length, an entry, a sum)
  std::int64_t bound = 0;          // the limit or neighbour it was compared with

  std::string message() const;
  // Same rule broken at the same place; value and bound are detail for people.
  bool same_rule(const Error& other) const noexcept {
    return code == other.code && field == other.field && index == other.index;
  }
  friend bool operator==(const Error&, const Error&) = default;
};

// A value or an Error; the library's only way to report failure.
template <typename T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}      // NOLINT(google-explicit-constructor)

  bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  const Error& error() const& { return std::get<1>(state_); }

  friend bool operator==(const Result&, const Result&) = default;

 private:
  std::variant<T, Error> state_;
};

// Resource limits applied to valid workloads.
struct Limits {
  // Default cap: 2^26 chunks (outputs of about 512 MiB). Engines produce at
  // most a few tens of thousands of chunks per step. Values above
  // kMaxChunksCap are clamped so that every output index fits in int32.
  static constexpr std::int64_t kDefaultMaxChunks = std::int64_t{1} << 26;
  static constexpr std::int64_t kMaxChunksCap = kMaxValue - 1;
  std::int64_t max_chunks = kDefaultMaxChunks;
};

// Sizes of the three outputs: K+1, K and B.
struct OutputSizes {
  std::int64_t cu_chunk_seqlen = 1;
  std::int64_t seq_idx = 0;
  std::int64_t last_chunk_indices = 0;
  std::int64_t num_chunks() const noexcept { return seq_idx; }
  friend bool operator==(const OutputSizes&, const OutputSizes&) = default;
};

// Caller-provided output storage for fast_into.
struct OutputBuffers {
  std::span<std::int32_t> cu_chunk_seqlen;
  std::span<std::int32_t> seq_idx;
  std::span<std::int32_t> last_chunk_indices;
};

// Readable printing, used by test failures and counterexample reports.
std::ostream& operator<<(std::ostream& os, const Workload& workload);
std::ostream& operator<<(std::ostream& os, const ChunkMetadata& result);
std::ostream& operator<<(std::ostream& os, const Error& error);
std::ostream& operator<<(std::ostream& os, ErrorCode code);
std::ostream& operator<<(std::ostream& os, const OutputSizes& sizes);

template <typename T>
std::ostream& operator<<(std::ostream& os, const Result<T>& result) {
  if (result.ok()) return os << result.value();
  return os << result.error();
}

}  // namespace chunkmeta
