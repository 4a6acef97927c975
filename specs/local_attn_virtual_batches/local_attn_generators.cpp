// Generators for the virtual batches of chunked local attention
// (specs/local_attn_virtual_batches). A workload keeps A as its chunk size, P
// as its block size and each row's seq_len as its per-row value.
#include "local_attn_generators.hpp"

#include <algorithm>
#include <limits>
#include <random>
#include <tuple>

namespace chunkmeta::properties {
namespace {

using rc::Gen;
namespace gen = rc::gen;

struct Sizes {
  std::int64_t attn_chunk;
  std::int64_t page;
};

// (A, P) with A a multiple of P: Llama 4's 8192 with pages of 16, A = P,
// kernel page sizes with A a few to 512 pages, P = 1, small odd pairs, and
// large A up to 2^31-1.
Gen<Sizes> size_pairs() {
  const auto times = [](Gen<std::int64_t> pages, Gen<std::int64_t> page_sizes) {
    return gen::apply(
        [](std::int64_t k, std::int64_t p) { return Sizes{std::min(k, kMaxValue / p) * p, p}; }, std::move(pages),
        std::move(page_sizes));
  };
  return gen::weightedOneOf<Sizes>({
      {20, gen::just(Sizes{8192, 16})},
      {15, gen::map(gen::element<std::int64_t>(1, 2, 3, 16, 64, 128, 1024), [](std::int64_t p) { return Sizes{p, p}; })},
      {25, times(gen::element<std::int64_t>(2, 4, 8, 64, 512), gen::element<std::int64_t>(16, 32, 64, 128))},
      {15, times(inclusive_range(1, 64), gen::just<std::int64_t>(1))},
      {15, times(inclusive_range(1, 32), inclusive_range(1, 8))},
      {10, times(inclusive_range(1, 64), gen::map(gen::inRange(10, 25), [](int k) { return std::int64_t{1} << k; }))},
  });
}

// One row: (new tokens, computed tokens, whether its last token ends a chunk).
using RowDraw = std::tuple<std::int64_t, std::int64_t, bool>;

// New tokens span at most 64 chunks (a row of 2^19 tokens at A = 8192; the
// pieces, not the tokens, cost time), computed tokens anywhere below 2^31.
Gen<RowDraw> rows_of(std::int64_t A) {
  const std::int64_t many = std::min<std::int64_t>(40 * A, std::int64_t{1} << 24);
  const std::int64_t most = std::min<std::int64_t>(64 * A, std::int64_t{1} << 24);
  const auto around = gen::mapcat(inclusive_range(1, 8), [A](std::int64_t k) {
    return gen::element(std::max<std::int64_t>(1, k * A - 1), k * A, k * A + 1);
  });
  const auto new_tokens = gen::weightedOneOf<std::int64_t>({
      {20, gen::just<std::int64_t>(1)},
      {15, inclusive_range(2, 16)},
      {20, around},
      {20, inclusive_range(1, std::min<std::int64_t>(16384, most))},
      {15, inclusive_range(1, most)},
      {10, inclusive_range(std::min(8 * A, many), many)},
  });
  const auto on_boundary = gen::map(inclusive_range(1, 64), [A](std::int64_t k) { return k * A; });
  const auto computed = gen::weightedOneOf<std::int64_t>({
      {20, gen::just<std::int64_t>(0)},
      {15, on_boundary},
      {10, gen::map(on_boundary, [](std::int64_t c) { return c - 1; })},
      {10, gen::map(on_boundary, [](std::int64_t c) { return c + 1; })},
      {20, inclusive_range(0, 16384)},
      {10, gen::map(inclusive_range(0, A), [](std::int64_t d) { return kMaxValue - d; })},  // clamped below
      {5, inclusive_range(0, kMaxValue)},
  });
  return gen::tuple(new_tokens, computed, gen::weightedElement<bool>({{85, false}, {15, true}}));
}

// Lays the rows out from `offset`: every row keeps at least one new token,
// s = c + n <= 2^31-1 and q[B] <= 2^31-1 (rows with no room left are dropped).
Workload assemble(Sizes sizes, const std::vector<RowDraw>& rows, std::int64_t offset) {
  const std::int64_t A = sizes.attn_chunk;
  Workload w{A, {}, {0}, harness::Dtype::int32, sizes.page};
  for (const auto& [drawn_n, drawn_c, ends_a_chunk] : rows) {
    const std::int64_t room = kMaxValue - w.query_start_loc.back();
    if (room < 1) break;
    const std::int64_t n = std::clamp<std::int64_t>(drawn_n, 1, room);
    std::int64_t c = std::clamp<std::int64_t>(drawn_c, 0, kMaxValue - n);
    if (ends_a_chunk) {
      const std::int64_t end = (c + n + A - 1) / A * A;
      if (end <= kMaxValue) c = end - n;
    }
    w.query_start_loc.push_back(w.query_start_loc.back() + n);
    w.num_computed_tokens.push_back(c + n);
  }
  const std::int64_t start = std::min(offset, kMaxValue - w.query_start_loc.back());
  for (auto& q : w.query_start_loc) q += start;
  return w;
}

InvalidWorkload make_invalid(std::string rule, Workload w, ErrorCode code, std::string_view field, std::int64_t index) {
  return InvalidWorkload{std::move(rule), std::move(w), Error{code, field, index, 0, 0}};
}

}  // namespace

Gen<Workload> local_attn_valid_workloads() {
  return gen::mapcat(size_pairs(), [](Sizes sizes) {
    return gen::mapcat(batch_sizes(), [sizes](std::int64_t rows) {
      return gen::apply([sizes](const std::vector<RowDraw>& drawn, std::int64_t offset) { return assemble(sizes, drawn, offset); },
                        gen::container<std::vector<RowDraw>>(static_cast<std::size_t>(rows), rows_of(sizes.attn_chunk)),
                        gen::weightedOneOf<std::int64_t>({{85, gen::just<std::int64_t>(0)},
                                                          {15, inclusive_range(1, kMaxValue)}}));
    });
  });
}

// A huge batch from a seed: mostly one-token rows of any computed length,
// about 1 in 100 spanning 2 to 8 chunks, and rows 2^15, 2^16 and the last long.
Workload local_attn_huge_batch(std::int64_t rows, Sizes sizes, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  const auto below = [&random](std::int64_t bound) {
    return static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(bound));
  };
  const std::int64_t A = sizes.attn_chunk;
  std::vector<RowDraw> drawn;
  for (std::int64_t i = 0; i < rows; ++i) {
    std::int64_t n = below(100) == 0 ? A + 1 + below(7 * A) : 1;
    if (i == 32768 || i == 65536 || i == rows - 1) n = 4 * A + 1 + below(4 * A);
    drawn.emplace_back(n, below(4 * A), false);
  }
  return assemble(sizes, drawn, 0);
}

