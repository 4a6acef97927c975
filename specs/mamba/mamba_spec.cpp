// specs/mamba as a Spec: Mamba's chunk metadata, its seven invariants and the
// library's entry points as built-in implementations.
#include <sstream>

#include "mamba_spec.hpp"

#include "chunkmeta/harness/states.hpp"
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/violation.hpp"

namespace chunkmeta::harness {
namespace {

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b; }  // a >= 0, b > 0

std::optional<InvariantViolation> mamba_invariants(const Workload& workload, const Arrays& arrays) {
  const auto& computed = workload.num_computed_tokens;
  const auto& q = workload.query_start_loc;
  const std::int64_t chunk_size = workload.chunk_size;
  const auto rows = static_cast<std::int64_t>(computed.size());
  if (arrays.size() != 3) return Violation(1, "shapes", -1, -1) << arrays.size() << " arrays; the outputs are three";
  const auto& cu = arrays[0];
  const auto& seq = arrays[1];
  const auto& last = arrays[2];
  const auto start_of = [&](std::int64_t row) { return q[static_cast<std::size_t>(row)] - q[0]; };
  const auto end_of = [&](std::int64_t row) { return q[static_cast<std::size_t>(row) + 1] - q[0]; };

  // 1. Shapes.
  if (cu.empty()) return Violation(1, "shapes", -1, -1) << "cu_chunk_seqlen is empty; it must have K+1 entries";
  const auto chunks = static_cast<std::int64_t>(cu.size()) - 1;
  if (static_cast<std::int64_t>(seq.size()) != chunks)
    return Violation(1, "shapes", -1, -1) << "seq_idx has " << seq.size() << " entries, cu_chunk_seqlen has "
                                          << cu.size() << " (K+1 = " << cu.size() << " needs K = " << chunks << ")";
  if (static_cast<std::int64_t>(last.size()) != rows)
    return Violation(1, "shapes", -1, -1) << "last_chunk_indices has " << last.size() << " entries; the batch has "
                                          << rows << " rows";
  if (cu[0] != 0) return Violation(1, "shapes", -1, 0) << "cu_chunk_seqlen[0] is " << cu[0] << ", not 0";
  const std::int64_t total = q.back() - q.front();
  if (cu.back() != total)
    return Violation(1, "shapes", -1, chunks) << "cu_chunk_seqlen[K] is " << cu.back() << ", not q[B]-q[0] = "
                                              << total;

  // 2. Order.
  for (std::int64_t k = 0; k < chunks; ++k) {
    if (cu[k + 1] < cu[k])
      return Violation(2, "order", -1, k) << "cu_chunk_seqlen decreases: [" << k << "] = " << cu[k] << ", ["
                                          << k + 1 << "] = " << cu[k + 1];
    if (seq[k] < 0 || seq[k] >= rows)
      return Violation(2, "order", -1, k) << "seq_idx[" << k << "] = " << seq[k] << " is outside [0, " << rows << ")";
    if (k > 0 && seq[k] < seq[k - 1])
      return Violation(2, "order", seq[k], k) << "seq_idx decreases: [" << k - 1 << "] = " << seq[k - 1] << ", ["
                                              << k << "] = " << seq[k];
  }

  // 3. One row per chunk.
  for (std::int64_t k = 0; k < chunks; ++k) {
    const std::int64_t row = seq[k];
    if (cu[k] < start_of(row) || cu[k + 1] > end_of(row))
      return Violation(3, "one row per chunk", row, k) << "chunk " << k << " = [" << cu[k] << ", " << cu[k + 1]
                                                       << ") leaves row " << row << "'s span [" << start_of(row)
                                                       << ", " << end_of(row) << ")";
  }

  // Chunks of each row: seq_idx is non-decreasing, so they form one run [first, end).
  std::vector<std::int64_t> first_chunk(static_cast<std::size_t>(rows), -1);
  std::vector<std::int64_t> chunk_count(static_cast<std::size_t>(rows), 0);
  for (std::int64_t k = 0; k < chunks; ++k) {
    const auto row = static_cast<std::size_t>(seq[k]);
    if (first_chunk[row] < 0) first_chunk[row] = k;
    ++chunk_count[row];
  }

  // 4. Tiling.
  for (std::int64_t row = 0; row < rows; ++row) {
    const auto r = static_cast<std::size_t>(row);
    if (chunk_count[r] == 0) {
      if (end_of(row) != start_of(row))
        return Violation(4, "tiling", row, -1) << "row " << row << " has " << end_of(row) - start_of(row)
                                               << " new tokens but no chunk";
      continue;
    }
    const std::int64_t first = first_chunk[r];
    const std::int64_t past = first + chunk_count[r];
    if (cu[first] != start_of(row) || cu[past] != end_of(row))
      return Violation(4, "tiling", row, first) << "row " << row << "'s chunks cover [" << cu[first] << ", "
                                                << cu[past] << "), its span is [" << start_of(row) << ", "
                                                << end_of(row) << ")";
  }

  // 5. Alignment: no chunk crosses a multiple of C in the row's absolute positions.
  for (std::int64_t k = 0; k < chunks; ++k) {
    if (cu[k + 1] == cu[k]) continue;
    const std::int64_t row = seq[k];
    const std::int64_t begin = computed[static_cast<std::size_t>(row)] + (cu[k] - start_of(row));
    const std::int64_t end = computed[static_cast<std::size_t>(row)] + (cu[k + 1] - start_of(row));
    if (floor_div(begin, chunk_size) != floor_div(end - 1, chunk_size))
      return Violation(5, "alignment", row, k) << "chunk " << k << " covers absolute positions [" << begin << ", "
                                               << end << ") of row " << row << ", crossing a multiple of "
                                               << chunk_size;
  }

  // 6. Minimality: exactly the chunks forced by 3-5; empty only for a zero-token
  // unaligned row, where the reference emits its realigning chunk.
  for (std::int64_t row = 0; row < rows; ++row) {
    const auto r = static_cast<std::size_t>(row);
    const std::int64_t c = computed[r];
    const std::int64_t n = end_of(row) - start_of(row);
    const bool unaligned = c % chunk_size != 0;
    const std::int64_t forced =
        n == 0 ? (unaligned ? 1 : 0) : floor_div(c + n - 1, chunk_size) - floor_div(c, chunk_size) + 1;
    if (chunk_count[r] != forced)
      return Violation(6, "minimality", row, first_chunk[r]) << "row " << row << " (computed " << c << ", new "
                                                             << n << ", C " << chunk_size << ") has "
                                                             << chunk_count[r] << " chunks; " << forced
                                                             << " are forced";
    if (n == 0) continue;
    for (std::int64_t k = first_chunk[r]; k < first_chunk[r] + chunk_count[r]; ++k) {
      if (cu[k + 1] == cu[k])
        return Violation(6, "minimality", row, k) << "chunk " << k << " of row " << row
                                                  << " is empty although the row has " << n << " new tokens";
    }
  }

  // 7. Last chunks: the index of the row's final chunk; for a row without
  // chunks, the reference appends (entries so far) - 1, the previous chunk.
  std::int64_t seen = 0;
  for (std::int64_t row = 0; row < rows; ++row) {
    seen += chunk_count[static_cast<std::size_t>(row)];
    if (last[static_cast<std::size_t>(row)] != seen - 1)
      return Violation(7, "last chunks", row, seen - 1) << "last_chunk_indices[" << row << "] is "
                                                        << last[static_cast<std::size_t>(row)] << ", expected "
                                                        << seen - 1;
  }
  return std::nullopt;
}

// The engine hands int32 tensors to the int32 entry points. A wide value that
// does not fit cannot reach them, so such a workload is answered with the
// rejection validation gives it (the engine's own int32 conversion would fail).
struct Int32Copy {
  std::vector<std::int32_t> computed;
  std::vector<std::int32_t> starts;
  WorkloadView32 view(std::int64_t chunk_size) const { return {chunk_size, computed, starts}; }
};

template <typename Compute32>
Outcome through_int32(const Workload& workload, Compute32&& compute) {
  if (!fits_int32(workload)) return *validate(view_of(workload));
  const Int32Copy copy{{workload.num_computed_tokens.begin(), workload.num_computed_tokens.end()},
                       {workload.query_start_loc.begin(), workload.query_start_loc.end()}};
  return compute(copy.view(workload.chunk_size));
}

Outcome as_outcome(Result<ChunkMetadata>&& result) {
  if (!result.ok()) return result.error();
  return arrays_of(std::move(result).value());
}

// Sizes the buffers with output_sizes(), then writes them with fast_into. The
// fill value -7 makes an entry fast_into forgot to write visible to the oracle.
template <typename View>
Outcome into_buffers(const View& view) {
  auto sizes = output_sizes(view);
  if (!sizes.ok()) return sizes.error();
  ChunkMetadata out;
  out.cu_chunk_seqlen.assign(static_cast<std::size_t>(sizes.value().cu_chunk_seqlen), -7);
  out.seq_idx.assign(static_cast<std::size_t>(sizes.value().seq_idx), -7);
  out.last_chunk_indices.assign(static_cast<std::size_t>(sizes.value().last_chunk_indices), -7);
  auto written = fast_into(view, {out.cu_chunk_seqlen, out.seq_idx, out.last_chunk_indices});
  if (!written.ok()) return written.error();
  return arrays_of(std::move(out));
}

class MambaSpec final : public Spec {
 public:
  std::string_view name() const override { return "mamba"; }
  std::string_view summary() const override {
    return "Mamba chunk metadata: cu_chunk_seqlen, seq_idx, last_chunk_indices (specs/mamba)";
  }
  std::span<const Input> inputs() const override { return kInputs; }
  std::string_view unit() const override { return "row"; }
  std::span<const OutputArray> outputs() const override { return kOutputs; }
  std::optional<Error> validate(const Workload& workload, const Limits& limits) const override {
    return chunkmeta::validate(view_of(workload), limits);
  }
  std::optional<std::int64_t> chunks(const Workload& workload) const override {
    const auto sizes = output_sizes(view_of(workload));
    if (!sizes.ok()) return std::nullopt;
    return sizes.value().num_chunks();
  }
  std::optional<std::vector<std::int64_t>> output_entries(const Workload& workload) const override {
    const auto sizes = output_sizes(view_of(workload));
    if (!sizes.ok()) return std::nullopt;
    return std::vector<std::int64_t>{sizes.value().cu_chunk_seqlen, sizes.value().seq_idx,
                                     sizes.value().last_chunk_indices};
  }
  Outcome reference(const Workload& workload) const override {
    return as_outcome(chunkmeta::reference(view_of(workload)));
  }
  std::optional<InvariantViolation> check_invariants(const Workload& workload, const Arrays& arrays) const override {
    return mamba_invariants(workload, arrays);
  }
  std::optional<kernel_view::Fault> kernels_view(const Workload& workload, const Arrays& arrays, bool with_cache) const override {
    if (auto missing = too_few_outputs(*this, arrays, 3)) return missing;
    // Every chunk ends on the absolute grid of chunk_size: any multiple of it is a block size the cache can use.
    return mamba2_states(workload, true, arrays, 0, 1, 2, with_cache ? workload.chunk_size : 0);
  }
  std::string_view kernels_view_covers() const override {
    return "kernel-adequate (every token run once, in order, from the state after the tokens before it; each row "
           "ends at its own final state), and cache-adequate for every block size that is a multiple of chunk_size";
  }
  std::string_view kernel_formulation() const override { return "kernel.mamba2_chunks"; }
  std::string_view cache_claim() const override {
    return "cache-adequate for every block size that is a multiple of chunk_size (a chunk of each row ends at every "
           "multiple of chunk_size inside its new tokens)";
  }
  Result<std::vector<std::vector<std::int64_t>>> write_into(const Workload& workload,
                                                            std::span<const std::int64_t> sizes,
                                                            std::int64_t fill) const override {
    std::vector<std::int32_t> buffers[3];
    for (std::size_t b = 0; b < 3; ++b)
      buffers[b].assign(static_cast<std::size_t>(sizes[b]), static_cast<std::int32_t>(fill));
    const auto written = fast_into(view_of(workload), {buffers[0], buffers[1], buffers[2]});
    if (!written.ok()) return written.error();
    std::vector<std::vector<std::int64_t>> whole;
    for (const auto& buffer : buffers) whole.emplace_back(buffer.begin(), buffer.end());
    return whole;
  }
  BufferRest rest_of_buffer(std::size_t) const override { return BufferRest::scratch; }
  std::string_view fuzz_target() const override { return "differential"; }
  Workload decode_fuzz_input(std::span<const std::uint8_t> bytes) const override { return decode_valid_workload(bytes); }
  std::optional<std::vector<std::uint8_t>> encode_fuzz_input(const Workload& workload) const override {
    return encode_valid_workload(workload);
  }
  const std::vector<Implementation>& builtins() const override {
    static const std::vector<Implementation> all = {
        in_process("reference", "the spec's procedure, ported line by line", *this,
                   [](const Workload& w) { return as_outcome(chunkmeta::reference(view_of(w))); }),
        in_process("fast", "production implementation, returning, int64 input", *this,
                   [](const Workload& w) { return as_outcome(fast(view_of(w))); }),
        in_process("fast-int32", "production implementation, returning, engine int32 input", *this,
                   [](const Workload& w) {
                     return through_int32(w, [](const WorkloadView32& v) { return as_outcome(fast(v)); });
                   }),
        in_process("fast-into", "production implementation, caller buffers, int64 input", *this,
                   [](const Workload& w) { return into_buffers(view_of(w)); }),
        in_process("fast-into-int32", "production implementation, caller buffers, engine int32 input", *this,
                   [](const Workload& w) {
                     return through_int32(w, [](const WorkloadView32& v) { return into_buffers(v); });
                   }),
    };
    return all;
  }

