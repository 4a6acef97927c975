// chunkmeta::prefill_checkpoints: where a prefill may export an internal
// checkpoint of its Mamba state (specs/mamba_prefill_checkpoints, vLLM's
// compute_mamba_prefill_checkpoints). For row i with s_i tokens after this
// step and n_i new ones (its query starts at a_i = s_i - n_i):
//   p_i = max(floor((s_i - 1) / H) H - (H if drop_eagle_block else 0), 0);
//   valid_i when an alignment is given and a_i mod H = 0, ceil(s_i / M) - 2 >
//     floor((a_i - 1) / M) (the checkpoint's block is never the initial
//     state's), a_i + H <= p_i, a_i < p_i < s_i and (p_i - a_i) mod alignment = 0;
//   checkpoint_offsets[i] = p_i - a_i if valid_i else 0 (int32);
//   checkpoint_cols[i] = ceil(s_i / M) - 2 if valid_i else -1 (int64).
// Total functions: invalid input is an Error naming field, index and rule.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "chunkmeta/types.hpp"

namespace chunkmeta::prefill_checkpoints {

// One step's planning input, as the builder has it: per row the sequence's
// length after the step and its new tokens; the hash block size H, the
// Mamba block size M, the alignment the backend can export at (none: it
// cannot export), and whether the last hash block is the speculative
// (EAGLE) one, never cached.
struct View {
  std::span<const std::int64_t> seq_lens;
  std::span<const std::int64_t> query_lens;
  std::int64_t hash_block_size = 1;
  std::int64_t mamba_block_size = 1;
  std::optional<std::int64_t> checkpoint_alignment;
  bool drop_eagle_block = false;
};

struct Checkpoints {
  Int32Array checkpoint_offsets;
  std::vector<std::int64_t> checkpoint_cols;
  friend bool operator==(const Checkpoints&, const Checkpoints&) = default;
};

// Caller-provided storage for checkpoints_into, each at least B entries.
struct Buffers {
  std::span<std::int32_t> checkpoint_offsets;
  std::span<std::int64_t> checkpoint_cols;
};

// In order: hash_block_size and mamba_block_size at least 1 (not_positive) and
// at most 2^31-1 (value_too_large); checkpoint_alignment, when given, at
// least 1 (not_positive) and at most 2^31-1; query_lens of B entries
// (length_mismatch); then per row: seq_lens[i] and query_lens[i] in
// [0, 2^31-1] (negative_value, value_too_large), and a sequence no shorter
// than its query (below_minimum on seq_lens, bound query_lens[i]); last,
// the size cap: more rows than `limits` allows entries is output_too_large.
std::optional<Error> validate(const View& view, const Limits& limits = {}) noexcept;

// The contract's rule, condition by condition, in 64-bit arithmetic.
Result<Checkpoints> reference(const View& view);

// The fast implementation: one pass writing each row's offset and column (checkpoints_into).
Result<Checkpoints> checkpoints(const View& view);

// The same into caller buffers: validates, allocates nothing, returns B
// (output_buffer_too_small names the first short buffer, nothing written).
Result<std::int64_t> checkpoints_into(const View& view, const Buffers& out) noexcept;

}  // namespace chunkmeta::prefill_checkpoints
