// The virtual batches' slips (specs/local_attn_virtual_batches), each vLLM's
// procedure rewritten wrong one way, for the mutant catalogue.
#include <algorithm>

#include "local_attn_spec.hpp"
#include "mutants.hpp"

namespace chunkmeta::mutants {
namespace {

using harness::Workload;

enum class BatchSlip {
  comment_running_sum,      // cu_seqlens_q_local as the running sum of the key lengths (the function's comment)
  block_start_in_tokens,    // the piece's first key token, not its page
  computed_as_seq_len,      // the first piece sized from s mod A, not (s - n) mod A
  last_keys_mod,            // the last piece's keys as s mod A: 0 when s is a multiple of A
  floor_piece_count,        // 1 + floor((n - f) / A) pieces: a partial last piece lost
  sized_by_the_batch,       // buffers of B virtual batches: the pieces past B dropped
};

harness::Outcome batches_with(BatchSlip slip, const Workload& w) {
  if (auto error = local_attn::validate(harness::local_attn_view(w))) return *error;  // every mutant validates correctly
  const std::int64_t A = w.chunk_size;
  const auto& q = w.query_start_loc;
  harness::Arrays out(5);
  out[0].push_back(0);
  for (std::size_t i = 0; i + 1 < q.size(); ++i) {
    const std::int64_t n = q[i + 1] - q[i];
    const std::int64_t s = w.num_computed_tokens[i];
    const std::int64_t c = slip == BatchSlip::computed_as_seq_len ? s : s - n;
    const std::int64_t first = std::min(A - c % A, n);
    const std::int64_t pieces =
        1 + (slip == BatchSlip::floor_piece_count ? (n - first) / A : (n - first + A - 1) / A);
    const std::int64_t last_keys = slip == BatchSlip::last_keys_mod ? s % A : (s - 1) % A + 1;
    for (std::int64_t j = 0; j < pieces; ++j) {
      const std::int64_t queries = j == 0 ? first : std::min(n - first - A * (j - 1), A);
      const std::int64_t keys = j + 1 == pieces ? last_keys : A;
      const std::int64_t key_start = s - ((pieces - 1 - j) * A + last_keys);
      const std::int64_t step = slip == BatchSlip::comment_running_sum ? keys : queries;
      out[0].push_back(static_cast<std::int32_t>(out[0].back() + step));
      out[1].push_back(static_cast<std::int32_t>(keys));
      out[2].push_back(static_cast<std::int32_t>(keys - queries));
      out[3].push_back(static_cast<std::int32_t>(i));
      out[4].push_back(static_cast<std::int32_t>(slip == BatchSlip::block_start_in_tokens ? key_start
                                                                                             : key_start / w.block_size));
    }
  }
  if (slip == BatchSlip::sized_by_the_batch) {
    const std::size_t rows = q.size() - 1;
    if (out[1].size() > rows) {
      out[0].resize(rows + 1);
      for (std::size_t a = 1; a < 5; ++a) out[a].resize(rows);
    }
  }
  return out;
}

Mutant make_batches(std::string name, BatchSlip slip, std::string description, std::size_t fewest_failing_rows) {
  const harness::Spec& spec = harness::local_attn_spec();
  return {harness::in_process(std::move(name), description, spec,
                              [slip](const Workload& w) { return batches_with(slip, w); }),
          std::move(description), fewest_failing_rows};
}

}  // namespace

std::vector<Mutant> mutants_of_local_attn_virtual_batches() {
  return {
      make_batches("local-attn-comment-running-sum", BatchSlip::comment_running_sum,
                   "cu_seqlens_q_local as the running sum of the key lengths, as the function's own comment shows it",
                   1),
      make_batches("local-attn-block-start-in-tokens", BatchSlip::block_start_in_tokens,
                   "the block start counted in tokens (the piece's first key), not in pages of block_size", 1),
      make_batches("local-attn-computed-as-seq-len", BatchSlip::computed_as_seq_len,
                   "the computed tokens taken as s instead of s - n: the first piece sized from s mod A", 1),
      make_batches("local-attn-last-keys-mod", BatchSlip::last_keys_mod,
                   "the last piece's key length as s mod A, which is 0 when s is a multiple of A", 1),
      make_batches("local-attn-floor-piece-count", BatchSlip::floor_piece_count,
                   "pieces counted with floor: 1 + (n - f) / A, the partial last piece lost", 1),
      make_batches("local-attn-sized-by-the-batch", BatchSlip::sized_by_the_batch,
                   "buffers sized by the batch (vLLM #49980): the virtual batches past B dropped", 1),
  };
}

}  // namespace chunkmeta::mutants
