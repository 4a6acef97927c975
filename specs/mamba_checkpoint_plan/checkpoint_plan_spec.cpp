// specs/mamba_checkpoint_plan as a Spec: its inputs (Mamba's and the block
// size) and six outputs described, its invariants 1-4 checked independently
// of the reference port (against Mamba's chunk metadata, the relation the
// plan is defined by), the library's entry points as built-ins, and its fuzz
// codec (Mamba's bytes and one byte for the block size in chunks).
#include "checkpoint_plan_spec.hpp"

#include <algorithm>

#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/harness/states.hpp"
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/violation.hpp"

namespace chunkmeta::harness {
namespace {

using checkpoint::Plan;

enum Output : std::size_t { last_computed, first_scheduled, last_scheduled, write_row, write_block, write_chunk };

// Part 1's chunks of the plan's batch, which both judges read: the plan is defined by them (its invariants),
// and its writes store the scan's states over them (its kernels' view). chunkmeta's own fast implementation,
// proved equal to the reference by the mamba spec: computed once for both verdicts (Spec::verdict_on).
Result<ChunkMetadata> part1_chunks(const Workload& w) { return chunkmeta::fast(view_of(w)); }

// Invariants 1-4 of the contract on the six arrays, for a valid workload, against Part 1's chunks.
std::optional<InvariantViolation> plan_invariants(const Workload& w, const Arrays& arrays,
                                                  const Result<ChunkMetadata>& metadata) {
  const auto rows = static_cast<std::int64_t>(w.rows());
  if (arrays.size() != 6) return Violation(1, "position", -1, -1) << arrays.size() << " arrays; the outputs are six";
  for (std::size_t a = last_computed; a <= last_scheduled; ++a) {
    if (static_cast<std::int64_t>(arrays[a].size()) != rows)
      return Violation(2, "count", -1, -1) << "a per-row output has " << arrays[a].size() << " entries; the batch has "
                                           << rows << " rows";
  }
  const auto writes = arrays[write_row].size();
  if (arrays[write_block].size() != writes || arrays[write_chunk].size() != writes)
    return Violation(2, "count", -1, -1) << "write_row, write_block and write_chunk have " << writes << ", "
                                         << arrays[write_block].size() << " and " << arrays[write_chunk].size()
                                         << " entries; they are parallel";
  if (!metadata.ok()) return Violation(1, "position", -1, -1) << "Mamba's metadata refuses the workload";
  const auto& cu = metadata.value().cu_chunk_seqlen;
  const auto& seq = metadata.value().seq_idx;
  const auto& last = metadata.value().last_chunk_indices;
  const std::int64_t M = w.block_size;
  const auto& q = w.query_start_loc;
  std::size_t e = 0;  // the next write entry
  for (std::int64_t i = 0; i < rows; ++i) {
    const auto r = static_cast<std::size_t>(i);
    const std::int64_t c = w.num_computed_tokens[r];
    const std::int64_t n = q[r + 1] - q[r];
    const std::int64_t s = c + n;
    // 4. Chain: the block the step that computed the first c tokens wrote its final state to.
    const std::int64_t chained = c == 0 ? 0 : (c - 1) / M;
    if (arrays[last_computed][r] != chained)
      return Violation(4, "chain", i, -1) << "block_idx_last_computed_token[" << i << "] = " << arrays[last_computed][r]
                                          << "; the step that computed its " << c << " tokens wrote its final state "
                                          << "to block " << chained;
    if (arrays[first_scheduled][r] != c / M)
      return Violation(1, "position", i, -1) << "block_idx_first_scheduled_token[" << i << "] = "
                                             << arrays[first_scheduled][r] << "; token " << c << " is in block " << c / M;
    const std::int64_t final_block = s == 0 ? 0 : (s - 1) / M;
    if (arrays[last_scheduled][r] != final_block)
      return Violation(1, "position", i, -1) << "block_idx_last_scheduled_token[" << i << "] = "
                                             << arrays[last_scheduled][r] << "; the row's last token is in block "
                                             << final_block;
    // 2. Count: one entry per block boundary strictly inside (c, s), one final entry when n >= 1.
    const std::int64_t boundaries = n == 0 ? 0 : (s - 1) / M - c / M;
    const std::int64_t expected = n == 0 ? 0 : boundaries + 1;
    std::int64_t found = 0;
    while (e + static_cast<std::size_t>(found) < writes && arrays[write_row][e + static_cast<std::size_t>(found)] == i)
      ++found;
    if (found != expected)
      return Violation(2, "count", i, -1) << "row " << i << " (c = " << c << ", " << n << " new tokens) has " << found
                                          << " write entries in place; it crosses " << boundaries
                                          << " block boundaries" << (n == 0 ? " and has no new tokens" : " and writes once more");
    const std::int64_t start = q[r] - q[0];
    for (std::int64_t j = 0; j < found; ++j, ++e) {
      const std::int64_t b = arrays[write_block][e];
      const std::int64_t k = arrays[write_chunk][e];
      const bool final = j + 1 == found;
      // 3. Order: blocks ascending by one from the first scheduled block; the final one last.
      const std::int64_t block = c / M + j;
      if (b != (final ? final_block : block))
        return Violation(3, "order", i, k) << "write entry " << e << " of row " << i << " is block " << b
                                           << "; the row's entries are blocks " << c / M << ".." << final_block
                                           << " in order";
      // 1. Position: chunk k is the row's, and ends at (b + 1) M (interior) or s (final).
      if (k < 0 || k >= static_cast<std::int64_t>(seq.size()) || seq[static_cast<std::size_t>(k)] != i)
        return Violation(1, "position", i, k) << "write entry " << e << " saves chunk " << k
                                              << ", which is not one of row " << i << "'s chunks";
      const std::int64_t end = c + cu[static_cast<std::size_t>(k) + 1] - start;
      const std::int64_t wanted = final ? s : (b + 1) * M;
      if (end != wanted)
        return Violation(1, "position", i, k) << "write entry " << e << " saves chunk " << k << " into block " << b
                                              << ": that chunk ends at the row's token " << end << ", not " << wanted;
      if (final && k != last[r])
        return Violation(3, "order", i, k) << "the final write of row " << i << " saves chunk " << k
                                           << ", not the row's last chunk " << last[r];
    }
  }
  if (e != writes)
    return Violation(2, "count", arrays[write_row][e], -1) << "write entry " << e << " is of row "
                                                           << arrays[write_row][e] << ", out of row order";
  return std::nullopt;
}

// The engine's int32 arrays of a workload that fits them.
struct Int32Copy {
  std::vector<std::int32_t> computed;
  std::vector<std::int32_t> starts;
  checkpoint::View32 view(const Workload& w) const { return {w.chunk_size, w.block_size, computed, starts}; }
};

template <typename Compute32>
Outcome through_int32(const Workload& w, Compute32&& compute) {
  if (!fits_int32(w)) return *checkpoint::validate(checkpoint_view(w));
  const Int32Copy copy{{w.num_computed_tokens.begin(), w.num_computed_tokens.end()},
                       {w.query_start_loc.begin(), w.query_start_loc.end()}};
  return compute(copy.view(w));
}

Outcome as_outcome(Result<Plan>&& result) {
  if (!result.ok()) return result.error();
  return arrays_of(std::move(result).value());
}

// Buffers of the exact sizes filled with -7 (an entry left unwritten shows), written by plan_into.
template <typename View>
Outcome into_buffers(const View& view) {
  const auto sizes = checkpoint::output_sizes(view);
  if (!sizes.ok()) return sizes.error();
  const auto rows = static_cast<std::size_t>(sizes.value().rows);
  const auto writes = static_cast<std::size_t>(sizes.value().writes);
  Plan out{Int32Array(rows, -7), Int32Array(rows, -7), Int32Array(rows, -7),
           Int32Array(writes, -7), Int32Array(writes, -7), Int32Array(writes, -7)};
  const auto written = checkpoint::plan_into(view, {out.block_idx_last_computed_token, out.block_idx_first_scheduled_token,
                                                    out.block_idx_last_scheduled_token, out.write_row, out.write_block,
                                                    out.write_chunk});
  if (!written.ok()) return written.error();
  return arrays_of(std::move(out));
}

// The fuzz codec: Mamba's bytes, then one byte m (M = (m % 16 + 1) C, at most 2^31-1).
constexpr std::int64_t kMostBlockChunks = 16;

Workload decode_plan(std::span<const std::uint8_t> bytes) {
  const auto mamba_bytes = bytes.empty() ? bytes : bytes.first(bytes.size() - 1);
  Workload w = decode_valid_workload(mamba_bytes);
  const std::int64_t chunks = bytes.empty() ? 1 : bytes.back() % kMostBlockChunks + 1;
  w.block_size = std::min(chunks, kMaxValue / w.chunk_size) * w.chunk_size;
  return w;
}

std::optional<std::vector<std::uint8_t>> encode_plan(const Workload& w) {
  if (w.block_size % w.chunk_size != 0 || w.block_size / w.chunk_size > kMostBlockChunks) return std::nullopt;
  Workload mamba = w;
  mamba.block_size = 0;
  auto bytes = encode_valid_workload(mamba);
  if (!bytes) return std::nullopt;
  bytes->push_back(static_cast<std::uint8_t>(w.block_size / w.chunk_size - 1));
  if (decode_plan(*bytes) != w) return std::nullopt;  // a clamped block size does not round-trip
  return bytes;
}

class CheckpointPlanSpec final : public Spec {
 public:
  std::string_view name() const override { return "mamba.checkpoint_plan"; }
  std::string_view summary() const override {
    return "Mamba's prefix-cache checkpoint plan: the blocks each row reads and writes, and which chunk's state is "
           "saved into which block (specs/mamba_checkpoint_plan)";
  }
  std::span<const Input> inputs() const override { return kInputs; }
  std::string_view unit() const override { return "row"; }
  std::span<const OutputArray> outputs() const override { return kOutputs; }
  std::optional<Error> validate(const Workload& w, const Limits& limits) const override {
    return checkpoint::validate(checkpoint_view(w), limits);
  }
  std::optional<std::int64_t> chunks(const Workload& w) const override {
    if (checkpoint::validate(checkpoint_view(w))) return std::nullopt;
    return output_sizes(view_of(w)).value().num_chunks();
  }
  std::optional<std::vector<std::int64_t>> output_entries(const Workload& w) const override {
    const auto sizes = checkpoint::output_sizes(checkpoint_view(w));
    if (!sizes.ok()) return std::nullopt;
    const std::int64_t rows = sizes.value().rows;
    const std::int64_t writes = sizes.value().writes;
    return std::vector<std::int64_t>{rows, rows, rows, writes, writes, writes};
  }
  Outcome reference(const Workload& w) const override { return as_outcome(checkpoint::reference(checkpoint_view(w))); }
  std::optional<kernel_view::Fault> kernels_view(const Workload& w, const Arrays& arrays, bool /*with_cache*/) const override {
    return plan_states(w, arrays, part1_chunks(w));
  }
  OutputVerdict verdict_on(const Workload& w, const Arrays& arrays) const override {
    const auto chunks = part1_chunks(w);
    return {plan_invariants(w, arrays, chunks), plan_states(w, arrays, chunks)};
  }
  // The plan judged by what its blocks end up holding: the states the writes store are those at the ends
  // of Part 1's chunks of the same batch (the reference's: kernel-adequate, judged by spec mamba's own
  // properties, so read on demand rather than scanned again on every case).
  std::optional<kernel_view::Fault> plan_states(const Workload& w, const Arrays& arrays,
                                                const Result<ChunkMetadata>& chunks) const {
    if (auto missing = too_few_outputs(*this, arrays, 6)) return missing;
    if (!chunks.ok()) return std::nullopt;
    const ChunkMetadata& m = chunks.value();
    const kernel_view::Batch batch = batch_of(w, true);
    const kernel_view::ChunkEnds ends(batch, {m.cu_chunk_seqlen, m.seq_idx, m.last_chunk_indices});
    return kernel_view::cache_writes(batch, w.block_size, ends, {arrays[3], arrays[4], arrays[5]}, arrays[0]);
  }
  std::string_view kernels_view_covers() const override {
    return "cache-adequate: after the writes, in order, every block a row with tokens reaches holds the state after "
           "the tokens it ends at (its last, the row's final state), no other block is written, and each row reads its "
           "initial state from the block that holds the state after its computed tokens";
  }
  std::optional<InvariantViolation> check_invariants(const Workload& w, const Arrays& arrays) const override {
    return plan_invariants(w, arrays, part1_chunks(w));
  }
  Result<std::vector<std::vector<std::int64_t>>> write_into(const Workload& w, std::span<const std::int64_t> sizes,
                                                            std::int64_t fill) const override {
    std::vector<std::int32_t> buffers[6];
    for (std::size_t b = 0; b < 6; ++b) buffers[b].assign(static_cast<std::size_t>(sizes[b]), static_cast<std::int32_t>(fill));
    const auto written = checkpoint::plan_into(checkpoint_view(w), {buffers[0], buffers[1], buffers[2], buffers[3],
                                                                    buffers[4], buffers[5]});
    if (!written.ok()) return written.error();
    std::vector<std::vector<std::int64_t>> whole;
    for (const auto& buffer : buffers) whole.emplace_back(buffer.begin(), buffer.end());
    return whole;
  }
  BufferRest rest_of_buffer(std::size_t) const override { return BufferRest::kept; }
  std::string_view fuzz_target() const override { return "checkpoint_plan_differential"; }
  Workload decode_fuzz_input(std::span<const std::uint8_t> bytes) const override { return decode_plan(bytes); }
  std::optional<std::vector<std::uint8_t>> encode_fuzz_input(const Workload& w) const override { return encode_plan(w); }
  Workload warm_up_workload() const override { return Workload{1, {0}, {0, 0}, Dtype::int32, 1}; }
  const std::vector<Implementation>& builtins() const override {
    static const std::vector<Implementation> all = {
        in_process("reference", "the contract's procedure, ported step by step", *this,
                   [this](const Workload& w) { return reference(w); }),
        in_process("fast", "production implementation, returning, int64 input", *this,
                   [](const Workload& w) { return as_outcome(checkpoint::plan(checkpoint_view(w))); }),
        in_process("fast-int32", "production implementation, returning, engine int32 input", *this,
                   [](const Workload& w) {
                     return through_int32(w, [](const checkpoint::View32& v) { return as_outcome(checkpoint::plan(v)); });
                   }),
        in_process("fast-into", "production implementation, caller buffers, int64 input", *this,
                   [](const Workload& w) { return into_buffers(checkpoint_view(w)); }),
        in_process("fast-into-int32", "production implementation, caller buffers, engine int32 input", *this,
                   [](const Workload& w) {
                     return through_int32(w, [](const checkpoint::View32& v) { return into_buffers(v); });
                   }),
    };
    return all;
  }

