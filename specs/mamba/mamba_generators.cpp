// Mamba's value model for the property suite: valid workloads over the whole
// domain weighted toward every edge class, huge batches, invalid workloads that
// break one named rule, and the edge classes a workload exercises.
#include "mamba_generators.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <ostream>

#include "chunkmeta/chunkmeta.hpp"
namespace chunkmeta::properties {
namespace {

using rc::Gen;
namespace gen = rc::gen;


struct RowPlan {
  std::int64_t computed = 0;
  std::int64_t new_tokens = 0;
};

Gen<std::int64_t> computed_tokens(std::int64_t chunk) {
  const std::int64_t max_blocks = std::min<std::int64_t>(1000, kMaxValue / chunk);
  const std::int64_t max_unaligned_blocks = std::min<std::int64_t>(1000, (kMaxValue - (chunk - 1)) / chunk);
  Gen<std::int64_t> unaligned =
      chunk == 1 ? gen::just<std::int64_t>(0)
                 : gen::mapcat(inclusive_range(0, max_unaligned_blocks), [chunk](std::int64_t blocks) {
                     return gen::map(inclusive_range(1, chunk - 1), [=](std::int64_t r) { return blocks * chunk + r; });
                   });
  return gen::weightedOneOf<std::int64_t>({
      {25, gen::just<std::int64_t>(0)},
      {15, gen::map(inclusive_range(1, std::max<std::int64_t>(1, max_blocks)), [chunk](std::int64_t k) { return k * chunk; })},
      {35, unaligned},
      {10, inclusive_range(1, std::min(3 * chunk, kMaxValue))},
      {7, gen::map(inclusive_range(0, 65536), [](std::int64_t d) { return kMaxValue - d; })},
      {8, inclusive_range(0, kMaxValue)},
  });
}

// New tokens for a row, keyed to its realigning gap g: 0, 1, fewer than g,
// exactly g, g + m*C, g + m*C +- 1, engine-sized, and many chunks.
Gen<std::int64_t> new_tokens(std::int64_t chunk, std::int64_t computed) {
  const std::int64_t max_tokens = kMaxValue - computed;
  const std::int64_t gap = (chunk - computed % chunk) % chunk;
  const std::int64_t many = std::min(max_tokens, gap + 64 * chunk);
  const auto clamp = [max_tokens](std::int64_t n) { return std::clamp<std::int64_t>(n, 0, max_tokens); };
  Gen<std::int64_t> options = gen::weightedOneOf<std::int64_t>({
      {12, gen::just<std::int64_t>(0)},
      {8, gen::just<std::int64_t>(1)},
      {10, inclusive_range(1, gap - 1)},
      {10, gen::just(gap)},
      {10, gen::map(inclusive_range(1, 8), [=](std::int64_t m) { return gap + m * chunk; })},
      {10, gen::mapcat(inclusive_range(0, 8),
                       [=](std::int64_t m) { return gen::element(gap + m * chunk - 1, gap + m * chunk + 1); })},
      {20, inclusive_range(0, 16384)},
      {8, inclusive_range(0, many)},
      {5, gen::map(inclusive_range(0, chunk), [many](std::int64_t d) { return many - d; })},
  });
  return gen::map(options, clamp);
}

Gen<RowPlan> row_plans(std::int64_t chunk) {
  return gen::mapcat(computed_tokens(chunk), [chunk](std::int64_t computed) {
    return gen::map(new_tokens(chunk, computed),
                    [computed](std::int64_t tokens) { return RowPlan{computed, tokens}; });
  });
}

}  // namespace

namespace {

enum class Offset { zero, anywhere, near_top };

// Lays the rows out on the packed axis, keeping every entry <= 2^31-1.
Workload assemble(std::int64_t chunk, const std::vector<RowPlan>& rows, Offset offset, std::int64_t salt) {
  Workload w{chunk, {}, {0}};
  for (const auto& row : rows) {
    w.num_computed_tokens.push_back(row.computed);
    const std::int64_t room = kMaxValue - w.query_start_loc.back();
    w.query_start_loc.push_back(w.query_start_loc.back() + std::min(row.new_tokens, room));
  }
  const std::int64_t free = kMaxValue - w.query_start_loc.back();
  std::int64_t start = 0;
  if (offset == Offset::anywhere) start = salt % (free + 1);
  if (offset == Offset::near_top) start = std::max<std::int64_t>(0, free - salt % 17);
  for (auto& q : w.query_start_loc) q += start;
  return w;
}

Gen<Workload> unshrunk_valid_workloads() {
  return gen::mapcat(chunk_sizes(), [](std::int64_t chunk) {
    return gen::mapcat(batch_sizes(), [chunk](std::int64_t rows) {
      return gen::apply([chunk](const std::vector<RowPlan>& plans, Offset offset,
                                std::int64_t salt) { return assemble(chunk, plans, offset, salt); },
                        gen::container<std::vector<RowPlan>>(static_cast<std::size_t>(rows), row_plans(chunk)),
                        gen::weightedElement<Offset>({{80, Offset::zero}, {12, Offset::anywhere}, {8, Offset::near_top}}),
                        inclusive_range(0, kMaxValue));
    });
  });
}

InvalidWorkload make_invalid(std::string rule, Workload w, ErrorCode code, std::string_view field, std::int64_t index) {
  return InvalidWorkload{std::move(rule), std::move(w), Error{code, field, index, 0, 0}};
}

// Index in [0, n) drawn from a salt; n > 0.
std::size_t pick(std::int64_t salt, std::size_t n) { return static_cast<std::size_t>(salt) % n; }

// Breaks `rule` in the valid workload `w` (nonempty batch where a row is needed).
InvalidWorkload break_named_rule(const std::string& rule, Workload w, std::int64_t salt, std::int64_t amount) {
  const std::size_t rows = w.num_computed_tokens.size();
  const std::int64_t big = kMaxValue + 1 + amount;  // just above 2^31-1 ... far above
  if (rule == "chunk_size_not_positive") {
    w.chunk_size = -amount;
    return make_invalid(rule, w, ErrorCode::chunk_size_not_positive, "chunk_size", Error::kNoIndex);
  }
  if (rule == "chunk_size_too_large") {
    w.chunk_size = big;
    return make_invalid(rule, w, ErrorCode::value_too_large, "chunk_size", Error::kNoIndex);
  }
  if (rule == "query_start_loc_too_short") {
    const std::size_t keep = pick(salt, w.query_start_loc.size());  // 0 .. B entries
    w.query_start_loc.resize(keep);
    return make_invalid(rule, w, ErrorCode::length_mismatch, "query_start_loc", static_cast<std::int64_t>(keep));
  }
  if (rule == "query_start_loc_too_long") {
    const std::int64_t extra = 1 + static_cast<std::int64_t>(pick(salt, 3));
    for (std::int64_t k = 0; k < extra; ++k) w.query_start_loc.push_back(w.query_start_loc.back());
    return make_invalid(rule, w, ErrorCode::length_mismatch, "query_start_loc", static_cast<std::int64_t>(rows + 1));
  }
  if (rule == "computed_negative") {
    const std::size_t row = pick(salt, rows);
    w.num_computed_tokens[row] = -1 - amount;
    return make_invalid(rule, w, ErrorCode::negative_value, "num_computed_tokens", static_cast<std::int64_t>(row));
  }
  if (rule == "computed_too_large") {
    const std::size_t row = pick(salt, rows);
    w.num_computed_tokens[row] = big;
    return make_invalid(rule, w, ErrorCode::value_too_large, "num_computed_tokens", static_cast<std::int64_t>(row));
  }
  if (rule == "query_start_loc_negative") {
    const std::size_t j = pick(salt, rows + 1);
    w.query_start_loc[j] = -1 - amount;
    return make_invalid(rule, w, ErrorCode::negative_value, "query_start_loc", static_cast<std::int64_t>(j));
  }
  if (rule == "query_start_loc_too_large") {
    const std::size_t j = pick(salt, rows + 1);
    const std::int64_t lift = big - w.query_start_loc[j];
    for (std::size_t k = j; k <= rows; ++k) w.query_start_loc[k] += lift;
    return make_invalid(rule, w, ErrorCode::value_too_large, "query_start_loc", static_cast<std::int64_t>(j));
  }
  if (rule == "query_start_loc_decreasing") {
    const std::size_t j = 1 + pick(salt, rows);
    if (w.query_start_loc[j - 1] == 0) {  // make room below: q[j-1] >= 1, still in range
      for (auto& q : w.query_start_loc) q = std::min(q + 1, kMaxValue);
    }
    w.query_start_loc[j] = w.query_start_loc[j - 1] - 1 - amount % w.query_start_loc[j - 1];
    return make_invalid(rule, w, ErrorCode::query_start_loc_decreasing, "query_start_loc", static_cast<std::int64_t>(j));
  }
  // sequence_too_long: c_i + n_i just or far above 2^31-1, every value in range.
  const std::size_t row = pick(salt, rows);
  std::int64_t tokens = w.query_start_loc[row + 1] - w.query_start_loc[row];
  if (tokens == 0) {
    // Give the row one token, keeping query_start_loc in range and non-decreasing.
    auto& q = w.query_start_loc;
    if (q.back() < kMaxValue) {
      for (std::size_t k = row + 1; k <= rows; ++k) q[k] += 1;
    } else if (q[0] > 0) {
      for (std::size_t k = 0; k <= row; ++k) q[k] -= 1;
    } else {  // q[0] = 0 < q[B]: take the token from a row that has some
      std::size_t donor = 0;
      while (q[donor + 1] == q[donor]) ++donor;
      if (donor < row) {
        for (std::size_t k = donor + 1; k <= row; ++k) q[k] -= 1;
      } else {
        for (std::size_t k = row + 1; k <= donor; ++k) q[k] += 1;
      }
    }
    tokens = 1;
  }
  w.num_computed_tokens[row] = kMaxValue - tokens + 1 + amount % tokens;
  return make_invalid(rule, w, ErrorCode::sequence_too_long, "num_computed_tokens", static_cast<std::int64_t>(row));
}

bool is_power_of_two(std::int64_t x) { return x > 0 && (x & (x - 1)) == 0; }


}  // namespace

Gen<std::int64_t> chunk_sizes() {
  return gen::weightedOneOf<std::int64_t>({
      {40, gen::map(gen::inRange(0, 13), [](int k) { return std::int64_t{1} << k; })},
      {15, gen::element<std::int64_t>(64, 128, 256, 2048)},
      {10, gen::element<std::int64_t>(528, 784, 1056, 1568, 1024)},
      {20, inclusive_range(1, 5000)},
      {10, inclusive_range(std::int64_t{1} << 20, kMaxValue)},
      {5, gen::just(kMaxValue)},
  });
}

Gen<Workload> valid_workloads() { return unshrunk_valid_workloads(); }

// A huge batch laid out from a seed (a container generator of 2^16 rows would
// build and keep a shrink tree per row): mostly aligned rows without new
// tokens (no chunk), and about 1 row in 100 of each kind the writes treat
// differently: an empty realigning chunk, 1-4 chunks, 5-32 chunks, 33-64 body
// chunks. Rows 2^15, 2^16 (when present) and the last one are wide, so a
// narrow integer in any write path shows in every case.
Workload huge_batch(std::int64_t rows, std::int64_t chunk, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  const auto below = [&random](std::int64_t bound) { return static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(bound)); };
  const auto wide = [&] { return 32 * chunk + 1 + below(32 * chunk); };
  Workload w{chunk, {}, {0}};
  w.num_computed_tokens.reserve(static_cast<std::size_t>(rows));
  w.query_start_loc.reserve(static_cast<std::size_t>(rows) + 1);
  for (std::int64_t i = 0; i < rows; ++i) {
    std::int64_t computed = 0;
    std::int64_t tokens = 0;
    const std::int64_t kind = below(100);
    if (kind == 0 && chunk > 1) computed = 1 + below(chunk - 1);  // empty realigning chunk
    if (kind == 1) tokens = 1 + below(4 * chunk);
    if (kind == 2) tokens = 4 * chunk + 1 + below(28 * chunk);
    if (kind == 3) tokens = wide();
    if (i == 32768 || i == 65536 || i == rows - 1) {
      computed = 0;
      tokens = wide();
    }
    w.num_computed_tokens.push_back(computed);
    w.query_start_loc.push_back(w.query_start_loc.back() + tokens);
  }
  return w;
}

