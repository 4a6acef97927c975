// specs/fla as two Specs: FLA's chunk_indices and chunk_offsets, their five
// invariants each, and the library's entry points as built-in implementations.
#include <algorithm>
#include <sstream>
#include <type_traits>

#include "fla_spec.hpp"

#include "chunkmeta/fla.hpp"
#include "chunkmeta/harness/states.hpp"
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/violation.hpp"

namespace chunkmeta::harness {
namespace {

fla::View64 view64(const Workload& w) { return {w.chunk_size, w.query_start_loc}; }

std::int64_t length_of(const Workload& w, std::size_t i) { return w.query_start_loc[i + 1] - w.query_start_loc[i]; }
std::int64_t chunks_of(const Workload& w, std::size_t i) { return (length_of(w, i) + w.chunk_size - 1) / w.chunk_size; }

// The spec's five invariants on chunk_indices: rows (i, j), checked against
// cu_seqlens and C alone.
std::optional<InvariantViolation> indices_invariants(const Workload& w, const Arrays& arrays) {
  if (arrays.size() != 1) return Violation(1, "shapes", -1, -1) << arrays.size() << " arrays; the output is one";
  const auto& entries = arrays[0];
  const std::size_t sequences = w.query_start_loc.size() - 1;
  // 1. Shapes: N rows of two entries, N the sum of the chunk counts (offsets[B]).
  if (entries.size() % 2 != 0)
    return Violation(1, "shapes", -1, -1) << "chunk_indices has " << entries.size() << " entries, not rows of 2";
  const auto rows = static_cast<std::int64_t>(entries.size() / 2);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < sequences; ++i) total += chunks_of(w, i);
  if (rows != total)
    return Violation(1, "shapes", -1, -1) << "chunk_indices has " << rows << " rows; offsets[B] = " << total;
  // 2. Order: rows sorted by (i, j), i a sequence.
  for (std::int64_t k = 0; k < rows; ++k) {
    const std::int64_t i = entries[2 * k];
    const std::int64_t j = entries[2 * k + 1];
    if (i < 0 || i >= static_cast<std::int64_t>(sequences) || j < 0)
      return Violation(2, "order", i, k) << "row " << k << " is (" << i << ", " << j << "): i must be in [0, "
                                         << sequences << ") and j at least 0";
    if (k > 0) {
      const std::int64_t pi = entries[2 * k - 2];
      const std::int64_t pj = entries[2 * k - 1];
      if (i < pi || (i == pi && j <= pj))
        return Violation(2, "order", i, k) << "row " << k << " (" << i << ", " << j << ") does not follow row "
                                           << k - 1 << " (" << pi << ", " << pj << ")";
    }
  }
  // 3. Agreement: row offsets[i] + j is (i, j), offsets the prefix sum of the counts.
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < sequences; ++i) {
    const std::int64_t count = chunks_of(w, i);
    for (std::int64_t j = 0; j < count && offset + j < rows; ++j) {
      const std::int64_t k = offset + j;
      if (entries[2 * k] != static_cast<std::int64_t>(i) || entries[2 * k + 1] != j)
        return Violation(3, "agreement", static_cast<std::int64_t>(i), k)
               << "row offsets[" << i << "] + " << j << " = " << k << " is (" << entries[2 * k] << ", "
               << entries[2 * k + 1] << "), not (" << i << ", " << j << ")";
    }
    offset += count;
  }
  // 4. Tiling: chunk (i, j) covers [cu[i] + jC, min(cu[i] + (j + 1)C, cu[i + 1])), not empty.
  for (std::int64_t k = 0; k < rows; ++k) {
    const auto i = static_cast<std::size_t>(entries[2 * k]);
    const std::int64_t j = entries[2 * k + 1];
    if (j * w.chunk_size >= length_of(w, i))
      return Violation(4, "tiling", static_cast<std::int64_t>(i), k)
             << "chunk (" << i << ", " << j << ") starts at token " << j * w.chunk_size << " of a sequence of "
             << length_of(w, i) << ": it is empty";
  }
  // 5. Minimality: ceil(len_i / C) chunks per sequence (with 4: they cover it exactly).
  std::vector<std::int64_t> counts(sequences, 0);
  for (std::int64_t k = 0; k < rows; ++k) ++counts[static_cast<std::size_t>(entries[2 * k])];
  for (std::size_t i = 0; i < sequences; ++i) {
    if (counts[i] != chunks_of(w, i))
      return Violation(5, "minimality", static_cast<std::int64_t>(i), -1)
             << "sequence " << i << " (" << length_of(w, i) << " tokens, C " << w.chunk_size << ") has " << counts[i]
             << " chunks; ceil(len / C) = " << chunks_of(w, i);
  }
  return std::nullopt;
}

