// Test-only plugin: the mutant catalogue behind the C ABI of <chunkmeta/plugin.h>,
// one implementation per mutant (select one with plugin:PATH#NAME), to prove
// the plugin door catches each slip like the built-in door does.
#include <algorithm>
#include <utility>
#include <vector>

#include "chunkmeta/plugin.h"
#include "mutants.hpp"

namespace {

using chunkmeta::harness::Outcome;

bool fits(const chunkmeta::Int32Array& values, std::int64_t capacity) {
  return static_cast<std::int64_t>(values.size()) <= capacity;
}

int answer(const Outcome& outcome, chunkmeta_output_v1* out) {
  if (!outcome.ok()) {
    const chunkmeta::Error& error = outcome.error();
    out->error_code = chunkmeta::to_string(error.code).data();
    out->error_field = error.field.data();
    out->error_index = error.index;
    return CHUNKMETA_REJECTED;
  }
  const auto& r = outcome.value();
  out->cu_chunk_seqlen_size = static_cast<std::int64_t>(r.cu_chunk_seqlen.size());
  out->seq_idx_size = static_cast<std::int64_t>(r.seq_idx.size());
  out->last_chunk_indices_size = static_cast<std::int64_t>(r.last_chunk_indices.size());
  if (!fits(r.cu_chunk_seqlen, out->cu_chunk_seqlen_capacity) || !fits(r.seq_idx, out->seq_idx_capacity) ||
      !fits(r.last_chunk_indices, out->last_chunk_indices_capacity))
    return CHUNKMETA_BUFFER_TOO_SMALL;
  std::copy(r.cu_chunk_seqlen.begin(), r.cu_chunk_seqlen.end(), out->cu_chunk_seqlen);
  std::copy(r.seq_idx.begin(), r.seq_idx.end(), out->seq_idx);
  std::copy(r.last_chunk_indices.begin(), r.last_chunk_indices.end(), out->last_chunk_indices);
  return CHUNKMETA_OK;
}

int compute(std::size_t index, const chunkmeta_workload_v1* in, chunkmeta_output_v1* out) {
  chunkmeta::Workload w;
  w.chunk_size = in->chunk_size;
  w.num_computed_tokens.assign(in->num_computed_tokens, in->num_computed_tokens + in->num_computed_tokens_length);
  w.query_start_loc.assign(in->query_start_loc, in->query_start_loc + in->query_start_loc_length);
  const auto result = chunkmeta::mutants::catalogue()[index].implementation.compute(w);
  return answer(std::get<Outcome>(result), out);
}

// A C function pointer per catalogue entry (the ABI passes no user data).
template <std::size_t... I>
std::vector<chunkmeta_implementation_v1> make_table(std::index_sequence<I...>) {
  const auto& all = chunkmeta::mutants::catalogue();
  return {chunkmeta_implementation_v1{all[I].implementation.name.c_str(), all[I].slip.c_str(),
                                      CHUNKMETA_REJECTS_INVALID_INPUT,
                                      [](const chunkmeta_workload_v1* in, chunkmeta_output_v1* out) {
                                        return compute(I, in, out);
                                      }}...};
}

constexpr std::size_t kMutants = 12;

}  // namespace

CHUNKMETA_PLUGIN_EXPORT const chunkmeta_plugin_v1* chunkmeta_get_plugin_v1(void) {
  static const std::vector<chunkmeta_implementation_v1> table = [] {
    // The table must list the whole catalogue: with a new mutant and kMutants not
    // raised, the plugin offers nothing and the three-door test says so.
    if (chunkmeta::mutants::catalogue().size() != kMutants) return std::vector<chunkmeta_implementation_v1>{};
    return make_table(std::make_index_sequence<kMutants>{});
  }();
  static const chunkmeta_plugin_v1 plugin = {CHUNKMETA_PLUGIN_ABI_VERSION, static_cast<std::uint32_t>(table.size()),
                                             table.data()};
  return &plugin;
}