Gen<Workload> huge_batches() {
  return gen::apply(
      [](std::int64_t rows, std::int64_t chunk, std::int64_t seed) {
        return huge_batch(rows, chunk, static_cast<std::uint64_t>(seed));
      },
      gen::weightedOneOf<std::int64_t>({{1, gen::just<std::int64_t>(32767)},  // nothing past 2^15: the border
                                        {2, gen::element<std::int64_t>(32768, 32769)},
                                        {2, gen::element<std::int64_t>(65536, 65537)},
                                        {5, inclusive_range(65538, 140000)}}),
      gen::weightedOneOf<std::int64_t>({{6, gen::map(gen::inRange(0, 10), [](int k) { return std::int64_t{1} << k; })},
                                        {4, inclusive_range(1, 300)}}),
      inclusive_range(0, std::numeric_limits<std::int64_t>::max() - 1));
}

const std::vector<std::string>& all_huge_batch_classes() {
  static const std::vector<std::string> classes = {
      "2^15+ rows", "2^16+ rows", "1-4 chunks at row >= 2^15", "5-32 chunks at row >= 2^15",
      "33+ body chunks at row >= 2^15", "33+ body chunks at row >= 2^16", "empty chunk at row >= 2^15",
  };
  return classes;
}

std::vector<std::string> huge_batch_classes(const Workload& w) {
  const auto& names = all_huge_batch_classes();
  std::vector<bool> hit(names.size(), false);
  const std::size_t rows = w.num_computed_tokens.size();
  hit[0] = rows >= (std::size_t{1} << 15);
  hit[1] = rows >= (std::size_t{1} << 16);
  const std::int64_t chunk = w.chunk_size;
  for (std::size_t i = std::size_t{1} << 15; i < rows; ++i) {
    const std::int64_t c = w.num_computed_tokens[i];
    const std::int64_t n = w.query_start_loc[i + 1] - w.query_start_loc[i];
    const std::int64_t gap = (chunk - c % chunk) % chunk;
    const std::int64_t body = (n - std::min(n, gap) + chunk - 1) / chunk;
    const std::int64_t chunks = (gap != 0 ? 1 : 0) + body;
    hit[2] = hit[2] || (chunks >= 1 && chunks <= 4);
    hit[3] = hit[3] || (chunks >= 5 && chunks <= 32);
    hit[4] = hit[4] || body > 32;
    hit[5] = hit[5] || (body > 32 && i >= (std::size_t{1} << 16));
    hit[6] = hit[6] || (n == 0 && gap != 0);
  }
  return names_of_hits(names, hit);
}