// The five invariants on chunk_offsets.
std::optional<InvariantViolation> offsets_invariants(const Workload& w, const Arrays& arrays) {
  if (arrays.size() != 1) return Violation(1, "shapes", -1, -1) << arrays.size() << " arrays; the output is one";
  const auto& offsets = arrays[0];
  const std::size_t sequences = w.query_start_loc.size() - 1;
  // 1. Shapes: B + 1 entries, offsets[0] = 0.
  if (offsets.size() != sequences + 1)
    return Violation(1, "shapes", -1, -1) << "chunk_offsets has " << offsets.size() << " entries; B + 1 = "
                                          << sequences + 1;
  if (offsets[0] != 0) return Violation(1, "shapes", -1, -1) << "chunk_offsets[0] is " << offsets[0] << ", not 0";
  for (std::size_t i = 0; i < sequences; ++i) {
    const std::int64_t count = std::int64_t{offsets[i + 1]} - offsets[i];
    const auto row = static_cast<std::int64_t>(i);
    // 2. Order: non-decreasing.
    if (count < 0)
      return Violation(2, "order", row, -1) << "chunk_offsets decreases: [" << i << "] = " << offsets[i] << ", ["
                                            << i + 1 << "] = " << offsets[i + 1];
    // 4. Tiling: count chunks of C, none empty, cover the sequence.
    if (count * w.chunk_size < length_of(w, i))
      return Violation(4, "tiling", row, -1) << "sequence " << i << " has " << length_of(w, i) << " tokens; "
                                             << count << " chunks of " << w.chunk_size << " leave some uncovered";
    if (count > 0 && (count - 1) * w.chunk_size >= length_of(w, i))
      return Violation(4, "tiling", row, -1) << "sequence " << i << " has " << length_of(w, i) << " tokens; its "
                                             << count << "th chunk of " << w.chunk_size << " would be empty";
    // 5. Minimality: exactly ceil(len / C) (4 already forces it: named for the spec's sake).
    if (count != chunks_of(w, i))
      return Violation(5, "minimality", row, -1) << "sequence " << i << " has " << count << " chunks; ceil(len / C) = "
                                                 << chunks_of(w, i);
  }
  // 3. Agreement: offsets[B] is N, the chunk rows' count.
  std::int64_t total = 0;
  for (std::size_t i = 0; i < sequences; ++i) total += chunks_of(w, i);
  if (offsets.back() != total)
    return Violation(3, "agreement", -1, -1) << "chunk_offsets[B] is " << offsets.back() << ", not N = " << total;
  return std::nullopt;
}

template <typename Values>
Int32Array narrow(const Values& values) {
  Int32Array out(values.size());
  std::transform(values.begin(), values.end(), out.begin(), [](auto v) { return static_cast<std::int32_t>(v); });
  return out;
}

Outcome one_array(Int32Array&& values) {
  Arrays arrays;
  arrays.push_back(std::move(values));
  return arrays;
}

template <typename Compute32>
Outcome through_int32(const Workload& w, Compute32&& compute) {
  if (!fits_int32(w)) return *fla::validate(view64(w));
  const std::vector<std::int32_t> cu(w.query_start_loc.begin(), w.query_start_loc.end());
  return compute(fla::View32{w.chunk_size, cu});
}

template <typename Result>
Outcome returned(Result&& result) {
  if (!result.ok()) return result.error();
  return one_array(narrow(result.value()));
}