 private:
  // vLLM's _compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu).
  static constexpr Input kInputs[] = {{"chunk_size", Slot::chunk_size},
                                      {"num_prefills", Slot::rows},
                                      {"num_computed_tokens", Slot::per_row},
                                      {"query_start_loc", Slot::offsets}};
  static constexpr OutputArray kOutputs[] = {{"cu_chunk_seqlen"}, {"seq_idx"}, {"last_chunk_indices"}};
};

}  // namespace

const Spec& mamba_spec() {
  static const MambaSpec spec;
  return spec;
}

std::vector<const Spec*> specs_of_mamba() { return {&mamba_spec()}; }

Arrays arrays_of(ChunkMetadata&& result) {
  Arrays arrays;
  arrays.reserve(3);
  arrays.push_back(std::move(result.cu_chunk_seqlen));
  arrays.push_back(std::move(result.seq_idx));
  arrays.push_back(std::move(result.last_chunk_indices));
  return arrays;
}

ChunkMetadata chunk_metadata_of(Arrays&& arrays) {
  ChunkMetadata result;
  arrays.resize(3);
  result.cu_chunk_seqlen = std::move(arrays[0]);
  result.seq_idx = std::move(arrays[1]);
  result.last_chunk_indices = std::move(arrays[2]);
  return result;
}


}  // namespace chunkmeta::harness
