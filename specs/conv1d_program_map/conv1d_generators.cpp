// Generators for the conv1d program map (specs/conv1d_program_map). Its input
// is FLA's (cu_seqlens, a block length), so FLA's value model draws it, around
// block_m = 8, in the engine's int32; its invalid workloads are FLA's with the
// rules and fields named as this spec names them.
#include "conv1d_generators.hpp"

#include <algorithm>

#include "fla/fla_generators.hpp"

namespace chunkmeta::properties {
namespace {

using rc::Gen;
namespace gen = rc::gen;

Workload as_int32(Workload w) {
  w.dtype = harness::Dtype::int32;
  return w;
}

// FLA's rule name -> this spec's rule, and the error the library names.
struct RenamedRule {
  std::string_view fla;
  std::string name;
  ErrorCode code;
  std::string_view field;
};

const std::vector<RenamedRule>& renamed_rules() {
  static const std::vector<RenamedRule> rules = {
      {"chunk_size_not_positive", "block_m_not_positive", ErrorCode::not_positive, "block_m"},
      {"chunk_size_too_large", "block_m_too_large", ErrorCode::value_too_large, "block_m"},
      {"cu_seqlens_empty", "query_start_loc_empty", ErrorCode::length_mismatch, "query_start_loc"},
      {"cu_seqlens_negative", "query_start_loc_negative", ErrorCode::negative_value, "query_start_loc"},
      {"cu_seqlens_too_large", "query_start_loc_too_large", ErrorCode::value_too_large, "query_start_loc"},
      {"cu_seqlens_decreasing", "query_start_loc_decreasing", ErrorCode::query_start_loc_decreasing, "query_start_loc"},
  };
  return rules;
}

}  // namespace

Gen<std::int64_t> conv1d_block_ms() {
  return gen::weightedOneOf<std::int64_t>({{60, gen::just<std::int64_t>(8)}, {40, fla_chunk_sizes()}});
}

Gen<Workload> conv1d_valid_workloads() { return gen::map(fla_valid_workloads(conv1d_block_ms()), as_int32); }

Gen<Workload> conv1d_huge_batches() {
  const auto block_ms = gen::weightedOneOf<std::int64_t>({{7, gen::just<std::int64_t>(8)}, {3, inclusive_range(1, 64)}});
  return gen::map(fla_huge_batches(block_ms), as_int32);
}

const std::vector<std::string>& all_conv1d_invalid_rules() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const auto& rule : renamed_rules()) all.push_back(rule.name);
    return all;
  }();
  return names;
}

Gen<InvalidCase> conv1d_invalid_cases() { return fla_invalid_cases(conv1d_valid_workloads()); }

InvalidWorkload conv1d_invalid_of(const InvalidCase& invalid) {
  InvalidWorkload broken = fla_invalid_of(invalid);
  const auto& rules = renamed_rules();
  const auto rule = std::find_if(rules.begin(), rules.end(), [&](const RenamedRule& r) { return r.fla == broken.rule; });
  broken.rule = rule->name;
  broken.expected.code = rule->code;
  broken.expected.field = rule->field;
  broken.workload.dtype = harness::Dtype::int32;
  return broken;
}

Gen<InvalidWorkload> conv1d_invalid_workloads() { return gen::map(conv1d_invalid_cases(), conv1d_invalid_of); }

const std::vector<std::string>& all_conv1d_edge_classes() {
  static const std::vector<std::string> classes = {
      "empty batch",
      "single row",
      "256+ rows",
      "empty row first",
      "empty row in the middle",
      "empty row last",
      "every row empty",
      "row length a multiple of block_m",
      "row length one below a multiple of block_m",
      "row length one above a multiple of block_m",
      "block_m 8 (vLLM's)",
      "block_m 1",
      "block_m above 8",
      "block_m >= 2^20",
      "length + block_m - 1 beyond 2^31-1",
      "query_start_loc offset (q[0] > 0)",
      "row with 64+ programs",
      "more than 1024 programs (vLLM's buffers grow)",
  };
  return classes;
}

std::vector<std::string> conv1d_edge_classes(const Workload& w) {
  const auto& names = all_conv1d_edge_classes();
  std::vector<bool> hit(names.size(), false);
  const std::int64_t M = w.chunk_size;
  const auto& q = w.query_start_loc;
  const std::size_t rows = q.size() - 1;
  std::size_t empty = 0;
  std::int64_t programs = 0;
  hit[0] = rows == 0;
  hit[1] = rows == 1;
  hit[2] = rows >= 256;
  for (std::size_t i = 0; i < rows; ++i) {
    const std::int64_t n = q[i + 1] - q[i];
    if (n == 0) {
      ++empty;
      hit[3] = hit[3] || (i == 0 && rows > 1);
      hit[4] = hit[4] || (i > 0 && i + 1 < rows);
      hit[5] = hit[5] || (i + 1 == rows && rows > 1);
      continue;
    }
    hit[7] = hit[7] || n % M == 0;
    hit[8] = hit[8] || (M >= 2 && n % M == M - 1);
    hit[9] = hit[9] || (M >= 2 && n % M == 1);
    hit[14] = hit[14] || n + M - 1 > kMaxValue;
    hit[16] = hit[16] || (n + M - 1) / M >= 64;
    programs += (n + M - 1) / M;
  }
  hit[6] = rows > 0 && empty == rows;
  hit[10] = M == 8;
  hit[11] = M == 1;
  hit[12] = M > 8;
  hit[13] = M >= (std::int64_t{1} << 20);
  hit[15] = q[0] > 0;
  hit[17] = programs > 1024;
  return names_of_hits(names, hit);
}

}  // namespace chunkmeta::properties