const std::vector<std::string>& all_invalid_rules() {
  static const std::vector<std::string> rules = {
      "chunk_size_not_positive", "chunk_size_too_large",      "query_start_loc_too_short",
      "query_start_loc_too_long", "computed_negative",        "computed_too_large",
      "query_start_loc_negative", "query_start_loc_too_large", "query_start_loc_decreasing",
      "sequence_too_long"};
  return rules;
}

Gen<InvalidCase> invalid_cases() {
  // Row rules need a row: break_rule adds one to a batch that has none.
  return gen::mapcat(rule_indices(all_invalid_rules().size()), [](std::int64_t rule) {
    return gen::apply(
        [rule](Workload w, std::int64_t salt, std::int64_t amount) {
          return InvalidCase{std::move(w), {rule, salt, amount}};
        },
        unshrunk_valid_workloads(), inclusive_range(0, kMaxValue),
        gen::weightedOneOf<std::int64_t>({{3, gen::just<std::int64_t>(0)}, {2, inclusive_range(0, kMaxValue)},
                                          {1, inclusive_range(0, std::int64_t{1} << 40)}}));
  });
}

InvalidWorkload invalid_of(const InvalidCase& invalid) {
  const auto& rules = all_invalid_rules();
  const auto& p = invalid.parameters;
  const auto rule = static_cast<std::size_t>(std::abs(p.size() > 0 ? p[0] : 0)) % rules.size();
  Workload w = invalid.valid;
  if (w.num_computed_tokens.empty()) {
    w.num_computed_tokens.push_back(0);
    w.query_start_loc.push_back(w.query_start_loc.back());
  }
  return break_named_rule(rules[rule], std::move(w), std::abs(p.size() > 1 ? p[1] : 0), std::abs(p.size() > 2 ? p[2] : 0));
}

