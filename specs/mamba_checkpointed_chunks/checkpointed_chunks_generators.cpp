// Generators for the checkpointed chunks (specs/mamba_checkpointed_chunks).
// Mamba's value model draws (C, c, q); each row's checkpoint offset is then
// drawn against that row's own grid, where the slips of this change live: a
// checkpoint already on the grid (no extra chunk), one either side of it, the
// first and last token it may take, rows resumed off the grid.
#include "checkpointed_chunks_generators.hpp"

#include <algorithm>
#include <random>

#include "mamba/mamba_generators.hpp"

namespace chunkmeta::properties {
namespace {

using rc::Gen;
namespace gen = rc::gen;

// How a row's offset is drawn, for a row of n >= 2 new tokens (others have none).
enum class Offset : std::int64_t { none, first_token, last_token, on_grid, before_grid, after_grid, anywhere };

// The offset of the first multiple of C after the row's computed tokens, or 0 when it is not inside (0, n).
std::int64_t grid_offset(std::int64_t c, std::int64_t n, std::int64_t C, std::int64_t skip) {
  const std::int64_t first = C - c % C;  // c off the grid: the realigning gap; on it: a whole chunk
  const std::int64_t o = first + skip * C;
  return o < n ? o : (first < n ? first : 0);
}

std::int64_t offset_for(Offset kind, std::int64_t amount, std::int64_t c, std::int64_t n, std::int64_t C) {
  if (n < 2) return 0;
  const std::int64_t grid = grid_offset(c, n, C, amount % 4);
  switch (kind) {
    case Offset::none: return 0;
    case Offset::first_token: return 1;
    case Offset::last_token: return n - 1;
    case Offset::on_grid: return grid;
    case Offset::before_grid: return grid > 1 ? grid - 1 : 1;
    case Offset::after_grid: return grid > 0 && grid + 1 < n ? grid + 1 : n - 1;
    case Offset::anywhere: return 1 + amount % (n - 1);
  }
  return 0;
}

struct OffsetDraw {
  Offset kind = Offset::none;
  std::int64_t amount = 0;
};

// Where checkpoints go beside the drawn ones: nowhere more, in no row, in every row that can have one.
enum class Everywhere { as_drawn, none, all };

Workload with_offsets(Workload w, const std::vector<OffsetDraw>& draws, Everywhere everywhere) {
  w.second_per_row.assign(w.rows(), 0);
  for (std::size_t i = 0; i < w.rows(); ++i) {
    OffsetDraw d = i < draws.size() ? draws[i] : OffsetDraw{};
    if (everywhere == Everywhere::none) d.kind = Offset::none;
    if (everywhere == Everywhere::all && d.kind == Offset::none) d.kind = Offset::anywhere;
    const std::int64_t n = w.query_start_loc[i + 1] - w.query_start_loc[i];
    w.second_per_row[i] = offset_for(d.kind, d.amount, w.num_computed_tokens[i], n, w.chunk_size);
  }
  return w;
}

InvalidWorkload make_invalid(std::string rule, Workload w, ErrorCode code, std::int64_t index) {
  return InvalidWorkload{std::move(rule), std::move(w), Error{code, "checkpoint_offsets", index, 0, 0}};
}

}  // namespace

namespace {

// Each row's offset from a seed (a container generator would keep a shrink tree per row, which nothing uses: the
// engine shrinks), with the draw's weights.
std::vector<OffsetDraw> offset_draws_from(std::uint64_t seed, std::size_t rows) {
  static constexpr std::pair<Offset, std::uint64_t> kWeights[] = {
      {Offset::none, 30},     {Offset::first_token, 8}, {Offset::last_token, 10}, {Offset::on_grid, 20},
      {Offset::before_grid, 8}, {Offset::after_grid, 8}, {Offset::anywhere, 16}};
  std::mt19937_64 random(seed);
  std::vector<OffsetDraw> draws(rows);
  for (auto& d : draws) {
    std::uint64_t ticket = random() % 100;
    for (const auto& [kind, weight] : kWeights) {
      if (ticket < weight) {
        d.kind = kind;
        break;
      }
      ticket -= weight;
    }
    d.amount = static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(kMaxValue));
  }
  return draws;
}

}  // namespace

Gen<Workload> checkpointed_valid_workloads() {
  return gen::apply(
      [](Workload w, std::int64_t seed, Everywhere everywhere) {
        const auto draws = offset_draws_from(static_cast<std::uint64_t>(seed), w.rows());
        return with_offsets(std::move(w), draws, everywhere);
      },
      valid_workloads(), inclusive_range(0, kMaxValue),
      gen::weightedElement<Everywhere>({{80, Everywhere::as_drawn}, {10, Everywhere::none}, {10, Everywhere::all}}));
}

Gen<Workload> checkpointed_huge_batches() {
  // Mamba's huge batches as Mamba draws them (the same classes, as often), their offsets from a seed they give.
  return gen::map(huge_batches(), [](Workload w) {
    std::mt19937_64 random(static_cast<std::uint64_t>(w.query_start_loc.back()) * 1000003u + w.rows());
    std::vector<OffsetDraw> draws(w.rows());
    for (auto& d : draws) {
      d.kind = random() % 4 == 0 ? static_cast<Offset>(1 + random() % 6) : Offset::none;
      d.amount = static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(kMaxValue));
    }
    return with_offsets(std::move(w), draws, Everywhere::as_drawn);
  });
}

const std::vector<std::string>& all_checkpointed_invalid_rules() {
  static const std::vector<std::string> rules = [] {
    std::vector<std::string> all = all_invalid_rules();
    for (const char* own : {"checkpoint_offsets_length", "checkpoint_offset_negative", "checkpoint_offset_not_below_new_tokens"})
      all.emplace_back(own);
    return all;
  }();
  return rules;
}

