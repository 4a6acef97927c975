// Test-only plugin: the mutant catalogue behind the C ABI of <chunkmeta/plugin.h>
// (version 3: each implementation names its spec), one implementation per
// mutant (select one with plugin:PATH#NAME), to prove the plugin door catches
// each slip like the built-in door does; and, through the same table,
// mutants/mutants.py's Python functions (the slips stated once, in C++).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/plugin.hpp"
#include "chunkmeta/plugin.h"
#include "mutants.hpp"

namespace {

using chunkmeta::harness::Outcome;

int answer(const Outcome& outcome, chunkmeta_output_v3* out) {
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

// The workload the spec's inputs spell (its scalars, then its arrays, in its order).
chunkmeta::harness::Workload workload_of(const chunkmeta::harness::Spec& spec, const chunkmeta_workload_v3* in) {
  using chunkmeta::harness::Slot;
  chunkmeta::harness::Workload w;
  chunkmeta::harness::read_abi_scalars(spec, {in->scalars, in->scalar_count}, w);
  std::uint32_t arrays = 0;
  for (const auto& input : spec.inputs()) {
    if (!chunkmeta::harness::is_array(input.slot)) continue;
    if (arrays < in->array_count)
      array_in(w, input.slot, input.index).assign(in->arrays[arrays], in->arrays[arrays] + in->array_lengths[arrays]);
    ++arrays;
  }
  spec.fill_unread_rows(w);
  w.dtype = in->dtype_bits == 64 ? chunkmeta::harness::Dtype::int64 : chunkmeta::harness::Dtype::int32;
  return w;
}

int compute(std::size_t index, const chunkmeta_workload_v3* in, chunkmeta_output_v3* out) {
  const auto& mutant = chunkmeta::mutants::catalogue()[index];
  const auto result = mutant.implementation.compute(workload_of(*mutant.implementation.spec, in));
  return answer(std::get<Outcome>(result), out);
}

// A C function pointer per catalogue entry (the ABI passes no user data), for
// catalogues of up to kMostMutants.
constexpr std::size_t kMostMutants = 64;

template <std::size_t... I>
std::vector<chunkmeta_implementation_v3> make_table(std::index_sequence<I...>) {
  const auto& all = chunkmeta::mutants::catalogue();
  std::vector<chunkmeta_implementation_v3> table = {chunkmeta_implementation_v3{
      nullptr, nullptr, nullptr, CHUNKMETA_REJECTS_INVALID_INPUT,
      [](const chunkmeta_workload_v3* in, chunkmeta_output_v3* out) { return compute(I, in, out); }}...};
  table.resize(std::min(all.size(), table.size()));
  for (std::size_t i = 0; i < table.size(); ++i) {
    table[i].name = all[i].implementation.name.c_str();
    table[i].description = all[i].slip.c_str();
    table[i].spec = all[i].implementation.spec->name().data();
  }
  return table;
}

}  // namespace

CHUNKMETA_PLUGIN_EXPORT const chunkmeta_plugin_v3* chunkmeta_get_plugin_v3(void) {
  // A catalogue past kMostMutants offers nothing, and the three-door test says so.
  static const std::vector<chunkmeta_implementation_v3> table =
      chunkmeta::mutants::catalogue().size() > kMostMutants ? std::vector<chunkmeta_implementation_v3>{}
                                                            : make_table(std::make_index_sequence<kMostMutants>{});
  static const chunkmeta_plugin_v3 plugin = {CHUNKMETA_PLUGIN_ABI_VERSION_3, static_cast<std::uint32_t>(table.size()),
                                             table.data()};
  return &plugin;
}

// What the C ABI's table does not say of each mutant, for mutants/mutants.py: one JSON object per
// implementation of the table, in its order ({"name", "slip_of_validation"}).
CHUNKMETA_PLUGIN_EXPORT const char* chunkmeta_mutants_json(void) {
  static const std::string text = [] {
    chunkmeta::harness::Json all = chunkmeta::harness::Json::array();
    for (const auto& mutant : chunkmeta::mutants::catalogue())
      all.push_back({{"name", mutant.implementation.name}, {"slip_of_validation", mutant.slip_of_validation}});
    return all.dump();
  }();
  return text.c_str();
}
