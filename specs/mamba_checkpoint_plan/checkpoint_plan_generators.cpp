#include "checkpoint_plan_generators.hpp"

#include <algorithm>

#include "mamba/mamba_generators.hpp"

namespace chunkmeta::properties {
namespace {

namespace gen = rc::gen;

// Block sizes in chunk sizes: the engine's M = C (vLLM's default when the
// block size is the chunk size), 2C and 8C most often, then any up to 64.
rc::Gen<std::int64_t> chunks_per_block() {
  return gen::weightedOneOf<std::int64_t>({{4, gen::just<std::int64_t>(1)},
                                           {4, gen::just<std::int64_t>(2)},
                                           {3, gen::just<std::int64_t>(8)},
                                           {2, inclusive_range(3, 16)},
                                           {1, inclusive_range(17, 64)}});
}

// The rows' (computed, new) tokens laid out again from q[0].
Workload with_rows(const Workload& w, const std::vector<std::pair<std::int64_t, std::int64_t>>& rows) {
  Workload out = w;
  out.num_computed_tokens.clear();
  out.query_start_loc.assign(1, w.query_start_loc.front());
  for (const auto& [computed, tokens] : rows) {
    out.num_computed_tokens.push_back(computed);
    out.query_start_loc.push_back(out.query_start_loc.back() + tokens);
  }
  return out;
}

// Each row, by two bits of `salt`: as drawn; its computed tokens moved onto
// a block boundary, one short of it or one past it; or its new tokens ending on one.
// Values stay in the domain: c + n <= 2^31-1 and q[B] <= 2^31-1.
Workload near_block_boundaries(const Workload& w, std::uint64_t salt) {
  const std::int64_t M = w.block_size;
  std::vector<std::pair<std::int64_t, std::int64_t>> rows;
  std::int64_t room = kMaxValue - w.query_start_loc.back();  // new tokens the batch can still take
  for (std::size_t i = 0; i < w.rows(); ++i, salt = salt * 6364136223846793005ULL + 1442695040888963407ULL) {
    std::int64_t c = w.num_computed_tokens[i];
    std::int64_t n = w.query_start_loc[i + 1] - w.query_start_loc[i];
    const auto pick = (salt >> 33) % 6;
    const std::int64_t boundary = std::max<std::int64_t>(1, (c + M / 2) / M) * M;
    if (pick <= 2) {
      const std::int64_t moved = boundary + static_cast<std::int64_t>(pick) - 1;  // one short, on, one past
      if (moved >= 0 && moved + n <= kMaxValue) c = moved;
    } else if (pick == 3 && n > 0) {
      const std::int64_t end = (c + n + M - 1) / M * M;  // the last token on a boundary
      if (end <= kMaxValue && end - c - n <= room) {
        room -= end - c - n;
        n = end - c;
      }
    }
    rows.emplace_back(c, n);
  }
  return with_rows(w, rows);
}

Workload with_block_size(Workload w, std::int64_t chunks) {
  w.block_size = std::min(chunks, kMaxValue / w.chunk_size) * w.chunk_size;
  return w;
}

const std::vector<std::string> kClasses = {
    "empty batch",
    "row without new tokens",
    "M = C",
    "M = 2C",
    "M = 8C",
    "computed tokens on a block boundary",
    "computed tokens one short of a block boundary",
    "computed tokens one past a block boundary",
    "last token on a block boundary",
    "row spanning 8+ blocks",
    "computed + M beyond 2^31-1",
    "unaligned computed tokens (a realigning chunk)",
};

const std::vector<std::string> kRules = {"block_size not a multiple of chunk_size", "block_size below 1",
                                         "block_size above 2^31-1"};

}  // namespace

rc::Gen<Workload> checkpoint_workloads() {
  return gen::mapcat(valid_workloads(), [](const Workload& w) {
    return gen::apply(
        [w](std::int64_t chunks, std::int64_t salt, bool moved) {
          const Workload blocked = with_block_size(w, chunks);
          return moved ? near_block_boundaries(blocked, static_cast<std::uint64_t>(salt)) : blocked;
        },
        chunks_per_block(), inclusive_range(0, std::int64_t{1} << 62), gen::weightedOneOf<bool>({{3, gen::just(true)}, {1, gen::just(false)}}));
  });
}

rc::Gen<Workload> checkpoint_huge_batches() {
  // Mamba's huge batches as drawn (their classes' shares are tuned), with M = C, 2C or 8C by the batch.
  return gen::map(huge_batches(), [](const Workload& w) {
    constexpr std::int64_t kChunks[] = {1, 2, 8};
    return with_block_size(w, kChunks[w.rows() % 3]);
  });
}

std::vector<std::string> checkpoint_edge_classes(const Workload& w) {
  const std::int64_t C = w.chunk_size;
  const std::int64_t M = w.block_size;
  std::vector<bool> hit(kClasses.size(), false);
  hit[0] = w.rows() == 0;
  hit[2] = M == C;
  hit[3] = M == 2 * C;
  hit[4] = M == 8 * C;
  for (std::size_t i = 0; i < w.rows(); ++i) {
    const std::int64_t c = w.num_computed_tokens[i];
    const std::int64_t n = w.query_start_loc[i + 1] - w.query_start_loc[i];
    const std::int64_t s = c + n;
    hit[1] = hit[1] || n == 0;
    hit[5] = hit[5] || (c > 0 && c % M == 0);
    hit[6] = hit[6] || (M > 1 && c % M == M - 1);
    hit[7] = hit[7] || (M > 1 && c > M && c % M == 1);
    hit[8] = hit[8] || (n > 0 && s % M == 0);
    hit[9] = hit[9] || (n > 0 && (s - 1) / M - c / M >= 8);
    hit[10] = hit[10] || c + M > kMaxValue;
    hit[11] = hit[11] || c % C != 0;
  }
  return names_of_hits(kClasses, hit);
}

const std::vector<std::string>& all_checkpoint_edge_classes() { return kClasses; }

std::vector<std::string> checkpoint_huge_batch_classes(const Workload& w) { return huge_batch_classes(w); }
const std::vector<std::string>& all_checkpoint_huge_batch_classes() { return all_huge_batch_classes(); }

const std::vector<std::string>& all_checkpoint_invalid_rules() {
  static const std::vector<std::string> rules = [] {
    std::vector<std::string> all = all_invalid_rules();
    all.insert(all.end(), kRules.begin(), kRules.end());
    return all;
  }();
  return rules;
}

rc::Gen<InvalidCase> checkpoint_invalid_cases() {
  return gen::mapcat(checkpoint_workloads(), [](const Workload& w) {
    return gen::apply(
        [w](std::int64_t rule, std::int64_t salt, std::int64_t amount) { return InvalidCase{w, {rule, salt, amount}}; },
        rule_indices(all_checkpoint_invalid_rules().size()), inclusive_range(0, std::int64_t{1} << 62),
        inclusive_range(1, 1000));
  });
}

InvalidWorkload checkpoint_invalid_of(const InvalidCase& invalid) {
  const auto& rules = all_checkpoint_invalid_rules();
  const std::int64_t raw = invalid.parameters.empty() ? 0 : invalid.parameters[0];
  const auto rule = static_cast<std::size_t>(std::clamp<std::int64_t>(raw, 0, static_cast<std::int64_t>(rules.size()) - 1));
  const std::int64_t salt = invalid.parameters.size() > 1 ? invalid.parameters[1] : 0;
  const std::int64_t amount = std::max<std::int64_t>(1, invalid.parameters.size() > 2 ? invalid.parameters[2] : 1);
  const std::size_t mamba_rules = all_invalid_rules().size();
  if (rule < mamba_rules) {
    // Mamba's rules are checked first, so the block size (kept valid) does not change the error.
    Workload base = invalid.valid;
    base.block_size = 0;
    InvalidWorkload broken = invalid_of({base, {static_cast<std::int64_t>(rule), salt, amount}});
    broken.workload.block_size = invalid.valid.block_size;
    return broken;
  }
  Workload w = invalid.valid;
  const std::string& name = rules[rule];
  if (name == kRules[0]) {
    if (w.chunk_size == 1) w.chunk_size = 2;  // a multiple of 1 is every size: make room for a remainder
    const std::int64_t remainder = 1 + salt % (w.chunk_size - 1);
    const std::int64_t blocks = std::max<std::int64_t>(0, std::min(w.block_size / w.chunk_size, (kMaxValue - remainder) / w.chunk_size));
    w.block_size = blocks * w.chunk_size + remainder;
    return {name, w, Error{ErrorCode::not_a_multiple, "block_size", Error::kNoIndex, 0, 0}};
  }
  if (name == kRules[1]) {
    w.block_size = -(salt % 3 == 0 ? 0 : amount);
    return {name, w, Error{ErrorCode::not_positive, "block_size", Error::kNoIndex, 0, 0}};
  }
  w.block_size = kMaxValue + amount;
  return {name, w, Error{ErrorCode::value_too_large, "block_size", Error::kNoIndex, 0, 0}};
}

rc::Gen<InvalidWorkload> checkpoint_invalid_workloads() {
  return gen::map(checkpoint_invalid_cases(), [](const InvalidCase& c) { return checkpoint_invalid_of(c); });
}

}  // namespace chunkmeta::properties
