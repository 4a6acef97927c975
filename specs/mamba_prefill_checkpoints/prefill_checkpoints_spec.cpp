// specs/mamba_prefill_checkpoints as a Spec: per row seq_lens and query_lens
// (passed as lists, as vLLM's builder has them), the two block sizes, an
// optional alignment and a flag (the seam's optional scalar and flag), two
// outputs, invariant 5 checked from the workload alone (the plan's conditions
// and the lockstep with the chunker), the library's entry points as
// built-ins, and a fuzz codec: M, the alignment and the flag from three
// bytes, the rows from Mamba's decoder (s = c + n, n; H = its chunk size).
#include "prefill_checkpoints_spec.hpp"

#include <algorithm>

#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/violation.hpp"
#include "mamba_checkpointed_chunks/checkpointed_chunks_spec.hpp"

namespace chunkmeta::harness {
namespace {

using prefill_checkpoints::Checkpoints;

enum Output : std::size_t { checkpoint_offsets, checkpoint_cols };

std::int64_t row_of(std::size_t i) { return static_cast<std::int64_t>(i); }

// Invariant 5, for a valid workload: a row's checkpoint lies on the hash grid strictly inside its query, at
// the last boundary the rule allows, a multiple of the alignment, in a column past the initial state's
// block; none without an alignment; and the plan fed to the chunker ends a chunk exactly there.
std::optional<InvariantViolation> plan_invariants(const Workload& w, const Arrays& a) {
  const std::size_t B = w.rows();
  if (a.size() != 2) return Violation(5, "shapes", -1, -1) << a.size() << " arrays; the outputs are two";
  for (const std::size_t out : {std::size_t{checkpoint_offsets}, std::size_t{checkpoint_cols}}) {
    if (a[out].size() != B)
      return Violation(5, "shapes", -1, -1) << (out == checkpoint_offsets ? "checkpoint_offsets" : "checkpoint_cols")
                                            << " has " << a[out].size() << " entries; the batch has " << B << " rows";
  }
  const std::int64_t H = w.chunk_size;
  const std::int64_t M = w.block_size;
  for (std::size_t i = 0; i < B; ++i) {
    const auto row = static_cast<std::int64_t>(i);
    const std::int64_t s = w.num_computed_tokens[i];
    const std::int64_t n = w.second_per_row[i];
    const std::int64_t a_i = s - n;
    const std::int64_t o = a[checkpoint_offsets][i];
    const std::int64_t col = a[checkpoint_cols][i];
    if ((o == 0) != (col == -1))
      return Violation(5, "no checkpoint", row, -1) << "row " << i << " has offset " << o << " and column " << col
                                                    << ": a row without a checkpoint has offset 0 and column -1, one with "
                                                       "a checkpoint neither";
    if (o == 0) continue;
    if (!w.optional_scalar)
      return Violation(5, "no alignment", row, -1) << "row " << i << " plans offset " << o
                                                   << " though checkpoint_alignment is None (the backend cannot export)";
    if (o < 0 || o >= n)
      return Violation(5, "inside the query", row, -1) << "row " << i << " plans offset " << o
                                                       << ", not strictly inside its query of " << n << " new tokens";
    const std::int64_t p = a_i + o;
    const std::int64_t last = checkpoint_position(s, H, w.flag);
    if (p % H != 0 || p != last)
      return Violation(5, "position", row, -1) << "row " << i << " plans its checkpoint at token " << p
                                               << "; the last hash-block boundary the rule allows (H = " << H
                                               << (w.flag ? ", the EAGLE block dropped" : "") << ") is " << last;
    if (a_i % H != 0 || a_i + H > p)
      return Violation(5, "hash grid", row, -1) << "row " << i << " plans a checkpoint at " << p << " from a query starting at "
                                                << a_i << ": the query must start on the hash grid and a whole hash block before it";
    if (o % *w.optional_scalar != 0)
      return Violation(5, "alignment", row, -1) << "row " << i << " plans offset " << o << ", not a multiple of the alignment "
                                                << *w.optional_scalar;
    const std::int64_t initial_block = floor_div(a_i - 1, M);
    if (col != ceil_div(s, M) - 2 || col < 0 || col <= initial_block)
      return Violation(5, "column", row, -1) << "row " << i << " plans column " << col << "; its sequence of " << s
                                             << " tokens ends in block " << ceil_div(s, M) - 1 << " (M = " << M
                                             << "), the checkpoint's is the one before, past the initial state's block "
                                             << initial_block;
  }
  // Lockstep: each row's plan is valid input to the chunker, whose checkpoint chunk then ends at a_i + o_i
  // (row by row: the engine's batch of int32 offsets holds them all, a drawn batch of rows near 2^31 would not).
  for (std::size_t i = 0; i < B; ++i) {
    const std::int64_t o = a[checkpoint_offsets][i];
    if (o == 0) continue;
    const std::int64_t n = w.second_per_row[i];
    // The chunk size H (the checkpoint then on the chunker's grid) for rows of at most 64 hash blocks, else
    // 2^31-1 (the row in its pieces at the checkpoint): this runs on every case, 140,000 rows in a huge batch.
    const std::int64_t C = n / H <= 64 ? H : kMaxValue;
    const Workload one_row = chunker_workload_of(w, a[checkpoint_offsets], C, i, 1);
    const auto chunks = checkpointed_chunks::reference(checkpointed_view(one_row));
    if (!chunks.ok())
      return Violation(5, "lockstep", row_of(i), -1) << "the chunker refuses row " << i << "'s plan: " << chunks.error();
    const std::int32_t k = chunks.value().checkpoint_chunk_indices[0];
    const std::int64_t ends = k < 0 ? -1 : chunks.value().cu_chunk_seqlen[static_cast<std::size_t>(k) + 1];
    if (ends != o)
      return Violation(5, "lockstep", row_of(i), k) << "fed to the chunker (C = " << C << "), row " << i
                                                    << "'s checkpoint chunk ends " << ends << " tokens into its query, not at the planned " << o;
  }
  return std::nullopt;
}

Outcome as_outcome(Result<Checkpoints>&& result) {
  if (!result.ok()) return result.error();
  Checkpoints c = std::move(result).value();
  Arrays arrays;
  arrays.push_back(std::move(c.checkpoint_offsets));
  arrays.emplace_back(c.checkpoint_cols.begin(), c.checkpoint_cols.end());  // at most ceil((2^31-1) / 1) - 2: int32
  return arrays;
}

Result<std::vector<std::vector<std::int64_t>>> written_into(const Workload& w, std::span<const std::int64_t> sizes,
                                                            std::int64_t fill) {
  Int32Array offsets(static_cast<std::size_t>(sizes[0]), static_cast<std::int32_t>(fill));
  std::vector<std::int64_t> cols(static_cast<std::size_t>(sizes[1]), fill);
  const auto written = prefill_checkpoints::checkpoints_into(planner_view(w), {offsets, cols});
  if (!written.ok()) return written.error();
  return std::vector<std::vector<std::int64_t>>{{offsets.begin(), offsets.end()}, std::move(cols)};
}

// Buffers of the exact sizes filled with -7, so an entry left unwritten shows.
Outcome into_buffers(const Workload& w) {
  const auto rows = static_cast<std::int64_t>(w.rows());
  if (auto error = prefill_checkpoints::validate(planner_view(w))) return *error;
  auto written = written_into(w, std::vector<std::int64_t>{rows, rows}, -7);
  if (!written.ok()) return written.error();
  Arrays arrays;
  for (const auto& buffer : written.value()) arrays.emplace_back(buffer.begin(), buffer.end());
  return arrays;
}

// Fuzz bytes: byte 0 (the target's), then M, the alignment and the flag (a byte each), then
// Mamba's encoding of the rows (its own byte 0 first): H its chunk size, s = c + n, n its new tokens.
constexpr std::size_t kHeader = 4;

std::int64_t block_size_of(std::uint8_t b, std::int64_t H) {
  const std::int64_t k = 1 + (b & 0x3f) % 8;
  switch (b >> 6) {
    case 0: return H;                            // H = M
    case 1: return std::min(H * k, kMaxValue);   // M a multiple of H
    case 2: return std::max<std::int64_t>(H / k, 1);  // M below H
    default: return 1 + (b & 0x3f);              // small, unrelated
  }
}

std::optional<std::int64_t> alignment_of(std::uint8_t b, std::int64_t H) {
  switch (b >> 6) {
    case 0: return std::nullopt;  // the backend cannot export
    case 1: return (b & 1) == 0 ? 1 : 16;
    case 2: return std::min(H * (1 + (b & 0x3f) % 4), kMaxValue);
    default: return 1 + (b & 0x3f);  // 3, 5, 7, ... reject most positions
  }
}

Workload decode_plan(std::span<const std::uint8_t> bytes) {
  const auto at = [&](std::size_t i) -> std::uint8_t { return i < bytes.size() ? bytes[i] : 0; };
  const Workload mamba = decode_valid_workload(bytes.subspan(std::min(bytes.size(), kHeader)));
  std::vector<std::int64_t> seq_lens;
  std::vector<std::int64_t> query_lens;
  for (std::size_t i = 0; i < mamba.rows(); ++i) {
    const std::int64_t n = mamba.query_start_loc[i + 1] - mamba.query_start_loc[i];
    const std::int64_t s = std::min(mamba.num_computed_tokens[i] + n, kMaxValue);
    seq_lens.push_back(s);
    query_lens.push_back(std::min(n, s));
  }
  const std::int64_t H = mamba.chunk_size;
  return planner_workload(std::move(seq_lens), std::move(query_lens), H, block_size_of(at(1), H), alignment_of(at(2), H),
                          (at(3) & 1) != 0);
}

std::optional<std::vector<std::uint8_t>> encode_plan(const Workload& w) {
  if (w.second_per_row.size() != w.rows()) return std::nullopt;
  Workload mamba{w.chunk_size, {}, {0}, Dtype::int32};
  for (std::size_t i = 0; i < w.rows(); ++i) {
    mamba.num_computed_tokens.push_back(w.num_computed_tokens[i] - w.second_per_row[i]);
    mamba.query_start_loc.push_back(mamba.query_start_loc.back() + w.second_per_row[i]);
  }
  auto rest = encode_valid_workload(mamba);
  if (!rest) return std::nullopt;
  // The header bytes that give this M and alignment, if any do (the codec reaches the engines' usual ones).
  std::optional<std::uint8_t> m_byte;
  std::optional<std::uint8_t> a_byte;
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<std::uint8_t>(b);
    if (!m_byte && block_size_of(byte, w.chunk_size) == w.block_size) m_byte = byte;
    if (!a_byte && alignment_of(byte, w.chunk_size) == w.optional_scalar) a_byte = byte;
  }
  if (!m_byte || !a_byte) return std::nullopt;
  std::vector<std::uint8_t> bytes{0, *m_byte, *a_byte, static_cast<std::uint8_t>(w.flag ? 1 : 0)};
  bytes.insert(bytes.end(), rest->begin(), rest->end());
  if (decode_plan(bytes) != w) return std::nullopt;
  return bytes;
}

class PrefillCheckpointsSpec final : public Spec {
 public:
  std::string_view name() const override { return "mamba.prefill_checkpoints"; }
  std::string_view summary() const override {
    return "vLLM's compute_mamba_prefill_checkpoints: where each prefill row may export its internal checkpoint, and "
           "into which block-table column (specs/mamba_prefill_checkpoints)";
  }
  std::span<const Input> inputs() const override { return kInputs; }
  std::string_view unit() const override { return "row"; }
  std::span<const OutputArray> outputs() const override { return kOutputs; }
  std::optional<Error> validate(const Workload& w, const Limits& limits) const override {
    return prefill_checkpoints::validate(planner_view(w), limits);  // the cap bounds the rows: B entries per output
  }
  std::optional<std::int64_t> chunks(const Workload& w) const override {
    if (validate(w, {})) return std::nullopt;
    return static_cast<std::int64_t>(w.rows());
  }
  std::optional<std::vector<std::int64_t>> output_entries(const Workload& w) const override {
    if (validate(w, {})) return std::nullopt;
    const auto rows = static_cast<std::int64_t>(w.rows());
    return std::vector<std::int64_t>{rows, rows};
  }
  Outcome reference(const Workload& w) const override { return as_outcome(prefill_checkpoints::reference(planner_view(w))); }
  std::optional<InvariantViolation> check_invariants(const Workload& w, const Arrays& arrays) const override {
    return plan_invariants(w, arrays);
  }
  Result<std::vector<std::vector<std::int64_t>>> write_into(const Workload& w, std::span<const std::int64_t> sizes,
                                                            std::int64_t fill) const override {
    return written_into(w, sizes, fill);
  }
  BufferRest rest_of_buffer(std::size_t) const override { return BufferRest::kept; }
  std::string_view fuzz_target() const override { return "prefill_checkpoints_differential"; }
  Workload decode_fuzz_input(std::span<const std::uint8_t> bytes) const override { return decode_plan(bytes); }
  std::optional<std::vector<std::uint8_t>> encode_fuzz_input(const Workload& w) const override { return encode_plan(w); }
  Workload warm_up_workload() const override { return planner_workload({0}, {0}, 1, 1, std::nullopt, false); }
  const std::vector<Implementation>& builtins() const override {
    static const std::vector<Implementation> all = {
        in_process("reference", "the contract's rule, condition by condition, in 64 bits", *this,
                   [this](const Workload& w) { return reference(w); }),
        in_process("fast", "production implementation, one pass, returning", *this,
                   [](const Workload& w) { return as_outcome(prefill_checkpoints::checkpoints(planner_view(w))); }),
        in_process("fast-into", "production implementation, caller buffers", *this,
                   [](const Workload& w) { return into_buffers(w); }),
    };
    return all;
  }

