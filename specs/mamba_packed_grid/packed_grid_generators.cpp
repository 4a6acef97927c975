// Generators for the packed grid (specs/mamba_packed_grid). What tells its
// copies apart is where a row starts against the packed batch's grid, so each
// row's length is drawn against the room left in the physical chunk it starts
// in: exactly that room (the next row starts on the grid), one either side,
// less (the row fits inside the chunk), or none (a row without tokens, which
// the engines' torch function mishandles).
#include "packed_grid_generators.hpp"

#include <algorithm>
#include <limits>
#include <random>

#include "fla/fla_generators.hpp"

namespace chunkmeta::properties {
namespace {

using rc::Gen;
namespace gen = rc::gen;

// How a row's length is drawn, against `room` (the tokens left in the physical chunk the row starts in).
enum class Length : std::int64_t {
  none,           // no tokens
  room,           // to the grid's next cut exactly
  room_less_one,  // one short of it
  room_plus_one,  // one past it
  inside,         // 1 .. room - 1: inside the chunk it starts in
  whole_chunks,   // m C + {-1, 0, 1}
  engine_sized,   // 1 .. min(16384, 512 C)
  many_chunks,    // up to 64 C
  near_limit,     // with a large C, up to the room left below 2^31
};

struct RowDraw {
  Length kind = Length::none;
  std::int64_t amount = 0;  // the draw inside the kind's range, taken modulo its size
};

std::int64_t length_of(const RowDraw& row, std::int64_t at, std::int64_t C) {
  const std::int64_t room = C - at % C;
  const std::int64_t a = row.amount;
  switch (row.kind) {
    case Length::none: return 0;
    case Length::room: return room;
    case Length::room_less_one: return room - 1;
    case Length::room_plus_one: return room + 1;
    case Length::inside: return room > 1 ? 1 + a % (room - 1) : 0;
    case Length::whole_chunks: return std::max<std::int64_t>(0, (1 + a % 8) * C + a / 8 % 3 - 1);
    case Length::engine_sized: return 1 + a % std::min<std::int64_t>(16384, 512 * C);
    case Length::many_chunks: return a % (64 * C + 1);
    case Length::near_limit: return C >= (std::int64_t{1} << 16) ? kMaxValue - at - a % C : a % (64 * C + 1);
  }
  return 0;
}

// Where rows without tokens go beside the drawn ones: nowhere more, every row, the first, the last, both ends.
enum class Empties { as_drawn, all, first, last, ends };

Workload assemble(std::int64_t C, std::vector<RowDraw> rows, Empties empties) {
  if (!rows.empty()) {
    if (empties == Empties::all) std::fill(rows.begin(), rows.end(), RowDraw{});
    if (empties == Empties::first || empties == Empties::ends) rows.front() = RowDraw{};
    if (empties == Empties::last || empties == Empties::ends) rows.back() = RowDraw{};
  }
  Workload w{C, std::vector<std::int64_t>(rows.size(), 0), {0}, harness::Dtype::int32};
  for (const RowDraw& row : rows) {
    const std::int64_t at = w.query_start_loc.back();
    w.query_start_loc.push_back(at + std::clamp<std::int64_t>(length_of(row, at, C), 0, kMaxValue - at));
  }
  return w;
}

Gen<RowDraw> row_draws() {
  return gen::apply([](Length kind, std::int64_t amount) { return RowDraw{kind, amount}; },
                    gen::weightedElement<Length>({{14, Length::none},
                                                  {16, Length::room},
                                                  {8, Length::room_less_one},
                                                  {8, Length::room_plus_one},
                                                  {14, Length::inside},
                                                  {14, Length::whole_chunks},
                                                  {14, Length::engine_sized},
                                                  {8, Length::many_chunks},
                                                  {4, Length::near_limit}}),
                    inclusive_range(0, kMaxValue));
}

InvalidWorkload make_invalid(std::string rule, Workload w, ErrorCode code, std::string_view field, std::int64_t index) {
  return InvalidWorkload{std::move(rule), std::move(w), Error{code, field, index, 0, 0}};
}

bool is_cu_seqlens(std::string_view field) { return field == "cu_seqlens"; }

}  // namespace

Gen<std::int64_t> packed_grid_chunk_sizes() {
  return gen::weightedOneOf<std::int64_t>({
      {35, gen::element<std::int64_t>(64, 128, 256)},
      {15, gen::just<std::int64_t>(4)},
      {10, gen::just<std::int64_t>(1)},
      {15, gen::map(gen::inRange(1, 13), [](int k) { return std::int64_t{1} << k; })},
      {15, gen::map(inclusive_range(1, 2500), [](std::int64_t k) { return 2 * k + 1; })},
      {7, inclusive_range(std::int64_t{1} << 20, kMaxValue)},
      {3, gen::just(kMaxValue)},
  });
}

Gen<Workload> packed_grid_valid_workloads() {
  return gen::mapcat(packed_grid_chunk_sizes(), [](std::int64_t C) {
    return gen::mapcat(batch_sizes(), [C](std::int64_t rows) {
      return gen::apply([C](std::vector<RowDraw> draws, Empties empties) { return assemble(C, std::move(draws), empties); },
                        gen::container<std::vector<RowDraw>>(static_cast<std::size_t>(rows), row_draws()),
                        gen::weightedElement<Empties>({{64, Empties::as_drawn}, {6, Empties::all}, {10, Empties::first},
                                                       {12, Empties::last}, {8, Empties::ends}}));
    });
  });
}

// A huge batch in which every row has tokens, as the engines build them: 1 to
// min(2C, 100) tokens a row (most rows start off the grid), T below 2^24.
Workload huge_batch_with_tokens(std::int64_t rows, std::int64_t C, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  Workload w{C, std::vector<std::int64_t>(static_cast<std::size_t>(rows), 0), {0}, harness::Dtype::int32};
  const auto most = static_cast<std::uint64_t>(std::min<std::int64_t>(2 * C, 100));
  for (std::int64_t i = 0; i < rows; ++i)
    w.query_start_loc.push_back(w.query_start_loc.back() + 1 + static_cast<std::int64_t>(random() % most));
  return w;
}

Gen<Workload> packed_grid_huge_batches() {
  const auto fla_batches = gen::map(fla_huge_batches(), [](Workload w) {
    w.dtype = harness::Dtype::int32;
    return w;
  });
  const auto with_tokens = gen::apply(
      [](std::int64_t rows, std::int64_t C, std::int64_t seed) {
        return huge_batch_with_tokens(rows, C, static_cast<std::uint64_t>(seed));
      },
      gen::weightedOneOf<std::int64_t>({{1, gen::element<std::int64_t>(32768, 65537)}, {3, inclusive_range(65537, 90000)}}),
      fla_huge_batch_chunk_sizes(), inclusive_range(0, std::numeric_limits<std::int64_t>::max() - 1));
  return gen::weightedOneOf<Workload>({{1, fla_batches}, {1, with_tokens}});
}

const std::vector<std::string>& all_packed_grid_invalid_rules(std::string_view offsets_field) {
  static const auto rules_for = [](const std::string& f) {
    return std::vector<std::string>{"chunk_size_not_positive", "chunk_size_too_large", f + "_empty", f + "_negative",
                                    f + "_too_large",          f + "_not_from_zero",   f + "_decreasing"};
  };
  static const std::vector<std::string> query_start_loc = rules_for("query_start_loc");
  static const std::vector<std::string> cu_seqlens = rules_for("cu_seqlens");
  return is_cu_seqlens(offsets_field) ? cu_seqlens : query_start_loc;
}

Gen<InvalidCase> packed_grid_invalid_cases() {
  return gen::apply(
      [](std::int64_t rule, Workload w, std::int64_t salt, std::int64_t amount) {
        return InvalidCase{std::move(w), {rule, salt, amount}};
      },
      rule_indices(all_packed_grid_invalid_rules("query_start_loc").size()), packed_grid_valid_workloads(),
      inclusive_range(0, kMaxValue),
      gen::weightedOneOf<std::int64_t>({{3, gen::just<std::int64_t>(0)}, {2, inclusive_range(0, kMaxValue)},
                                        {1, inclusive_range(0, std::int64_t{1} << 40)}}));
}

InvalidWorkload packed_grid_invalid_of(const InvalidCase& invalid, std::string_view offsets_field) {
  // An error's field outlives any caller's string: the literal's.
  const std::string_view field = is_cu_seqlens(offsets_field) ? "cu_seqlens" : "query_start_loc";
  const auto& rules = all_packed_grid_invalid_rules(field);
  const auto& p = invalid.parameters;
  const auto which = static_cast<std::size_t>(std::abs(p.size() > 0 ? p[0] : 0)) % rules.size();
  const std::string& rule = rules[which];
  const std::int64_t salt = std::abs(p.size() > 1 ? p[1] : 0);
  const std::int64_t amount = std::abs(p.size() > 2 ? p[2] : 0);
  Workload w = invalid.valid;
  auto& q = w.query_start_loc;
  const std::int64_t big = kMaxValue + 1 + amount;
  const auto entry = [&](std::size_t from) { return from + static_cast<std::size_t>(salt) % (q.size() - from); };
  switch (which) {
    case 0:
      w.chunk_size = -amount;
      return make_invalid(rule, w, ErrorCode::chunk_size_not_positive, "chunk_size", Error::kNoIndex);
    case 1:
      w.chunk_size = big;
      return make_invalid(rule, w, ErrorCode::value_too_large, "chunk_size", Error::kNoIndex);
    case 2:
      q.clear();
      w.num_computed_tokens.clear();
      return make_invalid(rule, w, ErrorCode::length_mismatch, field, 0);
    case 3: {
      const std::size_t j = entry(0);
      q[j] = -1 - amount;
      return make_invalid(rule, w, ErrorCode::negative_value, field, static_cast<std::int64_t>(j));
    }
    case 4: {
      const std::size_t j = entry(0);
      const std::int64_t lift = big - q[j];
      for (std::size_t k = j; k < q.size(); ++k) q[k] += lift;
      return make_invalid(rule, w, ErrorCode::value_too_large, field, static_cast<std::int64_t>(j));
    }
    case 5:
      // The grid is the packed batch's: its first token is token 0.
      q[0] = 1 + amount % kMaxValue;
      return make_invalid(rule, w, ErrorCode::value_too_large, field, 0);
    default:
      break;
  }
  // Decreasing: an entry below the one before, every value in range and q[0] = 0.
  while (q.size() < 3) {
    q.push_back(q.back());
    w.num_computed_tokens.push_back(0);
  }
  const std::size_t j = entry(2);
  for (std::size_t k = 1; k < q.size(); ++k) q[k] = std::max<std::int64_t>(q[k], 1);  // room below q[j-1]
  q[j] = q[j - 1] - 1 - amount % q[j - 1];
  return make_invalid(rule, w, is_cu_seqlens(field) ? ErrorCode::cu_seqlens_decreasing : ErrorCode::query_start_loc_decreasing,
                      field, static_cast<std::int64_t>(j));
}

const std::vector<std::string>& all_packed_grid_edge_classes() {
  static const std::vector<std::string> classes = {
      "empty batch",
      "single row",
      "256+ rows",
      "row starting off the grid",
      "row starting on the grid past token 0",
      "row inside the room left in its physical chunk",
      "row starting off the grid across a cut",
      "row ending on the grid",
      "row without tokens first",
      "row without tokens in the middle",
      "row without tokens last",
      "row without tokens on the grid",
      "row without tokens off the grid",
      "row without tokens last, on the grid",
      "every row without tokens",
      "chunk size 1",
      "chunk size 64, 128 or 256 (the engines')",
      "odd chunk size above 1",
      "chunk size >= 2^20",
      "T above 2^24 (a float32 division loses integers)",
      "T above 2^30",
      "row with 64+ pieces",
  };
  return classes;
}

std::vector<std::string> packed_grid_edge_classes(const Workload& w) {
  const auto& names = all_packed_grid_edge_classes();
  std::vector<bool> hit(names.size(), false);
  const std::int64_t C = w.chunk_size;
  const auto& q = w.query_start_loc;
  const std::size_t rows = q.size() - 1;
  std::size_t empty = 0;
  hit[0] = rows == 0;
  hit[1] = rows == 1;
  hit[2] = rows >= 256;
  for (std::size_t i = 0; i < rows; ++i) {
    const std::int64_t a = q[i];
    const std::int64_t b = q[i + 1];
    const bool on_grid = a % C == 0;
    if (b == a) {
      ++empty;
      hit[8] = hit[8] || (i == 0 && rows > 1);
      hit[9] = hit[9] || (i > 0 && i + 1 < rows);
      hit[10] = hit[10] || (i + 1 == rows && rows > 1);
      hit[11] = hit[11] || on_grid;
      hit[12] = hit[12] || !on_grid;
      hit[13] = hit[13] || (i + 1 == rows && on_grid);
      continue;
    }
    hit[3] = hit[3] || !on_grid;
    hit[4] = hit[4] || (on_grid && a > 0);
    hit[5] = hit[5] || (!on_grid && b - a < C - a % C);
    hit[6] = hit[6] || (!on_grid && b - a > C - a % C);
    hit[7] = hit[7] || b % C == 0;
    hit[21] = hit[21] || (b - 1) / C - a / C + 1 >= 64;
  }
  hit[14] = rows > 0 && empty == rows;
  hit[15] = C == 1;
  hit[16] = C == 64 || C == 128 || C == 256;
  hit[17] = C > 1 && C % 2 == 1;
  hit[18] = C >= (std::int64_t{1} << 20);
  hit[19] = q.back() > (std::int64_t{1} << 24);
  hit[20] = q.back() > (std::int64_t{1} << 30);
  return names_of_hits(names, hit);
}

Workload rows_on_the_grid(Workload w) {
  auto& q = w.query_start_loc;
  std::size_t last = 0;  // the last row with tokens keeps its length
  for (std::size_t i = 0; i + 1 < q.size(); ++i) {
    if (q[i + 1] > q[i]) last = i;
  }
  std::int64_t at = 0;
  for (std::size_t i = 0; i + 1 < q.size(); ++i) {
    const std::int64_t length = q[i + 1] - q[i];
    q[i] = at;
    at += i == last ? length : length / w.chunk_size * w.chunk_size;
  }
  q.back() = at;
  return w;
}

Workload rows_with_tokens(Workload w) {
  std::vector<std::int64_t> q{0};
  for (std::size_t i = 0; i + 1 < w.query_start_loc.size(); ++i) {
    const std::int64_t length = w.query_start_loc[i + 1] - w.query_start_loc[i];
    if (length > 0) q.push_back(q.back() + length);
  }
  w.query_start_loc = std::move(q);
  w.num_computed_tokens.assign(w.query_start_loc.size() - 1, 0);
  return w;
}

}  // namespace chunkmeta::properties
