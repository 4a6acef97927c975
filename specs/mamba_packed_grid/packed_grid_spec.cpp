// specs/mamba_packed_grid as two Specs, one per output form of the same
// pieces: vLLM's helper's (mamba.packed_grid) and mamba_ssm's
// (mamba_ssm.chunk_indices). Their invariants are checked from q and C alone
// (the pieces as intervals: in order, inside one row and one physical chunk,
// as few as that allows), the library's entry points are the built-ins, and
// FLA's fuzz codec draws the offsets, moved to start at 0, int32.
#include "packed_grid_spec.hpp"

#include <algorithm>

#include "chunkmeta/harness/states.hpp"
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/violation.hpp"

namespace chunkmeta::harness {
namespace {

using packed_grid::Offsets;

enum class Form : std::uint8_t { metadata, chunk_indices };

// The outputs of each form, in the engine function's order.
enum MetadataOutput : std::size_t { cu_chunk_seqlens, last_chunk_indices, seq_idx };
enum IndicesOutput : std::size_t { chunk_indices, chunk_offsets };

constexpr Offsets offsets_of(Form form) { return form == Form::metadata ? Offsets::query_start_loc : Offsets::cu_seqlens; }

// Row [a, b)'s pieces, counted independently of the library: the cut at a and at each multiple of C inside.
std::int64_t pieces_between(std::int64_t a, std::int64_t b, std::int64_t C) { return b > a ? (b - 1) / C - a / C + 1 : 0; }

std::int64_t total_pieces(const Workload& w) {
  std::int64_t total = 0;
  for (std::size_t i = 0; i + 1 < w.query_start_loc.size(); ++i)
    total += pieces_between(w.query_start_loc[i], w.query_start_loc[i + 1], w.chunk_size);
  return total;
}

// The row whose tokens hold token t (t < T): the last row starting at or before it with tokens.
std::int64_t row_holding(const std::vector<std::int64_t>& q, std::int64_t t) {
  const auto after = std::upper_bound(q.begin(), q.end(), t);
  return static_cast<std::int64_t>(after - q.begin()) - 1;
}

// Invariants 2-4 on the pieces' starts (both forms): they tile [0, T) in
// order (2), each inside one row (3) and one physical chunk (4). With the
// count of invariant 1 (the fewest pieces these allow), they are the
// definition's pieces.
std::optional<InvariantViolation> pieces_invariants(const Workload& w, const std::vector<std::int64_t>& starts) {
  const auto& q = w.query_start_loc;
  const std::int64_t T = q.back();
  const std::int64_t C = w.chunk_size;
  const auto K = static_cast<std::int64_t>(starts.size());
  for (std::int64_t k = 0; k < K; ++k) {
    const std::int64_t start = starts[static_cast<std::size_t>(k)];
    const std::int64_t end = k + 1 < K ? starts[static_cast<std::size_t>(k + 1)] : T;
    if (k == 0 && start != 0)
      return Violation(2, "tiling", -1, k) << "the first piece starts at token " << start << ", not 0";
    if (start >= end || end > T)
      return Violation(2, "tiling", -1, k) << "piece " << k << " is [" << start << ", " << end << ") of a batch of "
                                           << T << " tokens: the pieces must follow one another, none empty";
    const std::int64_t row = row_holding(q, start);
    if (end > q[static_cast<std::size_t>(row) + 1])
      return Violation(3, "one row", row, k) << "piece " << k << " [" << start << ", " << end << ") runs past row "
                                             << row << "'s end at " << q[static_cast<std::size_t>(row) + 1];
    if (start / C != (end - 1) / C)
      return Violation(4, "one physical chunk", row, k) << "piece " << k << " [" << start << ", " << end
                                                        << ") crosses the grid's cut at " << (start / C + 1) * C;
  }
  return std::nullopt;
}

std::optional<InvariantViolation> shapes(const char* name, std::size_t have, std::int64_t want, const char* what) {
  if (static_cast<std::int64_t>(have) == want) return std::nullopt;
  return Violation(1, "shapes", -1, -1) << name << " has " << have << " entries; " << what << " = " << want;
}

// mamba.packed_grid's five invariants.
std::optional<InvariantViolation> metadata_invariants(const Workload& w, const Arrays& arrays) {
  if (arrays.size() != 3) return Violation(1, "shapes", -1, -1) << arrays.size() << " arrays; the outputs are three";
  const auto& q = w.query_start_loc;
  const std::int64_t K = total_pieces(w);
  const auto B = static_cast<std::int64_t>(q.size()) - 1;
  // 1. Shapes: K + 1, B and K entries, K the pieces the grid and the row starts make.
  if (auto v = shapes("cu_chunk_seqlens", arrays[cu_chunk_seqlens].size(), K + 1, "the pieces + 1")) return v;
  if (auto v = shapes("last_chunk_indices", arrays[last_chunk_indices].size(), B, "the rows")) return v;
  if (auto v = shapes("seq_idx", arrays[seq_idx].size(), K, "the pieces")) return v;
  if (arrays[cu_chunk_seqlens].back() != q.back())
    return Violation(2, "tiling", -1, K) << "cu_chunk_seqlens ends at " << arrays[cu_chunk_seqlens].back()
                                         << ", not at T = " << q.back();
  const std::vector<std::int64_t> starts(arrays[cu_chunk_seqlens].begin(), arrays[cu_chunk_seqlens].end() - 1);
  if (auto v = pieces_invariants(w, starts)) return v;
  // 3. One row: seq_idx names the row holding each piece.
  std::vector<std::int64_t> last(static_cast<std::size_t>(B), -1);
  for (std::int64_t k = 0; k < K; ++k) {
    const std::int64_t row = row_holding(q, starts[static_cast<std::size_t>(k)]);
    if (arrays[seq_idx][static_cast<std::size_t>(k)] != row)
      return Violation(3, "one row", row, k) << "seq_idx[" << k << "] = " << arrays[seq_idx][static_cast<std::size_t>(k)]
                                             << "; piece " << k << " holds tokens of row " << row;
    last[static_cast<std::size_t>(row)] = k;
  }
  // 5. Last pieces: each row's last piece, -1 for a row without tokens.
  for (std::int64_t i = 0; i < B; ++i) {
    const std::int32_t given = arrays[last_chunk_indices][static_cast<std::size_t>(i)];
    const std::int64_t want = last[static_cast<std::size_t>(i)];
    if (given == want) continue;
    auto v = Violation(5, "last pieces", i, -1);
    v << "last_chunk_indices[" << i << "] = " << given << "; ";
    if (want < 0) return v << "row " << i << " has no tokens: -1";
    return v << "row " << i << "'s last piece is " << want;
  }
  return std::nullopt;
}

// mamba_ssm.chunk_indices' four invariants.
std::optional<InvariantViolation> indices_invariants(const Workload& w, const Arrays& arrays) {
  if (arrays.size() != 2) return Violation(1, "shapes", -1, -1) << arrays.size() << " arrays; the outputs are two";
  const std::int64_t K = total_pieces(w);
  // 1. Shapes: K entries each.
  if (auto v = shapes("chunk_indices", arrays[chunk_indices].size(), K, "the pieces")) return v;
  if (auto v = shapes("chunk_offsets", arrays[chunk_offsets].size(), K, "the pieces")) return v;
  // 2. Tiling, first in each form's own terms: a physical chunk and an offset inside it.
  for (std::int64_t k = 0; k < K; ++k) {
    const std::int64_t index = arrays[chunk_indices][static_cast<std::size_t>(k)];
    const std::int64_t offset = arrays[chunk_offsets][static_cast<std::size_t>(k)];
    if (index < 0 || offset < 0 || offset >= w.chunk_size)
      return Violation(2, "tiling", -1, k) << "piece " << k << " is (chunk " << index << ", offset " << offset
                                           << "): the chunk must be at least 0 and the offset in [0, " << w.chunk_size
                                           << ")";
  }
  return pieces_invariants(w, piece_starts(mamba_ssm_chunk_indices_spec(), w, arrays));
}

Outcome metadata_outcome(Result<packed_grid::Metadata>&& result) {
  if (!result.ok()) return result.error();
  auto m = std::move(result).value();
  Arrays arrays;
  arrays.push_back(std::move(m.cu_chunk_seqlens));
  arrays.push_back(std::move(m.last_chunk_indices));
  arrays.push_back(std::move(m.seq_idx));
  return arrays;
}

Outcome indices_outcome(Result<packed_grid::ChunkIndices>&& result) {
  if (!result.ok()) return result.error();
  auto c = std::move(result).value();
  Arrays arrays;
  arrays.push_back(std::move(c.chunk_indices));
  arrays.push_back(std::move(c.chunk_offsets));
  return arrays;
}

// The library's writer of the form into buffers of `sizes` entries filled with `fill` first.
template <typename Int>
Result<std::vector<Int32Array>> written_into(Form form, const packed_grid::BasicView<Int>& view,
                                             std::span<const std::int64_t> sizes, std::int64_t fill) {
  std::vector<Int32Array> buffers;
  for (const auto size : sizes) buffers.emplace_back(static_cast<std::size_t>(size), static_cast<std::int32_t>(fill));
  const auto written = form == Form::metadata
                           ? packed_grid::metadata_into(view, {buffers[0], buffers[1], buffers[2]})
                           : packed_grid::chunk_indices_into(view, {buffers[0], buffers[1]});
  if (!written.ok()) return written.error();
  return buffers;
}

template <typename Int>
Outcome returned_by_library(Form form, const packed_grid::BasicView<Int>& view) {
  return form == Form::metadata ? metadata_outcome(packed_grid::metadata(view))
                                : indices_outcome(packed_grid::chunk_indices(view));
}

std::vector<std::int64_t> entries_of(Form form, const packed_grid::Sizes& n) {
  if (form == Form::metadata) return {n.pieces + 1, n.rows, n.pieces};
  return {n.pieces, n.pieces};
}

// Buffers of the exact sizes filled with -7, so an entry left unwritten shows.
template <typename Int>
Outcome written_by_library(Form form, const packed_grid::BasicView<Int>& view) {
  const auto sizes = packed_grid::output_sizes(view, {}, offsets_of(form));
  if (!sizes.ok()) return sizes.error();
  auto written = written_into(form, view, entries_of(form, sizes.value()), -7);
  if (!written.ok()) return written.error();
  return Arrays(std::move(written).value());
}

template <typename Compute32>
Outcome through_int32(Form form, const Workload& w, Compute32&& compute) {
  if (!fits_int32(w)) return *packed_grid::validate(packed_grid_view(w), {}, offsets_of(form));
  const std::vector<std::int32_t> q(w.query_start_loc.begin(), w.query_start_loc.end());
  return compute(packed_grid::View32{w.chunk_size, q});
}

// FLA's codec, moved to start at 0 (the packed grid's batch starts at token 0), int32 as the engines hold it.
Workload decode_packed(std::span<const std::uint8_t> bytes) {
  Workload w = decode_valid_cu_seqlens(bytes);
  const std::int64_t first = w.query_start_loc.front();
  for (auto& q : w.query_start_loc) q -= first;
  w.dtype = Dtype::int32;
  return w;
}

std::optional<std::vector<std::uint8_t>> encode_packed(const Workload& w) {
  if (w.dtype != Dtype::int32 || w.query_start_loc.empty() || w.query_start_loc.front() != 0) return std::nullopt;
  return encode_valid_cu_seqlens(w);
}

template <Form kForm>
class PackedGridSpec final : public Spec {
 public:
  std::string_view name() const override { return kForm == Form::metadata ? "mamba.packed_grid" : "mamba_ssm.chunk_indices"; }
  std::string_view summary() const override {
    return kForm == Form::metadata
               ? "vLLM's compute_varlen_chunk_metadata: the packed batch cut at every multiple of C and every row "
                 "start, as (cu_chunk_seqlens, last_chunk_indices, seq_idx) (specs/mamba_packed_grid)"
               : "mamba_ssm's cu_seqlens_to_chunk_indices_offsets (SGLang, TensorRT-LLM): the same pieces as "
                 "(chunk_indices, chunk_offsets) (specs/mamba_packed_grid)";
  }
  std::span<const Input> inputs() const override { return kInputs; }
  std::string_view unit() const override { return kForm == Form::metadata ? "row" : "sequence"; }
  std::span<const OutputArray> outputs() const override { return kOutputs; }
  std::optional<Error> validate(const Workload& w, const Limits& limits) const override {
    return packed_grid::validate(packed_grid_view(w), limits, offsets_of(kForm));
  }
  std::optional<std::int64_t> chunks(const Workload& w) const override {
    const auto sizes = packed_grid::output_sizes(packed_grid_view(w), {}, offsets_of(kForm));
    if (!sizes.ok()) return std::nullopt;
    return sizes.value().pieces;
  }
  std::optional<std::vector<std::int64_t>> output_entries(const Workload& w) const override {
    const auto sizes = packed_grid::output_sizes(packed_grid_view(w), {}, offsets_of(kForm));
    if (!sizes.ok()) return std::nullopt;
    return entries_of(kForm, sizes.value());
  }
  Outcome reference(const Workload& w) const override {
    return kForm == Form::metadata ? metadata_outcome(packed_grid::reference_metadata(packed_grid_view(w)))
                                   : indices_outcome(packed_grid::reference_chunk_indices(packed_grid_view(w)));
  }
  std::optional<kernel_view::Fault> kernels_view(const Workload& w, const Arrays& arrays, bool /*with_cache*/) const override {
    if (auto missing = too_few_outputs(*this, arrays, kForm == Form::metadata ? 3 : 2)) return missing;
    // No computed tokens: every row starts at 0 (the relation property judges rows that start later).
    if constexpr (kForm == Form::metadata) {
      return mamba2_states(w, false, arrays, 0, 2, 1, 0);
    } else {
      kernel_view::ThreeArrayStorage chunks;
      const kernel_view::Batch batch = batch_of(w, false);
      if (auto fault = kernel_view::read_chunk_indices(batch, w.chunk_size, {arrays[0], arrays[1]}, chunks)) return fault;
      return kernel_view::scan(batch, w.chunk_size, chunks.view()).fault;
    }
  }
  std::string_view kernels_view_covers() const override {
    return kForm == Form::metadata
               ? "kernel-adequate (every token run once, in order, from the state after the tokens before it; each row "
                 "ends at its own final state); not cache-adequate for a row that starts off the grid (a property says when)"
               : "kernel-adequate: the pieces (chunk_indices C + chunk_offsets), each run as the row its start lies in, "
                 "run every token once, in order, from the state after the tokens before it";
  }
  std::optional<InvariantViolation> check_invariants(const Workload& w, const Arrays& arrays) const override {
    return kForm == Form::metadata ? metadata_invariants(w, arrays) : indices_invariants(w, arrays);
  }
  Result<std::vector<std::vector<std::int64_t>>> write_into(const Workload& w, std::span<const std::int64_t> sizes,
                                                            std::int64_t fill) const override {
    const auto widened = [](std::vector<Int32Array>&& buffers) {
      std::vector<std::vector<std::int64_t>> whole;
      for (const auto& buffer : buffers) whole.emplace_back(buffer.begin(), buffer.end());
      return whole;
    };
    if (fits_int32(w)) {
      const std::vector<std::int32_t> q(w.query_start_loc.begin(), w.query_start_loc.end());
      auto written = written_into(kForm, packed_grid::View32{w.chunk_size, q}, sizes, fill);
      if (!written.ok()) return written.error();
      return widened(std::move(written).value());
    }
    auto written = written_into(kForm, packed_grid_view(w), sizes, fill);
    if (!written.ok()) return written.error();
    return widened(std::move(written).value());
  }
  BufferRest rest_of_buffer(std::size_t) const override { return BufferRest::kept; }
  std::string_view fuzz_target() const override { return "packed_grid_differential"; }
  Workload decode_fuzz_input(std::span<const std::uint8_t> bytes) const override { return decode_packed(bytes); }
  std::optional<std::vector<std::uint8_t>> encode_fuzz_input(const Workload& w) const override { return encode_packed(w); }
  const std::vector<Implementation>& builtins() const override {
    static const std::vector<Implementation> all = {
        in_process("reference", "the contract's definition: cut points gathered and sorted, step by step", *this,
                   [this](const Workload& w) { return reference(w); }),
        in_process("fast", "production implementation, one pass, returning, int64 offsets", *this,
                   [](const Workload& w) { return returned_by_library(kForm, packed_grid_view(w)); }),
        in_process("fast-int32", "production implementation, one pass, returning, engine int32 offsets", *this,
                   [](const Workload& w) {
                     return through_int32(kForm, w, [](const packed_grid::View32& v) { return returned_by_library(kForm, v); });
                   }),
        in_process("fast-into", "production implementation, caller buffers, int64 offsets", *this,
                   [](const Workload& w) { return written_by_library(kForm, packed_grid_view(w)); }),
        in_process("fast-into-int32", "production implementation, caller buffers, engine int32 offsets", *this,
                   [](const Workload& w) {
                     return through_int32(kForm, w, [](const packed_grid::View32& v) { return written_by_library(kForm, v); });
                   }),
    };
    return all;
  }

