// Test-only plugin: the mutant catalogue behind the C ABI of <chunkmeta/plugin.h>
// (version 2: each implementation names its spec), one implementation per
// mutant (select one with plugin:PATH#NAME), to prove the plugin door catches
// each slip like the built-in door does.
#include <algorithm>
#include <utility>
#include <vector>

#include "chunkmeta/plugin.h"
#include "mutants.hpp"

namespace {

using chunkmeta::harness::Outcome;

int answer(const Outcome& outcome, chunkmeta_output_v2* out) {
  if (!outcome.ok()) {
    const chunkmeta::Error& error = outcome.error();
    out->error_code = chunkmeta::to_string(error.code).data();
    out->error_field = error.field.data();
    out->error_index = error.index;
    return CHUNKMETA_REJECTED;
  }
  const auto& arrays = outcome.value();
  bool fits = true;
  for (std::size_t a = 0; a < arrays.size(); ++a) {
    out->sizes[a] = static_cast<std::int64_t>(arrays[a].size());
    fits = fits && out->sizes[a] <= out->capacities[a];
  }
  if (!fits) return CHUNKMETA_BUFFER_TOO_SMALL;
  for (std::size_t a = 0; a < arrays.size(); ++a) std::copy(arrays[a].begin(), arrays[a].end(), out->arrays[a]);
  return CHUNKMETA_OK;
}

int compute(std::size_t index, const chunkmeta_workload_v2* in, chunkmeta_output_v2* out) {
  chunkmeta::harness::Workload w;
  w.chunk_size = in->chunk_size;
  w.query_start_loc.assign(in->offsets, in->offsets + in->offsets_length);
  if (in->num_computed_tokens != nullptr) {
    w.num_computed_tokens.assign(in->num_computed_tokens, in->num_computed_tokens + in->num_computed_tokens_length);
  } else {
    w.num_computed_tokens.assign(w.query_start_loc.empty() ? 0 : w.query_start_loc.size() - 1, 0);
  }
  w.dtype = in->dtype_bits == 64 ? chunkmeta::harness::Dtype::int64 : chunkmeta::harness::Dtype::int32;
  const auto result = chunkmeta::mutants::catalogue()[index].implementation.compute(w);
  return answer(std::get<Outcome>(result), out);
}

// A C function pointer per catalogue entry (the ABI passes no user data).
template <std::size_t... I>
std::vector<chunkmeta_implementation_v2> make_table(std::index_sequence<I...>) {
  const auto& all = chunkmeta::mutants::catalogue();
  return {chunkmeta_implementation_v2{all[I].implementation.name.c_str(), all[I].slip.c_str(),
                                      all[I].implementation.spec->name().data(), CHUNKMETA_REJECTS_INVALID_INPUT,
                                      [](const chunkmeta_workload_v2* in, chunkmeta_output_v2* out) {
                                        return compute(I, in, out);
                                      }}...};
}

constexpr std::size_t kMutants = 18;

}  // namespace

CHUNKMETA_PLUGIN_EXPORT const chunkmeta_plugin_v2* chunkmeta_get_plugin_v2(void) {
  static const std::vector<chunkmeta_implementation_v2> table = [] {
    // The table must list the whole catalogue: with a new mutant and kMutants not
    // raised, the plugin offers nothing and the three-door test says so.
    if (chunkmeta::mutants::catalogue().size() != kMutants) return std::vector<chunkmeta_implementation_v2>{};
    return make_table(std::make_index_sequence<kMutants>{});
  }();
  static const chunkmeta_plugin_v2 plugin = {CHUNKMETA_PLUGIN_ABI_VERSION_2, static_cast<std::uint32_t>(table.size()),
                                             table.data()};
  return &plugin;
}
