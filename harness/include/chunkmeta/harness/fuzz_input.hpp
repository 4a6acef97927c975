// Byte encodings of workloads for the fuzz targets, shared with the CLI's
// `fuzz-decode` / `fuzz-encode` so that every fuzz corpus file can be read.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "chunkmeta/harness/workload.hpp"

namespace chunkmeta::harness {

// Valid workloads from any bytes (the differential target). Format: a byte
// the decoder skips (the differential target picks its implementation by
// it), then (tag, LEB128 value) pairs: chunk size, q[0], then per row
// computed tokens and new tokens. Tags pick a transform that puts edge values
// one mutation away (2^31-1 - v, multiples of C, the realigning gap, the room
// left below 2^31-1); tag 0 takes the value as is. Out-of-domain results are
// clamped, never rejected, and decoding stops at 256 chunks or 64 rows
// so every execution stays fast.
Workload decode_valid_workload(std::span<const std::uint8_t> bytes);

// The inverse for a valid workload (all tags 0); nullopt if the workload is
// beyond the decoder's budget and would not decode to itself.
std::optional<std::vector<std::uint8_t>> encode_valid_workload(const Workload& workload);

// A valid workload of the FLA specs (computed tokens all zero) from the same
// bytes; byte 0's top bit is the dtype (int64 when set), its other bits are
// the fuzz target's (the implementation it picks).
Workload decode_valid_cu_seqlens(std::span<const std::uint8_t> bytes);
// The inverse for a workload without computed tokens (byte 0 picks the first implementation).
std::optional<std::vector<std::uint8_t>> encode_valid_cu_seqlens(const Workload& workload);

// Arbitrary, mostly invalid workloads (the robustness target): raw 64-bit
// chunk size and entries, and array lengths that need not match.
Workload decode_any_workload(std::span<const std::uint8_t> bytes);

// The inverse for any workload of at most 255 rows and 255 query_start_loc
// entries (raw values); nullopt beyond that.
std::optional<std::vector<std::uint8_t>> encode_any_workload(const Workload& workload);

// Workloads above this many chunks are validated but not computed by the
// robustness targets: the answer would take longer than a fuzz iteration.
inline constexpr std::int64_t kFuzzMaxChunks = std::int64_t{1} << 14;

}  // namespace chunkmeta::harness
