#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness {

std::optional<Implementation> Spec::find_builtin(std::string_view name) const {
  for (const auto& implementation : builtins()) {
    if (implementation.name == name) return implementation;
  }
  return std::nullopt;
}

std::string Spec::builtin_names() const {
  std::string names;
  for (const auto& implementation : builtins()) names += (names.empty() ? "" : ", ") + implementation.name;
  return names;
}

std::string Spec::units(const Workload& workload) const {
  const auto n = workload.rows();
  return std::to_string(n) + " " + std::string(unit()) + (n == 1 ? "" : "s");
}

std::size_t Spec::entries(const Arrays& arrays) const {
  std::size_t total = 0;
  for (const auto& array : arrays) total += array.size();
  return total;
}

const std::vector<const Spec*>& all_specs() {
  static const std::vector<const Spec*> specs = {&mamba_spec(), &fla_chunk_indices_spec(), &fla_chunk_offsets_spec()};
  return specs;
}

const Spec* find_spec(std::string_view name) {
  for (const Spec* spec : all_specs()) {
    if (spec->name() == name) return spec;
  }
  return nullptr;
}

std::string spec_names() {
  std::string names;
  for (const Spec* spec : all_specs()) names += (names.empty() ? "" : ", ") + std::string(spec->name());
  return names;
}

Arrays arrays_of(ChunkMetadata&& result) {
  Arrays arrays;
  arrays.reserve(3);
  arrays.push_back(std::move(result.cu_chunk_seqlen));
  arrays.push_back(std::move(result.seq_idx));
  arrays.push_back(std::move(result.last_chunk_indices));
  return arrays;
}

ChunkMetadata chunk_metadata_of(Arrays&& arrays) {
  ChunkMetadata result;
  arrays.resize(3);
  result.cu_chunk_seqlen = std::move(arrays[0]);
  result.seq_idx = std::move(arrays[1]);
  result.last_chunk_indices = std::move(arrays[2]);
  return result;
}

}  // namespace chunkmeta::harness