Gen<Workload> local_attn_huge_batches() {
  return gen::apply(
      [](std::int64_t rows, Sizes sizes, std::int64_t seed) {
        return local_attn_huge_batch(rows, sizes, static_cast<std::uint64_t>(seed));
      },
      gen::weightedOneOf<std::int64_t>({{1, gen::just<std::int64_t>(32767)},
                                        {2, gen::element<std::int64_t>(32768, 32769)},
                                        {2, gen::element<std::int64_t>(65536, 65537)},
                                        {5, inclusive_range(65538, 140000)}}),
      gen::element(Sizes{16, 16}, Sizes{64, 16}, Sizes{8, 1}, Sizes{3, 1}),
      inclusive_range(0, std::numeric_limits<std::int64_t>::max() - 1));
}

const std::vector<std::string>& all_local_attn_huge_batch_classes() {
  static const std::vector<std::string> classes = {"2^15+ rows", "2^16+ rows", "pieces of a row past 2^15",
                                                   "pieces of a row past 2^16"};
  return classes;
}

std::vector<std::string> local_attn_huge_batch_classes(const Workload& w) {
  const auto& names = all_local_attn_huge_batch_classes();
  std::vector<bool> hit(names.size(), false);
  const std::size_t rows = w.rows();
  hit[0] = rows >= (std::size_t{1} << 15);
  hit[1] = rows >= (std::size_t{1} << 16);
  for (std::size_t i = std::size_t{1} << 15; i < rows; ++i) {
    hit[2] = true;
    hit[3] = hit[3] || i >= (std::size_t{1} << 16);
  }
  return names_of_hits(names, hit);
}