 private:
  // chunkmeta.mamba_checkpoint_plan(chunk_size, block_size, num_computed_tokens_p, query_start_loc_p).
  static constexpr Input kInputs[] = {{"chunk_size", Slot::chunk_size},
                                      {"block_size", Slot::block_size},
                                      {"num_computed_tokens", Slot::per_row},
                                      {"query_start_loc", Slot::offsets}};
  static constexpr OutputArray kOutputs[] = {{"block_idx_last_computed_token"}, {"block_idx_first_scheduled_token"},
                                             {"block_idx_last_scheduled_token"}, {"write_row"},
                                             {"write_block"},                    {"write_chunk"}};
};

}  // namespace

const Spec& checkpoint_plan_spec() {
  static const CheckpointPlanSpec spec;
  return spec;
}

std::vector<const Spec*> specs_of_mamba_checkpoint_plan() { return {&checkpoint_plan_spec()}; }

Arrays arrays_of(checkpoint::Plan&& plan) {
  Arrays arrays;
  arrays.reserve(6);
  arrays.push_back(std::move(plan.block_idx_last_computed_token));
  arrays.push_back(std::move(plan.block_idx_first_scheduled_token));
  arrays.push_back(std::move(plan.block_idx_last_scheduled_token));
  arrays.push_back(std::move(plan.write_row));
  arrays.push_back(std::move(plan.write_block));
  arrays.push_back(std::move(plan.write_chunk));
  return arrays;
}

}  // namespace chunkmeta::harness