 private:
  // vLLM: compute_mamba_prefill_checkpoints(seq_lens, query_lens, hash_block_size, mamba_block_size,
  // checkpoint_alignment, drop_eagle_block), the lengths lists of ints, the alignment None or an int.
  static constexpr Input kInputs[] = {{"seq_lens", Slot::per_row, false, true},
                                      {"query_lens", Slot::second_per_row, false, true},
                                      {"hash_block_size", Slot::chunk_size},
                                      {"mamba_block_size", Slot::block_size},
                                      {"checkpoint_alignment", Slot::optional_scalar},
                                      {"drop_eagle_block", Slot::flag}};
  static constexpr OutputArray kOutputs[] = {{"checkpoint_offsets", 1, OutputDtype::int32},
                                             {"checkpoint_cols", 1, OutputDtype::int64}};
};

}  // namespace

const Spec& prefill_checkpoints_spec() {
  static const PrefillCheckpointsSpec spec;
  return spec;
}

std::vector<const Spec*> specs_of_mamba_prefill_checkpoints() { return {&prefill_checkpoints_spec()}; }

Workload planner_workload(std::vector<std::int64_t> seq_lens, std::vector<std::int64_t> query_lens,
                          std::int64_t hash_block_size, std::int64_t mamba_block_size,
                          std::optional<std::int64_t> checkpoint_alignment, bool drop_eagle_block) {
  Workload w;
  w.chunk_size = hash_block_size;
  w.block_size = mamba_block_size;
  w.query_start_loc.assign(seq_lens.size() + 1, 0);
  w.num_computed_tokens = std::move(seq_lens);
  w.second_per_row = std::move(query_lens);
  w.optional_scalar = checkpoint_alignment;
  w.flag = drop_eagle_block;
  return w;
}

Workload chunker_workload_of(const Workload& plan, std::span<const std::int32_t> offsets, std::int64_t chunk_size,
                             std::size_t first, std::size_t count) {
  Workload chunker{chunk_size, {}, {0}, Dtype::int32};
  for (std::size_t i = first; i < plan.rows() && i - first < count; ++i) {
    const std::int64_t n = plan.second_per_row[i];
    chunker.num_computed_tokens.push_back(plan.num_computed_tokens[i] - n);
    chunker.query_start_loc.push_back(chunker.query_start_loc.back() + n);
    chunker.second_per_row.push_back(i < offsets.size() ? offsets[i] : 0);
  }
  return chunker;
}

}  // namespace chunkmeta::harness