// FLA's two specs differ only in their one output: chunk_indices (kIndices, of
// cu_seqlens' type) or chunk_offsets (int64).
template <bool kIndices, typename Int>
using OutputOf = std::conditional_t<kIndices, Int, std::int64_t>;

// The library's returning entry point for the spec's output.
template <bool kIndices, typename Int>
Outcome returned_by_library(const fla::BasicView<Int>& view) {
  if constexpr (kIndices) {
    return returned(fla::chunk_indices(view));
  } else {
    return returned(fla::chunk_offsets(view));
  }
}

// The library's writer of the spec's output into a buffer of `size` entries
// filled with `fill` first: the whole buffer after the call, or its error.
template <bool kIndices, typename Int>
Result<std::vector<OutputOf<kIndices, Int>>> written_into(const fla::BasicView<Int>& view, std::int64_t size,
                                                          std::int64_t fill) {
  using Out = OutputOf<kIndices, Int>;
  std::vector<Out> buffer(static_cast<std::size_t>(size), static_cast<Out>(fill));
  Result<std::int64_t> written = std::int64_t{0};
  if constexpr (kIndices) {
    written = fla::chunk_indices_into(view, std::span<Out>(buffer));
  } else {
    written = fla::chunk_offsets_into(view, std::span<Out>(buffer));
  }
  if (!written.ok()) return written.error();
  return buffer;
}

// Entries of the spec's output for the library's sizes.
template <bool kIndices>
std::int64_t entries_of(const fla::Sizes& sizes) {
  return kIndices ? 2 * sizes.chunks : sizes.offsets;
}

// Buffers of the exact sizes filled with -7, so an entry left unwritten shows.
template <bool kIndices, typename Int>
Outcome written_by_library(const fla::BasicView<Int>& view) {
  auto sizes = fla::output_sizes(view);
  if (!sizes.ok()) return sizes.error();
  auto written = written_into<kIndices>(view, entries_of<kIndices>(sizes.value()), -7);
  if (!written.ok()) return written.error();
  return one_array(narrow(written.value()));
}

