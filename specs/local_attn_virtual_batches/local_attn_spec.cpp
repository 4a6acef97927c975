// specs/local_attn_virtual_batches as a Spec: its inputs and five outputs
// described, its invariants 1-4 checked from the inputs alone, the library's
// entry points as built-ins, and its fuzz codec (Mamba's bytes, rows without
// new tokens left out, and one byte for A in page sizes).
#include "local_attn_spec.hpp"

#include <algorithm>

#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/violation.hpp"

namespace chunkmeta::harness {
namespace {

using local_attn::VirtualBatches;

enum Output : std::size_t { cu_seqlens_q, seqlens_k, computed_local, virtual_row, block_start };

// The contract's invariants 1-4, for a valid workload.
std::optional<InvariantViolation> batch_invariants(const Workload& w, const Arrays& arrays) {
  if (arrays.size() != 5) return Violation(4, "size", -1, -1) << arrays.size() << " arrays; the outputs are five";
  const std::int64_t A = w.chunk_size;
  const std::int64_t P = w.block_size;
  const auto& q = w.query_start_loc;
  const std::size_t rows = q.size() - 1;
  const std::size_t V = arrays[seqlens_k].size();
  // 4. Size: V + 1 query offsets, V of each other output; at most 1 + ceil((n - 1) / A) pieces per row.
  if (arrays[cu_seqlens_q].size() != V + 1)
    return Violation(4, "size", -1, -1) << "cu_seqlens_q_local has " << arrays[cu_seqlens_q].size()
                                        << " entries; seqlens_k_local has " << V << " (V + 1 expected)";
  for (const std::size_t a : {std::size_t{computed_local}, std::size_t{virtual_row}, std::size_t{block_start}}) {
    if (arrays[a].size() != V)
      return Violation(4, "size", -1, -1) << "an output has " << arrays[a].size() << " entries; seqlens_k_local has "
                                          << V << " (they are parallel)";
  }
  if (arrays[cu_seqlens_q][0] != 0)
    return Violation(1, "tokens", -1, -1) << "cu_seqlens_q_local[0] is " << arrays[cu_seqlens_q][0] << ", not 0";
  std::size_t v = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    const auto row = static_cast<std::int64_t>(i);
    const std::int64_t n = q[i + 1] - q[i];
    const std::int64_t s = w.num_computed_tokens[i];
    std::int64_t position = s - n;  // the absolute position of the row's next query token
    const std::size_t first = v;
    while (v < V && arrays[virtual_row][v] == row) {
      const auto piece = static_cast<std::int64_t>(v);
      const std::int64_t queries = std::int64_t{arrays[cu_seqlens_q][v + 1]} - arrays[cu_seqlens_q][v];
      const std::int64_t keys = arrays[seqlens_k][v];
      // 1. Tokens: 1 <= query length <= key length <= A; computed = keys - queries.
      if (queries < 1 || queries > keys || keys > A)
        return Violation(1, "tokens", row, piece) << "piece " << v << " of row " << i << " has " << queries
                                                  << " queries and " << keys << " keys; 1 <= queries <= keys <= A = " << A;
      if (arrays[computed_local][v] != keys - queries)
        return Violation(1, "tokens", row, piece) << "num_computed_tokens_local[" << v << "] = " << arrays[computed_local][v]
                                                  << "; the piece has " << keys << " keys and " << queries << " queries";
      // 2. Locality: its keys start at t = block_start * P, a multiple of A, and end within the sequence.
      const std::int64_t t = std::int64_t{arrays[block_start][v]} * P;
      if (arrays[block_start][v] < 0 || t % A != 0 || t + keys > s)
        return Violation(2, "locality", row, piece) << "piece " << v << " of row " << i << " starts at block "
                                                    << arrays[block_start][v] << " (token " << t << ") with " << keys
                                                    << " keys: it must start on a multiple of A = " << A
                                                    << " and end by the sequence's " << s << " tokens";
      // 3. Causality: its queries are the last of its keys, and follow the row's earlier pieces.
      if (position + queries != t + keys)
        return Violation(3, "causality", row, piece) << "piece " << v << " of row " << i << " holds queries at tokens "
                                                     << position << ".." << position + queries - 1
                                                     << " but its keys end at token " << t + keys - 1;
      position += queries;
      ++v;
    }
    const auto pieces = static_cast<std::int64_t>(v - first);
    if (position != s)
      return Violation(3, "causality", row, -1) << "row " << i << "'s " << pieces << " pieces cover its new tokens up to "
                                                << position << ", not its " << s << " tokens";
    if (pieces > 1 + (n - 1 + A - 1) / A)
      return Violation(4, "size", row, -1) << "row " << i << " (" << n << " new tokens) has " << pieces
                                           << " pieces; at most 1 + ceil((n - 1) / A) = " << 1 + (n - 1 + A - 1) / A;
  }
  if (v != V)
    return Violation(3, "causality", arrays[virtual_row][v], static_cast<std::int64_t>(v))
           << "piece " << v << " is of row " << arrays[virtual_row][v] << ", out of row order";
  return std::nullopt;
}

template <typename Compute32>
Outcome through_int32(const Workload& w, Compute32&& compute) {
  if (!fits_int32(w)) return *local_attn::validate(local_attn_view(w));
  const std::vector<std::int32_t> q(w.query_start_loc.begin(), w.query_start_loc.end());
  const std::vector<std::int32_t> s(w.num_computed_tokens.begin(), w.num_computed_tokens.end());
  return compute(local_attn::View32{w.chunk_size, w.block_size, q, s});
}

Outcome as_outcome(Result<VirtualBatches>&& result) {
  if (!result.ok()) return result.error();
  return arrays_of(std::move(result).value());
}

// Buffers of the exact sizes filled with -7 (an entry left unwritten shows), written by virtual_batches_into.
template <typename View>
Outcome into_buffers(const View& view) {
  const auto sizes = local_attn::output_sizes(view);
  if (!sizes.ok()) return sizes.error();
  const auto V = static_cast<std::size_t>(sizes.value().virtual_batches);
  VirtualBatches out{Int32Array(V + 1, -7), Int32Array(V, -7), Int32Array(V, -7), Int32Array(V, -7), Int32Array(V, -7)};
  const auto written = local_attn::virtual_batches_into(
      view, {out.cu_seqlens_q_local, out.seqlens_k_local, out.num_computed_tokens_local, out.virtual_row, out.block_start});
  if (!written.ok()) return written.error();
  return arrays_of(std::move(out));
}

// The fuzz codec: Mamba's bytes (P its chunk size, seq_lens its computed plus
// new tokens, rows without new tokens left out), then one byte m: A = (m % 16 + 1) P.
constexpr std::int64_t kMostPagesPerChunk = 16;

Workload decode_batches(std::span<const std::uint8_t> bytes) {
  const auto mamba_bytes = bytes.empty() ? bytes : bytes.first(bytes.size() - 1);
  const Workload mamba = decode_valid_workload(mamba_bytes);
  Workload w{1, {}, {mamba.query_start_loc[0]}, Dtype::int32, mamba.chunk_size};
  for (std::size_t i = 0; i < mamba.rows(); ++i) {
    const std::int64_t n = mamba.query_start_loc[i + 1] - mamba.query_start_loc[i];
    if (n == 0) continue;
    w.query_start_loc.push_back(w.query_start_loc.back() + n);
    w.num_computed_tokens.push_back(mamba.num_computed_tokens[i] + n);
  }
  const std::int64_t pages = bytes.empty() ? 1 : bytes.back() % kMostPagesPerChunk + 1;
  w.chunk_size = std::min(pages, kMaxValue / w.block_size) * w.block_size;
  return w;
}

std::optional<std::vector<std::uint8_t>> encode_batches(const Workload& w) {
  if (w.block_size < 1 || w.chunk_size % w.block_size != 0 || w.chunk_size / w.block_size > kMostPagesPerChunk)
    return std::nullopt;
  Workload mamba{w.block_size, {}, w.query_start_loc, Dtype::int32, 0};
  for (std::size_t i = 0; i < w.rows(); ++i)
    mamba.num_computed_tokens.push_back(w.num_computed_tokens[i] - (w.query_start_loc[i + 1] - w.query_start_loc[i]));
  auto bytes = encode_valid_workload(mamba);
  if (!bytes) return std::nullopt;
  bytes->push_back(static_cast<std::uint8_t>(w.chunk_size / w.block_size - 1));
  if (decode_batches(*bytes) != w) return std::nullopt;  // a clamped A, or rows the decoder leaves out
  return bytes;
}

class LocalAttnSpec final : public Spec {
 public:
  std::string_view name() const override { return "local_attn.virtual_batches"; }
  std::string_view summary() const override {
    return "chunked local attention's virtual batches: each row's new tokens cut at attention-chunk boundaries, each "
           "piece a request of its own (specs/local_attn_virtual_batches)";
  }
  std::span<const Input> inputs() const override { return kInputs; }
  std::string_view unit() const override { return "row"; }
  std::span<const OutputArray> outputs() const override { return kOutputs; }
  std::optional<Error> validate(const Workload& w, const Limits& limits) const override {
    return local_attn::validate(local_attn_view(w), limits);
  }
  std::optional<std::int64_t> chunks(const Workload& w) const override {
    const auto sizes = local_attn::output_sizes(local_attn_view(w));
    if (!sizes.ok()) return std::nullopt;
    return sizes.value().virtual_batches;
  }
  std::optional<std::vector<std::int64_t>> output_entries(const Workload& w) const override {
    const auto sizes = local_attn::output_sizes(local_attn_view(w));
    if (!sizes.ok()) return std::nullopt;
    const std::int64_t V = sizes.value().virtual_batches;
    return std::vector<std::int64_t>{V + 1, V, V, V, V};
  }
  Outcome reference(const Workload& w) const override { return as_outcome(local_attn::reference(local_attn_view(w))); }
  std::optional<InvariantViolation> check_invariants(const Workload& w, const Arrays& arrays) const override {
    return batch_invariants(w, arrays);
  }
  Result<std::vector<std::vector<std::int64_t>>> write_into(const Workload& w, std::span<const std::int64_t> sizes,
                                                            std::int64_t fill) const override {
    std::vector<std::int32_t> buffers[5];
    for (std::size_t b = 0; b < 5; ++b) buffers[b].assign(static_cast<std::size_t>(sizes[b]), static_cast<std::int32_t>(fill));
    const auto written =
        local_attn::virtual_batches_into(local_attn_view(w), {buffers[0], buffers[1], buffers[2], buffers[3], buffers[4]});
    if (!written.ok()) return written.error();
    std::vector<std::vector<std::int64_t>> whole;
    for (const auto& buffer : buffers) whole.emplace_back(buffer.begin(), buffer.end());
    return whole;
  }
  BufferRest rest_of_buffer(std::size_t) const override { return BufferRest::kept; }
  std::string_view fuzz_target() const override { return "local_attn_differential"; }
  Workload decode_fuzz_input(std::span<const std::uint8_t> bytes) const override { return decode_batches(bytes); }
  std::optional<std::vector<std::uint8_t>> encode_fuzz_input(const Workload& w) const override {
    return encode_batches(w);
  }
  // One row of one token: the domain has no row without new tokens.
  Workload warm_up_workload() const override { return Workload{1, {1}, {0, 1}, Dtype::int32, 1}; }
  const std::vector<Implementation>& builtins() const override {
    static const std::vector<Implementation> all = {
        in_process("reference", "vLLM's numpy procedure, ported step by step", *this,
                   [this](const Workload& w) { return reference(w); }),
        in_process("fast", "production implementation, returning, int64 input", *this,
                   [](const Workload& w) { return as_outcome(local_attn::virtual_batches(local_attn_view(w))); }),
        in_process("fast-int32", "production implementation, returning, engine int32 input", *this,
                   [](const Workload& w) {
                     return through_int32(w, [](const local_attn::View32& v) {
                       return as_outcome(local_attn::virtual_batches(v));
                     });
                   }),
        in_process("fast-into", "production implementation, caller buffers, int64 input", *this,
                   [](const Workload& w) { return into_buffers(local_attn_view(w)); }),
        in_process("fast-into-int32", "production implementation, caller buffers, engine int32 input", *this,
                   [](const Workload& w) {
                     return through_int32(w, [](const local_attn::View32& v) { return into_buffers(v); });
                   }),
    };
    return all;
  }

