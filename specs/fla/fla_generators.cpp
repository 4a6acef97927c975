// Generators for FLA's cu_seqlens (specs/fla): the same input domain as
// Mamba's with no computed tokens, weighted toward the edges its copies miss:
// empty sequences (no project's tests draw one), lengths around multiples of
// C, and lengths near 2^31 where a 32-bit round-up wraps.
#include <algorithm>
#include <limits>
#include <random>
#include <utility>

#include "chunkmeta/fla.hpp"
#include "fla_generators.hpp"

namespace chunkmeta::properties {
namespace {

using rc::Gen;
namespace gen = rc::gen;

// One sequence's length, keyed to C: empty, one token, a multiple of C and
// one either side, engine-sized, many chunks, and (with a large C, so the
// outputs stay small) near the int32 limit, where len + C - 1 wraps in 32 bits.
Gen<std::int64_t> sequence_lengths(std::int64_t chunk) {
  const auto around_multiples = gen::mapcat(inclusive_range(1, 8), [chunk](std::int64_t m) {
    return gen::element(m * chunk - 1, m * chunk, m * chunk + 1);
  });
  constexpr std::int64_t kLargeChunk = std::int64_t{1} << 16;
  const auto near_limit = chunk >= kLargeChunk
                              ? gen::map(inclusive_range(0, chunk), [](std::int64_t d) { return kMaxValue - d; })
                              : inclusive_range(0, 64 * chunk);
  return gen::weightedOneOf<std::int64_t>({
      {22, gen::just<std::int64_t>(0)},
      {8, gen::just<std::int64_t>(1)},
      {22, around_multiples},
      {20, inclusive_range(1, 16384)},
      {8, inclusive_range(0, 64 * chunk)},
      {5, inclusive_range(0, std::min(kMaxValue, 1024 * chunk))},
      {3, near_limit},
  });
}

// How empty sequences sit in the batch, beside what the lengths draw: none
// more, all of them, the first, the last, or both ends.
enum class Empties { as_drawn, all, first, last, ends };

// Lays the sequences out from `offset`, every entry at most 2^31-1.
Workload assemble(std::int64_t chunk, std::vector<std::int64_t> lengths, Empties empties, std::int64_t offset,
                  bool int64) {
  if (!lengths.empty()) {
    if (empties == Empties::all) std::fill(lengths.begin(), lengths.end(), 0);
    if (empties == Empties::first || empties == Empties::ends) lengths.front() = 0;
    if (empties == Empties::last || empties == Empties::ends) lengths.back() = 0;
  }
  Workload w{chunk, std::vector<std::int64_t>(lengths.size(), 0), {0}, int64 ? harness::Dtype::int64 : harness::Dtype::int32};
  for (const std::int64_t length : lengths) {
    const std::int64_t room = kMaxValue - w.query_start_loc.back();
    w.query_start_loc.push_back(w.query_start_loc.back() + std::clamp<std::int64_t>(length, 0, room));
  }
  const std::int64_t free = kMaxValue - w.query_start_loc.back();
  const std::int64_t start = std::min(offset, free);
  for (auto& q : w.query_start_loc) q += start;
  return w;
}

InvalidWorkload make_invalid(std::string rule, Workload w, ErrorCode code, std::string_view field, std::int64_t index) {
  return InvalidWorkload{std::move(rule), std::move(w), Error{code, field, index, 0, 0}};
}

}  // namespace

Gen<std::int64_t> fla_chunk_sizes() {
  return gen::weightedOneOf<std::int64_t>({
      {45, gen::element<std::int64_t>(16, 32, 64, 128)},
      {10, gen::just<std::int64_t>(1)},
      {15, gen::map(gen::inRange(0, 13), [](int k) { return std::int64_t{1} << k; })},
      {15, gen::map(inclusive_range(0, 2500), [](std::int64_t k) { return 2 * k + 1; })},
      {10, inclusive_range(std::int64_t{1} << 20, kMaxValue)},
      {5, gen::just(kMaxValue)},
  });
}

Gen<Workload> fla_valid_workloads(Gen<std::int64_t> chunk_sizes) {
  return gen::mapcat(std::move(chunk_sizes), [](std::int64_t chunk) {
    return gen::mapcat(batch_sizes(), [chunk](std::int64_t sequences) {
      return gen::apply(
          [chunk](const std::vector<std::int64_t>& lengths, Empties empties, std::int64_t offset, bool int64) {
            return assemble(chunk, lengths, empties, offset, int64);
          },
          gen::container<std::vector<std::int64_t>>(static_cast<std::size_t>(sequences), sequence_lengths(chunk)),
          gen::weightedElement<Empties>({{60, Empties::as_drawn}, {8, Empties::all}, {12, Empties::first},
                                         {12, Empties::last}, {8, Empties::ends}}),
          gen::weightedOneOf<std::int64_t>({{80, gen::just<std::int64_t>(0)}, {15, inclusive_range(1, kMaxValue)},
                                            {5, gen::just(kMaxValue)}}),
          gen::weightedElement<bool>({{65, false}, {35, true}}));
    });
  });
}

// A huge batch from a seed (a container generator of 2^16 lengths would keep a
// shrink tree per sequence): mostly empty sequences, about 1 in 100 with
// chunks, and sequences 2^15, 2^16 and the last one long.
Workload fla_huge_batch(std::int64_t sequences, std::int64_t chunk, std::uint64_t seed, bool int64) {
  std::mt19937_64 random(seed);
  const auto below = [&random](std::int64_t bound) {
    return static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(bound));
  };
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(sequences), 0);
  for (std::int64_t i = 0; i < sequences; ++i) {
    const std::int64_t kind = below(100);
    std::int64_t length = 0;
    if (kind == 0) length = 1 + below(4 * chunk);
    if (kind == 1) length = 4 * chunk + 1 + below(60 * chunk);
    if (i == 32768 || i == 65536 || i == sequences - 1) length = 32 * chunk + 1 + below(32 * chunk);
    lengths[static_cast<std::size_t>(i)] = length;
  }
  return assemble(chunk, lengths, Empties::as_drawn, 0, int64);
}