Gen<InvalidWorkload> invalid_workloads() { return gen::map(invalid_cases(), invalid_of); }

const std::vector<std::string>& all_edge_classes() {
  static const std::vector<std::string> classes = {
      "empty batch",
      "single row",
      "256+ rows",
      "chunk size 1",
      "chunk size power of two >= 2",
      "chunk size not a power of two",
      "chunk size >= 2^20",
      "query_start_loc offset (q[0] > 0)",
      "query_start_loc near 2^31-1",
      "zero-token row, aligned (no chunk)",
      "zero-token row, unaligned (empty chunk)",
      "aligned nonzero computed",
      "unaligned computed",
      "new tokens < realigning gap",
      "new tokens == realigning gap",
      "row ends on a chunk boundary",
      "row ends 1 past a chunk boundary",
      "row ends 1 before a chunk boundary",
      "computed near 2^31-1",
      "sequence ends in the last chunk below 2^31",
      "row with 64+ chunks",
  };
  return classes;
}

std::vector<std::string> edge_classes(const Workload& w) {
  const auto& names = all_edge_classes();
  std::vector<bool> hit(names.size(), false);
  const std::int64_t chunk = w.chunk_size;
  const std::size_t rows = w.num_computed_tokens.size();
  hit[0] = rows == 0;
  hit[1] = rows == 1;
  hit[2] = rows >= 256;
  hit[3] = chunk == 1;
  hit[4] = chunk >= 2 && is_power_of_two(chunk);
  hit[5] = !is_power_of_two(chunk);
  hit[6] = chunk >= (std::int64_t{1} << 20);
  hit[7] = w.query_start_loc[0] > 0;
  hit[8] = w.query_start_loc.back() >= kMaxValue - 65536;
  for (std::size_t i = 0; i < rows; ++i) {
    const std::int64_t c = w.num_computed_tokens[i];
    const std::int64_t n = w.query_start_loc[i + 1] - w.query_start_loc[i];
    const std::int64_t gap = (chunk - c % chunk) % chunk;
    const std::int64_t end_residue = (c + n) % chunk;
    hit[9] = hit[9] || (n == 0 && gap == 0);
    hit[10] = hit[10] || (n == 0 && gap != 0);
    hit[11] = hit[11] || (c > 0 && gap == 0);
    hit[12] = hit[12] || gap != 0;
    hit[13] = hit[13] || (n > 0 && n < gap);
    hit[14] = hit[14] || (n > 0 && n == gap);
    hit[15] = hit[15] || (n > 0 && end_residue == 0);
    hit[16] = hit[16] || (n > 0 && chunk >= 2 && end_residue == 1);
    hit[17] = hit[17] || (n > 0 && chunk >= 3 && end_residue == chunk - 1);
    hit[18] = hit[18] || c >= kMaxValue - 65536;
    hit[19] = hit[19] || (n > 0 && c + n > kMaxValue - chunk);
    hit[20] = hit[20] || (n > 0 && (c + n - 1) / chunk - c / chunk + 1 >= 64);
  }
  return names_of_hits(names, hit);
}

}  // namespace chunkmeta::properties
