#include "chunkmeta/harness/fuzz_input.hpp"

#include <algorithm>
#include <array>

#include "chunkmeta/chunkmeta.hpp"

namespace chunkmeta::harness {
namespace {

constexpr std::int64_t kMaxDecodedChunks = 256;
constexpr std::size_t kMaxDecodedRows = 64;

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  bool empty() const { return at_ >= bytes_.size(); }
  std::uint8_t byte() { return empty() ? 0 : bytes_[at_++]; }
  // LEB128, at most 10 bytes; missing bytes read as 0.
  std::uint64_t varint() {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64 && !empty(); shift += 7) {
      const std::uint8_t b = byte();
      value |= std::uint64_t{b & 0x7Fu} << shift;
      if ((b & 0x80u) == 0) break;
    }
    return value;
  }
  std::int64_t raw64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{byte()} << (8 * i);
    return static_cast<std::int64_t>(v);
  }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t at_ = 0;
};

void put_varint(std::vector<std::uint8_t>& out, std::uint64_t value) {
  do {
    std::uint8_t b = value & 0x7Fu;
    value >>= 7;
    out.push_back(static_cast<std::uint8_t>(value != 0 ? b | 0x80u : b));
  } while (value != 0);
}

std::int64_t clamp(std::int64_t v, std::int64_t lo, std::int64_t hi) { return std::min(std::max(v, lo), hi); }
std::int64_t small(std::uint64_t v) { return static_cast<std::int64_t>(v & 0x7FFFFFFFFFFFull); }

std::int64_t decode_chunk_size(std::uint8_t tag, std::uint64_t v) {
  static constexpr std::array<std::int64_t, 8> kModelSizes = {64, 128, 256, 2048, 528, 1056, 1024, 784};
  std::int64_t chunk = 0;
  switch (tag % 4) {
    case 0: chunk = small(v); break;
    case 1: chunk = std::int64_t{1} << (v % 31); break;
    case 2: chunk = kMaxValue - small(v); break;
    default: chunk = kModelSizes[v % kModelSizes.size()]; break;
  }
  return clamp(chunk, 1, kMaxValue);
}

std::int64_t decode_computed(std::uint8_t tag, std::uint64_t v, std::int64_t chunk) {
  switch (tag % 4) {
    case 0: return clamp(small(v), 0, kMaxValue);
    case 1: return clamp(kMaxValue - small(v), 0, kMaxValue);
    case 2: return clamp(small(v % (std::uint64_t{1} << 31)) * chunk, 0, kMaxValue);              // aligned
    default: return clamp(small(v % (std::uint64_t{1} << 31)) * chunk + chunk - 1, 0, kMaxValue);  // just below
  }
}

std::int64_t decode_new_tokens(std::uint8_t tag, std::uint64_t v, std::int64_t chunk, std::int64_t computed,
                               std::int64_t room) {
  const std::int64_t gap = (chunk - computed % chunk) % chunk;
  std::int64_t n = 0;
  switch (tag % 4) {
    case 0: n = small(v); break;
    case 1: n = gap + small(v % 4096) * chunk + static_cast<std::int64_t>(v >> 12) % 3 - 1; break;
    case 2: n = gap - small(v); break;
    default: n = room - small(v); break;
  }
  return clamp(n, 0, room);
}

// Chunks the reference emits for one row (the procedure's steps 1-2). Not output_sizes():
// a decoded row may need more chunks than the library's cap, before trimming.
std::int64_t row_chunks(std::int64_t chunk, std::int64_t computed, std::int64_t tokens) {
  const std::int64_t gap = (chunk - computed % chunk) % chunk;
  const std::int64_t rest = tokens - std::min(tokens, gap);
  return (gap != 0 ? 1 : 0) + (rest + chunk - 1) / chunk;
}

}  // namespace

Workload decode_valid_workload(std::span<const std::uint8_t> bytes) {
  Reader in(bytes);
  in.byte();  // version: reserved
  const std::uint8_t chunk_tag = in.byte();
  const std::int64_t chunk_size = decode_chunk_size(chunk_tag, in.varint());
  const std::uint8_t offset_tag = in.byte();
  const std::uint64_t offset = in.varint();
  // Rows are decoded into fixed arrays, then copied into vectors of exactly
  // their size: ASan then catches an implementation that reads past the last
  // row (spare capacity would hide it), and each array is allocated once.
  std::array<std::int64_t, kMaxDecodedRows> computed_tokens;
  std::array<std::int64_t, kMaxDecodedRows + 1> starts;
  starts[0] = clamp(offset_tag % 2 == 0 ? small(offset) : kMaxValue - small(offset), 0, kMaxValue);
  std::size_t rows = 0;
  std::int64_t chunks = 0;
  while (!in.empty() && rows < kMaxDecodedRows) {
    const std::uint8_t computed_tag = in.byte();
    const std::int64_t computed = decode_computed(computed_tag, in.varint(), chunk_size);
    const std::int64_t room = std::min(kMaxValue - computed, kMaxValue - starts[rows]);
    const std::uint8_t tokens_tag = in.byte();
    std::int64_t tokens = decode_new_tokens(tokens_tag, in.varint(), chunk_size, computed, room);
    // Keep the whole output under the budget: trim this row's tokens if needed.
    const std::int64_t budget = kMaxDecodedChunks - chunks;
    std::int64_t chunks_in_row = row_chunks(chunk_size, computed, tokens);
    if (chunks_in_row > budget) {
      if (budget <= 1) break;
      tokens = std::min(tokens, (budget - 1) * chunk_size);
      chunks_in_row = row_chunks(chunk_size, computed, tokens);
    }
    chunks += chunks_in_row;
    computed_tokens[rows] = computed;
    starts[rows + 1] = starts[rows] + tokens;
    ++rows;
  }
  Workload w;
  w.chunk_size = chunk_size;
  w.num_computed_tokens.assign(computed_tokens.begin(), computed_tokens.begin() + static_cast<std::ptrdiff_t>(rows));
  w.query_start_loc.assign(starts.begin(), starts.begin() + static_cast<std::ptrdiff_t>(rows + 1));
  return w;
}