Gen<std::int64_t> fla_huge_batch_chunk_sizes() {
  return gen::weightedOneOf<std::int64_t>({{6, gen::element<std::int64_t>(16, 32, 64, 128)}, {4, inclusive_range(1, 300)}});
}

Gen<Workload> fla_huge_batches(Gen<std::int64_t> chunk_sizes) {
  return gen::apply(
      [](std::int64_t sequences, std::int64_t chunk, std::int64_t seed, bool int64) {
        return fla_huge_batch(sequences, chunk, static_cast<std::uint64_t>(seed), int64);
      },
      gen::weightedOneOf<std::int64_t>({{1, gen::just<std::int64_t>(32767)},
                                        {2, gen::element<std::int64_t>(32768, 32769)},
                                        {2, gen::element<std::int64_t>(65536, 65537)},
                                        {5, inclusive_range(65538, 140000)}}),
      std::move(chunk_sizes), inclusive_range(0, std::numeric_limits<std::int64_t>::max() - 1),
      gen::element(false, true));
}

const std::vector<std::string>& all_fla_huge_batch_classes() {
  static const std::vector<std::string> classes = {"2^15+ sequences", "2^16+ sequences",
                                                   "chunks of a sequence past 2^15", "chunks of a sequence past 2^16"};
  return classes;
}

std::vector<std::string> fla_huge_batch_classes(const Workload& w) {
  const auto& names = all_fla_huge_batch_classes();
  std::vector<bool> hit(names.size(), false);
  const std::size_t sequences = w.query_start_loc.size() - 1;
  hit[0] = sequences >= (std::size_t{1} << 15);
  hit[1] = sequences >= (std::size_t{1} << 16);
  for (std::size_t i = std::size_t{1} << 15; i < sequences; ++i) {
    if (w.query_start_loc[i + 1] == w.query_start_loc[i]) continue;
    hit[2] = true;
    hit[3] = hit[3] || i >= (std::size_t{1} << 16);
  }
  return names_of_hits(names, hit);
}

const std::vector<std::string>& all_fla_invalid_rules() {
  static const std::vector<std::string> rules = {"chunk_size_not_positive", "chunk_size_too_large", "cu_seqlens_empty",
                                                 "cu_seqlens_negative",     "cu_seqlens_too_large", "cu_seqlens_decreasing"};
  return rules;
}

Gen<InvalidCase> fla_invalid_cases(Gen<Workload> valid) {
  return gen::apply(
      [](std::int64_t rule, Workload w, std::int64_t salt, std::int64_t amount) {
        return InvalidCase{std::move(w), {rule, salt, amount}};
      },
      rule_indices(all_fla_invalid_rules().size()), std::move(valid), inclusive_range(0, kMaxValue),
      gen::weightedOneOf<std::int64_t>({{3, gen::just<std::int64_t>(0)}, {2, inclusive_range(0, kMaxValue)},
                                        {1, inclusive_range(0, std::int64_t{1} << 40)}}));
}

