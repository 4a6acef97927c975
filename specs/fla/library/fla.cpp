// FLA's chunk indices and offsets (specs/fla): validation, the reference
// procedure ported step by step, and the one-pass fast implementation.
#include "chunkmeta/fla.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "checked_sizes.hpp"
#include "offsets.hpp"

namespace chunkmeta::fla {
namespace {

constexpr std::string_view kCuSeqlens = "cu_seqlens";
constexpr std::string_view kChunkIndices = "chunk_indices";
constexpr std::string_view kChunkOffsets = "chunk_offsets";

// An entry in [0, 2^31-1]: as unsigned, a negative one is huge too.
// Rules 1-2.
template <typename Int>
std::optional<Error> check_shape(const BasicView<Int>& view) noexcept {
  if (auto bad = detail::check_chunk_size(view.chunk_size)) return bad;
  if (view.cu_seqlens.empty()) return Error{ErrorCode::length_mismatch, kCuSeqlens, 0, 0, 1};
  return std::nullopt;
}

// The chunk count of every sequence, in one pass that also checks rule 3:
// `each(i, count, before)` is called per sequence while every entry so far is
// valid. Returns the total, or the first broken rule.
template <typename Int, typename Each>
Result<std::int64_t> count_chunks(const BasicView<Int>& view, Each&& each) noexcept {
  if (auto bad = check_shape(view)) return *bad;
  return detail::count_pieces(view.cu_seqlens, view.chunk_size, {kCuSeqlens, ErrorCode::cu_seqlens_decreasing},
                              std::forward<Each>(each));
}

std::int64_t chunk_cap(const Limits& limits) noexcept { return detail::chunk_cap(limits); }

Error too_large(std::int64_t chunks, const Limits& limits) noexcept {
  Error error = detail::output_too_large(chunks, chunk_cap(limits));
  error.field = kChunkIndices;
  return error;
}

template <typename Int>
Result<Sizes> sizes_of(const BasicView<Int>& view, const Limits& limits) noexcept {
  auto chunks = count_chunks(view, [](std::size_t, std::uint32_t, std::int64_t) {});
  if (!chunks.ok()) return chunks.error();
  if (chunks.value() > chunk_cap(limits)) return too_large(chunks.value(), limits);
  return Sizes{chunks.value(), static_cast<std::int64_t>(view.cu_seqlens.size())};
}

// Rows (i, j) for j < count, from row `first`: int32 pairs as one 64-bit
// store each (i low, j high: the pair's memory order on a little-endian CPU).
template <typename Out>
void write_pairs(Out* out, std::int64_t first, std::size_t sequence, std::uint32_t count) noexcept {
  Out* at = out + 2 * first;
  if constexpr (sizeof(Out) == 4 && std::endian::native == std::endian::little) {
    // The pair itself is the induction variable (j counts in the high half): the
    // compiler's vectorized loop is then one add and one store per vector of pairs.
    std::uint64_t pair = static_cast<std::uint32_t>(sequence);
    constexpr std::uint64_t kNextChunk = std::uint64_t{1} << 32;
    for (std::uint32_t j = 0; j < count; ++j, pair += kNextChunk) {
      std::memcpy(at + 2 * static_cast<std::size_t>(j), &pair, sizeof pair);
    }
  } else {
    for (std::uint32_t j = 0; j < count; ++j) {
      at[2 * static_cast<std::size_t>(j)] = static_cast<Out>(sequence);
      at[2 * static_cast<std::size_t>(j) + 1] = static_cast<Out>(j);
    }
  }
}

template <typename Int, typename Out>
Result<std::int64_t> indices_into(const BasicView<Int>& view, std::span<Out> out, const Limits& limits) noexcept {
  const auto rows_room = static_cast<std::int64_t>(out.size() / 2);
  Out* data = out.data();
  auto chunks = count_chunks(view, [&](std::size_t i, std::uint32_t count, std::int64_t before) {
    if (before + count <= rows_room) write_pairs(data, before, i, count);
  });
  if (!chunks.ok()) return chunks.error();
  if (chunks.value() > chunk_cap(limits)) return too_large(chunks.value(), limits);
  if (chunks.value() > rows_room) return detail::buffer_too_small(kChunkIndices, static_cast<std::int64_t>(out.size()), 2 * chunks.value());
  return chunks.value();
}

template <typename Int>
Result<std::int64_t> offsets_into(const BasicView<Int>& view, std::span<std::int64_t> out, const Limits& limits) noexcept {
  const auto entries = static_cast<std::int64_t>(view.cu_seqlens.size());
  const bool fits = static_cast<std::int64_t>(out.size()) >= entries;
  std::int64_t* data = out.data();
  auto chunks = count_chunks(view, [&](std::size_t i, std::uint32_t count, std::int64_t before) {
    if (fits) data[i + 1] = before + count;
  });
  if (!chunks.ok()) return chunks.error();
  if (chunks.value() > chunk_cap(limits)) return too_large(chunks.value(), limits);
  if (!fits) return detail::buffer_too_small(kChunkOffsets, static_cast<std::int64_t>(out.size()), entries);
  data[0] = 0;
  return entries;
}

template <typename Out, typename Int>
Result<std::vector<Out>> returned_indices(const BasicView<Int>& view, const Limits& limits) {
  auto sizes = sizes_of(view, limits);
  if (!sizes.ok()) return sizes.error();
  std::vector<Out> out(static_cast<std::size_t>(2 * sizes.value().chunks));
  auto written = indices_into(view, std::span<Out>(out), limits);
  if (!written.ok()) return written.error();
  return out;
}

template <typename Int>
Result<std::vector<std::int64_t>> returned_offsets(const BasicView<Int>& view, const Limits& limits) {
  if (auto bad = check_shape(view)) return *bad;
  std::vector<std::int64_t> out(view.cu_seqlens.size());
  auto written = offsets_into(view, std::span<std::int64_t>(out), limits);
  if (!written.ok()) return written.error();
  return out;
}

}  // namespace

std::optional<Error> validate(const View32& view, const Limits& limits) {
  return detail::error_of(sizes_of(view, limits));
}
std::optional<Error> validate(const View64& view, const Limits& limits) {
  return detail::error_of(sizes_of(view, limits));
}

Result<Sizes> output_sizes(const View32& view, const Limits& limits) { return sizes_of(view, limits); }
Result<Sizes> output_sizes(const View64& view, const Limits& limits) { return sizes_of(view, limits); }

Result<Sizes> max_output_sizes(std::int64_t max_tokens, std::int64_t max_sequences, std::int64_t chunk_size,
                               const Limits& limits) noexcept {
  if (auto bad = detail::check_chunk_size(chunk_size)) return *bad;
  if (auto bad = detail::check_engine_limits(max_tokens, max_sequences, "max_sequences")) return *bad;
  // No valid input has more than 2^31-1 tokens; more sequences than the cap
  // leave N below it but B + 1 offsets above any buffer: clamped, both fit int64.
  const std::int64_t tokens = std::min(max_tokens, kMaxValue);
  const std::int64_t sequences = std::min(max_sequences, kMaxValue + 1);
  const std::int64_t chunks = tokens / chunk_size + std::min(sequences, tokens);
  if (chunks > chunk_cap(limits)) return too_large(chunks, limits);
  return Sizes{chunks, sequences + 1};
}

// The spec's procedure: offsets[0] = 0; for each sequence i in order, its
// length, then one row (i, j) per chunk j < ceil(len / C), then
// offsets[i + 1] = offsets[i] + that count. 64-bit throughout.
Result<Outputs> reference(const View64& view, const Limits& limits) {
  auto sizes = sizes_of(view, limits);
  if (!sizes.ok()) return sizes.error();
  const std::int64_t chunk = view.chunk_size;
  const auto cu = view.cu_seqlens;
  Outputs out;
  out.chunk_indices.reserve(static_cast<std::size_t>(2 * sizes.value().chunks));
  out.chunk_offsets.reserve(cu.size());
  for (std::size_t i = 0; i + 1 < cu.size(); ++i) {
    const std::int64_t length = cu[i + 1] - cu[i];
    const std::int64_t count = (length + chunk - 1) / chunk;
    for (std::int64_t j = 0; j < count; ++j) {
      out.chunk_indices.push_back(static_cast<std::int64_t>(i));
      out.chunk_indices.push_back(j);
    }
    out.chunk_offsets.push_back(out.chunk_offsets.back() + count);
  }
  return out;
}

Result<std::int64_t> chunk_indices_into(const View32& view, std::span<std::int32_t> out, const Limits& limits) noexcept {
  return indices_into(view, out, limits);
}
Result<std::int64_t> chunk_indices_into(const View64& view, std::span<std::int64_t> out, const Limits& limits) noexcept {
  return indices_into(view, out, limits);
}
Result<std::int64_t> chunk_offsets_into(const View32& view, std::span<std::int64_t> out, const Limits& limits) noexcept {
  return offsets_into(view, out, limits);
}
Result<std::int64_t> chunk_offsets_into(const View64& view, std::span<std::int64_t> out, const Limits& limits) noexcept {
  return offsets_into(view, out, limits);
}

Result<std::vector<std::int32_t>> chunk_indices(const View32& view, const Limits& limits) {
  return returned_indices<std::int32_t>(view, limits);
}
Result<std::vector<std::int64_t>> chunk_indices(const View64& view, const Limits& limits) {
  return returned_indices<std::int64_t>(view, limits);
}
Result<std::vector<std::int64_t>> chunk_offsets(const View32& view, const Limits& limits) {
  return returned_offsets(view, limits);
}
Result<std::vector<std::int64_t>> chunk_offsets(const View64& view, const Limits& limits) {
  return returned_offsets(view, limits);
}

}  // namespace chunkmeta::fla