 private:
  // compute_varlen_chunk_metadata(query_start_loc, chunk_size); cu_seqlens_to_chunk_indices_offsets(cu_seqlens, chunk_size).
  static constexpr Input kInputs[] = {{kForm == Form::metadata ? "query_start_loc" : "cu_seqlens", Slot::offsets},
                                      {"chunk_size", Slot::chunk_size}};
  static constexpr OutputArray kMetadataOutputs[] = {{"cu_chunk_seqlens"}, {"last_chunk_indices"}, {"seq_idx"}};
  static constexpr OutputArray kIndicesOutputs[] = {{"chunk_indices"}, {"chunk_offsets"}};
  static constexpr std::span<const OutputArray> kOutputs =
      kForm == Form::metadata ? std::span<const OutputArray>(kMetadataOutputs) : std::span<const OutputArray>(kIndicesOutputs);
};

}  // namespace

const Spec& packed_grid_spec() {
  static const PackedGridSpec<Form::metadata> spec;
  return spec;
}

const Spec& mamba_ssm_chunk_indices_spec() {
  static const PackedGridSpec<Form::chunk_indices> spec;
  return spec;
}

std::vector<const Spec*> specs_of_mamba_packed_grid() { return {&packed_grid_spec(), &mamba_ssm_chunk_indices_spec()}; }

std::vector<std::int64_t> piece_starts(const Spec& spec, const Workload& w, const Arrays& arrays) {
  std::vector<std::int64_t> starts;
  if (&spec == &packed_grid_spec()) {
    if (!arrays.empty() && !arrays[0].empty()) starts.assign(arrays[0].begin(), arrays[0].end() - 1);
    return starts;
  }
  for (std::size_t k = 0; k < arrays[0].size() && k < arrays[1].size(); ++k)
    starts.push_back(std::int64_t{arrays[0][k]} * w.chunk_size + arrays[1][k]);
  return starts;
}

Arrays pieces_as(const Spec& spec, const Workload& w, std::span<const std::int64_t> starts) {
  const auto& q = w.query_start_loc;
  if (&spec == &mamba_ssm_chunk_indices_spec()) {
    Arrays out(2);
    for (const auto start : starts) {
      out[chunk_indices].push_back(static_cast<std::int32_t>(start / w.chunk_size));
      out[chunk_offsets].push_back(static_cast<std::int32_t>(start % w.chunk_size));
    }
    return out;
  }
  Arrays out(3);
  out[last_chunk_indices].assign(q.size() - 1, -1);
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::int64_t row = row_holding(q, starts[k]);
    out[cu_chunk_seqlens].push_back(static_cast<std::int32_t>(starts[k]));
    out[seq_idx].push_back(static_cast<std::int32_t>(row));
    out[last_chunk_indices][static_cast<std::size_t>(row)] = static_cast<std::int32_t>(k);
  }
  out[cu_chunk_seqlens].push_back(static_cast<std::int32_t>(q.back()));
  return out;
}

}  // namespace chunkmeta::harness
