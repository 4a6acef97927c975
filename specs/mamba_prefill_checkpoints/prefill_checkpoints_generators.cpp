// Generators for the prefill checkpoint planner (specs/mamba_prefill_checkpoints).
// The scalars are drawn against one another and each row against the rule's
// edges, where this change's slips live: the query's start on or off the hash
// grid, s - 1 on a hash boundary (the checkpoint at the last allowed token),
// a + H = p (at the first), ceil(s / M) - 2 one past or equal to the initial
// state's block, and s near 2^31 (where s + M leaves int32).
#include "prefill_checkpoints_generators.hpp"

#include <algorithm>
#include <random>

#include "prefill_checkpoints_spec.hpp"

namespace chunkmeta::properties {
namespace {

using rc::Gen;
namespace gen = rc::gen;

using harness::ceil_div;
using harness::floor_div;

struct Scalars {
  std::int64_t H = 1;
  std::int64_t M = 1;
  std::optional<std::int64_t> alignment;
  bool eagle = false;
};

Gen<std::int64_t> hash_block_sizes() {
  return gen::weightedOneOf<std::int64_t>({{3, gen::element<std::int64_t>(1, 2, 4, 16)},
                                           {4, gen::element<std::int64_t>(16, 64, 256, 528)},
                                           {2, inclusive_range(1, 4096)},
                                           {1, inclusive_range(4097, std::int64_t{1} << 24)}});
}

// M against H: equal, a multiple, below it, unrelated.
Gen<Scalars> scalars() {
  return gen::apply(
      [](std::int64_t H, int relation, std::int64_t k, int alignment, std::int64_t other, bool eagle) {
        Scalars s{H, H, std::nullopt, eagle};
        switch (relation) {
          case 0: s.M = H; break;
          case 1: s.M = std::min(H * k, kMaxValue); break;
          case 2: s.M = std::max<std::int64_t>(H / k, 1); break;
          default: s.M = other; break;
        }
        switch (alignment) {
          case 0: break;  // none: the backend cannot export
          case 1: s.alignment = 1; break;
          case 2: s.alignment = 16; break;
          case 3: s.alignment = std::min(H * k, kMaxValue); break;
          default: s.alignment = 3 + 2 * (other % 64); break;  // odd: rejects most positions
        }
        return s;
      },
      hash_block_sizes(), gen::weightedElement<int>({{3, 0}, {3, 1}, {2, 2}, {2, 3}}), inclusive_range(2, 8),
      gen::weightedElement<int>({{2, 0}, {3, 1}, {2, 2}, {2, 3}, {2, 4}}), inclusive_range(1, 4096), gen::arbitrary<bool>());
}

// How a row is drawn: where its query starts (a) and where its sequence ends (s).
enum class Row : std::uint64_t {
  fresh,             // a = 0, s anywhere
  resumed,           // a on the hash grid, s anywhere past it
  off_grid,          // a off the hash grid
  no_new_tokens,     // s = a
  last_token,        // s - 1 on a hash boundary: the checkpoint at the last token it may take
  first_token,       // p = a + H: the checkpoint at the first it may take (one less: none)
  initial_block,     // ceil(s / M) - 2 at floor((a - 1) / M) or one past it
  near_max,          // s within 2^20 of 2^31 - 1
};

std::int64_t clamp_len(std::int64_t v) { return std::clamp<std::int64_t>(v, 0, kMaxValue); }

// Row (s, n) of a kind, from the draws `u` (uniform 64-bit values).
std::pair<std::int64_t, std::int64_t> row_of(Row kind, const Scalars& sc, std::mt19937_64& u) {
  const std::int64_t H = sc.H;
  const std::int64_t M = sc.M;
  const auto upto = [&](std::int64_t hi) { return hi <= 0 ? std::int64_t{0} : static_cast<std::int64_t>(u() % static_cast<std::uint64_t>(hi + 1)); };
  // Lengths mostly a few hash blocks, sometimes many.
  const auto span = [&] { return u() % 4 == 0 ? upto(std::min<std::int64_t>(kMaxValue / 4, 64 * H * 64)) : upto(8 * H); };
  const auto grid_start = [&] { return std::min(H * upto(std::min<std::int64_t>(16, kMaxValue / H / 4)), kMaxValue / 2); };
  std::int64_t a = 0;
  std::int64_t s = 0;
  switch (kind) {
    case Row::fresh: s = clamp_len(span()); break;
    case Row::resumed: a = grid_start(); s = clamp_len(a + span()); break;
    case Row::off_grid: a = grid_start() + 1 + upto(std::max<std::int64_t>(H - 2, 0)); s = clamp_len(a + span()); break;
    case Row::no_new_tokens: a = u() % 2 == 0 ? grid_start() : upto(64 * H); s = clamp_len(a); break;
    case Row::last_token:
      a = u() % 2 == 0 ? 0 : grid_start();
      s = clamp_len(a + H * (1 + upto(8)) + (sc.eagle ? H : 0) + 1);
      break;
    case Row::first_token: {
      a = u() % 2 == 0 ? 0 : grid_start();
      // p = floor((s - 1) / H) H (- H) = a + H, give or take one block.
      const std::int64_t blocks = 1 + (sc.eagle ? 1 : 0) + static_cast<std::int64_t>(u() % 3) - 1;
      s = clamp_len(a + H * blocks + 1 + upto(H - 1));
      break;
    }
    case Row::initial_block: {
      a = u() % 2 == 0 ? 0 : grid_start();
      const std::int64_t f = floor_div(a - 1, M);
      const std::int64_t col = f + static_cast<std::int64_t>(u() % 2);  // at the initial state's block, or one past
      // ceil(s / M) - 2 = col: s in ((col + 1) M, (col + 2) M].
      s = clamp_len((col + 1) * M + 1 + upto(M - 1));
      s = std::max(s, a);
      break;
    }
    case Row::near_max: {
      // Within 2^20 of 2^31 - 1, or within M of it (where s + M - 1 leaves int32); the query from 0, from
      // a hash boundary a few blocks back, or from anywhere.
      s = kMaxValue - (u() % 2 == 0 ? upto(std::int64_t{1} << 20) : upto(std::min<std::int64_t>(M - 1, std::int64_t{1} << 20)));
      const auto from = u() % 3;
      a = from == 0 ? 0 : from == 1 ? (s - upto(std::min<std::int64_t>(s, 64 * H))) / H * H : s - upto(s);
      break;
    }
  }
  a = std::min(a, s);
  return {s, s - a};
}

constexpr std::pair<Row, std::uint64_t> kRowWeights[] = {
    {Row::fresh, 16}, {Row::resumed, 18}, {Row::off_grid, 10}, {Row::no_new_tokens, 8},
    {Row::last_token, 16}, {Row::first_token, 14}, {Row::initial_block, 14}, {Row::near_max, 4}};

Row pick_row(std::mt19937_64& u) {
  std::uint64_t ticket = u() % 100;
  for (const auto& [kind, weight] : kRowWeights) {
    if (ticket < weight) return kind;
    ticket -= weight;
  }
  return Row::fresh;
}

Workload plan_of(const Scalars& sc, std::size_t rows, std::uint64_t seed, bool near_max_allowed) {
  std::mt19937_64 u(seed);
  std::vector<std::int64_t> seq_lens;
  std::vector<std::int64_t> query_lens;
  for (std::size_t i = 0; i < rows; ++i) {
    Row kind = pick_row(u);
    if (kind == Row::near_max && !near_max_allowed) kind = Row::resumed;
    const auto [s, n] = row_of(kind, sc, u);
    seq_lens.push_back(s);
    query_lens.push_back(n);
  }
  return harness::planner_workload(std::move(seq_lens), std::move(query_lens), sc.H, sc.M, sc.alignment, sc.eagle);
}

InvalidWorkload make_invalid(std::string rule, Workload w, ErrorCode code, std::string_view field, std::int64_t index) {
  return InvalidWorkload{std::move(rule), std::move(w), Error{code, field, index, 0, 0}};
}

}  // namespace

Gen<Workload> planner_valid_workloads() {
  return gen::apply(
      [](const Scalars& sc, std::int64_t rows, std::int64_t seed) {
        return plan_of(sc, static_cast<std::size_t>(rows), static_cast<std::uint64_t>(seed), true);
      },
      scalars(), batch_sizes(), inclusive_range(0, kMaxValue));
}

Gen<Workload> planner_huge_batches() {
  return gen::apply(
      [](const Scalars& sc, std::int64_t rows, std::int64_t seed) {
        return plan_of(sc, static_cast<std::size_t>(rows), static_cast<std::uint64_t>(seed), true);
      },
      gen::map(scalars(), [](Scalars sc) {  // an alignment of 1: most rows that can plan do
        sc.alignment = 1;
        return sc;
      }),
      gen::weightedOneOf<std::int64_t>({{1, inclusive_range(32767, 65535)}, {2, inclusive_range(65536, 140000)}}),
      inclusive_range(0, kMaxValue));
}

const std::vector<std::string>& all_planner_huge_batch_classes() {
  static const std::vector<std::string> classes = {"2^15+ rows", "2^16+ rows", "a checkpoint at row >= 2^15",
                                                   "a checkpoint at row >= 2^16"};
  return classes;
}

std::vector<std::string> planner_huge_batch_classes(const Workload& w) {
  const auto& names = all_planner_huge_batch_classes();
  std::vector<bool> hit(names.size(), false);
  hit[0] = w.rows() >= (std::size_t{1} << 15);
  hit[1] = w.rows() >= (std::size_t{1} << 16);
  const auto planned = harness::prefill_checkpoints_spec().reference(w);
  if (planned.ok()) {
    const auto& offsets = planned.value()[0];
    for (std::size_t i = std::size_t{1} << 15; i < offsets.size(); ++i) {
      if (offsets[i] == 0) continue;
      hit[2] = true;
      hit[3] = hit[3] || i >= (std::size_t{1} << 16);
    }
  }
  return names_of_hits(names, hit);
}

const std::vector<std::string>& all_planner_invalid_rules() {
  static const std::vector<std::string> rules = {
      "hash_block_size below 1",      "hash_block_size above 2^31-1", "mamba_block_size below 1",
      "mamba_block_size above 2^31-1", "checkpoint_alignment below 1", "checkpoint_alignment above 2^31-1",
      "query_lens of another length",  "seq_lens negative",            "seq_lens above 2^31-1",
      "query_lens negative",           "query_lens above 2^31-1",      "a sequence shorter than its query",
  };
  return rules;
}

Gen<InvalidCase> planner_invalid_cases() {
  return gen::apply(
      [](std::int64_t rule, Workload w, std::int64_t salt, std::int64_t amount) {
        return InvalidCase{std::move(w), {rule, salt, amount}};
      },
      rule_indices(all_planner_invalid_rules().size()), planner_valid_workloads(), inclusive_range(0, kMaxValue),
      gen::weightedOneOf<std::int64_t>({{3, gen::just<std::int64_t>(0)}, {2, inclusive_range(0, kMaxValue)},
                                        {1, inclusive_range(0, std::int64_t{1} << 40)}}));
}

InvalidWorkload planner_invalid_of(const InvalidCase& invalid) {
  const auto& rules = all_planner_invalid_rules();
  const auto& p = invalid.parameters;
  const auto rule = static_cast<std::size_t>(std::abs(p.size() > 0 ? p[0] : 0)) % rules.size();
  const std::int64_t salt = std::abs(p.size() > 1 ? p[1] : 0);
  const std::int64_t amount = std::abs(p.size() > 2 ? p[2] : 0);
  Workload w = invalid.valid;
  const auto below = -amount;                // 0 or negative
  const auto above = kMaxValue + 1 + amount;  // past 2^31-1
  switch (rule) {
    case 0: w.chunk_size = below; return make_invalid(rules[rule], w, ErrorCode::not_positive, "hash_block_size", Error::kNoIndex);
    case 1: w.chunk_size = above; return make_invalid(rules[rule], w, ErrorCode::value_too_large, "hash_block_size", Error::kNoIndex);
    case 2: w.block_size = below; return make_invalid(rules[rule], w, ErrorCode::not_positive, "mamba_block_size", Error::kNoIndex);
    case 3: w.block_size = above; return make_invalid(rules[rule], w, ErrorCode::value_too_large, "mamba_block_size", Error::kNoIndex);
    case 4: w.optional_scalar = below; return make_invalid(rules[rule], w, ErrorCode::not_positive, "checkpoint_alignment", Error::kNoIndex);
    case 5: w.optional_scalar = above; return make_invalid(rules[rule], w, ErrorCode::value_too_large, "checkpoint_alignment", Error::kNoIndex);
    case 6: {
      auto& n = w.second_per_row;
      if (n.empty() || salt % 2 == 0) {
        n.push_back(0);
        return make_invalid(rules[rule], w, ErrorCode::length_mismatch, "query_lens", static_cast<std::int64_t>(w.rows()));
      }
      n.pop_back();
      return make_invalid(rules[rule], w, ErrorCode::length_mismatch, "query_lens", static_cast<std::int64_t>(n.size()));
    }
    default: break;
  }
  if (w.rows() == 0) {  // a rule of a row needs a row
    w.num_computed_tokens.push_back(0);
    w.second_per_row.push_back(0);
    w.query_start_loc.push_back(0);
  }
  const std::size_t j = static_cast<std::size_t>(salt) % w.rows();
  const auto at = static_cast<std::int64_t>(j);
  auto& s = w.num_computed_tokens;
  auto& n = w.second_per_row;
  switch (rule) {
    case 7: s[j] = -1 - amount; return make_invalid(rules[rule], w, ErrorCode::negative_value, "seq_lens", at);
    case 8: s[j] = above; return make_invalid(rules[rule], w, ErrorCode::value_too_large, "seq_lens", at);
    case 9: n[j] = -1 - amount; return make_invalid(rules[rule], w, ErrorCode::negative_value, "query_lens", at);
    case 10:
      n[j] = above;
      s[j] = std::min(s[j], kMaxValue);
      return make_invalid(rules[rule], w, ErrorCode::value_too_large, "query_lens", at);
    default:
      if (s[j] == kMaxValue) s[j] -= 1;
      n[j] = s[j] + 1 + amount % std::max<std::int64_t>(kMaxValue - s[j], 1);
      n[j] = std::min(n[j], kMaxValue);
      return make_invalid(rules[rule], w, ErrorCode::below_minimum, "seq_lens", at);
  }
}

Gen<InvalidWorkload> planner_invalid_workloads() { return gen::map(planner_invalid_cases(), planner_invalid_of); }

const std::vector<std::string>& all_planner_edge_classes() {
  static const std::vector<std::string> classes = {
      "no rows",
      "no alignment (the backend cannot export)",
      "alignment 1",
      "alignment 16",
      "an alignment that rejects a row's position",
      "drop_eagle_block on",
      "drop_eagle_block off",
      "H < M",
      "H = M",
      "H > M",
      "a row without new tokens",
      "a query starting off the hash grid",
      "a checkpoint in a resumed row (a > 0)",
      "a checkpoint at the first allowed token (p = a + H)",
      "one hash block short of a checkpoint (p = a)",
      "a checkpoint at the last token (p = s - 1)",
      "the checkpoint's block one past the initial state's (allowed)",
      "the checkpoint's block the initial state's (refused)",
      "a position clamped to 0",
      "every row with a checkpoint",
      "two rows with checkpoints",
      "s near 2^31 (within 2^20)",
      "a checkpoint with s near 2^31",
  };
  return classes;
}

std::vector<std::string> planner_edge_classes(const Workload& w) {
  const auto& names = all_planner_edge_classes();
  std::vector<bool> hit(names.size(), false);
  const std::int64_t H = w.chunk_size;
  const std::int64_t M = w.block_size;
  hit[0] = w.rows() == 0;
  hit[1] = !w.optional_scalar;
  hit[2] = w.optional_scalar == 1;
  hit[3] = w.optional_scalar == 16;
  hit[5] = w.flag;
  hit[6] = !w.flag;
  hit[7] = H < M;
  hit[8] = H == M;
  hit[9] = H > M;
  std::size_t planned = 0;
  for (std::size_t i = 0; i < w.rows(); ++i) {
    const std::int64_t s = w.num_computed_tokens[i];
    const std::int64_t n = w.second_per_row[i];
    const std::int64_t a = s - n;
    const std::int64_t p = harness::checkpoint_position(s, H, w.flag);
    const std::int64_t col = ceil_div(s, M) - 2;
    const std::int64_t initial = floor_div(a - 1, M);
    const bool placed = a % H == 0 && col > initial && a + H <= p && a < p && p < s;  // all but the alignment
    const bool planned_here = placed && w.optional_scalar && (p - a) % *w.optional_scalar == 0;
    planned += planned_here ? 1 : 0;
    hit[4] = hit[4] || (placed && w.optional_scalar && !planned_here);
    hit[10] = hit[10] || n == 0;
    hit[11] = hit[11] || a % H != 0;
    hit[12] = hit[12] || (planned_here && a > 0);
    hit[13] = hit[13] || (planned_here && p == a + H);
    hit[14] = hit[14] || (n > 0 && a % H == 0 && p == a && s > a + 1);
    hit[15] = hit[15] || (planned_here && p == s - 1);
    hit[16] = hit[16] || (planned_here && col == initial + 1);
    hit[17] = hit[17] || (a % H == 0 && a + H <= p && p < s && col == initial);
    hit[18] = hit[18] || (n > 0 && floor_div(s - 1, H) * H - (w.flag ? H : 0) < 0);
    hit[21] = hit[21] || s > kMaxValue - (std::int64_t{1} << 20);
    hit[22] = hit[22] || (planned_here && s > kMaxValue - (std::int64_t{1} << 20));
  }
  hit[19] = w.rows() > 0 && planned == w.rows();
  hit[20] = planned >= 2;
  return names_of_hits(names, hit);
}

}  // namespace chunkmeta::properties