Gen<InvalidCase> checkpointed_invalid_cases() {
  return gen::apply(
      [](std::int64_t rule, Workload w, std::int64_t salt, std::int64_t amount) {
        return InvalidCase{std::move(w), {rule, salt, amount}};
      },
      rule_indices(all_checkpointed_invalid_rules().size()), checkpointed_valid_workloads(), inclusive_range(0, kMaxValue),
      gen::weightedOneOf<std::int64_t>({{3, gen::just<std::int64_t>(0)}, {2, inclusive_range(0, kMaxValue)},
                                        {1, inclusive_range(0, std::int64_t{1} << 40)}}));
}

InvalidWorkload checkpointed_invalid_of(const InvalidCase& invalid) {
  const auto& rules = all_checkpointed_invalid_rules();
  const auto& p = invalid.parameters;
  const auto rule = static_cast<std::size_t>(std::abs(p.size() > 0 ? p[0] : 0)) % rules.size();
  const std::int64_t salt = std::abs(p.size() > 1 ? p[1] : 0);
  const std::int64_t amount = std::abs(p.size() > 2 ? p[2] : 0);
  const std::size_t mamba_rules = all_invalid_rules().size();
  if (rule < mamba_rules) {  // Mamba's domain is checked first: its rule, its error, the offsets as they were
    InvalidWorkload broken = invalid_of({invalid.valid, {static_cast<std::int64_t>(rule), salt, amount}});
    broken.workload.second_per_row = invalid.valid.second_per_row;
    return broken;
  }
  Workload w = invalid.valid;
  auto& o = w.second_per_row;
  if (rule == mamba_rules) {
    if (o.empty() || salt % 2 == 0) {
      o.push_back(0);
      return make_invalid(rules[rule], w, ErrorCode::length_mismatch, static_cast<std::int64_t>(w.rows()));
    }
    o.pop_back();
    return make_invalid(rules[rule], w, ErrorCode::length_mismatch, static_cast<std::int64_t>(o.size()));
  }
  if (w.rows() == 0) {  // an offset needs a row
    w.num_computed_tokens.push_back(0);
    w.query_start_loc.push_back(w.query_start_loc.back());
    o.push_back(0);
  }
  const std::size_t j = static_cast<std::size_t>(salt) % w.rows();
  if (rule == mamba_rules + 1) {
    o[j] = -1 - amount;
    return make_invalid(rules[rule], w, ErrorCode::negative_value, static_cast<std::int64_t>(j));
  }
  // At or past the row's new tokens (vLLM's loop gives o = n an empty chunk; a row without tokens takes none).
  const std::int64_t n = w.query_start_loc[j + 1] - w.query_start_loc[j];
  o[j] = std::max<std::int64_t>(n, 1) + amount % 3;
  return make_invalid(rules[rule], w, ErrorCode::value_too_large, static_cast<std::int64_t>(j));
}

Gen<InvalidWorkload> checkpointed_invalid_workloads() {
  return gen::map(checkpointed_invalid_cases(), checkpointed_invalid_of);
}

namespace {
const std::vector<std::string>& checkpoint_classes() {
  static const std::vector<std::string> classes = {
      "no checkpoint in the batch",
      "a checkpoint in every row with 2+ new tokens",
      "two rows with checkpoints",
      "checkpoint on the grid",
      "checkpoint off the grid",
      "checkpoint one before the grid",
      "checkpoint one past the grid",
      "checkpoint at the first new token (o = 1)",
      "checkpoint at the last allowed token (o = n - 1)",
      "checkpoint in a row resumed off the grid",
      "checkpoint inside the realigning chunk",
      "c + o above 2^30",
  };
  return classes;
}
}  // namespace

const std::vector<std::string>& all_checkpointed_edge_classes() {
  static const std::vector<std::string> classes = [] {
    std::vector<std::string> all = all_edge_classes();
    all.insert(all.end(), checkpoint_classes().begin(), checkpoint_classes().end());
    return all;
  }();
  return classes;
}

std::vector<std::string> checkpointed_edge_classes(const Workload& w) {
  std::vector<std::string> hits = edge_classes(w);
  const auto& names = checkpoint_classes();
  std::vector<bool> hit(names.size(), false);
  const std::int64_t C = w.chunk_size;
  std::size_t with = 0;
  std::size_t could = 0;
  for (std::size_t i = 0; i < w.rows() && i < w.second_per_row.size(); ++i) {
    const std::int64_t c = w.num_computed_tokens[i];
    const std::int64_t n = w.query_start_loc[i + 1] - w.query_start_loc[i];
    const std::int64_t o = w.second_per_row[i];
    could += n >= 2 ? 1 : 0;
    if (o <= 0) continue;
    ++with;
    const std::int64_t at = (c + o) % C;
    hit[3] = hit[3] || at == 0;
    hit[4] = hit[4] || at != 0;
    hit[5] = hit[5] || (C > 2 && at == C - 1);
    hit[6] = hit[6] || (C > 2 && at == 1);
    hit[7] = hit[7] || o == 1;
    hit[8] = hit[8] || o == n - 1;
    hit[9] = hit[9] || c % C != 0;
    hit[10] = hit[10] || (c % C != 0 && o < C - c % C);
    hit[11] = hit[11] || c + o > (std::int64_t{1} << 30);
  }
  hit[0] = with == 0;
  hit[1] = could > 0 && with == could;
  hit[2] = with >= 2;
  const auto own = names_of_hits(names, hit);
  hits.insert(hits.end(), own.begin(), own.end());
  return hits;
}

}  // namespace chunkmeta::properties
