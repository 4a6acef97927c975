// specs/mamba_checkpointed_chunks as a Spec: Mamba's inputs and a checkpoint
// offset per row (the seam's second value per row, passed as a list of ints
// as vLLM's builder has it), four outputs, invariants 1-3 checked from the
// workload alone, the library's entry points as built-ins, and a fuzz codec:
// the offsets, then Mamba's bytes.
#include "checkpointed_chunks_spec.hpp"

#include <algorithm>

#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/harness/states.hpp"
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/violation.hpp"

namespace chunkmeta::harness {
namespace {

using checkpointed_chunks::Chunks;

enum Output : std::size_t { cu_chunk_seqlen, seq_idx, last_chunk_indices, checkpoint_chunk_indices };

std::int64_t new_tokens(const Workload& w, std::size_t i) { return w.query_start_loc[i + 1] - w.query_start_loc[i]; }
std::int64_t offset_of(const Workload& w, std::size_t i) { return i < w.second_per_row.size() ? w.second_per_row[i] : 0; }

// The chunks Mamba's rules give the split workload (relation 4), counted by Mamba's library: the count invariant 3 fixes.
std::int64_t chunks_expected(const Workload& w) {
  const auto sizes = chunkmeta::output_sizes(view_of(split_at_checkpoints(w).mamba));
  return sizes.ok() ? sizes.value().num_chunks() : -1;
}

// Invariants 1-3, for a valid workload: Part 1's with the checkpoint as one more boundary (1), each
// checkpoint's chunk (2), and the count (3).
std::optional<InvariantViolation> chunk_invariants(const Workload& w, const Arrays& a) {
  if (a.size() != 4) return Violation(1, "shapes", -1, -1) << a.size() << " arrays; the outputs are four";
  const auto& q = w.query_start_loc;
  const std::size_t B = w.rows();
  const std::int64_t C = w.chunk_size;
  const std::int64_t K = chunks_expected(w);
  const auto& cu = a[cu_chunk_seqlen];
  const auto& seq = a[seq_idx];
  // 3. Count: Mamba's chunks of the split rows (a checkpoint on the grid adds none, off it one).
  if (static_cast<std::int64_t>(seq.size()) != K || static_cast<std::int64_t>(cu.size()) != K + 1)
    return Violation(3, "count", -1, -1) << "cu_chunk_seqlen has " << cu.size() << " entries and seq_idx " << seq.size()
                                         << "; the rows and their checkpoints make " << K << " chunks";
  for (const std::size_t out : {std::size_t{last_chunk_indices}, std::size_t{checkpoint_chunk_indices}}) {
    if (a[out].size() != B)
      return Violation(1, "shapes", -1, -1) << (out == last_chunk_indices ? "last_chunk_indices" : "checkpoint_chunk_indices")
                                            << " has " << a[out].size() << " entries; the batch has " << B << " rows";
  }
  if (cu[0] != 0 || cu[static_cast<std::size_t>(K)] != q[B] - q[0])
    return Violation(1, "tiling", -1, -1) << "cu_chunk_seqlen runs from " << cu[0] << " to " << cu[static_cast<std::size_t>(K)]
                                          << ", not from 0 to " << q[B] - q[0];
  // 1. Each row's chunks tile its tokens in order, inside it, cut only at the grid and the checkpoint.
  std::size_t k = 0;
  std::int64_t chunks_so_far = 0;
  for (std::size_t i = 0; i < B; ++i) {
    const auto row = static_cast<std::int64_t>(i);
    const std::int64_t start = q[i] - q[0];
    const std::int64_t end = q[i + 1] - q[0];
    const std::int64_t c = w.num_computed_tokens[i];
    const std::int64_t o = offset_of(w, i);
    const bool empty_head = end == start && c % C != 0;  // Part 1: a row without tokens off the grid keeps one empty chunk
    std::int64_t at = start;
    std::int64_t ends_at_checkpoint = -1;
    for (; k < seq.size() && seq[k] == row; ++k) {
      const std::int64_t from = cu[k];
      const std::int64_t to = cu[k + 1];
      if (from != at || to < from || to > end)
        return Violation(1, "tiling", row, static_cast<std::int64_t>(k))
               << "chunk " << k << " is [" << from << ", " << to << ") of row " << i << " [" << start << ", " << end
               << "), which its chunks must tile in order from " << at;
      if (to == from && !empty_head)
        return Violation(1, "tiling", row, static_cast<std::int64_t>(k)) << "chunk " << k << " of row " << i << " is empty";
      // Absolute positions: the grid and the checkpoint are the row's own (computed tokens first).
      const std::int64_t first = c + (from - start);
      const std::int64_t last = c + (to - start);
      const bool crosses_grid = to > from && first / C != (last - 1) / C;
      const bool crosses_checkpoint = o > 0 && first < c + o && c + o < last;
      if (crosses_grid || crosses_checkpoint)
        return Violation(1, "boundaries", row, static_cast<std::int64_t>(k))
               << "chunk " << k << " holds row " << i << "'s tokens " << first << ".." << last << " (computed first): it "
               << (crosses_grid ? "crosses a multiple of C = " + std::to_string(C) : "crosses the checkpoint at " + std::to_string(c + o));
      if (to < end && last % C != 0 && last != c + o)
        return Violation(1, "boundaries", row, static_cast<std::int64_t>(k))
               << "chunk " << k << " of row " << i << " ends at token " << last
               << " (computed first), which is neither a multiple of C nor the checkpoint";
      if (o > 0 && last == c + o) ends_at_checkpoint = static_cast<std::int64_t>(k);
      at = to;
    }
    if (at != end || (empty_head && chunks_so_far == static_cast<std::int64_t>(k)))
      return Violation(1, "tiling", row, -1) << "row " << i << " [" << start << ", " << end << ") is covered up to " << at
                                             << (empty_head ? " (a row without tokens off the grid keeps one empty chunk)" : "");
    chunks_so_far = static_cast<std::int64_t>(k);
    // Part 1's last chunk: the chunks so far, minus one (a row without chunks repeats the row before's).
    if (a[last_chunk_indices][i] != chunks_so_far - 1)
      return Violation(1, "last chunk", row, -1) << "last_chunk_indices[" << i << "] = " << a[last_chunk_indices][i]
                                                 << "; rows 0.." << i << " have " << chunks_so_far << " chunks";
    // 2. Position: the chunk that ends at the checkpoint, -1 exactly without one.
    const std::int32_t given = a[checkpoint_chunk_indices][i];
    if (o == 0 && given != -1)
      return Violation(2, "position", row, given) << "checkpoint_chunk_indices[" << i << "] = " << given
                                                  << "; row " << i << " has no checkpoint: -1";
    if (o > 0 && given != ends_at_checkpoint)
      return Violation(2, "position", row, given) << "checkpoint_chunk_indices[" << i << "] = " << given << "; chunk "
                                                  << ends_at_checkpoint << " ends at row " << i << "'s checkpoint, "
                                                  << o << " tokens into its query";
  }
  if (k != seq.size())
    return Violation(1, "tiling", seq[k], static_cast<std::int64_t>(k))
           << "chunk " << k << " names row " << seq[k] << " out of the rows' order";
  return std::nullopt;
}

Outcome as_outcome(Result<Chunks>&& result) {
  if (!result.ok()) return result.error();
  Chunks c = std::move(result).value();
  Arrays arrays;
  arrays.push_back(std::move(c.cu_chunk_seqlen));
  arrays.push_back(std::move(c.seq_idx));
  arrays.push_back(std::move(c.last_chunk_indices));
  arrays.push_back(std::move(c.checkpoint_chunk_indices));
  return arrays;
}

std::vector<std::int64_t> entries_of(const checkpointed_chunks::Sizes& n) {
  return {n.chunks.cu_chunk_seqlen, n.chunks.seq_idx, n.chunks.last_chunk_indices, n.checkpoints};
}

template <typename Int>
Result<std::vector<Int32Array>> written_into(const checkpointed_chunks::BasicView<Int>& view,
                                             std::span<const std::int64_t> sizes, std::int64_t fill) {
  std::vector<Int32Array> b;
  for (const auto size : sizes) b.emplace_back(static_cast<std::size_t>(size), static_cast<std::int32_t>(fill));
  const auto written = checkpointed_chunks::chunks_into(view, {b[0], b[1], b[2], b[3]});
  if (!written.ok()) return written.error();
  return b;
}

// Buffers of the exact sizes filled with -7, so an entry left unwritten shows.
template <typename Int>
Outcome into_buffers(const checkpointed_chunks::BasicView<Int>& view) {
  const auto sizes = checkpointed_chunks::output_sizes(view);
  if (!sizes.ok()) return sizes.error();
  auto written = written_into(view, entries_of(sizes.value()), -7);
  if (!written.ok()) return written.error();
  return Arrays(std::move(written).value());
}

// The engine's int32 arrays (its list of offsets converted as its tensors are).
template <typename Compute32>
Outcome through_int32(const Workload& w, Compute32&& compute) {
  if (!fits_int32(w)) return *checkpointed_chunks::validate(checkpointed_view(w));
  const std::vector<std::int32_t> c(w.num_computed_tokens.begin(), w.num_computed_tokens.end());
  const std::vector<std::int32_t> q(w.query_start_loc.begin(), w.query_start_loc.end());
  const std::vector<std::int32_t> o(w.second_per_row.begin(), w.second_per_row.end());
  return compute(checkpointed_chunks::View32{w.chunk_size, c, q, o});
}

// Fuzz bytes: byte 0 (the target's), a row count m, m offsets of 4 bytes
// (little-endian; row i's is taken modulo its new tokens, so 0 for a row
// without them), then Mamba's encoding of the rest (its own byte 0 first).
constexpr std::size_t kOffsetBytes = 4;

Workload decode_chunks(std::span<const std::uint8_t> bytes) {
  const std::size_t m = bytes.size() > 1 ? bytes[1] : 0;
  const std::size_t header = std::min(bytes.size(), 2 + m * kOffsetBytes);
  Workload w = decode_valid_workload(bytes.subspan(header));
  w.second_per_row.assign(w.rows(), 0);
  for (std::size_t i = 0; i < w.rows() && 2 + (i + 1) * kOffsetBytes <= header; ++i) {
    std::uint64_t v = 0;
    for (std::size_t b = 0; b < kOffsetBytes; ++b) v |= std::uint64_t{bytes[2 + i * kOffsetBytes + b]} << (8 * b);
    const std::int64_t n = new_tokens(w, i);
    w.second_per_row[i] = n > 0 ? static_cast<std::int64_t>(v % static_cast<std::uint64_t>(n)) : 0;
  }
  return w;
}

std::optional<std::vector<std::uint8_t>> encode_chunks(const Workload& w) {
  Workload mamba = w;
  mamba.second_per_row.clear();
  auto rest = encode_valid_workload(mamba);
  if (!rest || w.rows() > 255 || w.second_per_row.size() != w.rows()) return std::nullopt;
  std::vector<std::uint8_t> bytes{0, static_cast<std::uint8_t>(w.rows())};
  for (const std::int64_t o : w.second_per_row) {
    for (std::size_t b = 0; b < kOffsetBytes; ++b) bytes.push_back(static_cast<std::uint8_t>(static_cast<std::uint64_t>(o) >> (8 * b)));
  }
  bytes.insert(bytes.end(), rest->begin(), rest->end());
  if (decode_chunks(bytes) != w) return std::nullopt;
  return bytes;
}

class CheckpointedChunksSpec final : public Spec {
 public:
  std::string_view name() const override { return "mamba.checkpointed_chunks"; }
  std::string_view summary() const override {
    return "vLLM #57329's _compute_chunk_metadata(..., checkpoint_offsets_p): Mamba's chunks also cut at each row's "
           "prefill checkpoint, and the chunk ending there (specs/mamba_checkpointed_chunks)";
  }
  std::span<const Input> inputs() const override { return kInputs; }
  std::string_view unit() const override { return "row"; }
  std::span<const OutputArray> outputs() const override { return kOutputs; }
  std::optional<Error> validate(const Workload& w, const Limits& limits) const override {
    return checkpointed_chunks::validate(checkpointed_view(w), limits);
  }
  std::optional<std::int64_t> chunks(const Workload& w) const override {
    const auto sizes = checkpointed_chunks::output_sizes(checkpointed_view(w));
    if (!sizes.ok()) return std::nullopt;
    return sizes.value().chunks.num_chunks();
  }
  std::optional<std::vector<std::int64_t>> output_entries(const Workload& w) const override {
    const auto sizes = checkpointed_chunks::output_sizes(checkpointed_view(w));
    if (!sizes.ok()) return std::nullopt;
    return entries_of(sizes.value());
  }
  Outcome reference(const Workload& w) const override { return as_outcome(checkpointed_chunks::reference(checkpointed_view(w))); }
  std::optional<kernel_view::Fault> kernels_view(const Workload& w, const Arrays& arrays, bool with_cache) const override {
    if (auto missing = too_few_outputs(*this, arrays, 4)) return missing;
    kernel_view::Scan scanned;
    if (auto fault = mamba2_states(w, true, arrays, 0, 1, 2, with_cache ? w.chunk_size : 0, &scanned)) return fault;
    return kernel_view::checkpoints(batch_of(w, true), w.second_per_row, scanned, arrays[3]);
  }
  std::string_view kernels_view_covers() const override {
    return "kernel-adequate, cache-adequate for every block size that is a multiple of chunk_size, and each row's "
           "checkpoint chunk holds the state after its computed tokens and its checkpoint offset";
  }
  std::optional<InvariantViolation> check_invariants(const Workload& w, const Arrays& arrays) const override {
    return chunk_invariants(w, arrays);
  }
  Result<std::vector<std::vector<std::int64_t>>> write_into(const Workload& w, std::span<const std::int64_t> sizes,
                                                            std::int64_t fill) const override {
    auto written = written_into(checkpointed_view(w), sizes, fill);
    if (!written.ok()) return written.error();
    std::vector<std::vector<std::int64_t>> whole;
    for (const auto& buffer : written.value()) whole.emplace_back(buffer.begin(), buffer.end());
    return whole;
  }
  BufferRest rest_of_buffer(std::size_t) const override { return BufferRest::kept; }
  std::string_view fuzz_target() const override { return "checkpointed_chunks_differential"; }
  Workload decode_fuzz_input(std::span<const std::uint8_t> bytes) const override { return decode_chunks(bytes); }
  std::optional<std::vector<std::uint8_t>> encode_fuzz_input(const Workload& w) const override { return encode_chunks(w); }
  Workload warm_up_workload() const override { return Workload{1, {0}, {0, 0}, Dtype::int32, 0, {0}}; }
  const std::vector<Implementation>& builtins() const override {
    static const std::vector<Implementation> all = {
        in_process("reference", "the contract's definition: each row's cut points gathered and sorted, step by step",
                   *this, [this](const Workload& w) { return reference(w); }),
        in_process("fast", "production implementation, each row as Mamba's one or two rows, returning, int64 input",
                   *this, [](const Workload& w) { return as_outcome(checkpointed_chunks::chunks(checkpointed_view(w))); }),
        in_process("fast-int32", "production implementation, returning, engine int32 input", *this,
                   [](const Workload& w) {
                     return through_int32(w, [](const checkpointed_chunks::View32& v) {
                       return as_outcome(checkpointed_chunks::chunks(v));
                     });
                   }),
        in_process("fast-into", "production implementation, caller buffers, int64 input", *this,
                   [](const Workload& w) { return into_buffers(checkpointed_view(w)); }),
        in_process("fast-into-int32", "production implementation, caller buffers, engine int32 input", *this,
                   [](const Workload& w) {
                     return through_int32(w, [](const checkpointed_chunks::View32& v) { return into_buffers(v); });
                   }),
    };
    return all;
  }

