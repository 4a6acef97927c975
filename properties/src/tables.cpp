#include "chunkmeta/properties/tables.hpp"

#include <map>
#include <mutex>

#include "tables_internal.hpp"

namespace chunkmeta::properties {

const engine::PropertyTable& table_of(const harness::Spec& spec) {
  static const engine::PropertyTable mamba = make_mamba_table();
  static const engine::PropertyTable indices = make_fla_table(harness::fla_chunk_indices_spec());
  static const engine::PropertyTable offsets = make_fla_table(harness::fla_chunk_offsets_spec());
  if (&spec == &harness::fla_chunk_indices_spec()) return indices;
  if (&spec == &harness::fla_chunk_offsets_spec()) return offsets;
  return mamba;
}

std::vector<std::string> implementation_property_names(const harness::Spec& spec) {
  std::vector<std::string> names;
  for (const auto& property : table_of(spec).properties) {
    if (property.scope == engine::Scope::implementation) names.push_back(property.name);
  }
  return names;
}

}  // namespace chunkmeta::properties