InvalidWorkload fla_invalid_of(const InvalidCase& invalid) {
  const auto& rules = all_fla_invalid_rules();
  const auto& p = invalid.parameters;
  const std::string& rule = rules[static_cast<std::size_t>(std::abs(p.size() > 0 ? p[0] : 0)) % rules.size()];
  const std::int64_t salt = std::abs(p.size() > 1 ? p[1] : 0);
  const std::int64_t amount = std::abs(p.size() > 2 ? p[2] : 0);
  Workload w = invalid.valid;
  auto& cu = w.query_start_loc;
  const std::int64_t big = kMaxValue + 1 + amount;
  const auto entry = [&](std::size_t from) { return from + static_cast<std::size_t>(salt) % (cu.size() - from); };
  if (rule == "chunk_size_not_positive") {
    w.chunk_size = -amount;
    return make_invalid(rule, w, ErrorCode::chunk_size_not_positive, "chunk_size", Error::kNoIndex);
  }
  if (rule == "chunk_size_too_large") {
    w.chunk_size = big;
    return make_invalid(rule, w, ErrorCode::value_too_large, "chunk_size", Error::kNoIndex);
  }
  if (rule == "cu_seqlens_empty") {
    cu.clear();
    w.num_computed_tokens.clear();
    return make_invalid(rule, w, ErrorCode::length_mismatch, "cu_seqlens", 0);
  }
  if (rule == "cu_seqlens_negative") {
    const std::size_t j = entry(0);
    cu[j] = -1 - amount;
    return make_invalid(rule, w, ErrorCode::negative_value, "cu_seqlens", static_cast<std::int64_t>(j));
  }
  if (rule == "cu_seqlens_too_large") {
    const std::size_t j = entry(0);
    const std::int64_t lift = big - cu[j];
    for (std::size_t k = j; k < cu.size(); ++k) cu[k] += lift;
    return make_invalid(rule, w, ErrorCode::value_too_large, "cu_seqlens", static_cast<std::int64_t>(j));
  }
  // cu_seqlens_decreasing: an entry below the one before, every value in range.
  if (cu.size() < 2) {
    cu.push_back(cu.back());
    w.num_computed_tokens.push_back(0);
  }
  const std::size_t j = entry(1);
  if (cu[j - 1] == 0) {  // room below: cu[j-1] >= 1, still in range
    for (auto& q : cu) q = std::min(q + 1, kMaxValue);
  }
  cu[j] = cu[j - 1] - 1 - amount % cu[j - 1];
  return make_invalid(rule, w, ErrorCode::cu_seqlens_decreasing, "cu_seqlens", static_cast<std::int64_t>(j));
}

Gen<InvalidWorkload> fla_invalid_workloads() { return gen::map(fla_invalid_cases(), fla_invalid_of); }

const std::vector<std::string>& all_fla_edge_classes() {
  static const std::vector<std::string> classes = {
      "empty batch",
      "single sequence",
      "256+ sequences",
      "empty sequence first",
      "empty sequence in the middle",
      "empty sequence last",
      "every sequence empty",
      "length a multiple of C",
      "length one below a multiple of C",
      "length one above a multiple of C",
      "chunk size 1",
      "chunk size 16, 32, 64 or 128",
      "odd chunk size above 1",
      "chunk size >= 2^20",
      "int32 cu_seqlens",
      "int64 cu_seqlens",
      "length + C - 1 beyond 2^31-1",
      "cu_seqlens offset (cu[0] > 0)",
      "sequence with 64+ chunks",
  };
  return classes;
}

std::vector<std::string> fla_edge_classes(const Workload& w) {
  const auto& names = all_fla_edge_classes();
  std::vector<bool> hit(names.size(), false);
  const std::int64_t chunk = w.chunk_size;
  const auto& cu = w.query_start_loc;
  const std::size_t sequences = cu.size() - 1;
  std::size_t empty = 0;
  hit[0] = sequences == 0;
  hit[1] = sequences == 1;
  hit[2] = sequences >= 256;
  for (std::size_t i = 0; i < sequences; ++i) {
    const std::int64_t n = cu[i + 1] - cu[i];
    if (n == 0) {
      ++empty;
      hit[3] = hit[3] || (i == 0 && sequences > 1);
      hit[4] = hit[4] || (i > 0 && i + 1 < sequences);
      hit[5] = hit[5] || (i + 1 == sequences && sequences > 1);
      continue;
    }
    hit[7] = hit[7] || n % chunk == 0;
    hit[8] = hit[8] || (chunk >= 2 && n % chunk == chunk - 1);
    hit[9] = hit[9] || (chunk >= 2 && n % chunk == 1);
    hit[16] = hit[16] || n + chunk - 1 > kMaxValue;
    hit[18] = hit[18] || (n + chunk - 1) / chunk >= 64;
  }
  hit[6] = sequences > 0 && empty == sequences;
  hit[10] = chunk == 1;
  hit[11] = chunk == 16 || chunk == 32 || chunk == 64 || chunk == 128;
  hit[12] = chunk > 1 && chunk % 2 == 1;
  hit[13] = chunk >= (std::int64_t{1} << 20);
  hit[14] = w.dtype == harness::Dtype::int32;
  hit[15] = w.dtype == harness::Dtype::int64;
  hit[17] = cu[0] > 0;
  return names_of_hits(names, hit);
}

}  // namespace chunkmeta::properties
