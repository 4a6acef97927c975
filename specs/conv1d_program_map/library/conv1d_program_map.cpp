// The conv1d program map (specs/conv1d_program_map): validation, vLLM's
// procedure ported step by step, and the one-pass writer.
#include "chunkmeta/conv1d_program_map.hpp"

#include <algorithm>

#include "checked_sizes.hpp"
#include "offsets.hpp"

namespace chunkmeta::conv1d {
namespace {

constexpr std::string_view kQueryStartLoc = "query_start_loc";
constexpr std::string_view kBlockM = "block_m";
constexpr std::string_view kNums = "nums";
constexpr std::string_view kBatchPtr = "batch_ptr";
constexpr std::string_view kTokenChunkOffsetPtr = "token_chunk_offset_ptr";

// An entry in [0, 2^31-1]: as unsigned, a negative one is huge too.
// Rules 1-2.
template <typename Int>
std::optional<Error> check_shape(const BasicView<Int>& view) noexcept {
  if (view.block_m < 1) return Error{ErrorCode::not_positive, kBlockM, Error::kNoIndex, view.block_m, 1};
  if (view.block_m > kMaxValue) return Error{ErrorCode::value_too_large, kBlockM, Error::kNoIndex, view.block_m, kMaxValue};
  if (view.query_start_loc.empty()) return Error{ErrorCode::length_mismatch, kQueryStartLoc, 0, 0, 1};
  return std::nullopt;
}

// The program count of every row, in one pass that also checks rule 3:
// `each(i, count, before)` is called per row while every entry so far is
// valid, `before` the programs of the rows before it. Returns tot, or the
// first broken rule.
template <typename Int, typename Each>
Result<std::int64_t> count_programs(const BasicView<Int>& view, Each&& each) noexcept {
  if (auto bad = check_shape(view)) return *bad;
  return detail::count_pieces(view.query_start_loc, view.block_m,
                              {kQueryStartLoc, ErrorCode::query_start_loc_decreasing}, std::forward<Each>(each));
}

Error too_large(std::int64_t programs, const Limits& limits) noexcept {
  Error error = detail::output_too_large(programs, detail::chunk_cap(limits));
  error.field = kBatchPtr;
  return error;
}

template <typename Int>
Result<Sizes> sizes_of(const BasicView<Int>& view, const Limits& limits) noexcept {
  auto programs = count_programs(view, [](std::size_t, std::uint32_t, std::int64_t) {});
  if (!programs.ok()) return programs.error();
  if (programs.value() > detail::chunk_cap(limits)) return too_large(programs.value(), limits);
  return Sizes{static_cast<std::int64_t>(view.query_start_loc.size()) - 1, programs.value()};
}

template <typename Int>
Result<Sizes> write_map(const BasicView<Int>& view, const Buffers& out, const Limits& limits) noexcept {
  const auto rows = view.query_start_loc.size() == 0 ? 0 : view.query_start_loc.size() - 1;
  const bool nums_fit = out.nums.size() >= rows;
  const auto room = static_cast<std::int64_t>(std::min(out.batch_ptr.size(), out.token_chunk_offset_ptr.size()));
  std::int32_t* nums = out.nums.data();
  std::int32_t* batch = out.batch_ptr.data();
  std::int32_t* offset = out.token_chunk_offset_ptr.data();
  auto programs = count_programs(view, [&](std::size_t i, std::uint32_t count, std::int64_t before) {
    if (nums_fit) nums[i] = static_cast<std::int32_t>(count);
    if (before + count > room) return;
    const auto row = static_cast<std::int32_t>(i);
    for (std::uint32_t o = 0; o < count; ++o) {
      batch[before + o] = row;
      offset[before + o] = static_cast<std::int32_t>(o);
    }
  });
  if (!programs.ok()) return programs.error();
  const std::int64_t tot = programs.value();
  if (tot > detail::chunk_cap(limits)) return too_large(tot, limits);
  const auto size = [](std::span<std::int32_t> buffer) { return static_cast<std::int64_t>(buffer.size()); };
  if (!nums_fit) return detail::buffer_too_small(kNums, size(out.nums), static_cast<std::int64_t>(rows));
  if (size(out.batch_ptr) < tot) return detail::buffer_too_small(kBatchPtr, size(out.batch_ptr), tot);
  if (size(out.token_chunk_offset_ptr) < tot)
    return detail::buffer_too_small(kTokenChunkOffsetPtr, size(out.token_chunk_offset_ptr), tot);
  std::fill(out.batch_ptr.begin() + tot, out.batch_ptr.end(), kPadding);
  std::fill(out.token_chunk_offset_ptr.begin() + tot, out.token_chunk_offset_ptr.end(), kPadding);
  return Sizes{static_cast<std::int64_t>(rows), tot};
}

template <typename Int>
Result<ProgramMap> returned_map(const BasicView<Int>& view, const Limits& limits) {
  const auto sizes = sizes_of(view, limits);
  if (!sizes.ok()) return sizes.error();
  ProgramMap map{Int32Array(static_cast<std::size_t>(sizes.value().rows)),
                 Int32Array(static_cast<std::size_t>(sizes.value().programs)),
                 Int32Array(static_cast<std::size_t>(sizes.value().programs))};
  const auto written = write_map(view, {map.nums, map.batch_ptr, map.token_chunk_offset_ptr}, limits);
  if (!written.ok()) return written.error();
  return map;
}

}  // namespace

std::optional<Error> validate(const View32& view, const Limits& limits) noexcept {
  return detail::error_of(sizes_of(view, limits));
}
std::optional<Error> validate(const View64& view, const Limits& limits) noexcept {
  return detail::error_of(sizes_of(view, limits));
}

Result<Sizes> output_sizes(const View32& view, const Limits& limits) noexcept { return sizes_of(view, limits); }
Result<Sizes> output_sizes(const View64& view, const Limits& limits) noexcept { return sizes_of(view, limits); }

Result<Sizes> max_output_sizes(std::int64_t max_tokens, std::int64_t max_rows, std::int64_t block_m,
                               const Limits& limits) noexcept {
  const std::int64_t no_entries[] = {0};
  if (auto bad = check_shape(View64{no_entries, block_m})) return *bad;
  if (auto bad = detail::check_engine_limits(max_tokens, max_rows)) return *bad;
  // No valid input has more than 2^31-1 tokens or rows (query_start_loc's
  // entries are int32 values): clamped, every figure fits int64.
  const std::int64_t tokens = std::min(max_tokens, kMaxValue);
  const std::int64_t rows = std::min(max_rows, kMaxValue + 1);
  const std::int64_t programs = tokens / block_m + std::min(rows, tokens);
  if (programs > detail::chunk_cap(limits)) return too_large(programs, limits);
  return Sizes{rows, programs};
}

// vLLM's compute_causal_conv1d_metadata, step by step, 64-bit throughout:
//   seqlens = query_start_loc.diff(); nums = -(-seqlens // BLOCK_M);
//   tot = nums.sum(); mlist = np.repeat(np.arange(len(nums)), nums);
//   offsetlist = []; for idx, num in enumerate(nums): offsetlist.extend(range(num)).
Result<ProgramMap> reference(const View64& view, const Limits& limits) {
  const auto sizes = sizes_of(view, limits);
  if (!sizes.ok()) return sizes.error();
  const auto q = view.query_start_loc;
  std::vector<std::int64_t> seqlens;
  for (std::size_t i = 0; i + 1 < q.size(); ++i) seqlens.push_back(q[i + 1] - q[i]);
  std::vector<std::int64_t> nums;
  for (const std::int64_t length : seqlens) {
    const std::int64_t negated = -length;
    // Python's floor division of a non-positive numerator by a positive block length.
    const std::int64_t floored = negated / view.block_m - (negated % view.block_m != 0 ? 1 : 0);
    nums.push_back(-floored);
  }
  ProgramMap map;
  for (std::size_t row = 0; row < nums.size(); ++row) {
    for (std::int64_t k = 0; k < nums[row]; ++k) map.batch_ptr.push_back(static_cast<std::int32_t>(row));
  }
  for (const std::int64_t num : nums) {
    for (std::int64_t o = 0; o < num; ++o) map.token_chunk_offset_ptr.push_back(static_cast<std::int32_t>(o));
    map.nums.push_back(static_cast<std::int32_t>(num));
  }
  return map;
}

Result<Sizes> program_map_into(const View32& view, const Buffers& out, const Limits& limits) noexcept {
  return write_map(view, out, limits);
}
Result<Sizes> program_map_into(const View64& view, const Buffers& out, const Limits& limits) noexcept {
  return write_map(view, out, limits);
}

Result<ProgramMap> program_map(const View32& view, const Limits& limits) { return returned_map(view, limits); }
Result<ProgramMap> program_map(const View64& view, const Limits& limits) { return returned_map(view, limits); }

}  // namespace chunkmeta::conv1d