const std::vector<std::string>& all_local_attn_invalid_rules() {
  static const std::vector<std::string> rules = {
      "attn_chunk_size_not_positive", "attn_chunk_size_too_large", "block_size_not_positive",
      "block_size_too_large",         "attn_chunk_size_not_a_multiple_of_block_size",
      "query_start_loc_empty",        "seq_lens_length_mismatch",  "query_start_loc_negative",
      "query_start_loc_too_large",    "query_start_loc_decreasing", "row_without_new_tokens",
      "seq_lens_negative",            "seq_lens_too_large",        "seq_len_below_new_tokens"};
  return rules;
}

Gen<InvalidCase> local_attn_invalid_cases() {
  return gen::apply(
      [](std::int64_t rule, Workload w, std::int64_t salt, std::int64_t amount) {
        return InvalidCase{std::move(w), {rule, salt, amount}};
      },
      rule_indices(all_local_attn_invalid_rules().size()), local_attn_valid_workloads(), inclusive_range(0, kMaxValue),
      gen::weightedOneOf<std::int64_t>({{3, gen::just<std::int64_t>(0)}, {2, inclusive_range(0, kMaxValue)},
                                        {1, inclusive_range(0, std::int64_t{1} << 40)}}));
}

InvalidWorkload local_attn_invalid_of(const InvalidCase& invalid) {
  const auto& rules = all_local_attn_invalid_rules();
  const auto& p = invalid.parameters;
  const std::string& rule = rules[static_cast<std::size_t>(std::abs(p.size() > 0 ? p[0] : 0)) % rules.size()];
  const std::int64_t salt = std::abs(p.size() > 1 ? p[1] : 0);
  const std::int64_t amount = std::abs(p.size() > 2 ? p[2] : 0);
  Workload w = invalid.valid;
  auto& q = w.query_start_loc;
  auto& s = w.num_computed_tokens;
  const std::int64_t big = kMaxValue + 1 + amount;
  if (rule == "attn_chunk_size_not_positive") {
    w.chunk_size = -amount;
    return make_invalid(rule, w, ErrorCode::not_positive, "attn_chunk_size", Error::kNoIndex);
  }
  if (rule == "attn_chunk_size_too_large") {
    w.chunk_size = big;
    return make_invalid(rule, w, ErrorCode::value_too_large, "attn_chunk_size", Error::kNoIndex);
  }
  if (rule == "block_size_not_positive") {
    w.block_size = -amount;
    return make_invalid(rule, w, ErrorCode::not_positive, "block_size", Error::kNoIndex);
  }
  if (rule == "block_size_too_large") {
    w.block_size = big;
    return make_invalid(rule, w, ErrorCode::value_too_large, "block_size", Error::kNoIndex);
  }
  if (rule == "attn_chunk_size_not_a_multiple_of_block_size") {
    // P = A + 1 + (amount % A) > A, so A is not a multiple of it (and P stays below 2^31).
    w.block_size = std::min(w.chunk_size + 1 + amount % w.chunk_size, kMaxValue);
    if (w.block_size == w.chunk_size) w.chunk_size -= 1;  // A = 2^31-1 has no larger P: a smaller A
    return make_invalid(rule, w, ErrorCode::not_a_multiple, "attn_chunk_size", Error::kNoIndex);
  }
  if (rule == "query_start_loc_empty") {
    q.clear();
    s.clear();
    return make_invalid(rule, w, ErrorCode::length_mismatch, "query_start_loc", 0);
  }
  if (rule == "seq_lens_length_mismatch") {
    const bool longer = salt % 2 == 0 || s.empty();
    if (longer) {
      s.push_back(1);
    } else {
      s.pop_back();
    }
    const auto rows = static_cast<std::int64_t>(q.size()) - 1;
    return make_invalid(rule, w, ErrorCode::length_mismatch, "seq_lens", longer ? rows : rows - 1);
  }
  // The rules on entries need a row.
  if (s.empty()) {
    q.push_back(q.back() == kMaxValue ? q.back() : q.back() + 1);
    if (q[1] == q[0]) q[0] -= 1;
    s.push_back(1);
  }
  const auto row = static_cast<std::size_t>(salt) % s.size();
  const auto index = static_cast<std::int64_t>(row);
  if (rule == "query_start_loc_negative") {
    const std::size_t j = static_cast<std::size_t>(salt) % q.size();
    q[j] = -1 - amount;
    return make_invalid(rule, w, ErrorCode::negative_value, "query_start_loc", static_cast<std::int64_t>(j));
  }
  if (rule == "query_start_loc_too_large") {
    const std::size_t j = static_cast<std::size_t>(salt) % q.size();
    const std::int64_t lift = big - q[j];
    for (std::size_t k = j; k < q.size(); ++k) q[k] += lift;
    return make_invalid(rule, w, ErrorCode::value_too_large, "query_start_loc", static_cast<std::int64_t>(j));
  }
  if (rule == "query_start_loc_decreasing") {
    q[row + 1] = q[row] - 1 - amount % (q[row] + 1);
    if (q[row + 1] < 0) {  // q[row] = 0: lift every entry before so the new one stays in range
      for (std::size_t k = 0; k <= row; ++k) q[k] += 1;
      q[row + 1] = q[row] - 1;
    }
    return make_invalid(rule, w, ErrorCode::query_start_loc_decreasing, "query_start_loc", index + 1);
  }
  if (rule == "row_without_new_tokens") {
    const std::int64_t n = q[row + 1] - q[row];
    for (std::size_t k = row + 1; k < q.size(); ++k) q[k] -= n;
    return make_invalid(rule, w, ErrorCode::not_increasing, "query_start_loc", index + 1);
  }
  if (rule == "seq_lens_negative") {
    s[row] = -1 - amount;
    return make_invalid(rule, w, ErrorCode::negative_value, "seq_lens", index);
  }
  if (rule == "seq_lens_too_large") {
    s[row] = big;
    return make_invalid(rule, w, ErrorCode::value_too_large, "seq_lens", index);
  }
  // seq_len_below_new_tokens: s in [0, n).
  const std::int64_t n = q[row + 1] - q[row];
  s[row] = amount % n;
  return make_invalid(rule, w, ErrorCode::below_minimum, "seq_lens", index);
}