std::optional<std::vector<std::uint8_t>> encode_valid_workload(const Workload& w) {
  if (validate(view_of(w)) || w.dtype != Dtype::int32) return std::nullopt;
  std::vector<std::uint8_t> out = {1, 0};
  put_varint(out, static_cast<std::uint64_t>(w.chunk_size));
  out.push_back(0);
  put_varint(out, static_cast<std::uint64_t>(w.query_start_loc[0]));
  for (std::size_t i = 0; i < w.num_computed_tokens.size(); ++i) {
    out.push_back(0);
    put_varint(out, static_cast<std::uint64_t>(w.num_computed_tokens[i]));
    out.push_back(0);
    put_varint(out, static_cast<std::uint64_t>(w.query_start_loc[i + 1] - w.query_start_loc[i]));
  }
  if (!(decode_valid_workload(out) == w)) return std::nullopt;
  return out;
}

Workload decode_valid_cu_seqlens(std::span<const std::uint8_t> bytes) {
  Workload w = decode_valid_workload(bytes);
  std::fill(w.num_computed_tokens.begin(), w.num_computed_tokens.end(), 0);
  w.dtype = !bytes.empty() && (bytes[0] & 0x80) != 0 ? Dtype::int64 : Dtype::int32;
  return w;
}

std::optional<std::vector<std::uint8_t>> encode_valid_cu_seqlens(const Workload& w) {
  if (std::any_of(w.num_computed_tokens.begin(), w.num_computed_tokens.end(), [](std::int64_t c) { return c != 0; }))
    return std::nullopt;
  Workload as_int32 = w;
  as_int32.dtype = Dtype::int32;
  auto bytes = encode_valid_workload(as_int32);
  if (!bytes) return std::nullopt;
  // Byte 0: the first implementation, and the dtype in its top bit.
  (*bytes)[0] = w.dtype == Dtype::int64 ? 0x80 : 0;
  return bytes;
}

Workload decode_any_workload(std::span<const std::uint8_t> bytes) {
  Reader in(bytes);
  Workload w;
  const std::uint8_t shape = in.byte();
  // Mostly small values, so that some workloads are valid; raw 64-bit ones otherwise.
  const auto value = [&]() -> std::int64_t {
    const std::uint8_t tag = in.byte();
    if (tag % 4 == 0) return in.raw64();
    // Wrapping (found by fuzz_robustness: a varint from 2^63 up overflowed the subtraction).
    if (tag % 4 == 1) return static_cast<std::int64_t>(in.varint() - 64);
    return static_cast<std::int64_t>(in.varint());
  };
  w.chunk_size = value();
  const std::size_t rows = in.byte();
  // shape % 4: 0 lengths match, 1 one entry short, 2 one extra, 3 any length.
  std::size_t entries = rows + 1;
  if (shape % 4 == 1) entries = rows;
  if (shape % 4 == 2) entries = rows + 2;
  if (shape % 4 == 3) entries = in.byte();
  for (std::size_t i = 0; i < rows && !in.empty(); ++i) w.num_computed_tokens.push_back(value());
  w.query_start_loc.clear();
  std::int64_t q = 0;
  for (std::size_t j = 0; j < entries && !in.empty(); ++j) {
    // Deltas keep query_start_loc mostly non-decreasing; raw values break it.
    // Wrapping add (found by fuzz_robustness: signed overflow here was undefined).
    q = (shape & 4) != 0 ? value() : static_cast<std::int64_t>(static_cast<std::uint64_t>(q) + static_cast<std::uint64_t>(value()));
    w.query_start_loc.push_back(q);
  }
  return w;
}

std::optional<std::vector<std::uint8_t>> encode_any_workload(const Workload& w) {
  if (w.num_computed_tokens.size() > 255 || w.query_start_loc.size() > 255) return std::nullopt;
  std::vector<std::uint8_t> out = {3 | 4};  // any length, absolute query_start_loc values
  const auto raw = [&](std::int64_t v) {
    out.push_back(0);
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) >> (8 * i)));
  };
  raw(w.chunk_size);
  out.push_back(static_cast<std::uint8_t>(w.num_computed_tokens.size()));
  out.push_back(static_cast<std::uint8_t>(w.query_start_loc.size()));
  for (auto v : w.num_computed_tokens) raw(v);
  for (auto v : w.query_start_loc) raw(v);
  if (!(decode_any_workload(out) == w)) return std::nullopt;
  return out;
}

}  // namespace chunkmeta::harness