 private:
  // vLLM #57329: _compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens_p_cpu,
  // query_start_loc_p_cpu, checkpoint_offsets_p), the offsets a list of ints.
  static constexpr Input kInputs[] = {{"chunk_size", Slot::chunk_size},
                                      {"num_prefills", Slot::rows},
                                      {"num_computed_tokens", Slot::per_row},
                                      {"query_start_loc", Slot::offsets},
                                      {"checkpoint_offsets", Slot::second_per_row, false, true}};
  static constexpr OutputArray kOutputs[] = {
      {"cu_chunk_seqlen"}, {"seq_idx"}, {"last_chunk_indices"}, {"checkpoint_chunk_indices"}};
};

}  // namespace

const Spec& checkpointed_chunks_spec() {
  static const CheckpointedChunksSpec spec;
  return spec;
}

std::vector<const Spec*> specs_of_mamba_checkpointed_chunks() { return {&checkpointed_chunks_spec()}; }

SplitRows split_at_checkpoints(const Workload& w, const RowSplit& how) {
  SplitRows split;
  split.mamba = Workload{w.chunk_size, {}, {w.query_start_loc[0]}, Dtype::int32};
  for (std::size_t i = 0; i < w.rows(); ++i) {
    const std::int64_t c = w.num_computed_tokens[i];
    const std::int64_t n = new_tokens(w, i);
    const std::int64_t o = offset_of(w, i) > 0 ? how.cut(c, offset_of(w, i)) : 0;
    split.first_row.push_back(split.mamba.rows());
    auto& q = split.mamba.query_start_loc;
    if (o > 0 && o <= n) {
      split.mamba.num_computed_tokens.push_back(c);
      q.push_back(q.back() + o);
      split.mamba.num_computed_tokens.push_back(how.after(c, o));
      q.push_back(q.back() + n - o);
    } else {
      split.mamba.num_computed_tokens.push_back(c);
      q.push_back(q.back() + n);
    }
  }
  return split;
}

Arrays merged_outputs(const Workload& w, const SplitRows& split, const Arrays& mamba) {
  Arrays out(4);
  out[cu_chunk_seqlen] = mamba[0];
  std::vector<std::int32_t> row_of_split(split.mamba.rows(), 0);
  for (std::size_t i = 0; i < w.rows(); ++i) {
    const std::size_t end = i + 1 < w.rows() ? split.first_row[i + 1] : split.mamba.rows();
    for (std::size_t r = split.first_row[i]; r < end; ++r) row_of_split[r] = static_cast<std::int32_t>(i);
    out[last_chunk_indices].push_back(mamba[2][end - 1]);
    out[checkpoint_chunk_indices].push_back(end - split.first_row[i] == 2 ? mamba[2][split.first_row[i]] : -1);
  }
  for (const auto row : mamba[1]) out[seq_idx].push_back(row_of_split[static_cast<std::size_t>(row)]);
  return out;
}

}  // namespace chunkmeta::harness