Gen<InvalidWorkload> local_attn_invalid_workloads() { return gen::map(local_attn_invalid_cases(), local_attn_invalid_of); }

const std::vector<std::string>& all_local_attn_edge_classes() {
  static const std::vector<std::string> classes = {
      "empty batch",
      "single row",
      "256+ rows",
      "computed tokens on an attention-chunk boundary",
      "computed tokens one short of a boundary",
      "computed tokens one past a boundary",
      "new tokens ending on a boundary",
      "row spanning 8+ attention chunks",
      "A = P",
      "A = 8192, P = 16",
      "single-token row",
      "sequence within A of 2^31-1",
      "no computed tokens",
      "more virtual batches than rows",
      "query_start_loc offset (q[0] > 0)",
      "A = 1",
  };
  return classes;
}

std::vector<std::string> local_attn_edge_classes(const Workload& w) {
  const auto& names = all_local_attn_edge_classes();
  std::vector<bool> hit(names.size(), false);
  const std::int64_t A = w.chunk_size;
  const auto& q = w.query_start_loc;
  const std::size_t rows = w.rows();
  std::int64_t pieces = 0;
  hit[0] = rows == 0;
  hit[1] = rows == 1;
  hit[2] = rows >= 256;
  for (std::size_t i = 0; i < rows; ++i) {
    const std::int64_t n = q[i + 1] - q[i];
    const std::int64_t s = w.num_computed_tokens[i];
    const std::int64_t c = s - n;
    hit[3] = hit[3] || (c > 0 && c % A == 0);
    hit[4] = hit[4] || (A >= 2 && c % A == A - 1);
    hit[5] = hit[5] || (A >= 2 && c > A && c % A == 1);
    hit[6] = hit[6] || s % A == 0;
    const std::int64_t first = std::min(A - c % A, n);
    const std::int64_t row_pieces = 1 + (n - first + A - 1) / A;
    hit[7] = hit[7] || row_pieces >= 8;
    hit[10] = hit[10] || n == 1;
    hit[11] = hit[11] || s > kMaxValue - A;
    hit[12] = hit[12] || c == 0;
    pieces += row_pieces;
  }
  hit[8] = A == w.block_size;
  hit[9] = A == 8192 && w.block_size == 16;
  hit[13] = pieces > static_cast<std::int64_t>(rows);
  hit[14] = q[0] > 0;
  hit[15] = A == 1;
  return names_of_hits(names, hit);
}

}  // namespace chunkmeta::properties