template <bool kIndices>
class FlaSpec final : public Spec {
 public:
  std::string_view name() const override { return kIndices ? "fla.chunk_indices" : "fla.chunk_offsets"; }
  std::string_view summary() const override {
    return kIndices ? "FLA's chunk_indices: a row (i, j) per chunk, of cu_seqlens' dtype (specs/fla)"
                    : "FLA's chunk_offsets: the prefix sum of ceil(len / C), int64 (specs/fla)";
  }
  std::span<const Input> inputs() const override { return kInputs; }
  std::string_view unit() const override { return "sequence"; }
  std::span<const OutputArray> outputs() const override { return kOutputs; }
  std::optional<Error> validate(const Workload& workload, const Limits& limits) const override {
    return fla::validate(view64(workload), limits);
  }
  std::optional<std::int64_t> chunks(const Workload& workload) const override {
    const auto sizes = fla::output_sizes(view64(workload));
    if (!sizes.ok()) return std::nullopt;
    return sizes.value().chunks;
  }
  std::optional<std::vector<std::int64_t>> output_entries(const Workload& workload) const override {
    const auto sizes = fla::output_sizes(view64(workload));
    if (!sizes.ok()) return std::nullopt;
    return std::vector<std::int64_t>{entries_of<kIndices>(sizes.value())};
  }
  Outcome reference(const Workload& workload) const override {
    auto outputs = fla::reference(view64(workload));
    if (!outputs.ok()) return outputs.error();
    return one_array(narrow(kIndices ? outputs.value().chunk_indices : outputs.value().chunk_offsets));
  }
  std::optional<InvariantViolation> check_invariants(const Workload& workload, const Arrays& arrays) const override {
    return kIndices ? indices_invariants(workload, arrays) : offsets_invariants(workload, arrays);
  }
  std::optional<kernel_view::Fault> kernels_view(const Workload& workload, const Arrays& arrays, bool /*with_cache*/) const override {
    if (auto missing = too_few_outputs(*this, arrays, 1)) return missing;
    return kIndices ? kernel_view::fla_pairs(workload.query_start_loc, workload.chunk_size, arrays[0])
                    : kernel_view::fla_state_entries(workload.query_start_loc, workload.chunk_size, arrays[0]);
  }
  std::string_view kernels_view_covers() const override {
    return kIndices ? "kernel-adequate: the (sequence, chunk) pairs are, in order, exactly each sequence's pieces of "
                      "chunk_size tokens from its own start (every token run once, from the state after the tokens before it)"
                    : "kernel-adequate: each piece's state entry chunk_offsets[i] + j lies in the state array and no two "
                      "pieces share one";
  }
  std::string_view kernel_formulation() const override { return kIndices ? "kernel.fla_chunks" : ""; }
  Result<std::vector<std::vector<std::int64_t>>> write_into(const Workload& workload,
                                                            std::span<const std::int64_t> sizes,
                                                            std::int64_t fill) const override {
    if (workload.dtype == Dtype::int32 && fits_int32(workload)) return write_as<std::int32_t>(workload, sizes[0], fill);
    return write_as<std::int64_t>(workload, sizes[0], fill);
  }
  BufferRest rest_of_buffer(std::size_t) const override { return BufferRest::kept; }
  std::string_view fuzz_target() const override { return "fla_differential"; }
  Workload decode_fuzz_input(std::span<const std::uint8_t> bytes) const override {
    return decode_valid_cu_seqlens(bytes);
  }
  std::optional<std::vector<std::uint8_t>> encode_fuzz_input(const Workload& workload) const override {
    return encode_valid_cu_seqlens(workload);
  }
  const std::vector<Implementation>& builtins() const override {
    static const std::vector<Implementation> all = {
        in_process("reference", "the spec's procedure, ported line by line", *this,
                   [this](const Workload& w) { return reference(w); }),
        in_process("fast", "production implementation, returning, int64 cu_seqlens", *this,
                   [](const Workload& w) { return returned_by_library<kIndices>(view64(w)); }),
        in_process("fast-int32", "production implementation, returning, int32 cu_seqlens", *this,
                   [](const Workload& w) {
                     return through_int32(w, [](const fla::View32& v) { return returned_by_library<kIndices>(v); });
                   }),
        in_process("fast-into", "production implementation, caller buffers, int64 cu_seqlens", *this,
                   [](const Workload& w) { return written_by_library<kIndices>(view64(w)); }),
        in_process("fast-into-int32", "production implementation, caller buffers, int32 cu_seqlens", *this,
                   [](const Workload& w) {
                     return through_int32(w, [](const fla::View32& v) { return written_by_library<kIndices>(v); });
                   }),
    };
    return all;
  }

 private:
  // The writer for the workload's cu_seqlens dtype, its buffer widened for the caller.
  template <typename Int>
  static Result<std::vector<std::vector<std::int64_t>>> write_as(const Workload& w, std::int64_t size,
                                                                 std::int64_t fill) {
    const std::vector<Int> cu(w.query_start_loc.begin(), w.query_start_loc.end());
    auto written = written_into<kIndices>(fla::BasicView<Int>{w.chunk_size, cu}, size, fill);
    if (!written.ok()) return written.error();
    return std::vector<std::vector<std::int64_t>>{{written.value().begin(), written.value().end()}};
  }

  // FLA's prepare_chunk_indices(cu_seqlens, chunk_size) and prepare_chunk_offsets(cu_seqlens, chunk_size).
  static constexpr Input kInputs[] = {{"cu_seqlens", Slot::offsets, true}, {"chunk_size", Slot::chunk_size}};
  static constexpr OutputArray kOutputs[] = {kIndices ? OutputArray{"chunk_indices", 2, OutputDtype::of_input}
                                                      : OutputArray{"chunk_offsets", 1, OutputDtype::int64}};
};

}  // namespace

const Spec& fla_chunk_indices_spec() {
  static const FlaSpec<true> spec;
  return spec;
}

const Spec& fla_chunk_offsets_spec() {
  static const FlaSpec<false> spec;
  return spec;
}

std::vector<const Spec*> specs_of_fla() { return {&fla_chunk_indices_spec(), &fla_chunk_offsets_spec()}; }

}  // namespace chunkmeta::harness