 private:
  // chunkmeta.local_attention_virtual_batches(attn_chunk_size, block_size, query_start_loc, seq_lens).
  static constexpr Input kInputs[] = {{"attn_chunk_size", Slot::chunk_size},
                                      {"block_size", Slot::block_size},
                                      {"query_start_loc", Slot::offsets},
                                      {"seq_lens", Slot::per_row}};
  static constexpr OutputArray kOutputs[] = {{"cu_seqlens_q_local"},
                                             {"seqlens_k_local"},
                                             {"num_computed_tokens_local"},
                                             {"virtual_row"},
                                             {"block_start"}};
};

}  // namespace

const Spec& local_attn_spec() {
  static const LocalAttnSpec spec;
  return spec;
}

std::vector<const Spec*> specs_of_local_attn_virtual_batches() { return {&local_attn_spec()}; }

Arrays arrays_of(local_attn::VirtualBatches&& batches) {
  Arrays arrays;
  arrays.reserve(5);
  arrays.push_back(std::move(batches.cu_seqlens_q_local));
  arrays.push_back(std::move(batches.seqlens_k_local));
  arrays.push_back(std::move(batches.num_computed_tokens_local));
  arrays.push_back(std::move(batches.virtual_row));
  arrays.push_back(std::move(batches.block_start));
  return arrays;
}

}  // namespace chunkmeta::harness
